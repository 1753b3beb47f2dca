"""A document's text in numbered locations, and the one place that knows the location formats: the
marker put before each location, the citation the model writes back, the prompts' "how to cite"
words and the label shown beside an answer.

Two kinds of location. Paged formats (PDF, XPS) have pages a viewer numbers: "[p. 12]". Reflowing
formats (DOCX, EPUB, HTML, Markdown, TXT, FB2, MOBI) have no pages of their own (a viewer's page
count depends on its window), so they are cut into numbered sections at their headings, a long
section into parts at paragraph ends: "[§ 12]", shown beside the answer as "§ 12 · Installation ·
¶ 4–9" (the heading, and which of its paragraphs — or lines, for a text file — the part holds),
which a reader finds with the heading search of any viewer. Either way every location has an
integer number (1, 2, ...), so budget, split and map-reduce work on both alike.

Kept apart from pdf.py so the modules that only read pages (answer, benchmarks on hosts without
PyMuPDF) need no PDF library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

MAX_RANGE_PAGES = 5  # a cited range opens at most this many locations beside the answer
# A marker as marked() writes it (either kind: a document has one), to map offsets to locations.
MARK_LINE = re.compile(r"\[(?:p\.|§) (\d+)\]\n")


class Kind(str, Enum):
    PAGE = "page"
    SECTION = "section"

    @property
    def mark(self) -> str:
        """Before each location in the prompt; the model cites it back as written."""
        return "[p. {}]" if self is Kind.PAGE else "[§ {}]"

    @property
    def cite_how(self) -> str:
        """How the prompts tell the model to cite."""
        return "[p. N]" if self is Kind.PAGE else "[§ N]"

    @property
    def citation(self) -> re.Pattern[str]:
        """A citation as models write it: [p. 3], [p.3], [p. 5-6]; [§ 3], [§3], [§ 5–6],
        [§§ 5-6], [§ 3, § 7], and a heading after the number ([§ 3 Installation]), which some
        models copy from the text. ranges() reads the numbers out of one."""
        return PAGE_CITATION if self is Kind.PAGE else SECTION_CITATION

    def ranges(self, citation: re.Match[str]) -> list[tuple[int, int]]:
        """(first, last) of each location range one citation names."""
        if self is Kind.PAGE:
            return [(int(citation.group(1)), int(citation.group(2) or citation.group(1)))]
        # Only numbers right after a "§": a heading copied into the citation may hold others.
        return [(int(a), int(b or a)) for a, b in SECTION_NUMBER.findall(citation.group())]

    @property
    def unit(self) -> str:
        """Plural, as progress lines and the budget line count them."""
        return "pages" if self is Kind.PAGE else "sections"

    def span(self, first: int, last: int) -> str:
        """"p. 3", "pp. 3–9"; "§ 3", "§§ 3–9": a chunk's or a note's locations in a prompt."""
        one, many = ("p.", "pp.") if self is Kind.PAGE else ("§", "§§")
        return f"{one} {first}" if first == last else f"{many} {first}–{last}"


PAGE_CITATION = re.compile(r"\[p\.\s*(\d+)(?:\s*[-–]\s*(\d+))?\]")
SECTION_CITATION = re.compile(r"\[§[^\]\n]{0,160}\]")
SECTION_NUMBER = re.compile(r"§+\s*(\d+)(?:\s*[-–]\s*§*\s*(\d+))?")


@dataclass(frozen=True)
class Page:
    """One location: a page of a paged document, or a section (part) of a reflowing one."""
    number: int  # 1-based: as printed in a PDF viewer; a section's place in the document
    text: str  # "" for a page without extractable text; kept so numbers stay right
    kind: Kind = Kind.PAGE
    heading: str = ""  # a section's heading ("" before the first heading, or in a text without any)
    span: str = ""  # which part of the heading's section: "¶ 4–9", "lines 120–180"

    def marked(self) -> str:
        return f"{self.kind.mark.format(self.number)}\n{self.text}"

    @property
    def label(self) -> str:
        """The short name beside the answer, as the answer cites it: "p. 3", "§ 3"."""
        return self.kind.span(self.number, self.number)

    @property
    def location(self) -> str:
        """Where a reader finds it: "p. 3"; "§ 3 · Installation · ¶ 4–9"."""
        return " · ".join(part for part in (self.label, self.heading, self.span) if part)


@dataclass(frozen=True)
class DocumentText:
    name: str  # as the user knows it (the uploaded file's name); for display only
    pages: tuple[Page, ...]  # locations, in order
    page_count: int  # locations the document has (a paged one counts its empty pages too)
    # Pages of a damaged file that could not be read (whole): their text is "" (or what was
    # left of it); a door says so beside the text (lost_note), so nothing goes missing unsaid.
    lost: tuple[int, ...] = ()
    # A damaged PDF whose list of pages was lost: its pages were found one by one, and are in
    # the order the file stores them, which may not be the order they were printed in.
    pages_found: bool = False

    @property
    def kind(self) -> Kind:
        return self.pages[0].kind if self.pages else Kind.PAGE

    @property
    def chars(self) -> int:
        return sum(len(page.text) for page in self.pages)

    def marked_text(self) -> str:
        """The document with a marker before each location, the markers the model cites."""
        return "\n\n".join(page.marked() for page in self.pages)

    def cited(self, answer: str) -> list[Page]:
        """The locations an answer cites, in order of first citation."""
        by_number = {p.number: p for p in self.pages}
        return [by_number[n] for n in cited_pages(answer, self.page_count, self.kind) if n in by_number]


def spans(numbers: tuple[int, ...]) -> str:
    """"3", "3, 7", "6–10, 12, 15": page numbers for a sentence (commas only: the Chinese
    catalog takes them over as they are)."""
    runs: list[str] = []
    for number in sorted(set(numbers)):
        if runs and runs[-1].rsplit("–", 1)[-1] == str(number - 1):
            runs[-1] = f"{runs[-1].split('–')[0]}–{number}"
        else:
            runs.append(str(number))
    return ", ".join(runs)


def lost_note(text: DocumentText) -> str | None:
    """The sentence a door shows beside a document some of whose pages could not be read."""
    said: list[str] = []
    if text.pages_found:
        said.append(f"{text.name} is damaged: its list of pages is lost, so its pages were found "
                    f"one by one and may not be in the order they were printed in.")
    if text.lost:
        which = f"Page {spans(text.lost)}" if len(text.lost) == 1 else f"Pages {spans(text.lost)}"
        said.append(f"{which} of {text.name} could not be read (the file is damaged or cut short "
                    f"there): the text lacks {'it' if len(text.lost) == 1 else 'them'}.")
    if not said:
        return None
    return " ".join(said) + " Download or export it again for the whole text."


def page_marks(text: str) -> list[tuple[int, int]]:
    """(offset, location number) of every marker in marked text, in order."""
    return [(m.start(), int(m.group(1))) for m in MARK_LINE.finditer(text)]


def cited_pages(answer: str, page_count: int, kind: Kind = Kind.PAGE) -> list[int]:
    """Locations the answer cites, in order of first citation, limited to those that exist."""
    pages: list[int] = []
    for match in kind.citation.finditer(answer):
        for first, last in kind.ranges(match):
            first, last = min(first, last), max(first, last)  # "[p. 6-5]" means pages 5 and 6
            for number in range(first, min(last, first + MAX_RANGE_PAGES - 1) + 1):
                if 1 <= number <= page_count and number not in pages:
                    pages.append(number)
    return pages
