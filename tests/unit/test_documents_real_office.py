"""Office files of the kinds real ones brought (issue 23): Strict OOXML documents and workbooks
(Word's and Excel's "Strict Open XML" save option), and DOCX tables kept as rows."""

from __future__ import annotations

import asyncio
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import openpyxl
import pymupdf
import pytest

from glm1m.documents.formats import read_document
from glm1m.documents.ooxml import transitional_xml
from glm1m.translation.fanout import Job
from glm1m.translation.job import run_job
from glm1m.translation.xlsx import open_workbook, rows, sheet_names
from tests.support.documents import DOCX_TYPES, OFFICE_DOCUMENT, RELS, W, docx_with_body, make_docx
from tests.support.scripted_llm import ScriptedLlm

# Transitional → Strict, as Word and Excel write it (ISO/IEC 29500 Strict drops the "2006").
STRICT = {b"http://schemas.openxmlformats.org/wordprocessingml/2006/main":
          b"http://purl.oclc.org/ooxml/wordprocessingml/main",
          b"http://schemas.openxmlformats.org/spreadsheetml/2006/main":
          b"http://purl.oclc.org/ooxml/spreadsheetml/main",
          b"http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties":
          b"http://purl.oclc.org/ooxml/officeDocument/relationships/extendedProperties",
          b"http://schemas.openxmlformats.org/officeDocument/2006/relationships":
          b"http://purl.oclc.org/ooxml/officeDocument/relationships",
          b"http://schemas.openxmlformats.org/drawingml/2006/main":
          b"http://purl.oclc.org/ooxml/drawingml/main"}


def as_strict(path: Path) -> Path:
    """The same package with every Transitional namespace and relationship type made Strict."""
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            for transitional, strict in STRICT.items():
                data = data.replace(transitional, strict)
            archive.writestr(name, data)
    return path


def test_a_strict_docx_reads_as_its_transitional_twin(tmp_path: Path) -> None:
    outline = [(1, "Meeting transcript"), (0, "Alice: 我们开始吧。"), (0, "Bob: Agreed.")]
    twin = make_docx(tmp_path / "twin.docx", outline)
    strict = as_strict(make_docx(tmp_path / "transcript.docx", outline))
    assert b"purl.oclc.org" in zipfile.ZipFile(strict).read("word/document.xml")
    with pytest.raises(pymupdf.FileDataError):
        pymupdf.open(strict)  # what made it "damaged"
    assert read_document(strict).pages == read_document(twin).pages


def test_strict_names_map_to_transitional_ones() -> None:
    strict = (b'<w:document xmlns:w="http://purl.oclc.org/ooxml/wordprocessingml/main" '
              b'xmlns:r="http://purl.oclc.org/ooxml/officeDocument/relationships" '
              b'Type="http://purl.oclc.org/ooxml/officeDocument/relationships/extendedProperties" '
              b'xmlns:a="http://purl.oclc.org/ooxml/drawingml/main"/>')
    assert transitional_xml(strict) == (
        b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        b'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
        b'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" '
        b'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"/>')


def strict_book(path: Path, rows: int) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Minutes"
    sheet.append(["id", "text"])
    for number in range(1, rows + 1):
        sheet.append([number, f"第{number}项 item {number}"])
    book.save(path)
    return as_strict(path)


def test_a_strict_workbook_shows_its_sheet_and_every_row(tmp_path: Path) -> None:
    path = strict_book(tmp_path / "minutes.xlsx", 76)
    assert sheet_names(path, path.name) == ("Minutes",)  # was "no sheet with cells (only charts)"
    source = open_workbook(path)
    found = list(rows(source))
    assert len(found) == 76 and found[0] == (2, ("第1项 item 1",)) and found[-1][0] == 77


def test_a_strict_workbook_is_translated_and_written_back(tmp_path: Path) -> None:
    path = strict_book(tmp_path / "minutes.xlsx", 3)
    summary = asyncio.run(run_job(open_workbook(path, columns=("text",)), Job("en", retries=0),
                                  ScriptedLlm(), tmp_path / "out.xlsx"))
    assert summary.complete
    sheet = openpyxl.load_workbook(tmp_path / "out.xlsx").active
    found = [(sheet.cell(r, 2).value, sheet.cell(r, 3).value) for r in range(1, 5)]
    assert found == [("text", "text (en)"), *((f"第{n}项 item {n}", f"第{n}项 ITEM {n}") for n in (1, 2, 3))]


def cell(text: str, span: int = 1) -> str:
    props = f'<w:tcPr><w:gridSpan w:val="{span}"/></w:tcPr>' if span > 1 else ""
    paragraphs = "".join(f'<w:p><w:r><w:t xml:space="preserve">{escape(p)}</w:t></w:r></w:p>'
                         for p in text.split("\n"))
    return f"<w:tc>{props}{paragraphs}</w:tc>"


def table_docx(path: Path, body: str) -> Path:
    return docx_with_body(path, body)


def table(*rows: str) -> str:
    return "<w:tbl>" + "".join(f"<w:tr>{row}</w:tr>" for row in rows) + "</w:tbl>"


def paragraph(text: str) -> str:
    return f"<w:p><w:r><w:t>{escape(text)}</w:t></w:r></w:p>"


