"""What the page shows while work runs and when it fails: status lines fed by the core's
Progress, errors as one sentence, answers recorded in the app's metrics."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import ParamSpec

import chainlit as cl
from chainlit.chat_context import chat_context
from chainlit.types import AskActionResponse

from glm1m.catalog import Said
from glm1m.chainlit_app import metrics, session
from glm1m.chainlit_app.i18n import ZH, t
from glm1m.chainlit_app.pacing import Paced
from glm1m.chainlit_app.render import StreamedWithoutImages
from glm1m.chat import close_now
from glm1m.errors import UserFacingError
from glm1m.llm import CutAtLimit, Piece
from glm1m.progress import Progress

AUTHOR = "glm1m"
UPDATE_S = 0.5  # at most two updates a second (and the last one always)
P = ParamSpec("P")
_updating: set[asyncio.Task[bool]] = set()  # StatusLine updates under way (StatusLine._show)


class StatusLine:
    """One status message, updated in place while work runs, then left as a record of what was
    done (finish) or taken away (remove). `head` stays above whatever the line says meanwhile:
    what the job is doing, for the whole job."""

    def __init__(self, text: str, head: str = "") -> None:
        self.head = head
        self.lang = session.lang()
        self.began = time.monotonic()
        self.message = cl.Message(content=self._with_head(text), author=AUTHOR)
        self._paced: Paced[Progress] = Paced(self._show, UPDATE_S)
        self.progress: Progress | None = None  # the latest reported, for lines that add to it
        self.totals: dict[str, int] = {}  # by unit ("pages", "parts"): how many the work had

    def _with_head(self, text: str) -> str:
        return f"{self.head}\n\n{text}" if self.head and text else self.head or text

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.began

    async def send(self) -> StatusLine:
        await self.message.send()
        return self

    async def set(self, text: str) -> None:
        if self._paced.closed:
            return
        self.message.content = self._with_head(text)
        await self.message.update()

    async def finish(self, text: str) -> None:
        """The line's last words: what was done. Later progress no longer changes it."""
        self._paced.close()
        self.message.content = self._with_head(text)
        await self.message.update()

    async def remove(self) -> None:
        self._paced.close()
        await self.message.remove()

    def report(self, progress: Progress) -> None:
        """An OnProgress for work running on the event loop: at most two updates a second, a
        held-back one shown when its half second is up (pacing.Paced), the last one at once."""
        self.progress = progress
        self.totals[progress.unit] = progress.total
        self._paced.report(progress, last=progress.finished)

    def _show(self, progress: Progress) -> None:
        self.message.content = self._with_head(progress.line(self.lang))
        # Called from a timer (pacing.Paced), so it cannot await: the update runs as a task, kept
        # referenced until done (the event loop holds tasks weakly: an unreferenced one can be
        # collected mid-run).
        update = asyncio.get_running_loop().create_task(self.message.update())
        _updating.add(update)
        update.add_done_callback(_updating.discard)


# A reach-in: Chainlit 2.12's socket.py stop sends this English line itself before calling on_stop,
# and no setting turns it off; tests/unit/test_chainlit_reach_ins.py fails if the sentence or that
# order changes.
CHAINLIT_STOPPED = "Task manually stopped."  # the line Chainlit 2.12's stop handler sends itself


@contextmanager
def says_own_stop() -> Iterator[None]:
    """Around work whose stop the flow itself reports (a translation's "Stopped: …" record):
    stop_line then takes Chainlit's line away, so a stop reads once, not twice."""
    state = session.current()
    state.says_stop = True
    try:
        yield
    finally:
        state.says_stop = False


