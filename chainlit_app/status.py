"""What the page shows while work runs and when it fails: status lines fed by the core's
Progress, errors as one sentence, answers recorded in the app's metrics."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import wraps
from typing import ParamSpec

import chainlit as cl

from chainlit_app import metrics
from chainlit_app.render import StreamedWithoutImages
from glm1m.errors import UserFacingError
from glm1m.progress import OnProgress, Progress

AUTHOR = "glm1m"
UPDATE_S = 0.5  # at most two updates a second (and the last one always)
P = ParamSpec("P")


class StatusLine:
    """One status message, updated in place."""

    def __init__(self, text: str) -> None:
        self.message = cl.Message(content=text, author=AUTHOR)
        self._last = 0.0
        self.progress: Progress | None = None  # the latest reported, for lines that add to it

    async def send(self) -> StatusLine:
        await self.message.send()
        return self

    async def set(self, text: str) -> None:
        self.message.content = text
        await self.message.update()

    def report(self, progress: Progress) -> None:
        """An OnProgress for work running on the event loop."""
        self.progress = progress
        now = time.monotonic()
        if now - self._last >= UPDATE_S or progress.finished:
            self._last = now
            self.message.content = progress.line()
            asyncio.get_running_loop().create_task(self.message.update())

    def threadsafe(self) -> OnProgress:
        """An OnProgress for work running in a worker thread (asyncio.to_thread)."""
        loop = asyncio.get_running_loop()

        def report(progress: Progress) -> None:
            loop.call_soon_threadsafe(self.report, progress)
        return report


async def say(text: str, **kwargs: object) -> None:
    await cl.Message(content=text, author=AUTHOR, **kwargs).send()  # type: ignore[arg-type]


async def show_error(error: UserFacingError) -> None:
    metrics.failure(error)
    await cl.ErrorMessage(content=str(error), author=AUTHOR).send()


def shows_errors(handler: Callable[P, Awaitable[None]]) -> Callable[P, Awaitable[None]]:
    """The one place a UserFacingError becomes a message on the page."""
    @wraps(handler)
    async def run(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            await handler(*args, **kwargs)
        except UserFacingError as error:
            await show_error(error)
    return run


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
        if held := shown.end():  # a last "!": the page gets it too, so it shows what is kept
            await answer.stream_token(held)
        if answer.content:
            if elements is not None:
                answer.elements = elements(answer.content)
            metrics.CHAT_ANSWERS.inc()
            await answer.send()
