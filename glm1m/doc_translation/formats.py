"""The registry of document formats that translate in place, by documents/formats.py's own
`filetype` (so a suffix is written once, in that registry): Markdown, text, HTML, DOCX, PDF, EPUB."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from glm1m.doc_translation.docx_layout import read_docx_layout
from glm1m.doc_translation.epub_layout import read_epub_layout
from glm1m.doc_translation.html_layout import read_html_layout
from glm1m.doc_translation.pdf_blocks import opening_text as pdf_opening_text
from glm1m.doc_translation.pdf_layout import read_pdf_layout
from glm1m.doc_translation.sections import Layout
from glm1m.doc_translation.text_layout import read_text_layout
from glm1m.documents.formats import format_of
from glm1m.documents.ocr import OcrOptions
from glm1m.errors import DocumentError
from glm1m.translation.written_in import SAMPLE_CHARS

READERS: dict[str, Callable[[Path], Layout]] = {
    "md": partial(read_text_layout, markdown=True),
    "txt": partial(read_text_layout, markdown=False),
    "html": read_html_layout,
    "docx": read_docx_layout,
    "pdf": read_pdf_layout,
    "epub": read_epub_layout,
}


def translates_in_place(path: Path) -> bool:
    """Whether `glm1m translate` takes `path` as a document (else it is a table)."""
    found = format_of(path.name)
    return found is not None and found.filetype in READERS


def open_layout(path: Path, bilingual: bool = False, ocr: OcrOptions | None = None) -> Layout:
    """The document cut into sections by its format's reader (blocking: call it off the loop).
    `bilingual` and `ocr` are PDF's: original and translated pages alternating, and how its
    scanned pages are read; a bilingual output of another format is refused."""
    found = format_of(path.name)
    assert found is not None and found.filetype in READERS, path
    if found.filetype == "pdf":
        return read_pdf_layout(path, bilingual, ocr)
    if bilingual:
        raise DocumentError(key="doc_tr_bilingual_pdf", name=path.name)
    return READERS[found.filetype](path)


def opening_text(path: Path) -> list[str]:
    """The document's first text, enough to tell which language it is in (written_in.py); read
    off the loop. A PDF's text layer of its first pages (no OCR: a scan leaves the default); the
    other formats are read as the job will read them, and fail as it would."""
    found = format_of(path.name)
    assert found is not None and found.filetype in READERS, path
    if found.filetype == "pdf":
        return pdf_opening_text(path, SAMPLE_CHARS)
    return [section.source for section in READERS[found.filetype](path).sections]
