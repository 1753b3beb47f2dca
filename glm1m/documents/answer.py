"""Questions about a whole document, answered with page citations. No UI imports.

Whole document (default while it fits under a threshold): the document goes in front of the model
at once, with page markers, and the question goes last — so every follow-up shares the same prompt
prefix byte for byte and vLLM's prefix cache serves it. Map-reduce (default past the threshold, the
only way past the served context): token-sized chunks, each read with its page range, answered
concurrently, then the notes are combined into one cited answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

from glm1m.documents.budget import PROMPT_OVERHEAD_TOKENS, Budget, Strategy, measure
from glm1m.documents.pages import CITE_HOW, DocumentText
from glm1m.documents.split import Chunk, split
from glm1m.llm import ChatParams, Llm, Message
from glm1m.progress import OnProgress, Progress, ignore
from glm1m.settings import Settings

SUMMARY_REQUEST = ("Summarise the whole document: its purpose, its main points in order, and "
                   "anything a reader must not miss.")
SYSTEM = ("You answer questions about the document the user gives you, in the language of the "
          f"question. Every statement must cite the page it comes from as {CITE_HOW}, using the page "
          "markers in the document. If the document does not say, answer that it does not.")
MIN_CHUNK_TOKENS = 256


@dataclass(frozen=True)
class MapReduce:
    chunk_tokens: int
    concurrency: int
    note_tokens: int

    @classmethod
    def within(cls, budget: Budget, chunk_tokens: int, concurrency: int, note_tokens: int) -> MapReduce:
        """Chunks must leave room for the instructions and the notes inside the served context."""
        room = budget.max_model_len - PROMPT_OVERHEAD_TOKENS - note_tokens
        return cls(max(MIN_CHUNK_TOKENS, min(chunk_tokens, room)), concurrency, note_tokens)

    @classmethod
    def of(cls, budget: Budget, settings: Settings) -> MapReduce:
        return cls.within(budget, settings.map_chunk_tokens, settings.map_concurrency,
                          settings.map_note_tokens)


@dataclass(frozen=True)
class OpenDocument:
    """A document a session asks about, as read and measured once: text, budget, strategy, plan."""
    text: DocumentText
    budget: Budget
    strategy: Strategy
    plan: MapReduce

    @property
    def name(self) -> str:
        return self.text.name


async def open_document(text: DocumentText, llm: Llm, settings: Settings, answer_tokens: int,
                        strategy: Strategy | None = None, on_progress: OnProgress = ignore
                        ) -> OpenDocument:
    """Measure the text and fix how it is read: `strategy`, else the budget's default. Raises
    DocumentError when the strategy cannot read it with an answer of `answer_tokens`."""
    budget = await measure(text, llm, settings.whole_document_threshold, on_progress)
    strategy = strategy or budget.default(answer_tokens)
    budget.check(strategy, answer_tokens)
    return OpenDocument(text, budget, strategy, MapReduce.of(budget, settings))


async def answer(doc: OpenDocument, question: str, llm: Llm, params: ChatParams,
                 on_progress: OnProgress = ignore) -> AsyncIterator[str]:
    """Stream a cited answer. Raises DocumentError when the strategy cannot take this answer length."""
    doc.budget.check(doc.strategy, params.max_tokens)
    if doc.strategy is Strategy.WHOLE:
        pieces = llm.stream_chat(whole_prompt(doc.text, question), params)
    else:
        pieces = ask_map_reduce(doc, question, llm, params, on_progress)
    async for piece in pieces:
        yield piece


def whole_prompt(text: DocumentText, question: str) -> list[Message]:
    """Document first, question last: follow-ups share the prefix byte for byte."""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"<document name=\"{text.name}\">\n{text.marked_text()}\n"
                                        f"</document>\n\nQuestion: {question}"}]


def chunks_of(doc: OpenDocument) -> list[Chunk]:
    """Token-sized chunks: characters per token as measured on this document by the server."""
    chars_per_token = max(doc.budget.chars / max(doc.budget.tokens, 1), 0.5)
    return split(doc.text, int(doc.plan.chunk_tokens * chars_per_token))


def note_prompt(name: str, chunk: Chunk, question: str) -> list[Message]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"This is one part ({chunk.pages}) of the document {name}.\n"
                                        f"<part>\n{chunk.text}\n</part>\n\nWrite short notes, with page "
                                        f"citations, of what this part says about: {question}"}]


def combine_prompt(name: str, notes: list[str], question: str) -> list[Message]:
    combined = "\n\n".join(notes)
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Notes taken part by part from the document {name}, with "
                                        f"page citations:\n\n{combined}\n\nFrom these notes, answer: "
                                        f"{question}\nKeep the page citations {CITE_HOW}."}]


async def ask_map_reduce(doc: OpenDocument, question: str, llm: Llm, params: ChatParams,
                         on_progress: OnProgress = ignore) -> AsyncIterator[str]:
    """Notes from every chunk (concurrently, bounded), then one streamed answer from the notes."""
    chunks = chunks_of(doc)
    limit = asyncio.Semaphore(doc.plan.concurrency)
    note_params = replace(params, temperature=0.2, max_tokens=doc.plan.note_tokens, stop=None)
    started = Progress("reading", 0, len(chunks), unit="parts")
    done = 0

    async def note(chunk: Chunk) -> str:
        nonlocal done
        async with limit:
            text = await llm.complete(note_prompt(doc.name, chunk, question), note_params)
        done += 1
        on_progress(replace(started, done=done))
        return f"Notes on {chunk.pages}:\n{text.strip()}"

    on_progress(started)
    tasks = [asyncio.create_task(note(c)) for c in chunks]
    try:
        notes = await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
    on_progress(Progress("combining notes", len(chunks), len(chunks), unit="parts"))
    async for piece in llm.stream_chat(combine_prompt(doc.name, list(notes), question), params):
        yield piece
