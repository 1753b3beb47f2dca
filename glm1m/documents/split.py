"""Map-reduce chunks of a document, each knowing the locations (pages or sections) it covers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from glm1m.documents.pages import DocumentText, Kind, page_marks

if TYPE_CHECKING:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

# Paragraphs, then sentence ends (Chinese and English), and only then single line breaks: in text
# taken from a PDF those are mostly layout, falling mid-sentence.
SEPARATORS = ["\n\n", "。", "！", "？", ". ", "! ", "? ", "\n", " ", ""]
MIN_CHUNK_CHARS = 200


@dataclass(frozen=True)
class Chunk:
    text: str
    first_page: int  # first and last location: pages or sections, as `kind` says
    last_page: int
    kind: Kind = Kind.PAGE
    # (offset in `text`, location) of each marker the chunk holds, as the text's were counted
    # (pages.page_marks), so a chunk cut again knows its locations without searching its text.
    marks: tuple[tuple[int, int], ...] = ()

    @property
    def pages(self) -> str:
        return self.kind.span(self.first_page, self.last_page)


def splitter(chunk_chars: int) -> RecursiveCharacterTextSplitter:
    # Imported here: langchain takes ~0.2 s to import, and a question on a document read whole
    # (the revisit of a kept 1M-token one answers in seconds) never splits.
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(
        chunk_size=max(1, chunk_chars), chunk_overlap=0,
        separators=SEPARATORS, keep_separator="end", add_start_index=True)


def split_marked(text: str, marks: Sequence[tuple[int, int]], chunk_chars: int, start_page: int,
                 kind: Kind = Kind.PAGE) -> list[Chunk]:
    """Chunks of marked text that begins on `start_page`, each with the locations it covers;
    `marks`: the text's markers (offset, location)."""
    chunks = []
    for piece in splitter(chunk_chars).create_documents([text]):
        start = piece.metadata["start_index"]
        end = start + len(piece.page_content)
        inside = tuple((offset - start, number) for offset, number in marks if start <= offset < end)
        chunks.append(Chunk(piece.page_content, page_at(marks, start, start_page),
                            page_at(marks, max(start, end - 1), start_page), kind, inside))
    return chunks


def split(doc: DocumentText, chunk_chars: int) -> list[Chunk]:
    """Chunks of at most `chunk_chars` characters of the marked text, cut at the best separator."""
    first = doc.pages[0].number if doc.pages else 1
    return split_marked(doc.marked_text(), page_marks(doc), max(MIN_CHUNK_CHARS, chunk_chars), first,
                        doc.kind)


def resplit(chunk: Chunk, chunk_chars: int) -> list[Chunk]:
    """A chunk that turned out too long, cut smaller (below MIN_CHUNK_CHARS too: a dense script in a
    small context needs it); the pieces keep the right pages."""
    return split_marked(chunk.text, chunk.marks, min(chunk_chars, len(chunk.text) - 1), chunk.first_page,
                        chunk.kind)


def page_at(marks: Sequence[tuple[int, int]], offset: int, start_page: int = 1) -> int:
    """The page the character at `offset` is on: the last marker at or before it, else the page
    the text began on."""
    page = start_page
    for position, number in marks:
        if position > offset:
            break
        page = number
    return page
