"""A document on the page: read it (in a worker thread), measure it, choose how to read it, and
answer questions about it with the cited pages beside the answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import chainlit as cl

from chainlit_app import metrics, session
from chainlit_app.client import llm, prefill_clock
from chainlit_app.pacing import coalesce
from chainlit_app.render import without_images
from chainlit_app.status import AUTHOR, StatusLine, stream_into
from glm1m.documents.answer import SUMMARY_REQUEST, OpenDocument, answer, plan_of
from glm1m.documents.budget import Budget, Strategy, measure
from glm1m.documents.formats import ReadOptions, read_document_async
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.documents.store import load, save
from glm1m.files import folder_name
from glm1m.progress import Progress
from glm1m.settings import get_settings

KEEP_ALIVE_S = 5.0
PASSAGE_CHARS = 1500
STRATEGY_TIMEOUT_S = 600


async def read_document(path: Path, name: str, question: str) -> None:
    settings = get_settings()
    state = session.current()
    status = await StatusLine(f"Reading **{name}** …").send()
    # Any format (formats.py); off the event loop, and stopped with the task (OCR processes too).
    text = await read_document_async(path, ReadOptions.of(settings), name, status.threadsafe())
    await status.set(f"Counting tokens of **{name}** …")
    budget = await measure(text, llm(), settings.whole_document_threshold, status.report)
    answer_tokens = state.params.max_tokens
    strategy = await choose_strategy(budget, answer_tokens)
    budget.check(strategy, answer_tokens)
    await status.set(f"**{name}**: {budget.line()} Reading it {strategy.words}.")
    state.document = OpenDocument(text, budget, strategy, plan_of(settings))
    await asyncio.to_thread(save, state.document, document_path())
    await ask_document(question.strip() or SUMMARY_REQUEST, first=True)


def document_path() -> Path:
    """Where this chat's open document is kept: by thread, so a reopened chat finds it."""
    thread = folder_name(cl.context.session.thread_id)
    return get_settings().data_dir / "documents" / thread / "document.json"


async def reopen_document() -> None:
    """On resume: the chat's document, if it had one, takes the follow-up questions again."""
    session.current().document = await asyncio.to_thread(load, document_path())


async def choose_strategy(budget: Budget, answer_tokens: int) -> Strategy:
    """Ask only when it matters: past the threshold, whole-document reading costs minutes."""
    offered = budget.offered(answer_tokens)
    default = budget.default(answer_tokens)
    if len(offered) == 1 or budget.tokens <= budget.threshold:
        return default
    choice = await cl.AskActionMessage(
        content=f"{budget.line()}\n\n{prefill_clock().describe_wait(budget.tokens)}\n\nRead it whole "
                f"(best answers) or part by part (map-reduce: the first answer comes sooner)?",
        author=AUTHOR, timeout=STRATEGY_TIMEOUT_S,
        actions=[cl.Action(name="strategy", payload={"strategy": s.value}, label=s.words)
                 for s in sorted(offered, key=lambda s: s != default)],
    ).send()
    return Strategy(choice["payload"]["strategy"]) if choice else default


async def ask_document(question: str, first: bool = False) -> None:
    """`first`: the document was just read, so its prompt is not in the server's cache yet and
    the wait for the first piece measures this server's prefill speed."""
    state = session.current()
    doc = state.document
    assert doc is not None
    status = await StatusLine(waiting_line(doc, 0)).send()
    heartbeat = asyncio.create_task(keep_alive(status, doc))
    reply = cl.Message(content="")
    pieces = answer(doc, question, llm(), state.params, status.report)

    def observe(seconds: float) -> None:
        if first and doc.strategy is Strategy.WHOLE:
            prefill_clock().observe(doc.budget.tokens, seconds)

    try:
        await stream_into(reply, until_first(coalesce(pieces, get_settings().stream_flush_s), heartbeat,
                                             observe), lambda text: cited_passages(text, doc.text))
    finally:
        heartbeat.cancel()
    metrics.DOCUMENTS.inc()


async def until_first(pieces: AsyncIterator[str], task: asyncio.Task,
                      on_first: Callable[[float], None] = lambda seconds: None) -> AsyncIterator[str]:
    """The pieces, cancelling `task` (the waiting line) when the first one arrives, and telling
    `on_first` how long that took."""
    started = time.monotonic()
    async for piece in pieces:
        if not task.done():
            task.cancel()
            on_first(time.monotonic() - started)
        yield piece


def waiting_line(doc: OpenDocument, elapsed_s: float, progress: Progress | None = None) -> str:
    if doc.strategy is Strategy.MAP_REDUCE:
        # The parts' own count, not only the clock: the heartbeat must not hide it.
        done = f": {progress.line()}" if progress is not None else ""
        return f"Reading {doc.name} part by part{done} … {elapsed_s:.0f} s"
    clock = prefill_clock()
    estimate = clock.estimate_s(doc.budget.tokens)
    if estimate is None:
        tail = "no estimate yet for this server"
    elif estimate - elapsed_s > 1:
        tail = f"about {estimate - elapsed_s:.0f} s left (an estimate {clock.basis})"
    else:
        tail = "nearly there"
    return f"The model is reading all {doc.budget.tokens:,} tokens of {doc.name} … {elapsed_s:.0f} s, {tail}"


async def keep_alive(status: StatusLine, doc: OpenDocument) -> None:
    """Until the first token, say every few seconds what is happening: a long prefill must not
    look frozen, and a silent socket for ~45 s can lose the message (Chainlit issue #803)."""
    started = time.monotonic()
    while True:
        await asyncio.sleep(KEEP_ALIVE_S)
        await status.set(waiting_line(doc, time.monotonic() - started, status.progress))


def cited_passages(text: str, doc: DocumentText) -> list:
    """The cited pages (or sections) as side elements, linked from the answer by their names ("p. 3",
    "§ 3"); shown as Markdown, so a document's images become links there too."""
    return [cl.Text(name=page.label, content=passage(page), display="side") for page in doc.cited(text)]


def passage(page: Page) -> str:
    """A section opens with where a reader finds it ("§ 3 · Installation · ¶ 4–9")."""
    where = f"**{page.location}**\n\n" if page.kind is Kind.SECTION else ""
    return where + without_images(page.text[:PASSAGE_CHARS])
