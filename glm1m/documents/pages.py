"""A document's text in numbered locations, and the one place that knows the location formats: the
marker put before each location, the citation the model writes back, the location it asks to read
while it looks things up (and the form its first call is held to), the prompts' "how to cite"
words and the label shown beside an answer.

Two kinds of location. Paged formats (PDF, XPS) have pages a viewer numbers: "[p. 12]". Reflowing
formats (DOCX, EPUB, HTML, Markdown, TXT, FB2, MOBI) have no pages of their own (a viewer's page
count depends on its window), so they are cut into numbered sections at their headings, a long
section into parts at paragraph ends: "[§ 12]", shown beside the answer as "§ 12 · Installation ·
¶ 4–9" (the heading, and which of its paragraphs — or lines, for a text file — the part holds),
which a reader finds with the heading search of any viewer. Either way every location has an
integer number (1, 2, ...), so budget, split and map-reduce work on both alike.

Several documents asked together (sets.py) are one text of labelled locations, Kind.SET: each
document is a block headed with its letter (A, B, … in the order attached) and its file name, and
its markers carry the letter: "[B p. 12]", "[C § 3]". Split and map-reduce see a location of a set
as one integer, its place (`place`: the document's index times PLACE_STRIDE plus its number), so a
part or a note of a set is named "B 12–20", which documents it spans included.

Kept apart from pdf.py so the modules that only read pages (answer, benchmarks on hosts without
PyMuPDF) need no PDF library.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import Enum

from glm1m.catalog import EN, render, said

MAX_RANGE_PAGES = 5  # a cited range opens at most this many locations beside the answer
PAGE_SEPARATOR = "\n\n"  # between two locations' marked text (marked_text)
# Places of one set's document apart: more than any document's locations (a 1M-token document
# has some thousands), so a place names its document and its location at once.
PLACE_STRIDE = 1_000_000


class Kind(str, Enum):
    PAGE = "page"
    SECTION = "section"
    SET = "location"  # a text of several documents' labelled pages and sections (sets.py)

    @property
    def mark(self) -> str:
        """Before each location in the prompt; the model cites it back as written. A set's
        locations keep their own kind; Page.marked puts their letter in."""
        return "[p. {}]" if self is Kind.PAGE else "[§ {}]"

    @property
    def citation(self) -> re.Pattern[str]:
        """A citation as models write it: [p. 3], [p.3], [p. 5-6]; [§ 3], [§3], [§ 5–6],
        [§§ 5-6], [§ 3, § 7], and a heading after the number ([§ 3 Installation]), which some
        models copy from the text. ranges() reads the numbers out of one."""
        return {Kind.PAGE: PAGE_CITATION, Kind.SECTION: SECTION_CITATION}.get(self, SET_CITATION)

    def ranges(self, citation: re.Match[str]) -> list[tuple[int, int]]:
        """(first, last) of each location range one citation names; of a set, places."""
        if self is Kind.SET:
            inner = Kind.PAGE if citation.group(2) == "p." else Kind.SECTION
            found = inner.citation.search(f"[{citation.group(2)}{citation.group(3)}]")
            at = place(citation.group(1), 0)
            return [(at + a, at + b) for a, b in inner.ranges(found)] if found else []
        if self is Kind.PAGE:
            return [(int(citation.group(1)), int(citation.group(2) or citation.group(1)))]
        # Only numbers right after a "§": a heading copied into the citation may hold others.
        return [(int(a), int(b or a)) for a, b in SECTION_NUMBER.findall(citation.group())]

    @property
    def unit(self) -> str:
        """Plural, as progress lines and the budget line count them."""
        return {Kind.PAGE: "pages", Kind.SECTION: "sections"}.get(self, "locations")

    def span(self, first: int, last: int) -> str:
        """"p. 3", "pp. 3–9"; "§ 3", "§§ 3–9": a chunk's or a note's locations in a prompt. Of a
        set, places: "B 12", "B 12–20", "A 40 – B 2"."""
        if self is Kind.SET:
            (a, n), (b, m) = where(first), where(last)
            if a == b:
                return f"{a} {n}" if n == m else f"{a} {n}–{m}"
            return f"{a} {n} – {b} {m}"
        one, many = ("p.", "pp.") if self is Kind.PAGE else ("§", "§§")
        return f"{one} {first}" if first == last else f"{many} {first}–{last}"


PAGE_CITATION = re.compile(r"\[p\.\s*(\d+)(?:\s*[-–]\s*(\d+))?\]")
SECTION_CITATION = re.compile(r"\[§[^\]\n]{0,160}\]")
SECTION_NUMBER = re.compile(r"§+\s*(\d+)(?:\s*[-–]\s*§*\s*(\d+))?")
# A set's citation: the document's letter, then a page's or a section's citation without its "[":
# [B p. 12], [B, p. 12-13], [C § 3], [C §§ 3–4].
SET_CITATION = re.compile(r"\[([A-Z]{1,2})[,:]?\s*(p\.|§)([^\]\n]{0,160})\]")

# A location as a model names it asking to read one (lookup.py's read_location): "B p. 12",
# "[B p. 12]", "B p.12", "B §3", "A, page 3", "p. 3", "3", "pp. 3-4" (its first), "第3页": the
# letter is a capital (a lone "p 3" is a page, not document P), the rest any case.
ASKED_LOCATION = re.compile(r"(?:([A-Z]{1,2})\s*[,:]?\s*)?(?i:(?:pp?\.?|pages?|§{1,2}|sections?)\s*)?"
                            r"(\d+)(?:\s*[-–]\s*\d+)?")
CHINESE_LOCATION = re.compile(r"第\s*(\d+)\s*[页节]")
# A location as structured outputs hold the first lookup's call to it (lookup.first_call), after
# the document's letter: a marker's form without its brackets, "p. 12" or "§ 3" or the number.
LOCATION_PATTERN = r"(p\. |§ )?[0-9]{1,4}"


def asked_location(written: str) -> tuple[str, int] | None:
    """(the document's letter or "", the location's number) a model's `written` names; None
    when it names none."""
    found = ASKED_LOCATION.fullmatch(CHINESE_LOCATION.sub(r"\1", written).strip().strip("[]().。 "))
    return (found.group(1) or "", int(found.group(2))) if found else None


def letter(index: int) -> str:
    """The label of a set's document at `index` (0-based): A, B, … Z, AA, AB, …"""
    return letter(index // 26 - 1) + chr(ord("A") + index % 26) if index >= 26 else chr(ord("A") + index)


def index_of(label: str) -> int:
    """letter's inverse: "A" 0, "Z" 25, "AA" 26."""
    index = 0
    for char in label:
        index = index * 26 + ord(char) - ord("A") + 1
    return index - 1


def place(label: str, number: int) -> int:
    """A set's location as one integer: its document's index times PLACE_STRIDE plus its number
    (a lone document's locations, and document A's, are their numbers)."""
    return (index_of(label) if label else 0) * PLACE_STRIDE + number


def where(at: int) -> tuple[str, int]:
    """place's inverse: the document's letter and the location's number."""
    index, number = divmod(at, PLACE_STRIDE)
    return letter(index), number


@dataclass(frozen=True)
class Page:
    """One location: a page of a paged document, or a section (part) of a reflowing one."""
    number: int  # 1-based: as printed in a PDF viewer; a section's place in the document
    text: str  # "" for a page without extractable text; kept so numbers stay right
    kind: Kind = Kind.PAGE
    heading: str = ""  # a section's heading ("" before the first heading, or in a text without any)
    span: str = ""  # which part of the heading's section: "¶ 4–9", "lines 120–180"
    # In a set (sets.py): its document's letter, and the block's header before its first
    # location and the block's end after its last; "" for a lone document.
    doc: str = ""
    head: str = ""
    tail: str = ""

    def marked(self) -> str:
        mark = self.kind.mark.format(self.number)
        if self.doc:
            mark = f"[{self.doc} {mark[1:]}"
        return f"{self.head}{mark}\n{self.text}{self.tail}"

    @property
    def place(self) -> int:
        """Where it is in its text, as the markers and citations name it (a set's letter included)."""
        return place(self.doc, self.number)

    @property
    def label(self) -> str:
        """The short name beside the answer, as the answer cites it: "p. 3", "§ 3"; "B p. 3"."""
        alone = self.kind.span(self.number, self.number)
        return f"{self.doc} {alone}" if self.doc else alone

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
    # A set's text (sets.DocumentSet.text): its documents' names, in letter order, so nothing
    # reads them back out of the blocks' headers; () for a lone document.
    names: tuple[str, ...] = ()

    @property
    def kind(self) -> Kind:
        if self.pages and self.pages[0].doc:
            return Kind.SET
        return self.pages[0].kind if self.pages else Kind.PAGE

    @property
    def chars(self) -> int:
        return sum(len(page.text) for page in self.pages)

    @property
    def content_id(self) -> str:
        """This text's identity, whatever its name or letter: what a button names a document by,
        so that one made for an older list cannot reach the document now in its place."""
        digest = hashlib.sha256()
        for page in self.pages:
            digest.update(f"{page.kind.value}:{page.number}:{len(page.text)}\x00".encode())
            digest.update(page.text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()[:32]

    def marked_text(self) -> str:
        """The document with a marker before each location, the markers the model cites."""
        return PAGE_SEPARATOR.join(page.marked() for page in self.pages)

    def cited(self, answer: str) -> list[Page]:
        """The locations an answer cites, in order of first citation."""
        by_place = {p.place: p for p in self.pages}
        bound = max(by_place, default=0) if self.kind is Kind.SET else self.page_count
        return [by_place[n] for n in cited_pages(answer, bound, self.kind) if n in by_place]


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


def lost_note(text: DocumentText, lang: str = EN) -> str | None:
    """The sentences a door shows beside a document some of whose pages could not be read, in
    `lang`; None when none was lost."""
    found = said("doc_pages_found", name=text.name) if text.pages_found else None
    lost = said("doc_lost_page" if len(text.lost) == 1 else "doc_lost_pages", name=text.name,
                pages=spans(text.lost)) if text.lost else None
    what = said("doc_lost_both", found=found, lost=lost) if found and lost else found or lost
    if what is None:
        return None
    return render(lang, "doc_lost_note", what=what, again=said("doc_lost_again"))


def page_marks(text: DocumentText) -> list[tuple[int, int]]:
    """(offset, location number) of every marker in text.marked_text(), in order; a set's, its
    place. Counted as marked_text writes them, never searched for: a page's own text may hold
    something that reads like a marker."""
    marks, at = [], 0
    for page in text.pages:
        marks.append((at + len(page.head), page.place))
        at += len(page.marked()) + len(PAGE_SEPARATOR)
    return marks


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


# A document's locations as saved (a chat's open document, store.py, and the shelf's text files):
# 2: each location is [number, text, kind, heading, span] (sections of reflowing formats);
# 1: [number, text], pages only — still read, so chats saved before reopen the same.
FORMAT = 2
READ_FORMATS = (1, 2)


def text_body(text: DocumentText) -> dict:
    """A document's locations as saved (a chat's open document and the shelf keep this one form);
    `lost` and `pages_found` only when a damaged file had them."""
    body = {"format": FORMAT, "name": text.name, "page_count": text.page_count,
            "pages": [[p.number, p.text, p.kind.value, p.heading, p.span] for p in text.pages]}
    if text.lost:
        body["lost"] = list(text.lost)
    if text.pages_found:
        body["pages_found"] = True
    return body


def text_of(body: dict) -> DocumentText:
    """text_body's inverse. Raises KeyError, TypeError or ValueError for a body it did not write."""
    if body["format"] not in READ_FORMATS:
        raise ValueError(f"format {body['format']}")
    return DocumentText(str(body["name"]), tuple(location(entry) for entry in body["pages"]),
                        int(body["page_count"]), tuple(int(n) for n in body.get("lost", ())),
                        bool(body.get("pages_found", False)))


def location(entry: list) -> Page:
    """A page or section as saved: [number, text] (format 1) or [number, text, kind, heading, span]."""
    if len(entry) == 2:
        return Page(int(entry[0]), str(entry[1]))
    number, text, kind, heading, span = entry
    return Page(int(number), str(text), Kind(kind), str(heading), str(span))
