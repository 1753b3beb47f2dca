"""PDFs of the kinds real files brought (issue 23): a page tree that loops, a page tree lost in a
damaged file, vertical Japanese. Each is written here byte by byte, as the real ones are built."""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from glm1m.documents.mupdf import normalise
from glm1m.documents.pages import lost_note
from glm1m.documents.pdf import DocumentError, extract
from glm1m.documents.vertical import columns
from tests.support.pdfs import make_pdf, write_pdf

FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def stream(content: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)


def page(contents: int, font: int = 3) -> bytes:
    return (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R "
            b">> >> /Contents %d 0 R >>" % (font, contents))


def looping_pdf(path: Path, texts: list[str]) -> Path:
    """Pages with these texts, then the page tree itself listed as its own last kid: MuPDF counts
    one page more than there are and raises FzErrorFormat ("cycle in page tree") for it."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"", FONT]
    kids = []
    for text in texts:
        objects.append(page(len(objects) + 2))
        kids.append(b"%d 0 R" % len(objects))
        objects.append(stream(b"BT /F1 12 Tf 72 720 Td (%s) Tj ET" % text.encode()))
    objects[1] = b"<< /Type /Pages /Kids [%s 2 0 R] /Count %d >>" % (b" ".join(kids), len(texts) + 1)
    return write_pdf(path, objects)


def test_a_page_tree_that_loops_reads_the_real_pages_and_names_the_lost_one(tmp_path: Path) -> None:
    path = looping_pdf(tmp_path / "loop.pdf", ["first page", "second page"])
    with pymupdf.open(path) as doc, pytest.raises(pymupdf.mupdf.FzErrorFormat, match="cycle"):
        doc.load_page(2)  # what reached the user as a traceback
    text = extract(path)
    assert [p.text for p in text.pages] == ["first page", "second page", ""] and text.lost == (3,)
    assert lost_note(text) == ("Page 3 of loop.pdf could not be read (the file is damaged or cut "
                               "short there): the text lacks it. Download or export it again for the "
                               "whole text.")


def test_a_page_tree_that_is_only_a_loop_is_damaged_naming_the_page(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "only loop.pdf", [b"<< /Type /Catalog /Pages 2 0 R >>",
                                                  b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>"])
    with pytest.raises(DocumentError) as caught:
        extract(path)
    assert str(caught.value).startswith("only loop.pdf is damaged or incomplete (page 1 cannot be read)")


def lost_tree_pdf(path: Path, pages: int) -> Path:
    """A PDF of `pages` pages whose page tree object is wiped out and whose xref points nowhere:
    MuPDF's repair finds every page object but no list of them, and counts 0 pages."""
    doc = pymupdf.open()
    for number in range(1, pages + 1):
        doc.new_page().insert_text((72, 72), f"Page {number} of the report.")
    data = doc.tobytes(garbage=0)
    tree = re.search(rb"\n(\d+) 0 obj\s*<<\s*/Type\s*/Pages.*?endobj", data, re.S)
    assert tree is not None
    data = data[:tree.start() + 1] + b" " * (tree.end() - tree.start() - 1) + data[tree.end():]
    path.write_bytes(data.replace(b"startxref\n", b"startxref\n9"))
    return path


def test_a_damaged_pdf_whose_page_tree_is_lost_is_read_from_its_pages(tmp_path: Path) -> None:
    path = lost_tree_pdf(tmp_path / "report.pdf", 4)
    with pymupdf.open(path) as doc:
        assert doc.is_repaired and doc.page_count == 0  # "has no pages", before
    text = extract(path)
    assert [p.text for p in text.pages] == [f"Page {n} of the report." for n in range(1, 5)]
    note = lost_note(text)
    assert note is not None and note.startswith("report.pdf is damaged: its list of pages is lost")


def vertical_pdf(path: Path, columns: list[str]) -> Path:
    """Japanese set top to bottom, one column per string, the first one rightmost (read first),
    written to the file left to right. The font is not embedded: MuPDF draws Adobe-Japan1 with
    its own CJK font, and the vertical CMap (UniJIS-UCS2-V) makes it vertical (writing mode 1)."""
    shown = b"".join(b"1 0 0 1 %d 780 Tm <%s> Tj " % (100 + 40 * i, text.encode("utf-16-be").hex().encode())
                     for i, text in enumerate(reversed(columns)))
    japan = b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 6 >>"
    return write_pdf(path, [
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /MS-Mincho /Encoding /UniJIS-UCS2-V "
        b"/DescendantFonts [6 0 R] >>",
        page(5), stream(b"BT /F1 24 Tf " + shown + b"ET"),
        b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /MS-Mincho %s /FontDescriptor 7 0 R >>" % japan,
        b"<< /Type /FontDescriptor /FontName /MS-Mincho /Flags 4 /FontBBox [0 -141 1000 859] "
        b"/ItalicAngle 0 /Ascent 859 /Descent -141 /CapHeight 700 /StemV 80 >>"])


def test_vertical_japanese_comes_out_a_column_a_line_right_to_left(tmp_path: Path) -> None:
    lines = ["縦書きの文章です。", "二行目も縦に続く。", "三行目で終わる。"]
    path = vertical_pdf(tmp_path / "縦書き.pdf", lines)
    with pymupdf.open(path) as doc:
        assert doc[0].get_text().count("\n") == sum(map(len, lines))  # a character a line
    assert extract(path).pages[0].text == "\n".join(lines)


