"""The registry of document formats that translate in place, by documents/formats.py's own
`filetype` (so a suffix is written once, in that registry): Markdown, text, HTML, DOCX."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from glm1m.doc_translation.docx_layout import read_docx_layout
from glm1m.doc_translation.html_layout import read_html_layout
from glm1m.doc_translation.sections import Layout
from glm1m.doc_translation.text_layout import read_text_layout
from glm1m.documents.formats import format_of

READERS: dict[str, Callable[[Path], Layout]] = {
    "md": partial(read_text_layout, markdown=True),
    "txt": partial(read_text_layout, markdown=False),
    "html": read_html_layout,
    "docx": read_docx_layout,
}


def translates_in_place(path: Path) -> bool:
    """Whether `glm1m translate` takes `path` as a document (else it is a table)."""
    found = format_of(path.name)
    return found is not None and found.filetype in READERS


def open_layout(path: Path) -> Layout:
    """The document cut into sections by its format's reader (blocking: call it off the loop)."""
    found = format_of(path.name)
    assert found is not None and found.filetype in READERS, path
    return READERS[found.filetype](path)
