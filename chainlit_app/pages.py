"""A document's text page by page, as extraction leaves it. Kept apart from pdf.py so the modules
that only read pages (documents, benchmarks on hosts without PyMuPDF) need no PDF library."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Page:
    number: int  # 1-based, as printed in a PDF viewer
    text: str  # "" for a page without extractable text; kept so numbers stay right


@dataclass(frozen=True)
class PdfText:
    name: str  # as the user knows it (the uploaded file's name); for display only
    pages: tuple[Page, ...]
    page_count: int

    @property
    def chars(self) -> int:
        return sum(len(page.text) for page in self.pages)
