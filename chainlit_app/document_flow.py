"""Documents on the page: read them (in a worker thread), measure them, choose how to read them,
and answer questions about them with the cited pages beside the answer. A chat's documents are
one set (glm1m/documents/sets.py): those of one message, then each attached later, after them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import chainlit as cl

from glm1m.catalog import said
from glm1m.chainlit_app import lookups, metrics, session
from glm1m.chainlit_app.client import llm, prefill_clock
from glm1m.chainlit_app.document_words import budget_line, held_words, set_words, strategy_words
from glm1m.chainlit_app.i18n import EN, count_of, seconds, t
from glm1m.chainlit_app.pacing import coalesce
from glm1m.chainlit_app.passages import cited_passages, demo_cited
from glm1m.chainlit_app.status import (
    AUTHOR,
    Ending,
    StatusLine,
    ask_choice,
    say,
    say_if_cut,
    says_own_stop,
    stream_into,
)
from glm1m.chainlit_app.uploads import Upload
from glm1m.documents.answer import SET_SUMMARY_REQUEST, SUMMARY_REQUEST, OpenDocument
from glm1m.documents.asking import Asked, Door, ask, open_file, open_files
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.formats import ReadOptions
from glm1m.documents.lookup import Limits, Lookup
from glm1m.documents.pages import DocumentText, lost_note
from glm1m.documents.sets import DocumentSet
from glm1m.documents.shelf import Shelf, ShelfFull, Shelved
from glm1m.documents.store import forget, load_set, save
from glm1m.documents.through_shelf import Sending
from glm1m.files import folder_name
from glm1m.progress import Progress
from glm1m.settings import get_settings

KEEP_ALIVE_S = 5.0
STRATEGY_TIMEOUT_S = 600


async def read_documents(files: Sequence[Upload], question: str) -> None:
    """The document path both doors take (glm1m/documents/asking.py), with the page's door:
    through the user's shelf, so the same bytes read before (another chat, another name) are
    neither read, OCR'd nor counted again. Several documents in one message are asked together
    (a set: A, B, … in the order attached); a document attached later in the chat joins the
    chat's set after the others, which stay the prompt's unchanged prefix."""
    settings = get_settings()
    state = session.current()
    lang = state.lang
    door = PageDoor(lang, state.documents)
    to: Sending | None = None  # the server the first question goes to; the shelf notes its read
    began = time.monotonic()
    try:
        with says_own_stop():
            if state.documents is None and len(files) == 1:
                opened = await open_file(files[0].path, files[0].name, user_shelf(),
                                         ReadOptions.of(settings), llm(), settings,
                                         state.params.max_tokens, door)
                documents, doc, to = DocumentSet((opened.shelved.text,)), opened.doc, opened.to
            else:
                together = await open_files([(f.path, f.name) for f in files], user_shelf(),
                                            ReadOptions.of(settings), llm(), settings,
                                            state.params.max_tokens, door, state.documents)
                documents, doc, to = together.documents, together.doc, together.to
    except asyncio.CancelledError:
        # Stopped while reading or counting: the line that said "Counting tokens of …" says it
        # stopped, once (not Chainlit's line too), instead of standing there as if still at work.
        stopped = t(lang, "doc_stopped", name=", ".join(f.name for f in files),
                    seconds=seconds_words(time.monotonic() - began))
        await (door.status.finish(stopped) if door.status is not None else say(stopped))
        raise
    await take_up(documents, doc, door)
    asked = question.strip() or (SUMMARY_REQUEST if len(documents.documents) == 1 else SET_SUMMARY_REQUEST)
    # A set's first read teaches no clock (asking.ask), noted on the shelf or not.
    await ask_document(asked, door, to, fresh=to is None or len(documents.documents) > 1)


async def take_up(documents: DocumentSet, doc: OpenDocument, door: PageDoor) -> None:
    """The chat's documents are now `documents`, read as `doc`: kept with the chat (a reopened
    chat finds them) and said above the door's line ("**A (x) and B (y)**: 2 documents, 4 pages,
    … Reading it whole.")."""
    state = session.current()
    status = door.status
    assert status is not None  # the door's first line made it
    lang = state.lang
    status.head = t(lang, "doc_chosen", name=door.name, budget=budget_line(lang, doc.budget, door.texts),
                    strategy=strategy_words(lang, doc.strategy))
    await status.set("")
    state.documents, state.document = documents, doc
    await asyncio.to_thread(save, doc, document_path(), documents)


