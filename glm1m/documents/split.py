"""Map-reduce chunks of a document, each knowing the pages it covers."""

from __future__ import annotations

from dataclasses import dataclass

from langchain_text_splitters import RecursiveCharacterTextSplitter

from glm1m.documents.pages import DocumentText, page_marks

# Paragraphs, then sentence ends (Chinese and English), and only then single line breaks: in text
# taken from a PDF those are mostly layout, falling mid-sentence.
SEPARATORS = ["\n\n", "。", "！", "？", ". ", "! ", "? ", "\n", " ", ""]
MIN_CHUNK_CHARS = 200


@dataclass(frozen=True)
class Chunk:
    text: str
    first_page: int
    last_page: int

    @property
    def pages(self) -> str:
        return f"p. {self.first_page}" if self.first_page == self.last_page else \
            f"pp. {self.first_page}–{self.last_page}"


def split(doc: DocumentText, chunk_chars: int) -> list[Chunk]:
    """Chunks of at most `chunk_chars` characters of the marked text, cut at the best separator."""
    text = doc.marked_text()
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=max(MIN_CHUNK_CHARS, chunk_chars), chunk_overlap=0,
        separators=SEPARATORS, keep_separator="end", add_start_index=True)
    marks = page_marks(text)
    chunks = []
    for piece in splitter.create_documents([text]):
        start = piece.metadata["start_index"]
        end = start + len(piece.page_content)
        chunks.append(Chunk(piece.page_content, page_at(marks, start), page_at(marks, max(start, end - 1))))
    return chunks


def page_at(marks: list[tuple[int, int]], offset: int) -> int:
    """The page the character at `offset` is on: the last marker at or before it."""
    page = marks[0][1] if marks else 1
    for position, number in marks:
        if position > offset:
            break
        page = number
    return page
