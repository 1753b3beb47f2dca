"""A cell's citations checked against its document, and the passages they name.

The citations are read as the app reads an answer's (pages.py's patterns, `DocumentText.cited`);
one naming a location the document does not have ("[p. 40]" of a 12-page file) marks the cell,
since a reader following it finds nothing."""

from __future__ import annotations

from dataclasses import dataclass

from glm1m.documents.pages import DocumentText, Kind, Page

# A passage's words in the "passages" sheet: a whole location, up to what a spreadsheet cell holds
# (Excel's limit is 32,767 characters).
PASSAGE_CHARS = 32_000


@dataclass(frozen=True)
class Passage:
    document: str  # the file's name
    location: str  # where a reader finds it: "p. 3"; "§ 3 · Installation · ¶ 4–9"
    words: str


def missing(text: DocumentText, answer: str) -> list[str]:
    """The citations of `answer` (as written) naming a location `text` does not have."""
    kind = text.kind
    have = {page.place for page in text.pages}
    wrong = []
    for match in kind.citation.finditer(answer):
        # A range's locations are numbered without gaps: its ends say whether all exist.
        ends = [n for first, last in kind.ranges(match) for n in (first, last)]
        if not ends or any(not exists(text, have, n) for n in ends):
            wrong.append(match.group())
    return wrong


def exists(text: DocumentText, have: set[int], number: int) -> bool:
    # A paged document's empty pages count: their numbers are real, only their text is empty.
    return number in have or (text.kind is Kind.PAGE and 1 <= number <= text.page_count)


def passages(text: DocumentText, answer: str) -> list[Passage]:
    """The locations `answer` cites, in order of first citation, with their words."""
    return [passage(text.name, page) for page in text.cited(answer)]


def passage(name: str, page: Page) -> Passage:
    return Passage(name, page.location, page.text[:PASSAGE_CHARS])
