"""PDF extraction on files made here with PyMuPDF: text and page numbers, and one sentence for each
way an upload can be unusable."""

from __future__ import annotations

import time
from pathlib import Path

import pymupdf
import pytest

from glm1m.documents import mupdf
from glm1m.documents.pages import lost_note
from glm1m.documents.pdf import DocumentError, PdfLimits, extract
from tests.support.pdfs import write_pdf


def make_pdf(path: Path, texts: list[str], fontname: str = "helv") -> Path:
    doc = pymupdf.open()
    for text in texts:
        page = doc.new_page()
        if text:
            page.insert_text((72, 72), text, fontname=fontname)
    doc.save(path)
    doc.close()
    return path


def zero_page_pdf(path: Path) -> Path:
    """PyMuPDF refuses to save a document without pages, so write one by hand, xref and all."""
    return write_pdf(path, [b"<< /Type /Catalog /Pages 2 0 R >>",
                            b"<< /Type /Pages /Kids [] /Count 0 >>"])


def error_of(path: Path, **kw) -> str:
    with pytest.raises(DocumentError) as caught:
        extract(path, **kw)
    return str(caught.value)


def test_pages_keep_their_numbers(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "three.pdf", ["The first page.", "The second page.", "The third page."])
    text = extract(path)
    assert text.page_count == 3
    assert [p.number for p in text.pages] == [1, 2, 3]
    assert "third page" in text.pages[2].text
    assert "third page" not in text.pages[0].text + text.pages[1].text
    assert text.name == "three.pdf"
    assert text.chars == sum(len(p.text) for p in text.pages) > 0


def test_chinese_text_round_trips(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "合同.pdf", ["中文文本：合同条款"], fontname="china-s")
    assert extract(path).pages[0].text == "中文文本：合同条款"


def test_empty_pages_are_kept_so_numbers_stay_right(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "gap.pdf", ["before the gap", "", "after the gap"])
    pages = extract(path).pages
    assert [p.text for p in pages] == ["before the gap", "", "after the gap"]
    assert pages[2].number == 3


def test_the_name_given_is_used_and_never_touches_the_filesystem(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "upload-1234", ["hello"])
    name = "../../etc/passwd\n'; rm -rf ~ #.pdf"
    assert extract(path, name=name).name == name
    message = error_of(path, name=name, limits=PdfLimits(max_pages=0))
    assert message.startswith(name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["upload-1234"]


def test_whitespace_is_normalised_lightly() -> None:
    raw = "line one   \nline two\t\n\n\n\n\n\nafter five blank lines\n　全角空格保留\n"
    assert mupdf.normalise(raw) == "line one\nline two\n\n\nafter five blank lines\n　全角空格保留"
    assert mupdf.normalise("a\n\nb") == "a\n\nb"


def test_on_page_reports_each_page_once(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "five.pdf", [f"page {i}" for i in range(1, 6)])
    calls: list[tuple[int, int]] = []
    extract(path, on_progress=lambda progress: calls.append((progress.done, progress.total)))
    assert calls == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]


def test_password_protected(tmp_path: Path) -> None:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret terms")
    path = tmp_path / "locked.pdf"
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    message = error_of(path)
    assert message.startswith("locked.pdf is password-protected")
    assert "Remove the password" in message


def test_owner_password_only_still_reads(tmp_path: Path) -> None:
    # Permissions-only encryption opens without a password in every viewer: not an error.
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "print restricted")
    path = tmp_path / "restricted.pdf"
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="")
    assert extract(path).pages[0].text == "print restricted"