async def forget_documents() -> None:
    """The chat has no documents any more: its messages go to the chat again, reopened too."""
    state = session.current()
    state.documents = state.document = None
    await asyncio.to_thread(forget, document_path())


class PageDoor(Door):
    """How the page asks and shows: one status line from reading to the answer's start (then a
    record of the reading), the strategy asked where it matters, what a damaged file lost."""

    tick_s = KEEP_ALIVE_S

    def __init__(self, lang: str, documents: DocumentSet | None = None) -> None:
        self.lang = lang
        self.status: StatusLine | None = None
        self.answered = False  # the first piece came: the line is a record from then on
        self.lookups = 0  # lookups made for the answer on its way (Strategy.LOOK_UP)
        self.asked: Asked | None = None  # the question on its way, once asked
        # The documents the question goes to: the chat's, then each one read now (`read`).
        self.texts: list[DocumentText] = list(documents.documents) if documents is not None else []

    @property
    def name(self) -> str:
        """The documents as the page names them: "report.pdf"; "A (report.pdf) and B (notes.md)"."""
        return set_words(self.lang, self.texts)

    def progress(self, progress: Progress) -> None:
        if self.status is not None:
            self.status.report(progress)

    async def line(self, text: str) -> None:
        """One line from the first file's reading to the answer's start, however many are read."""
        if self.status is None:
            self.status = await StatusLine(text).send()
        else:
            await self.status.set(text)

    async def reading(self, name: str) -> None:
        await self.line(t(self.lang, "doc_reading", name=name))

    async def read(self, shelved: Shelved, full: ShelfFull | None) -> None:
        lang, name = self.lang, shelved.text.name
        if shelved.hit:
            added = time.strftime("%Y-%m-%d %H:%M", time.localtime(shelved.added))
            await self.line(t(lang, "doc_shelved", name=name, added=added))
        else:
            if full is not None:
                await say(full.in_language(lang))
            await self.line(t(lang, "doc_counting", name=name))
        if (lost := lost_note(shelved.text, lang)) is not None:
            await say(lost)
        self.texts.append(shelved.text)

    async def already(self, name: str, label: str) -> None:
        self.texts.pop()  # `read` took it in just before: it is not added
        await say(t(self.lang, "doc_already", name=name, label=label))

    async def choose(self, name: str, budget: Budget, answer_tokens: int, before: float | None
                     ) -> Strategy:
        return await choose_strategy(budget, answer_tokens, self.name, before, self.texts)

    async def asking(self, asked: Asked) -> None:
        self.asked = asked
        line = waiting_line(asked.doc, 0, lang=self.lang, again=asked.again, before=asked.before,
                            name=self.name)
        await self.line(line)  # a follow-up's is a line of its own

    async def waiting(self, asked: Asked, elapsed_s: float) -> None:
        """A long prefill must not look frozen, and a silent socket for ~45 s can lose the
        message (Chainlit issue #803)."""
        if self.status is not None:
            await self.status.set(waiting_line(asked.doc, elapsed_s, self.status.progress, self.lang,
                                               asked.again, asked.before, self.name, self.lookups))

    async def looked_up(self, lookup: Lookup) -> None:
        self.lookups += 1
        await lookups.show(self.lang, lookup)
        if self.status is None or self.asked is None:
            return
        # The count now, not at the next tick. Words the model wrote before this lookup began the
        # answer and made the line a record already: the record is written again with every
        # lookup, so it counts them all, not those made before the first words.
        if self.answered:
            await read_record(self.status, self.asked.doc, self.asked.first, self.name, self.texts,
                              self.lookups)
        else:
            await self.waiting(self.asked, self.status.elapsed_s)

    async def answering(self, asked: Asked, elapsed_s: float) -> None:
        self.answered = True
        session.current().says_stop = False  # the answer began: a stop is Chainlit's line alone from here
        if self.status is not None:
            await read_record(self.status, asked.doc, asked.first, self.name, self.texts, self.lookups)


