"""Documents of every reflowing format, made here, read back in sections a reader can find."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from glm1m.documents.formats import FORMATS, ReadOptions, format_of, read_document
from glm1m.documents.pages import Kind
from glm1m.documents.sections import PART_CHARS, Block, sections
from glm1m.errors import DocumentError
from tests.support.documents import make_docx, make_epub, make_fb2, make_html


def locations(path: Path) -> list[tuple[str, str]]:
    doc = read_document(path)
    assert doc.kind is Kind.SECTION and doc.page_count == len(doc.pages)
    return [(page.location, page.text) for page in doc.pages]


GUIDE = [(1, "Installation"), (0, "Run the installer first."), (0, "Then restart the machine."),
         (1, "配置 Configuration"), (0, "编辑配置文件 and save it."), (2, "Details"),
         (0, "More details here.")]


def test_docx_is_cut_at_its_heading_styles_with_paragraph_numbers(tmp_path: Path) -> None:
    assert locations(make_docx(tmp_path / "guide.docx", GUIDE)) == [
        ("§ 1 · Installation · ¶ 1–2",
         "Installation\n\nRun the installer first.\n\nThen restart the machine."),
        ("§ 2 · 配置 Configuration · ¶ 1", "配置 Configuration\n\n编辑配置文件 and save it."),
        ("§ 3 · Details · ¶ 1", "Details\n\nMore details here."),
    ]


def test_html_is_cut_at_its_h_elements(tmp_path: Path) -> None:
    found = locations(make_html(tmp_path / "guide.html", GUIDE))
    assert [where for where, _ in found] == ["§ 1 · Installation · ¶ 1–2", "§ 2 · 配置 Configuration · ¶ 1",
                                            "§ 3 · Details · ¶ 1"]
    assert found[1][1] == "配置 Configuration\n\n编辑配置文件 and save it."


def test_epub_chapters_from_its_table_of_contents(tmp_path: Path) -> None:
    book = make_epub(tmp_path / "book.epub", [("Chapter One", ["Alpha.", "Beta."]),
                                              ("第二章 Chapter Two", ["Gamma 中文。", "Delta."])])
    assert locations(book) == [("§ 1 · Chapter One · ¶ 1–2", "Chapter One\n\nAlpha.\n\nBeta."),
                               ("§ 2 · 第二章 Chapter Two · ¶ 1–2",
                                "第二章 Chapter Two\n\nGamma 中文。\n\nDelta.")]


def test_fb2_sections(tmp_path: Path) -> None:
    book = make_fb2(tmp_path / "tale.fb2", [("Part A", ["Text a1.", "Text a2."]), ("Part B", ["Text b1."])])
    assert locations(book) == [("§ 1 · Part A · ¶ 1–2", "Part A\n\nText a1.\n\nText a2."),
                               ("§ 2 · Part B · ¶ 1", "Part B\n\nText b1.")]


def test_a_long_section_is_cut_into_parts_at_paragraph_ends(tmp_path: Path) -> None:
    paragraph = "word " * 199 + "end."  # 1,000 characters
    doc = read_document(make_docx(tmp_path / "long.docx", [(1, "Only"), *[(0, paragraph)] * 7]))
    assert [p.location for p in doc.pages] == ["§ 1 · Only · ¶ 1–2", "§ 2 · Only · ¶ 3–5",
                                               "§ 3 · Only · ¶ 6–7"]
    assert all(len(p.text) <= PART_CHARS + len("Only\n\n") for p in doc.pages)
    # Whole paragraphs, none cut (MuPDF's line breaks inside them kept, as a PDF's are).
    assert doc.pages[1].text.replace("\n\n", "¶").replace("\n", " ") == "¶".join([paragraph] * 3)


def test_text_before_the_first_heading_and_a_document_without_headings() -> None:
    found = sections([Block("Preface."), Block("Title", "Title"), Block("Body.")])
    assert [p.location for p in found] == ["§ 1 · ¶ 1", "§ 2 · Title · ¶ 1"]
    untitled = sections([Block("a" * 2000), Block("b" * 2000)])
    assert [p.location for p in untitled] == ["§ 1 · ¶ 1", "§ 2 · ¶ 2"]


MARKDOWN = """# Guide

Intro line one
intro line two.

## Install 安装

```sh
# not a heading: a comment in a code block

make install
```

Setup
-----

