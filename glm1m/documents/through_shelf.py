"""Reading and counting a document through the user's shelf (shelf.py), for the one document
path both doors take (asking.open_file). A hit costs a hash of the file and a JSON read; a miss
reads (OCR included) and counts as before, then keeps the result."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from glm1m.chat import close_now
from glm1m.documents.budget import Budget, measure
from glm1m.documents.formats import ReadOptions, format_of, read_document_async
from glm1m.documents.limits import reading_slot
from glm1m.documents.pages import DocumentText
from glm1m.documents.shelf import Shelf, ShelfFull, ShelfKey, Shelved, count_key, file_sha256, server_key
from glm1m.llm import Llm, Piece
from glm1m.progress import OnProgress, ignore


def read_way(name: str, options: ReadOptions) -> str:
    """What changes the text besides the bytes: the format (by the name's suffix) and, for paged
    formats, OCR's mode, languages and resolution (reflowing formats are never OCR'd)."""
    found = format_of(name)
    if found is None:
        return "unknown"
    if found.reader != "paged":
        return found.filetype
    ocr = options.ocr
    return f"{found.filetype} ocr={ocr.mode.value} lang={ocr.languages} dpi={ocr.dpi}"


def key_of(path: Path, name: str, options: ReadOptions) -> ShelfKey:
    """Hashes the whole file: call it off the event loop (about 1 s a GB)."""
    return ShelfKey(file_sha256(path), read_way(name, options), path.stat().st_size)


async def find(shelf: Shelf, path: Path, name: str, options: ReadOptions
               ) -> tuple[ShelfKey, Shelved | None]:
    """The file's key, and its kept text when the shelf has this read of it."""
    key = await asyncio.to_thread(key_of, path, name, options)
    return key, await shelf.aio.find(key, name)


async def read_and_keep(shelf: Shelf, key: ShelfKey, path: Path, name: str, options: ReadOptions,
                        on_progress: OnProgress = ignore) -> tuple[Shelved, ShelfFull | None]:
    """Read the file (a miss) and keep it. When the shelf is full the document is still given
    back, not kept, with the ShelfFull whose sentence the door shows (what to delete). Raises
    LimitReached when options.reads_per_user documents of this shelf's user are being read."""
    with reading_slot(str(shelf.root), options.reads_per_user, name):  # limits.py
        text = await read_document_async(path, options, name, on_progress)
    try:
        return await shelf.aio.keep(key, name, text), None
    except ShelfFull as full:
        return Shelved(key, text, 0.0, hit=False), full


async def read_through(shelf: Shelf, path: Path, name: str, options: ReadOptions,
                       on_progress: OnProgress = ignore,
                       on_miss: Callable[[str], Awaitable[None]] | None = None
                       ) -> tuple[Shelved, ShelfFull | None]:
    """find, else read_and_keep; `on_miss(name)` is awaited first then (a door says it reads)."""
    key, shelved = await find(shelf, path, name, options)
    if shelved is not None:
        return shelved, None
    if on_miss is not None:
        await on_miss(name)
    return await read_and_keep(shelf, key, path, name, options, on_progress)


def set_name(text: DocumentText) -> str:
    """What a set's count and reads are kept under: a digest of its text as the model reads it.
    The documents, their order (letters), names and ways of reading all change that text, and so
    the count; the served model and context are the count's own key (count_key)."""
    return hashlib.sha256(text.marked_text().encode()).hexdigest()[:32]


async def measure_through(shelf: Shelf, shelved: Shelved, llm: Llm, model: str, threshold: int,
                          on_progress: OnProgress = ignore, of_set: DocumentText | None = None,
                          max_tokens: int | None = None) -> Budget:
    """The document's budget: its kept count for this served model and context, else counted by
    the server's /tokenize (budget.measure, which stops past `max_tokens`) and kept. `of_set`: the
    text of a set `shelved` is one of, measured and kept (under set_name) instead: a set of 880K
    tokens took 1.8 s to count again on an H200, where its first answer byte can come 0.6 s after
    the question."""
    max_model_len = await llm.max_model_len()
    counted_as = count_key(model, max_model_len)
    name = set_name(of_set) if of_set is not None else None
    kept = await shelf.aio.count(shelved.key, counted_as, name)
    text = of_set or shelved.text
    if kept is not None:
        tokens, chars = kept
        return Budget(pages=len(text.pages), tokens=tokens, chars=chars, max_model_len=max_model_len,
                      threshold=threshold, unit=text.kind.unit)
    budget = await measure(text, llm, threshold, on_progress, max_tokens)
    await shelf.aio.keep_count(shelved.key, counted_as, budget.tokens, budget.chars, name)
    return budget


@dataclass(frozen=True)
class Sending:
    """A kept document on its way, whole, to one server (server_key), and when that server last
    read it (None: never, as far as this shelf knows). Its prefix cache (and KV tier) may still
    hold it then: a revisit's answer started in 8-25 s at a million tokens on one H200, where a
    first read takes about 9 minutes (issue 27); whether it still does, nothing cheap can tell."""
    shelf: Shelf
    key: ShelfKey
    server: str
    before: float | None
    of_set: str | None = None  # a set's (set_name), kept under `key`, one of its documents

    @property
    def a_set(self) -> bool:
        return self.of_set is not None


async def sending(shelf: Shelf, shelved: Shelved, llm: Llm, model: str, base_url: str,
                  of_set: DocumentText | None = None) -> Sending:
    """`of_set`: the text of a set `shelved` is one of, sent instead of it alone."""
    server = server_key(model, await llm.max_model_len(), base_url)
    name = set_name(of_set) if of_set is not None else None
    return Sending(shelf, shelved.key, server,
                   await shelf.aio.sent_at(shelved.key, server, name), name)


async def noting_read(to: Sending, pieces: AsyncIterator[Piece]) -> AsyncIterator[Piece]:
    """`pieces` of a whole-document answer. Once the first arrives the server has read all of the
    document, so the shelf notes it then (a read stopped before is not noted)."""
    first = True
    try:
        async for piece in pieces:
            if first:
                first = False
                await to.shelf.aio.keep_sent(to.key, to.server, time.time(), to.of_set)
            yield piece
    finally:
        await close_now(pieces)