def user_shelf() -> Shelf:
    """The logged-in user's shelf; the one shelf while login is off (no user then)."""
    settings = get_settings()
    user = cl.context.session.user if settings.auth_required else None
    return Shelf.of(settings.data_dir, settings.shelf_max_mb, user.identifier if user else None)


def document_path() -> Path:
    """Where this chat's open document is kept: by thread, so a reopened chat finds it."""
    thread = folder_name(cl.context.session.thread_id)
    return get_settings().data_dir / "documents" / thread / "document.json"


async def reopen_document() -> None:
    """On resume: the chat's documents, if it had any, take the follow-up questions again, and
    a document attached next joins them."""
    state = session.current()
    settings = get_settings()
    limits = Limits(settings.lookup_calls, settings.lookup_chars)
    found = await asyncio.to_thread(load_set, document_path(), limits)
    state.documents, state.document = found if found is not None else (None, None)


async def choose_strategy(budget: Budget, answer_tokens: int, name: str, before: float | None,
                          texts: Sequence[DocumentText] = ()) -> Strategy:
    """Ask only when it matters: past the threshold, whole-document reading costs minutes, unless
    this server read the document `before` (then it says so: it may take seconds)."""
    offered = budget.offered(answer_tokens)
    default = budget.default(answer_tokens)
    if len(offered) == 1 or budget.tokens <= budget.threshold:
        return default
    lang = session.lang()
    estimate = prefill_clock().estimate_s(budget.tokens)
    when = (t(lang, "about", seconds=seconds(lang, estimate), estimate=estimate_basis(lang))
            if estimate is not None else t(lang, "wait_no_estimate"))
    wait = (t(lang, "wait_first_answer", when=when, tokens=budget.tokens) if before is None else
            t(lang, "wait_revisit", what=said("wait_what_named", name=name), before=local_minute(before),
              when=when, tokens=budget.tokens))
    # Past the served context the whole read is no choice: no wait to announce, two ways to offer.
    line = budget_line(lang, budget, texts)
    content = (t(lang, "doc_choose", budget=line, wait=wait) if Strategy.WHOLE in offered
               else t(lang, "doc_choose_past", budget=line))
    choice = await ask_choice(cl.AskActionMessage(
        content=content,
        author=AUTHOR, timeout=STRATEGY_TIMEOUT_S,
        actions=[cl.Action(name="strategy", payload={"strategy": s.value}, label=strategy_words(lang, s))
                 for s in sorted(offered, key=lambda s: s != default)],
    ))
    return Strategy(choice["payload"]["strategy"]) if choice else default


async def ask_document(question: str, door: PageDoor | None = None, to: Sending | None = None,
                       fresh: bool = False) -> None:
    """`door`: the one the documents were just opened with (their first question, asked under the
    same status line; `to`, the server it goes to: Opened.to, of one document; `fresh`, of a set,
    whose first read teaches no clock: asking.ask); None for a follow-up."""
    state = session.current()
    doc = state.document
    assert doc is not None
    door = door or PageDoor(state.lang, state.documents)
    reply = cl.Message(content="")
    clock = None if fresh else prefill_clock()
    pieces = ask(doc, question, llm(), state.params, door, clock, to, fresh)
    if get_settings().demo:
        pieces = demo_cited(pieces, doc.text, state.lang)
    began = time.monotonic()
    ending = Ending()
    try:
        # Until the answer begins, a stop is told by "Stopped reading …" below, once.
        flowing = coalesce(ending.watch(pieces), get_settings().stream_flush_s)
        with says_own_stop():
            await stream_into(reply, flowing, lambda text: cited_passages(text, doc.text, state.documents))
    except asyncio.CancelledError:
        if not door.answered and door.status is not None:  # stopped before the answer began
            await door.status.finish(t(state.lang, "doc_stopped", name=door.name,
                                       seconds=seconds_words(time.monotonic() - began)))
        raise
    except Exception:
        if not door.answered and door.status is not None:
            await door.status.finish(t(state.lang, "doc_failed", name=door.name,
                                       seconds=seconds_words(time.monotonic() - began)))
        raise
    await say_if_cut(ending, state.params.max_tokens)
    metrics.DOCUMENTS.inc()


