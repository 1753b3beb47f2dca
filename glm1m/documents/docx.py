"""A DOCX made ready for MuPDF: Strict OOXML made Transitional (ooxml.py), a missing relationships
part of the main document added, and each table row turned into one paragraph, its cells joined
by " | ".

MuPDF 1.28 refuses a DOCX ("Failed to open file as type docx") whose main part has no
relationships part (word/_rels/document.xml.rels), which the standard allows when the document
points at nothing (no styles, images or links), as some generated documents do.

MuPDF 1.28 lays a DOCX table out as one paragraph per cell, all at the left margin, one under the
other, an empty cell as nothing at all: in its text a 3 x 3 table is nine lines (fewer with empty
cells), and which cell belongs to which row or column cannot be told from their places either.
The rows are read from word/document.xml instead, where w:tbl / w:tr / w:tc say it.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path
from xml.etree import ElementTree
from xml.parsers import expat
from xml.sax.saxutils import escape

from glm1m.documents.ooxml import is_strict, transitional_xml

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
TABLE, ROW, CELL, PARAGRAPH, RUN, TEXT = (W + tag for tag in ("tbl", "tr", "tc", "p", "r", "t"))
SPACES = {W + tag for tag in ("tab", "br", "cr", "ptab")}
CELL_SEPARATOR = " | "
PARAGRAPH_SEPARATOR = " / "  # between the paragraphs of one cell
PACKAGE_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
EMPTY_RELS = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
              f'<Relationships xmlns="{PACKAGE_RELS}"/>').encode()
OFFICE_DOCUMENT = "/officeDocument"  # the end of the main part's relationship type, either kind


def main_part(archive: zipfile.ZipFile) -> str:
    """The main document part's name in the zip, as the package's relationships name it."""
    rels = ElementTree.fromstring(transitional_xml(archive.read("_rels/.rels")))
    for rel in rels.iter(f"{{{PACKAGE_RELS}}}Relationship"):
        if rel.get("Type", "").endswith(OFFICE_DOCUMENT) and rel.get("Target"):
            return rel.get("Target", "").lstrip("/")
    return "word/document.xml"


def rels_of(part: str) -> str:
    folder, _, name = part.rpartition("/")
    return f"{folder}/_rels/{name}.rels" if folder else f"_rels/{name}.rels"


def docx_for_mupdf(path: Path) -> bytes | None:
    """The DOCX as MuPDF should read it, or None when it needs no change (no Strict namespaces,
    no missing part, no tables) or is no zip at all (MuPDF then says what it is)."""
    try:
        with zipfile.ZipFile(path) as archive:
            strict = is_strict(archive)
            part = main_part(archive)
            main = archive.read(part)
            tables = b"tbl" in main
            no_rels = rels_of(part) not in archive.namelist()
            if not (strict or tables or no_rels):
                return None
            out = io.BytesIO()
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as copy:
                for info in archive.infolist():
                    if info.is_dir():
                        continue
                    data = main if info.filename == part else archive.read(info)
                    if strict and info.filename.lower().endswith((".xml", ".rels")):
                        data = transitional_xml(data)
                    if info.filename == part and tables:
                        data = rows_as_paragraphs(data)
                    copy.writestr(info.filename, data)
                if no_rels:
                    copy.writestr(rels_of(part), EMPTY_RELS)
            return out.getvalue()
    except (KeyError, zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error,
            ElementTree.ParseError, expat.ExpatError):
        return None


def rows_as_paragraphs(document: bytes) -> bytes:
    """word/document.xml with every outermost table replaced by one paragraph per row (a table
    inside a cell becomes that cell's text).

    Only the tables' bytes are replaced: everything else stays as written. ElementTree's own
    serialisation renames every prefix (w: becomes ns0:) and drops declarations that only
    mc:Ignorable names, and MuPDF 1.28 matches the prefixed names (w:pStyle), so a DOCX with a table
    lost every heading (format-corpus's sample: 10 sections read as 1)."""
    if document[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in document[:4]:
        return document  # UTF-16: the paragraphs written here are UTF-8; MuPDF lays the table out
    spans, prefix = table_spans(document)
    if not spans:
        return document
    root = ElementTree.fromstring(document)
    parents = {child: parent for parent in root.iter() for child in parent}
    outermost = [t for t in root.iter(TABLE) if not has_table_above(t, parents)]
    if len(outermost) != len(spans):  # the two parsers disagree: leave the document as it is
        return document
    pieces: list[bytes] = []
    at = 0
    for (start, end), table in zip(spans, outermost, strict=True):
        pieces += [document[at:start], b"".join(paragraph(row, prefix) for row in row_texts(table))]
        at = end
    return b"".join([*pieces, document[at:]])


def table_spans(document: bytes) -> tuple[list[tuple[int, int]], str]:
    """The byte ranges of the outermost w:tbl elements, in document order, and the prefix the
    document gives the WordprocessingML namespace ("w:", or "" where it is the default)."""
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.namespace_prefixes = True
    spans: list[tuple[int, int]] = []
    opened: list[int] = []
    prefix = ["w:"]

    def start(name: str, _attributes: object) -> None:
        uri, _, rest = name.partition(" ")
        local, _, given = rest.partition(" ")
        if uri == W[1:-1] and local == "tbl":
            opened.append(parser.CurrentByteIndex)
            prefix[0] = f"{given}:" if given else ""

    def end(name: str) -> None:
        uri, _, rest = name.partition(" ")
        if uri == W[1:-1] and rest.partition(" ")[0] == "tbl":
            began = opened.pop()
            if not opened:
                spans.append((began, document.index(b">", parser.CurrentByteIndex) + 1))

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.Parse(document, True)
    return spans, prefix[0]


def has_table_above(element: ElementTree.Element, parents: dict) -> bool:
    above = parents.get(element)
    while above is not None:
        if above.tag == TABLE:
            return True
        above = parents.get(above)
    return False


def within(element: ElementTree.Element, tag: str) -> list[ElementTree.Element]:
    """The `tag` elements under `element` not inside another of them (a row's cells, through
    content controls and custom XML wrappers, but not the cells of a table inside a cell)."""
    found: list[ElementTree.Element] = []
    for child in element:
        if child.tag == tag:
            found.append(child)
        elif child.tag != TABLE:
            found.extend(within(child, tag))
    return found


def row_texts(table: ElementTree.Element) -> list[str]:
    """One line per row with text; a cell merged across n columns (w:gridSpan) is followed by n-1
    empty ones, so the columns below a merged header still line up (as a spreadsheet shows it)."""
    rows: list[list[str]] = []
    for row in within(table, ROW):
        cells: list[str] = []
        for cell in within(row, CELL):
            cells.append(cell_text(cell))
            cells.extend([""] * (span(cell) - 1))
        rows.append(cells)
    return [CELL_SEPARATOR.join(cells).strip() for cells in rows if any(cells)]


def span(cell: ElementTree.Element) -> int:
    found = cell.find(f"{W}tcPr/{W}gridSpan")
    try:
        return max(1, min(int(found.get(f"{W}val", "1")), 64)) if found is not None else 1
    except ValueError:
        return 1


def cell_text(cell: ElementTree.Element) -> str:
    paragraphs: list[list[str]] = []
    for element in cell.iter():
        if element.tag == PARAGRAPH:
            paragraphs.append([])
        elif paragraphs and element.tag == TEXT:
            paragraphs[-1].append(element.text or "")
        elif paragraphs and element.tag in SPACES:
            paragraphs[-1].append(" ")
    texts = (" ".join("".join(words).split()) for words in paragraphs)
    return PARAGRAPH_SEPARATOR.join(text for text in texts if text)


def paragraph(text: str, prefix: str) -> bytes:
    """One paragraph of `text`, its elements named with the document's own prefix."""
    p, r, t = (f"{prefix}{tag}" for tag in ("p", "r", "t"))
    return f'<{p}><{r}><{t} xml:space="preserve">{escape(text)}</{t}></{r}></{p}>'.encode()
