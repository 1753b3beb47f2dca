"""Reflowing text (DOCX, EPUB, HTML, Markdown, TXT, ...) cut into numbered sections: a new section
at every heading, a long one cut into parts at paragraph ends, each part a location a reader can
find ("§ 12 · Installation · ¶ 4–9"). The readers hand over blocks; this module numbers them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from glm1m.documents.pages import DocumentText, Kind, Page

# About one printed page: a cited part then shows the passage itself beside the answer (the
# panel shows 1,500 characters), not the first lines of a 40-page chapter. A paragraph longer
# than this stays whole: a cut inside it would not be a place a reader can find.
PART_CHARS = 3000
HEADING_CHARS = 120  # a heading longer than this is shown cut, with "…"
SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Block:
    """A paragraph (or a heading: `title` set) in reading order. `text` may be "" for a heading
    the document's outline names where no paragraph of the same words stands."""
    text: str
    title: str | None = None
    first_line: int = 0  # text files: the lines it spans (1-based); 0 where lines mean nothing
    last_line: int = 0


def heading_text(title: str) -> str:
    one_line = SPACES.sub(" ", title).strip()
    return one_line if len(one_line) <= HEADING_CHARS else one_line[:HEADING_CHARS - 1] + "…"


class _Builder:
    def __init__(self, part_chars: int) -> None:
        self.part_chars = part_chars
        self.sections: list[Page] = []
        self.heading = ""
        self.paragraph = 0  # of the current heading's section; the heading itself is not counted
        self.texts: list[str] = []
        self.first: tuple[int, int] | None = None  # (paragraph, line) the part begins at
        self.last: tuple[int, int] = (0, 0)
        self.lines = False

    def start_section(self, title: str) -> None:
        self.close()
        self.heading, self.paragraph = heading_text(title), 0

    def add(self, block: Block) -> None:
        text = block.text.strip("\n")
        if not text.strip():
            return
        if block.title is None:
            full = sum(map(len, self.texts)) + len(text) > self.part_chars
            if self.texts and self.first is not None and full:
                self.close()
            self.paragraph += 1
        where = (self.paragraph, block.first_line)
        self.first = self.first or where
        self.last = (self.paragraph, block.last_line)
        self.lines = self.lines or block.first_line > 0
        self.texts.append(text)

    def close(self) -> None:
        if not self.texts:
            return
        first, last = self.first or (0, 0), self.last
        if self.lines:
            span = f"line {first[1]}" if first[1] == last[1] else f"lines {first[1]}–{last[1]}"
        elif last[0] == 0:  # the heading alone
            span = ""
        else:
            start = max(first[0], 1)
            span = f"¶ {start}" if start == last[0] else f"¶ {start}–{last[0]}"
        self.sections.append(Page(len(self.sections) + 1, "\n\n".join(self.texts), Kind.SECTION,
                                  self.heading, span))
        self.texts, self.first = [], None


def sections(blocks: Iterable[Block], part_chars: int = PART_CHARS) -> tuple[Page, ...]:
    """Numbered sections (1, 2, ...) of the blocks, in order; a heading with no text under it
    and no words of its own makes none."""
    builder = _Builder(part_chars)
    for block in blocks:
        if block.title is not None:
            builder.start_section(block.title)
        builder.add(block)
    builder.close()
    return tuple(builder.sections)


def document(name: str, blocks: Iterable[Block], part_chars: int = PART_CHARS) -> DocumentText:
    found = sections(blocks, part_chars)
    return DocumentText(name, found, len(found))