async def read_record(status: StatusLine, doc: OpenDocument, first: bool, name: str,
                      texts: Sequence[DocumentText] = (), lookups: int = 0) -> None:
    """Once the answer begins, the waiting line becomes a record of the reading ("Read 6 pages,
    10,350 tokens, whole, in 2.1 s"); a follow-up's line on a whole document, which only said
    the cached document was being asked, goes away instead of staying behind as a stale line."""
    lang = status.lang
    took = seconds(lang, status.elapsed_s)
    if doc.strategy is Strategy.MAP_REDUCE:
        parts = status.totals.get("parts", 0)
        status.head = ""
        await status.finish(t(lang, "doc_read_parts", name=name, seconds=took,
                              parts=count_of(lang, parts, "parts")))
    elif doc.strategy is Strategy.LOOK_UP:
        status.head = ""
        await status.finish(t(lang, "doc_read_lookups", name=name, count=lookups, seconds=took))
    elif first:
        status.head = ""
        await status.finish(t(lang, "doc_read_whole", name=name, tokens=doc.budget.tokens,
                              pages=held_words(lang, doc.budget, texts), seconds=took))
    else:
        await status.remove()


def seconds_words(n: float) -> str:
    return seconds(session.lang(), n)


def waiting_line(doc: OpenDocument, elapsed_s: float, progress: Progress | None = None,
                 lang: str = EN, again: bool = False, before: float | None = None,
                 name: str | None = None, lookups: int = 0) -> str:
    """While the model reads: what it reads, for how long so far, and the estimate (said as one,
    from the GPU that serves, refined by what this server has shown). `again`: this server read
    it before (a follow-up; the shelf's note says when: `before`), so it may start in seconds.
    `name`: the documents as the page names them (document_words.set_words), else doc.name."""
    name = name or doc.name
    if doc.strategy is Strategy.MAP_REDUCE:
        # The parts' own count, not only the clock: the heartbeat must not hide it.
        done = t(lang, "waiting_parts_done", line=progress.line(lang)) if progress is not None else ""
        return t(lang, "waiting_parts", name=name, done=done, elapsed=elapsed_s)
    if doc.strategy is Strategy.LOOK_UP:  # no whole read to estimate: the lookups so far
        done = t(lang, "waiting_lookup_done", count=lookups) if lookups else ""
        return t(lang, "waiting_lookup", name=name, done=done, elapsed=elapsed_s)
    tail = wait_tail(lang, doc.budget.tokens, elapsed_s)
    if again:
        return t(lang, "waiting_again", name=name, tokens=doc.budget.tokens, elapsed=elapsed_s,
                 before=read_at(lang, before) if before is not None else "", tail=tail)
    return t(lang, "waiting_whole", tokens=doc.budget.tokens, name=name, elapsed=elapsed_s, tail=tail)


def wait_tail(lang: str, tokens: int, elapsed_s: float) -> str:
    """What is left of the whole read's estimate, or that it is past it, or that there is none."""
    estimate = prefill_clock().estimate_s(tokens)
    if estimate is None:
        return t(lang, "wait_no_estimate")
    if estimate - elapsed_s > 1:
        return t(lang, "left", seconds=seconds(lang, estimate - elapsed_s), estimate=estimate_basis(lang))
    return t(lang, "past", seconds=seconds(lang, estimate), estimate=estimate_basis(lang))


def read_at(lang: str, when: float) -> str:
    return t(lang, "read_at", when=local_minute(when))


def local_minute(when: float) -> str:
    """A time as both doors write when the server read a document before ("2026-12-01 23:40")."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(when))


def estimate_basis(lang: str) -> str:
    """What the estimate (serving.PrefillClock, the CLI's too) is based on, in the page's language."""
    return t(lang, "estimate_basis", basis=prefill_clock().basis_said())