def test_vertical_text_in_a_horizontal_font_is_joined_into_columns(tmp_path: Path) -> None:
    """Issue 33: pdfminer's kampo.pdf sets its columns in Identity-H fonts, each character placed
    below the last; with no "-V" font on the page it read one character a line."""
    lines = ["漢方薬の歴史は古く", "中国の医学に由来する", "日本で独自に発展した"]
    path = tmp_path / "kampo.pdf"
    with pymupdf.open() as doc:
        shown = doc.new_page()
        for c, column in enumerate(lines):
            for i, character in enumerate(column):
                shown.insert_text((500 - 30 * c, 100 + 16 * i), character, fontname="china-s", fontsize=14)
        shown.insert_text((72, 700), "Page 1 of 1", fontsize=10)
        doc.save(path)
    with pymupdf.open(path) as doc:
        assert doc[0].get_fonts()[0][5].endswith("-H")
        assert doc[0].get_text().count("\n") == sum(map(len, lines)) + 1  # a character a line
    assert extract(path).pages[0].text == "\n".join([*lines, "Page 1 of 1"])


def test_a_table_of_single_digits_is_not_taken_for_vertical_writing(tmp_path: Path) -> None:
    path = tmp_path / "digits.pdf"
    with pymupdf.open() as doc:
        shown = doc.new_page()
        for row in range(12):
            for column in range(3):
                shown.insert_text((100 + 40 * column, 100 + 16 * row), str((row + column) % 10))
        doc.save(path)
    with pymupdf.open(path) as doc:
        assert extract(path).pages[0].text == normalise(doc[0].get_text())


def test_columns_one_above_another_are_read_band_by_band() -> None:
    def chars(x: float, top: float, text: str) -> list[tuple[tuple[float, float, float, float], str]]:
        return [((x, top + 10 * i, x + 10, top + 10 * (i + 1)), c) for i, c in enumerate(text)]

    upper = chars(200, 0, "右上") + chars(100, 0, "左上")
    lower = chars(200, 100, "右下") + chars(100, 100, "左下")
    assert columns(lower + upper) == ["右上", "左上", "右下", "左下"]


def test_the_new_sentences_read_in_chinese(tmp_path: Path) -> None:
    from glm1m.catalog import ZH

    blank = tmp_path / "blank.pdf"
    with pymupdf.open() as doc:
        doc.new_page()
        doc.save(blank)
    only_loop = write_pdf(tmp_path / "loop.pdf", [b"<< /Type /Catalog /Pages 2 0 R >>",
                                                  b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>"])
    for path, words in ((blank, "空白"), (only_loop, "第 1 页无法读取")):
        with pytest.raises(DocumentError) as caught:
            extract(path)
        error = caught.value
        assert error.key is not None, str(error)
        assert error.in_language(ZH).startswith(path.name) and words in error.in_language(ZH)


def test_glyph_numbers_of_a_font_that_lost_its_unicode_map_are_not_text() -> None:
    from glm1m.documents.mupdf import normalise

    # pdf.js's issue9418.pdf, its page tree and ToUnicode maps lost: MuPDF gave "\x00\x02\x00\x03...".
    assert normalise("\x00\x02\x00\x03\r\n\x00\x07Name:\tvalue\x7f\n") == "Name:\tvalue"


def test_a_tiny_page_holding_an_image_is_not_called_blank(tmp_path: Path) -> None:
    # ImageMagick writes a 16-pixel image as a 3.84-point page (py-pdf's sample-files 007).
    doc = pymupdf.open()
    page = doc.new_page(width=3.84, height=3.84)
    pixels = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 16, 16), 0)
    pixels.set_rect(pymupdf.IRect(0, 0, 8, 16), (40,))
    page.insert_image(page.rect, pixmap=pixels)
    doc.save(tmp_path / "tiny.pdf")
    with pytest.raises(DocumentError, match="probably scanned"):
        extract(tmp_path / "tiny.pdf")
    empty = pymupdf.open()
    empty.new_page(width=3.84, height=3.84)
    empty.save(tmp_path / "empty.pdf")
    with pytest.raises(DocumentError, match="it is blank"):
        extract(tmp_path / "empty.pdf")


@pytest.mark.parametrize("part", [2, 3, 4, 5, 6])
def test_a_file_cut_inside_a_content_stream_reads_its_first_pages_or_says_it_is_damaged(
        tmp_path: Path, part: int) -> None:
    """Cut inside a page's content stream, MuPDF keeps the stream's object but none of its data
    (xref_stream_raw gives None): that page is lost, not a TypeError (the app's bad-input corpus
    hit it with this very file cut in half)."""
    whole = make_pdf(tmp_path / "whole.pdf", [f"Page {i} of the contract. " * 40 for i in range(1, 9)])
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // part])
    try:
        text = extract(cut)
    except DocumentError as error:
        assert "is damaged or incomplete" in str(error)
        return
    assert "Page 1 of the contract." in text.pages[0].text
    if text.pages_found:  # the list of pages was cut off too: the pages MuPDF found are all it knows
        return
    assert 8 in text.lost and "could not be read" in lost_note(text)


def test_a_file_without_pages_and_without_an_xref_has_no_pages_not_a_lost_list(tmp_path: Path) -> None:
    """MuPDF repairs a file with no xref; its page tree is there and says 0 pages, so the file has
    no pages: it did not lose its list of pages (the app's bad-input corpus file)."""
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
                     b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
    with pytest.raises(DocumentError, match="has no pages: there is nothing to read"):
        extract(path)
