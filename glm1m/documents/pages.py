"""A document's text page by page, and the one place that knows the page-marker format: the
marker put before each page, and the citation the model writes back.

Kept apart from pdf.py so the modules that only read pages (answer, benchmarks on hosts without
PyMuPDF) need no PDF library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MARK = "[p. {}]"  # before each page in the prompt; the model cites it back as written
MARK_LINE = re.compile(r"\[p\. (\d+)\]\n")  # a marker as marked() writes it, to map offsets to pages
CITATION = re.compile(r"\[p\.\s*(\d+)(?:\s*[-–]\s*(\d+))?\]")  # what models write: [p. 3], [p.3], [p. 5-6]
CITE_HOW = "[p. N]"  # how the prompts tell the model to cite
MAX_RANGE_PAGES = 5  # a cited range opens at most this many pages beside the answer


@dataclass(frozen=True)
class Page:
    number: int  # 1-based, as printed in a PDF viewer
    text: str  # "" for a page without extractable text; kept so numbers stay right

    def marked(self) -> str:
        return f"{MARK.format(self.number)}\n{self.text}"


@dataclass(frozen=True)
class DocumentText:
    name: str  # as the user knows it (the uploaded file's name); for display only
    pages: tuple[Page, ...]
    page_count: int

    @property
    def chars(self) -> int:
        return sum(len(page.text) for page in self.pages)

    def marked_text(self) -> str:
        """The document with a marker before each page, the markers the model cites."""
        return "\n\n".join(page.marked() for page in self.pages)

    def page(self, number: int) -> Page | None:
        return next((p for p in self.pages if p.number == number), None)


def page_marks(text: str) -> list[tuple[int, int]]:
    """(offset, page number) of every page marker in marked text, in order."""
    return [(m.start(), int(m.group(1))) for m in MARK_LINE.finditer(text)]


def cited_pages(answer: str, page_count: int) -> list[int]:
    """Pages the answer cites, in order of first citation, limited to pages that exist."""
    pages: list[int] = []
    for match in CITATION.finditer(answer):
        first = int(match.group(1))
        last = int(match.group(2) or first)
        first, last = min(first, last), max(first, last)  # "[p. 6-5]" means pages 5 and 6
        for number in range(first, min(last, first + MAX_RANGE_PAGES - 1) + 1):
            if 1 <= number <= page_count and number not in pages:
                pages.append(number)
    return pages