def test_a_truncated_file_is_read_as_far_as_it_goes_and_the_lost_pages_named(tmp_path: Path) -> None:
    whole = make_pdf(tmp_path / "whole.pdf", [f"Page {i} of the contract. " * 20 for i in range(10)])
    data = whole.read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 2])
    # MuPDF opens the half file without an error, rebuilds it, and hands back the first pages'
    # text and empty text for the lost ones: read what is there, and name what is not.
    with pymupdf.open(cut) as doc:
        assert doc.is_repaired and doc.page_count == 10
        assert doc[0].get_text().strip() and not doc[9].get_text().strip()
    text = extract(cut)
    assert text.page_count == 10 and text.pages[4].text.startswith("Page 4 of the contract.")
    assert text.lost and text.lost[-1] == 10 and 5 not in text.lost
    assert all(not text.pages[n - 1].text for n in text.lost if n > text.lost[0])
    assert lost_note(text) == (f"Pages {text.lost[0]}–10 of cut.pdf could not be read (the file is "
                               f"damaged or cut short there): the text lacks them. Download or export "
                               f"it again for the whole text.")


def test_file_cut_before_its_page_tree_is_damaged(tmp_path: Path) -> None:
    whole = make_pdf(tmp_path / "whole.pdf", [f"Page {i}. " * 20 for i in range(10)])
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(whole.read_bytes()[:300])  # here MuPDF itself refuses to open it
    with pytest.raises(RuntimeError):
        pymupdf.open(cut)
    assert "is damaged or incomplete" in error_of(cut)


def test_garbage_after_a_pdf_header_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "garbage.pdf"
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    assert error_of(path).startswith("garbage.pdf is damaged or incomplete")


def test_repaired_but_complete_file_still_reads(tmp_path: Path) -> None:
    # A wrong startxref offset, or padding after %%EOF, makes MuPDF rebuild the xref; nothing is
    # missing, so these must not be refused as damaged.
    data = make_pdf(tmp_path / "ok.pdf", ["all here"]).read_bytes()
    start = data.rindex(b"startxref")
    wrong_offset = tmp_path / "offset.pdf"
    wrong_offset.write_bytes(data[:start] + b"startxref\n7\n%%EOF\n")
    padded = tmp_path / "padded.pdf"
    padded.write_bytes(data + b"\0" * 5000)
    for path in (wrong_offset, padded):
        with pymupdf.open(path) as doc:
            assert doc.is_repaired
        assert extract(path).pages[0].text == "all here"


def test_missing_eof_marker_alone_is_not_damage(tmp_path: Path) -> None:
    # Some writers omit the final %%EOF; the xref is intact, so MuPDF needs no repair.
    data = make_pdf(tmp_path / "ok.pdf", ["complete"]).read_bytes()
    path = tmp_path / "no-eof.pdf"
    path.write_bytes(data[: data.rindex(b"%%EOF")])
    with pymupdf.open(path) as doc:
        assert not doc.is_repaired
    assert extract(path).pages[0].text == "complete"


def test_two_columns_come_out_one_after_the_other(tmp_path: Path) -> None:
    # get_text(sort=True) would interleave the columns line by line.
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(50, 50, 290, 400), "Left column words. " * 12)
    page.insert_textbox(pymupdf.Rect(310, 50, 550, 400), "Right column words. " * 12)
    path = tmp_path / "columns.pdf"
    doc.save(path)
    text = extract(path).pages[0].text
    assert text.rindex("Left") < text.index("Right")


@pytest.mark.parametrize("content", [
    pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 8, 8), 0).tobytes("png"),
    "Quarterly report\nnot really a PDF\n".encode(),
    b"<!DOCTYPE html><html><body>Session expired</body></html>",
], ids=["png", "text", "html"])
def test_other_files_named_pdf_are_not_a_pdf(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes(content)
    assert error_of(path).startswith(
        "report.pdf is not a PDF (its content is not PDF, whatever its name says)")


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    assert error_of(path).startswith("empty.pdf is empty (0 bytes)")


def test_image_only_pdf_needs_ocr(tmp_path: Path) -> None:
    doc = pymupdf.open()
    for _ in range(2):
        page = doc.new_page()
        pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 50, 50), 0)
        page.insert_image(pymupdf.Rect(72, 72, 272, 272), pixmap=pixmap)
        page.draw_rect(pymupdf.Rect(300, 300, 400, 400), color=(0, 0, 0))
    path = tmp_path / "scan 2024.pdf"
    doc.save(path)
    message = error_of(path)
    assert message.startswith("scan 2024.pdf has no text that can be extracted on any of its 2 pages")
    # glm1m does OCR itself: the advice is its own switch, not another program.
    assert "--ocr auto" in message and "ocrmypdf" not in message