Last words.
"""


def test_markdown_headings_and_line_numbers(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text(MARKDOWN, encoding="utf-8")
    found = locations(tmp_path / "guide.md")
    assert [where for where, _ in found] == ["§ 1 · Guide · lines 1–4", "§ 2 · Install 安装 · lines 6–12",
                                            "§ 3 · Setup · lines 14–17"]
    assert "# not a heading" in found[1][1] and "make install" in found[1][1]


def test_a_gbk_text_file_is_decoded_and_only_underlined_lines_are_headings(tmp_path: Path) -> None:
    text = "合同条款\n========\n\n# 这不是标题 (a comment)\n第一条：付款。\n\n附录\n----\n细则。\n"
    (tmp_path / "合同.txt").write_bytes(text.encode("gb18030"))
    found = locations(tmp_path / "合同.txt")
    assert found == [("§ 1 · 合同条款 · lines 1–5",
                      "合同条款\n========\n\n# 这不是标题 (a comment)\n第一条：付款。"),
                     ("§ 2 · 附录 · lines 7–9", "附录\n----\n\n细则。")]


@pytest.mark.parametrize("name, content, says", [
    ("notes.txt", b"", "is empty (0 bytes)"),
    ("notes.txt", b"\n\n  \n", "has no text"),
    ("a.txt", b"ELF\x00\x01\x02binary\x00", "is not a text file"),
    ("cut.md", "标题\n".encode() + "中".encode()[:2], "cut short inside its last character"),
    ("report.docx", b"PK\x03\x04 not really a zip", "cannot be opened as DOCX"),
    ("book.epub", b"just text", "cannot be opened as EPUB"),
    ("slides.pptx", b"PK", "is not a document glm1m reads"),
])
def test_each_unreadable_file_gets_one_sentence(tmp_path: Path, name: str, content: bytes, says: str) -> None:
    (tmp_path / name).write_bytes(content)
    with pytest.raises(DocumentError) as error:
        read_document(tmp_path / name)
    message = str(error.value)
    assert says in message and message.startswith(name) and message.endswith(".") and "\n" not in message
    assert "CSV" not in message or "spreadsheet" in message  # the text reader's advice, not the CSV one


def test_a_docx_without_text_says_so(tmp_path: Path) -> None:
    """Issue 33: an empty DOCX was told it may hold only images and to export it for OCR."""
    path = make_docx(tmp_path / "empty.docx", [])
    with zipfile.ZipFile(path, "a") as z:  # Word's template saves a preview of the first page
        z.writestr("docProps/thumbnail.jpeg", b"\xff\xd8\xff")
    with pytest.raises(DocumentError, match="has no text and no pictures: it is empty") as error:
        read_document(path)
    assert "OCR" not in str(error.value)
    pictured = make_docx(tmp_path / "scan.docx", [])
    with zipfile.ZipFile(pictured, "a") as z:
        z.writestr("word/media/image1.png", b"\x89PNG\r\n\x1a\n")
    with pytest.raises(DocumentError, match="may hold only images.*OCR"):
        read_document(pictured)


def test_html_without_text_or_pictures_is_called_empty(tmp_path: Path) -> None:
    (tmp_path / "empty.html").write_text("<html><body><p> </p></body></html>", encoding="utf-8")
    with pytest.raises(DocumentError, match="it is empty"):
        read_document(tmp_path / "empty.html")


def test_a_document_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = make_docx(tmp_path / "big.docx", GUIDE)
    with pytest.raises(DocumentError, match="over the 0.0001 MB limit for documents"):
        read_document(path, ReadOptions(max_mb=0.0001))


def test_every_format_has_one_reader_and_its_suffixes_are_unique() -> None:
    suffixes = [s for f in FORMATS for s in f.suffixes]
    assert len(suffixes) == len(set(suffixes))
    assert format_of("Book.EPUB") is not None and format_of("x.pptx") is None
    assert {f.kind for f in FORMATS if f.reader == "paged"} == {Kind.PAGE}
    assert {f.kind for f in FORMATS if f.reader != "paged"} == {Kind.SECTION}


def test_a_zip_that_claims_docx_but_lacks_its_parts(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "x.docx", "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(DocumentError, match="cannot be opened as DOCX"):
        read_document(tmp_path / "x.docx")


def test_a_list_after_a_blank_line_and_a_rule_under_a_list_item_are_not_headings(tmp_path: Path) -> None:
    # A paragraph that begins with "-" once crashed the reader (found on dpkg's triggers.txt).
    (tmp_path / "notes.txt").write_text("Notes\n=====\n\n- one\n- two\n---\n", encoding="utf-8")
    assert locations(tmp_path / "notes.txt") == [("§ 1 · Notes · lines 1–6",
                                                  "Notes\n=====\n\n- one\n- two\n---")]


def test_a_docx_that_would_unpack_past_the_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = make_docx(tmp_path / "bomb.docx", [(0, "a" * (3 * 1024 * 1024))])  # 3 MB of one letter
    assert path.stat().st_size < 100_000
    with pytest.raises(DocumentError, match="would unpack to 3 MB, over the 2 MB glm1m unpacks for one DOCX"):
        read_document(path, ReadOptions(max_unpacked_mb=2))
    normal = make_docx(tmp_path / "normal.docx", GUIDE)
    assert read_document(normal, ReadOptions(max_unpacked_mb=0.01)).page_count == 3


def test_stop_ends_a_reader_stuck_in_mupdf_layout(tmp_path: Path) -> None:
    """A paragraph of one 200,000-letter word: MuPDF lays it out for minutes; stop ends it."""
    import threading

    from tests.integration.test_ocr import children
    from tests.support.metrics import eventually

    path = make_docx(tmp_path / "word.docx", [(0, "a" * 200_000)])
    stop = threading.Event()
    errors: list[DocumentError] = []

    def read() -> None:
        try:
            read_document(path, stop=stop)
        except DocumentError as error:
            errors.append(error)

    reading = threading.Thread(target=read)
    reading.start()
    eventually(lambda: bool(children()), 30, "the reader process started")
    reader = children()
    stop.set()
    reading.join(30)
    assert not reading.is_alive() and "Stopped reading word.docx" in str(errors[0])
    assert not any(Path(f"/proc/{pid}").exists() for pid in reader)


def test_a_long_preformatted_line_is_kept_whole(tmp_path: Path) -> None:
    """Issue 33: MuPDF drew a <pre> line only up to the page's right edge, so a 479-character
    log line ended after ~88 characters (a page's own `white-space: pre` rule as well)."""
    line = " ".join(f"word{i:03d}" for i in range(60))
    page = (f"<html><head><style>pre.log {{ white-space: pre }}</style></head><body><h1>Log</h1>"
            f"<pre class=log>{line}\n  indented  two</pre><p>After.</p></body></html>")
    (tmp_path / "log.html").write_text(page, encoding="utf-8")
    text = read_document(tmp_path / "log.html").pages[0].text
    assert " ".join(text.split()) == f"Log {line} indented two After."
    assert "\n  indented  two\n" in text  # the lines and their spaces as written
    made = make_epub(tmp_path / "made.epub", [("Chapter", ["PRE"])])
    book = tmp_path / "book.epub"
    with zipfile.ZipFile(made) as source, zipfile.ZipFile(book, "w") as z:
        for info in source.infolist():
            z.writestr(info, source.read(info).replace(b"<p>PRE</p>", f"<pre>{line}</pre>".encode()))
    assert "word059" in read_document(book).pages[0].text


def test_a_file_is_read_as_what_its_bytes_are_where_they_say_pdf_docx_or_epub(tmp_path: Path) -> None:
    """Issue 33: a PDF renamed .docx was laid out as a reflowing document (sections, not pages),
    and a DOCX renamed .pdf was refused as no PDF."""
    import pymupdf

    pdf = tmp_path / "report.docx"
    with pymupdf.open() as doc:
        for number in (1, 2, 3):
            doc.new_page().insert_text((72, 72), f"Page {number} of the report.")
        doc.save(pdf)
    text = read_document(pdf)
    assert [(page.location, page.text) for page in text.pages] == [
        (f"p. {n}", f"Page {n} of the report.") for n in (1, 2, 3)]
    docx = make_docx(tmp_path / "guide.pdf", GUIDE)
    assert [page.location for page in read_document(docx).pages] == [
        "§ 1 · Installation · ¶ 1–2", "§ 2 · 配置 Configuration · ¶ 1", "§ 3 · Details · ¶ 1"]
    book = make_epub(tmp_path / "book.docx", [("Chapter One", ["Alpha."])])
    assert read_document(book).pages[0].location == "§ 1 · Chapter One · ¶ 1"
