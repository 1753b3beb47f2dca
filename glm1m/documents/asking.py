"""The one way a document is opened and asked, for both doors (the page, `glm1m summarize`):
through the user's shelf (read once, counted once: through_shelf.py), its strategy chosen and
checked, then each answer streamed (answer.py) with one heartbeat until its first piece.

A door supplies only how to ask the person and how to show what happens (`Door`); what happens
when — the shelf, the count, the check, noting a whole read, teaching the prefill clock — is here.

    opened = await open_file(path, name, shelf, options, llm, settings, max_tokens, door)
    async for piece in ask(opened.doc, question, llm, params, door, clock, opened.to): ...
    async for piece in ask(opened.doc, follow_up, llm, params, door, clock): ...

Several documents asked together (sets.py): `open_files`, each read through the shelf in turn,
then their set's text counted and its strategy chosen as one document's is.

    opened = await open_files([(path_a, name_a), (path_b, name_b)], shelf, options, llm, ...)
    async for piece in ask(opened.doc, question, llm, params, door, to=opened.to, fresh=True): ...
    opened.documents.cited(answer)   # [Cited("B", "contract.pdf", page 12), ...]
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from glm1m.chat import close_now
from glm1m.documents.answer import OpenDocument, answer, with_strategy
from glm1m.documents.budget import Budget, Strategy, measure
from glm1m.documents.formats import ReadOptions
from glm1m.documents.heartbeat import until_first
from glm1m.documents.lookup import Lookup
from glm1m.documents.prompt_ids import KeptIds
from glm1m.documents.sets import DocumentSet
from glm1m.documents.shelf import Shelf, ShelfFull, Shelved
from glm1m.documents.through_shelf import Sending, measure_through, noting_read, read_through, sending
from glm1m.llm import ChatParams, Llm, Piece
from glm1m.progress import OnProgress, Progress
from glm1m.serving import PrefillClock
from glm1m.settings import Settings


@dataclass(frozen=True)
class Opened:
    """A document opened by open_file: what it reads, how it came (`shelved.hit`: from the shelf),
    and the server its first question goes to (`to.before`: when that server last read it whole)."""
    doc: OpenDocument
    shelved: Shelved
    to: Sending


@dataclass(frozen=True)
class OpenedSet:
    """Documents opened together by open_files: the set (letters, names, citations), its text as
    the model reads it (`doc`), and how each document read now came (`shelved`, in the set's
    order; not those the set had before, nor a file it held already), and the server its first
    question goes to (`to`, kept under the first of `shelved`; None when none was read now)."""
    documents: DocumentSet
    doc: OpenDocument
    shelved: tuple[Shelved, ...]
    to: Sending | None = None


@dataclass(frozen=True)
class Asked:
    """A question on its way, as a door shows its wait."""
    doc: OpenDocument
    first: bool  # the first question since the document was opened; else a follow-up
    before: float | None  # when this server last read it whole, as the shelf knew at the opening

    @property
    def again(self) -> bool:
        """This server read the document before (a follow-up; or the shelf says so): if it still
        holds it, the answer starts in seconds instead of after a whole read."""
        return not self.first or self.before is not None


class Door:
    """How a door asks the person and shows what happens while a document is opened and asked.
    These defaults ask nothing and show nothing; each door overrides what it says."""

    tick_s: float = 5.0  # how often `waiting` is called until the answer's first piece

    def progress(self, progress: Progress) -> None:
        """Pages read, tokens counted, parts read: always called on the event loop (also while
        the file is read in a worker thread)."""

    async def reading(self, name: str) -> None:
        """The file is not on the shelf: it is read now (OCR included), with progress."""

    async def read(self, shelved: Shelved, full: ShelfFull | None) -> None:
        """The text is in: from the shelf (`shelved.hit`), or read now and kept, or read and not
        kept (`full`: the shelf's sentence, what to delete). Its tokens are counted next."""

    async def already(self, name: str, label: str) -> None:
        """A file attached to a set holds the text of its document `label` already: not added
        again (its tokens would count twice and its answers cite two letters for one text)."""

    async def choose(self, name: str, budget: Budget, answer_tokens: int, before: float | None
                     ) -> Strategy:
        """How to read it: ask the person where it matters. `before`: when the server last read
        it whole (the shelf's note), None if it never did. The budget's default unless overridden."""
        return budget.default(answer_tokens)

    async def asking(self, asked: Asked) -> None:
        """The question goes: the wait for its first piece begins."""

    async def waiting(self, asked: Asked, elapsed_s: float) -> None:
        """Still no piece after `elapsed_s`: called every `tick_s` until the first."""

    async def answering(self, asked: Asked, elapsed_s: float) -> None:
        """The first piece came, `elapsed_s` after the question went; it follows at once."""

    async def looked_up(self, lookup: Lookup) -> None:
        """Looking things up (Strategy.LOOK_UP): the model asked for this lookup, and reads its
        result next."""


async def open_file(path: Path, name: str, shelf: Shelf, options: ReadOptions, llm: Llm,
                    settings: Settings, answer_tokens: int, door: Door) -> Opened:
    """Read `path` (attached as `name`) through `shelf`, count it, let `door` choose the strategy,
    check it. Raises DocumentError when the file cannot be read or the chosen strategy cannot read
    it with an answer of `answer_tokens` (a full shelf raises nothing: `door.read` is told), and
    the server's errors as they come."""
    # A miss is read off the event loop (a worker thread, OCR processes), stopped with the task.
    shelved, full = await read_through(shelf, path, name, options, on_loop(door.progress), door.reading)
    await door.read(shelved, full)
    return await open_shelved(shelved, shelf, llm, settings, answer_tokens, door)


async def open_shelved(shelved: Shelved, shelf: Shelf, llm: Llm, settings: Settings, answer_tokens: int,
                       door: Door) -> Opened:
    """A document's kept text (read now, or named on the shelf: `glm1m grid --shelf`) counted
    through `shelf` and its strategy chosen and checked, as open_file does once it has read."""
    budget = await measure_through(shelf, shelved, llm, settings.model,
                                   settings.whole_document_threshold, door.progress,
                                   max_tokens=settings.document_max_tokens)
    to = await sending(shelf, shelved, llm, settings.model, settings.base_url)
    strategy = await door.choose(shelved.text.name, budget, answer_tokens, to.before)
    doc = with_strategy(shelved.text, budget, strategy, answer_tokens, settings, KeptIds(shelf, shelved.key))
    return Opened(doc, shelved, to)


async def open_files(files: Sequence[tuple[Path, str]], shelf: Shelf, options: ReadOptions, llm: Llm,
                     settings: Settings, answer_tokens: int, door: Door,
                     before: DocumentSet | None = None) -> OpenedSet:
    """open_file for documents asked together (`files`: path and attached name, in the order
    they are labelled A, B, …): each read through `shelf` in turn (`door.reading`, `door.read` for
    each), then the set's text counted and its strategy chosen and checked as one document's.
    `before`: the documents a chat has open already; the files come after them (C after A and B,
    which stay the prompt's unchanged prefix), a file whose text one of them holds is not added
    (`door.already`). The set's count, its reads and its prompt's ids are kept on the shelf as
    one document's are (settle says where), so the same set opened again is not counted again
    (/tokenize takes seconds for a million tokens). Raises as open_file does."""
    documents = before or DocumentSet(())
    found: list[Shelved] = []
    for path, name in files:
        shelved, full = await read_through(shelf, path, name, options, on_loop(door.progress),
                                           door.reading)
        await door.read(shelved, full)
        if (label := documents.label_of(shelved.text)) is not None:
            await door.already(name, label)
            continue
        documents = documents.with_document(shelved.text)
        found.append(shelved)
    return await settle(documents, found, shelf, llm, settings, answer_tokens, door)


async def settle(documents: DocumentSet, found: Sequence[Shelved], shelf: Shelf, llm: Llm,
                 settings: Settings, answer_tokens: int, door: Door) -> OpenedSet:
    """Count `documents` as one and let `door` choose how to read them (open_files' end; also a
    chat's set changed without reading a file: one added from the shelf, one taken out).
    `found`: those of them read now, in order. Raises as open_file does."""
    text = documents.text()
    if not found:  # nothing here read through the shelf now: no entry to keep the set under
        budget = await measure(text, llm, settings.whole_document_threshold, door.progress,
                               settings.document_max_tokens)
        strategy = await door.choose(documents.name, budget, answer_tokens, None)
        return OpenedSet(documents, with_strategy(text, budget, strategy, answer_tokens, settings),
                         tuple(found))
    # The set is kept under the first document read now (the first of the set when all are): its
    # count, its reads and its prompt's ids. Any of its documents would do, since the set's name
    # (set_name) and its ids' name digest its whole text; the first is the one a set attached
    # again in the same order finds, and its removal from the shelf takes the set's files with it.
    # A set of one is that document, its own count and reads kept.
    of_set = text if len(documents.documents) > 1 else None
    budget = await measure_through(shelf, found[0], llm, settings.model,
                                   settings.whole_document_threshold, door.progress, of_set,
                                   settings.document_max_tokens)
    to = await sending(shelf, found[0], llm, settings.model, settings.base_url, of_set)
    strategy = await door.choose(documents.name, budget, answer_tokens, to.before)
    doc = with_strategy(text, budget, strategy, answer_tokens, settings, KeptIds(shelf, found[0].key))
    return OpenedSet(documents, doc, tuple(found), to)


async def ask(doc: OpenDocument, question: str, llm: Llm, params: ChatParams, door: Door,
              clock: PrefillClock | None = None, to: Sending | None = None, fresh: bool = False
              ) -> AsyncIterator[Piece]:
    """Stream the cited answer to `question` (answer.answer), telling `door` while the server
    reads and when the answer begins. `to`: for the first question after open_file (its
    Opened.to): a whole read is noted on the shelf once its answer begins, and unless that server
    read it before, the wait teaches `clock` this server's prefill speed. None for a follow-up.
    `fresh`: the first question on a set (open_files; its OpenedSet.to, when it has one, is
    noted as one document's): its earlier documents may be in the server's cache already, so
    pass no `clock`. The answer's stream is closed when this is, however it ends."""
    asked = Asked(doc, first=to is not None or fresh, before=to.before if to is not None else None)
    pieces = answer(doc, question, llm, params, door.progress, door.looked_up)
    if to is not None and doc.strategy is Strategy.WHOLE:
        pieces = noting_read(to, pieces)  # the next chat that attaches it is told this server read it

    async def first(seconds: float) -> None:
        # A revisit served from the cache says nothing of prefill speed (8 s for a million
        # tokens would make every later estimate sixty times too short).
        if clock is not None and not asked.again and doc.strategy is Strategy.WHOLE:
            clock.observe(doc.budget.tokens, seconds)
        await door.answering(asked, seconds)

    async def tick(seconds: float) -> None:
        await door.waiting(asked, seconds)

    beating = until_first(pieces, tick, door.tick_s, first)
    try:
        await door.asking(asked)
        async for piece in beating:
            yield piece
    finally:
        await close_now(beating)
        await close_now(pieces)  # when `beating` never started, it cannot close them itself


def on_loop(progress: OnProgress) -> OnProgress:
    """`progress` for work in a worker thread: called on this event loop, not in the thread."""
    loop = asyncio.get_running_loop()

    def report(update: Progress) -> None:
        loop.call_soon_threadsafe(progress, update)
    return report