def test_a_blank_page_is_called_blank_not_scanned(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "blank.pdf", [""])
    message = error_of(path)
    assert message.startswith("blank.pdf has no text on its only page: it is blank")
    assert "scanned" not in message and "OCR" not in message


def test_over_the_page_limit(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "long.pdf", ["one", "two", "three"])
    message = error_of(path, limits=PdfLimits(max_pages=2))
    assert message.startswith("long.pdf has 3 pages, over the 2-page limit")
    assert extract(path, limits=PdfLimits(max_pages=3)).page_count == 3


def test_over_the_size_limit_is_refused_before_opening(tmp_path: Path, monkeypatch) -> None:
    path = make_pdf(tmp_path / "big.pdf", ["some text"])
    monkeypatch.setattr(pymupdf, "open", lambda *a, **kw: pytest.fail("opened an oversized file"))
    message = error_of(path, limits=PdfLimits(max_mb=0.0001))
    assert message.startswith("big.pdf is 0.0 MB, over the 0.0001 MB limit for PDFs")


def test_zero_pages(tmp_path: Path) -> None:
    path = zero_page_pdf(tmp_path / "nothing.pdf")
    with pymupdf.open(path) as doc:
        assert doc.page_count == 0 and not doc.is_repaired
    assert error_of(path).startswith("nothing.pdf has no pages")


def test_a_page_that_fails_to_load_is_named_and_the_others_read(tmp_path: Path, monkeypatch) -> None:
    # MuPDF is too forgiving to make a page fail on demand; this stands in for its exception.
    path = make_pdf(tmp_path / "bad page.pdf", ["fine", "broken", "fine"])
    real = pymupdf.Page.get_text

    def failing(page, *args, **kw):
        if page.number == 1:
            raise pymupdf.FileDataError("syntax error in content stream")
        return real(page, *args, **kw)

    monkeypatch.setattr(pymupdf.Page, "get_text", failing)
    text = extract(path)
    assert [p.text for p in text.pages] == ["fine", "", "fine"] and text.lost == (2,)
    assert lost_note(text) is not None and "syntax error" not in str(lost_note(text))
    def always(page, *args, **kw):
        raise pymupdf.FileDataError("syntax error in content stream")

    monkeypatch.setattr(pymupdf.Page, "get_text", always)
    message = error_of(path)
    assert message.startswith("bad page.pdf is damaged or incomplete (pages 1–3 cannot be read)")
    assert "syntax error" not in message


def many_pages_pdf(path: Path, count: int) -> Path:
    """One short line per page, written as raw content streams sharing one font object:
    insert_text spends ~3 ms a page registering its font, which made this test slow."""
    doc = pymupdf.open()
    font = doc.get_new_xref()
    doc.update_object(font, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica/Encoding/WinAnsiEncoding>>")
    for number in range(1, count + 1):
        page = doc.new_page()
        contents = doc.get_new_xref()
        doc.update_object(contents, "<<>>")
        doc.update_stream(contents, f"BT /F1 11 Tf 72 770 Td (Section {number}: short line.) Tj ET".encode())
        doc.xref_set_key(page.xref, "Contents", f"{contents} 0 R")
        doc.xref_set_key(page.xref, "Resources", f"<</Font<</F1 {font} 0 R>>>>")
    doc.save(path)
    doc.close()
    return path


def test_two_thousand_pages(tmp_path: Path) -> None:
    path = many_pages_pdf(tmp_path / "manual.pdf", 2000)
    started = time.perf_counter()
    text = extract(path)
    elapsed = time.perf_counter() - started
    assert text.page_count == 2000 and len(text.pages) == 2000
    assert text.pages[1999].text == "Section 2000: short line."
    assert elapsed < 10, f"{elapsed:.1f}s for 2,000 pages"