def test_docx_table_rows_stay_rows_with_their_columns(tmp_path: Path) -> None:
    body = (paragraph("Prices:")
            + table(cell("Item") + cell("Qty") + cell("价格"),
                    cell("Apple") + cell("3") + cell("1.20"),
                    cell("Pear, two lines\nof text") + cell("") + cell("0.80"),
                    cell("Total", span=2) + cell("2.00"))
            + paragraph("After the table."))
    path = table_docx(tmp_path / "prices.docx", body)
    with pymupdf.open(path) as doc:  # MuPDF alone: a cell a line, the empty one gone
        assert doc[0].get_text().split("\n")[1:4] == ["Item", "Qty", "价格"]
    assert read_document(path).pages[0].text == (
        "Prices:\n\nItem | Qty | 价格\n\nApple | 3 | 1.20\n\nPear, two lines / of text | | 0.80\n\n"
        "Total | | 2.00\n\nAfter the table.")


def test_a_table_inside_a_cell_becomes_that_cells_text(tmp_path: Path) -> None:
    inner = table(cell("a") + cell("b"), cell("c") + cell("d"))
    body = table(cell("outer") + f"<w:tc>{inner}<w:p/></w:tc>")
    text = read_document(table_docx(tmp_path / "nested.docx", body)).pages[0].text
    assert text == "outer | a / b / c / d"


def test_a_strict_docx_with_a_table(tmp_path: Path) -> None:
    body = table(cell("Speaker") + cell("Words"), cell("Alice") + cell("Hello."))
    path = as_strict(table_docx(tmp_path / "strict table.docx", body))
    assert read_document(path).pages[0].text == "Speaker | Words\n\nAlice | Hello."


def test_a_docx_whose_main_part_has_no_relationships_part(tmp_path: Path) -> None:
    # Generated documents that point at nothing (no styles, no images) may leave out
    # word/_rels/document.xml.rels, and name their main part with an absolute target.
    path = tmp_path / "transcript.docx"
    rel = OFFICE_DOCUMENT.replace('Target="word/document.xml"', 'Target="/word/document.xml"')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", DOCX_TYPES)
        z.writestr("_rels/.rels", RELS.format(rel))
        z.writestr("word/document.xml", f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w='
                                        f'"{W}"><w:body>{paragraph("0:00:03 Alice: Hello.")}'
                                        f'</w:body></w:document>')
    with pytest.raises(pymupdf.FileDataError):
        pymupdf.open(path)
    assert read_document(path).pages[0].text == "0:00:03 Alice: Hello."


def word_document(path: Path, body: str) -> Path:
    """A document as Word writes its main part: many prefixes declared, some named only by
    mc:Ignorable, headings by style."""
    namespaces = {"wpc": "http://schemas.microsoft.com/office/word/2010/wordprocessingCanvas",
                  "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
                  "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
                  "w": W, "w14": "http://schemas.microsoft.com/office/word/2010/wordml",
                  "wp14": "http://schemas.microsoft.com/office/word/2010/wordprocessingDrawing",
                  "w15": "http://schemas.microsoft.com/office/word/2012/wordml"}
    declared = " ".join(f'xmlns:{name}="{uri}"' for name, uri in namespaces.items())
    return docx_with_body(path, body + "<w:sectPr/>", f'{declared} mc:Ignorable="w14 wp14 w15"')


def heading(level: int, text: str) -> str:
    return (f'<w:p w14:paraId="1A2B3C4D"><w:pPr><w:pStyle w:val="Heading{level}"/></w:pPr>'
            f'<w:r><w:t>{escape(text)}</w:t></w:r></w:p>')


def test_a_docx_with_a_table_keeps_its_heading_sections(tmp_path: Path) -> None:
    """Issue 33: rewriting the tables renamed every prefix (w: became ns0:), and MuPDF, which
    reads the prefixed names, found no heading: 3 sections read as 1, citations all wrong."""
    before = heading(1, "Scope") + paragraph("This contract covers support.")
    after = (heading(1, "Prices") + paragraph("See below.")
             + table(cell("Item") + cell("价格"), cell("Apple") + cell("1.20"))
             + heading(2, "Notice") + paragraph("Thirty days."))
    with_table = read_document(word_document(tmp_path / "contract.docx", before + after))
    without = read_document(word_document(tmp_path / "plain.docx",
                                          before + after.replace(table(cell("Item") + cell("价格"),
                                                                       cell("Apple") + cell("1.20")), "")))
    assert [page.location for page in without.pages] == [
        "§ 1 · Scope · ¶ 1", "§ 2 · Prices · ¶ 1", "§ 3 · Notice · ¶ 1"]
    assert [page.location for page in with_table.pages] == [
        "§ 1 · Scope · ¶ 1", "§ 2 · Prices · ¶ 1–3", "§ 3 · Notice · ¶ 1"]  # the table's two rows
    assert "Item | 价格\n\nApple | 1.20" in with_table.pages[1].text


def test_only_the_tables_bytes_change(tmp_path: Path) -> None:
    from glm1m.documents.docx import rows_as_paragraphs

    body = heading(1, "A") + table(cell("x") + cell("y")) + paragraph("tail")
    path = word_document(tmp_path / "a.docx", body)
    original = zipfile.ZipFile(path).read("word/document.xml")
    rewritten = rows_as_paragraphs(original)
    head, _, tail = original.partition(table(cell("x") + cell("y")).encode())
    assert rewritten == head + b'<w:p><w:r><w:t xml:space="preserve">x | y</w:t></w:r></w:p>' + tail
