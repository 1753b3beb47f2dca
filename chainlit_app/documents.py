"""Questions about a whole document: token budget, strategy, page-cited answers. No Chainlit.

Whole document (default while it fits under a threshold): the document goes in front of the model
at once, with page markers, and the question goes last — so every follow-up shares the same prompt
prefix byte for byte and vLLM's prefix cache serves it. Map-reduce (default past the threshold, the
only way past the served context): token-sized chunks, each read with its page range, answered
concurrently, then the notes are combined into one cited answer.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from enum import Enum

from langchain_text_splitters import RecursiveCharacterTextSplitter

from chainlit_app.errors import UserFacingError
from chainlit_app.llm import ChatParams, Llm
from chainlit_app.pages import PdfText

SUMMARY_REQUEST = ("Summarise the whole document: its purpose, its main points in order, and "
                   "anything a reader must not miss.")
SYSTEM = ("You answer questions about the document the user gives you, in the language of the "
          "question. Every statement must cite the page it comes from as [p. N], using the page "
          "markers in the document. If the document does not say, answer that it does not.")
PAGE_MARK = "[p. {}]"
CITATION = re.compile(r"\[p\.\s*(\d+)(?:\s*[-–]\s*(\d+))?\]")
# Paragraphs, then sentence ends (Chinese and English), and only then single line breaks: in text
# taken from a PDF those are mostly layout, falling mid-sentence.
SEPARATORS = ["\n\n", "。", "！", "？", ". ", "! ", "? ", "\n", " ", ""]
TOKENIZE_PAGES_PER_CALL = 64
# Prefill time of one prompt on one H200 (vLLM 0.26.0, GLM-4-9B-Chat-1M shapes, 2026-11-29):
# 28K 1.2 s, 128K 11.3 s, 262K 43.7 s, 512K 161.5 s, 1,047,000 tokens 602 s; least squares fit of
# a*n + b*n^2 to those five points (within 15 % of each, 0.1 % at 1M).
PREFILL_A_S_PER_TOKEN = 3.42e-05
PREFILL_B_S_PER_TOKEN2 = 5.17e-10


class Strategy(str, Enum):
    WHOLE = "whole"
    MAP_REDUCE = "map-reduce"


@dataclass(frozen=True)
class Budget:
    pages: int
    tokens: int
    chars: int
    max_model_len: int
    threshold: int
    answer_tokens: int

    @property
    def fraction(self) -> float:
        return self.tokens / self.max_model_len

    @property
    def fits_whole(self) -> bool:
        return self.tokens + PROMPT_OVERHEAD_TOKENS + self.answer_tokens <= self.max_model_len

    @property
    def default(self) -> Strategy:
        return Strategy.WHOLE if self.fits_whole and self.tokens <= self.threshold else Strategy.MAP_REDUCE

    @property
    def offered(self) -> list[Strategy]:
        return [Strategy.WHOLE, Strategy.MAP_REDUCE] if self.fits_whole else [Strategy.MAP_REDUCE]

    def line(self) -> str:
        return (f"{self.pages:,} pages, {self.tokens:,} tokens — {self.fraction:.1%} of the served "
                f"{self.max_model_len:,}-token context.")


PROMPT_OVERHEAD_TOKENS = 256  # system prompt, question and chat template around the document


def estimate_prefill_s(tokens: int) -> float:
    return PREFILL_A_S_PER_TOKEN * tokens + PREFILL_B_S_PER_TOKEN2 * tokens**2


def describe_wait(tokens: int) -> str:
    seconds = estimate_prefill_s(tokens)
    when = f"about {seconds / 60:.0f} minutes" if seconds >= 90 else f"about {max(1, round(seconds))} s"
    return (f"Estimate for one H200: {when} until the first answer starts (the model reads all "
            f"{tokens:,} tokens first); follow-up questions reuse that work and start fast.")


def marked_text(pdf: PdfText) -> str:
    """The document with a page marker before each page, the markers the model cites."""
    return "\n\n".join(f"{PAGE_MARK.format(p.number)}\n{p.text}" for p in pdf.pages)


async def measure(pdf: PdfText, llm: Llm, threshold: int, answer_tokens: int,
                  on_progress: Callable[[int, int], None] | None = None) -> Budget:
    """Count the document's tokens with the server's own tokenizer, a batch of pages per call."""
    pages = [f"{PAGE_MARK.format(p.number)}\n{p.text}\n\n" for p in pdf.pages]
    tokens = 0
    for start in range(0, len(pages), TOKENIZE_PAGES_PER_CALL):
        tokens += await llm.count_text_tokens("".join(pages[start:start + TOKENIZE_PAGES_PER_CALL]))
        if on_progress is not None:
            on_progress(min(start + TOKENIZE_PAGES_PER_CALL, len(pages)), len(pages))
    return Budget(pages=len(pdf.pages), tokens=tokens, chars=sum(len(p) for p in pages),
                  max_model_len=await llm.max_model_len(), threshold=threshold,
                  answer_tokens=answer_tokens)


def whole_prompt(pdf: PdfText, question: str) -> list[dict[str, str]]:
    """Document first, question last: follow-ups share the prefix byte for byte."""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"<document name=\"{pdf.name}\">\n{marked_text(pdf)}\n"
                                        f"</document>\n\nQuestion: {question}"}]


async def ask_whole(pdf: PdfText, question: str, llm: Llm, params: ChatParams) -> AsyncIterator[str]:
    async for piece in llm.stream_chat(whole_prompt(pdf, question), params):
        yield piece


@dataclass(frozen=True)
class Chunk:
    text: str
    first_page: int
    last_page: int

    @property
    def pages(self) -> str:
        return f"p. {self.first_page}" if self.first_page == self.last_page else \
            f"pp. {self.first_page}–{self.last_page}"


def split(pdf: PdfText, budget: Budget, chunk_tokens: int) -> list[Chunk]:
    """Token-sized chunks: characters per token measured on this document by the server."""
    text = marked_text(pdf)
    chars_per_token = max(budget.chars / max(budget.tokens, 1), 0.5)
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=max(200, int(chunk_tokens * chars_per_token)), chunk_overlap=0,
        separators=SEPARATORS, keep_separator="end", add_start_index=True)
    marks = [(m.start(), int(m.group(1))) for m in re.finditer(r"\[p\. (\d+)\]\n", text)]
    chunks = []
    for piece in splitter.create_documents([text]):
        start = piece.metadata["start_index"]
        end = start + len(piece.page_content)
        first = page_at(marks, start)
        last = page_at(marks, max(start, end - 1))
        chunks.append(Chunk(piece.page_content, first, last))
    return chunks


def page_at(marks: list[tuple[int, int]], offset: int) -> int:
    page = marks[0][1] if marks else 1
    for position, number in marks:
        if position > offset:
            break
        page = number
    return page


@dataclass(frozen=True)
class MapReduce:
    chunk_tokens: int
    concurrency: int
    note_tokens: int


async def ask_map_reduce(pdf: PdfText, budget: Budget, question: str, llm: Llm, params: ChatParams,
                         plan: MapReduce, on_progress: Callable[[str, int, int], None] | None = None
                         ) -> AsyncIterator[str]:
    """Notes from every chunk (concurrently, bounded), then one streamed answer from the notes."""
    chunks = split(pdf, budget, plan.chunk_tokens)
    limit = asyncio.Semaphore(plan.concurrency)
    done = 0

    async def note(chunk: Chunk) -> str:
        nonlocal done
        async with limit:
            text = await llm.complete([
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"This is one part ({chunk.pages}) of the document "
                                            f"{pdf.name}.\n<part>\n{chunk.text}\n</part>\n\nWrite short "
                                            f"notes, with page citations, of what this part says "
                                            f"about: {question}"},
            ], ChatParams(temperature=0.2, max_tokens=plan.note_tokens, extra=params.extra))
        done += 1
        if on_progress is not None:
            on_progress("reading parts", done, len(chunks))
        return f"Notes on {chunk.pages}:\n{text.strip()}"

    tasks = [asyncio.create_task(note(c)) for c in chunks]
    try:
        notes = await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
    combined = "\n\n".join(notes)
    if on_progress is not None:
        on_progress("combining notes", len(chunks), len(chunks))
    async for piece in llm.stream_chat([
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Notes taken part by part from the document {pdf.name}, with "
                                    f"page citations:\n\n{combined}\n\nFrom these notes, answer: "
                                    f"{question}\nKeep the page citations [p. N]."},
    ], params):
        yield piece


def cited_pages(answer: str, page_count: int) -> list[int]:
    """Pages the answer cites, in order of first citation, limited to pages that exist."""
    pages: list[int] = []
    for match in CITATION.finditer(answer):
        first = int(match.group(1))
        last = int(match.group(2) or first)
        for number in range(first, min(last, first + 5) + 1):
            if 1 <= number <= page_count and number not in pages:
                pages.append(number)
    return pages


@dataclass(frozen=True)
class OpenDocument:
    """A document a chat session is asking about, as read and measured once."""
    pdf: PdfText
    budget: Budget
    strategy: Strategy


def check_strategy(budget: Budget, wanted: Strategy) -> None:
    if wanted not in budget.offered:
        raise UserFacingError(
            f"The document is {budget.tokens:,} tokens and the server serves "
            f"{budget.max_model_len:,}, so it cannot be read whole; use map-reduce, or serve a "
            f"longer --max-model-len.")


async def answer(pdf: PdfText, budget: Budget, strategy: Strategy, question: str, llm: Llm,
                 params: ChatParams, plan: MapReduce,
                 on_progress: Callable[[str, int, int], None] | None = None) -> AsyncIterator[str]:
    check_strategy(budget, strategy)
    if strategy is Strategy.WHOLE:
        pieces = ask_whole(pdf, question, llm, params)
    else:
        pieces = ask_map_reduce(pdf, budget, question, llm, params, plan, on_progress)
    async for piece in pieces:
        yield piece


def map_reduce_plan(budget: Budget, chunk_tokens: int, concurrency: int, note_tokens: int) -> MapReduce:
    """Chunks must leave room for the instructions and the notes inside the served context."""
    room = budget.max_model_len - PROMPT_OVERHEAD_TOKENS - note_tokens
    return MapReduce(chunk_tokens=max(256, min(chunk_tokens, room)), concurrency=concurrency,
                     note_tokens=note_tokens)