async def stop_line() -> None:
    """For on_stop. Chainlit 2.12's stop handler sends CHAINLIT_STOPPED itself, in English, before
    it cancels the task and calls on_stop, and no setting turns it off (socket.py `stop`); the
    one public hook after it is on_stop, so the line is corrected here: removed where the flow
    says its own stop line, else put in the page's language. Read before any await: the
    cancelled flow clears says_stop as soon as it runs again."""
    own = session.says_stop()
    lang = session.lang()
    if not own and lang != ZH:
        return
    for message in reversed(chat_context.get()):
        if message.content == CHAINLIT_STOPPED:  # this stop's line: the latest
            if own:
                await message.remove()
            else:
                message.content = t(ZH, "stopped")
                await message.update()
            return


async def ask_choice(ask: cl.AskActionMessage, first_on_timeout: bool = True
                     ) -> AskActionResponse | None:
    """Send a choice of buttons. Chainlit leaves the question reading "**Selected:** …" or "Timed
    out: no action was taken", in English, and the second is untrue where a timeout takes the
    first button (`first_on_timeout`): both are said again in the page's language, and truly."""
    answer = await ask.send()
    lang = session.lang()
    if answer is None and first_on_timeout and ask.actions:
        ask.content = t(lang, "choice_timeout", label=ask.actions[0].label)
    elif answer is None and lang == ZH:
        ask.content = t(lang, "choice_none")
    elif answer is not None and lang == ZH:
        ask.content = t(lang, "choice_made", label=answer.get("label", ""))
    else:
        return answer
    await ask.update()
    return answer


def in_page_language(sentence: Said) -> str:
    """A sentence another module named by its id (uploads.py), in the page's language."""
    return sentence.render(session.lang())


async def say(text: str, **kwargs: object) -> None:
    await cl.Message(content=text, author=AUTHOR, **kwargs).send()  # type: ignore[arg-type]


async def show_error(error: UserFacingError) -> None:
    metrics.failure(error)
    text = error.in_language(session.lang())
    await cl.ErrorMessage(content=text, author=AUTHOR).send()


def shows_errors(handler: Callable[P, Awaitable[None]]) -> Callable[P, Awaitable[None]]:
    """The one place a UserFacingError becomes a message on the page."""
    @wraps(handler)
    async def run(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            await handler(*args, **kwargs)
        except UserFacingError as error:
            await show_error(error)
    return run


class Ending:
    """How a stream ended, as far as the reader must know: cut at the token limit or not."""

    def __init__(self) -> None:
        self.cut = False

    async def watch(self, pieces: AsyncIterator[Piece]) -> AsyncIterator[str]:
        """The pieces' text, noting the server's CutAtLimit (an event, not text: it goes no further)."""
        try:
            async for piece in pieces:
                if isinstance(piece, CutAtLimit):
                    self.cut = True
                else:
                    yield piece
        finally:
            await close_now(pieces)


async def say_if_cut(ending: Ending, limit: int) -> None:
    """Under an answer the server cut at max_tokens: so it says, and how to get a longer one. A
    system message, not an answer: it is no chat turn, and the answer stays the model's text."""
    if ending.cut:
        lang = session.lang()
        await cl.Message(content=t(lang, "cut", limit=limit, label=t(lang, "label_max_tokens")),
                         author=AUTHOR, type="system_message").send()


async def stream_into(answer: cl.Message, pieces: AsyncIterator[str],
                      elements: Callable[[str], list] | None = None) -> None:
    """Stream pieces into `answer`, images shown as links from the first piece on (render.py);
    what was shown is kept (sent, with `elements(text)` beside it) however the stream ends —
    done, failed (the error then follows it) or stopped (the stop button cancels the task)."""
    shown = StreamedWithoutImages()
    try:
        async for piece in pieces:
            if text := shown.feed(piece):
                await answer.stream_token(text)
    finally:
        await close_now(pieces)  # the source's own cleanup (the HTTP stream) runs now, not at GC
        if held := shown.end():  # a last "!": the page gets it too, so it shows what is kept
            await answer.stream_token(held)
        if answer.content:
            if elements is not None:
                answer.elements = elements(answer.content)
            metrics.CHAT_ANSWERS.inc()
            await answer.send()
