"""Pace a token stream for a browser: join pieces that arrive faster than the page can draw.

Chainlit re-renders the whole markdown message on every streamed token. At vLLM's speeds (hundreds
of tokens per second) that freezes the page on slow machines; ten updates a second look the same
to a reader and cost a fraction of the work.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Generic, TypeVar

from glm1m.chat import close_now

T = TypeVar("T")


async def coalesce(pieces: AsyncIterator[str], interval_s: float) -> AsyncIterator[str]:
    """Yield the text of `pieces` in order, at most once per `interval_s` (the first at once)."""
    buffer: list[str] = []
    last = float("-inf")
    try:
        async for piece in pieces:
            buffer.append(piece)
            now = time.monotonic()
            if now - last >= interval_s:
                yield "".join(buffer)
                buffer.clear()
                last = now
        if buffer:
            yield "".join(buffer)
    finally:
        await close_now(pieces)


class Paced(Generic[T]):
    """Reports shown at most once per `interval_s`, the latest of them: one that comes too soon
    is held and shown when its interval is up, so the page never keeps an older count while a
    newer one waits for the next report (which, between batches of long rows, can be half a
    minute away). `last` reports (a job's end) are shown at once. Runs on the event loop."""

    def __init__(self, show: Callable[[T], None], interval_s: float) -> None:
        self._show, self.interval_s = show, interval_s
        self._shown_at = float("-inf")
        self._held: T | None = None
        self._later: asyncio.TimerHandle | None = None
        self.closed = False

    def report(self, value: T, last: bool = False) -> None:
        if self.closed:
            return
        self._held = value
        wait = self._shown_at + self.interval_s - time.monotonic()
        if wait <= 0 or last:
            self._flush()
        elif self._later is None:
            self._later = asyncio.get_running_loop().call_later(wait, self._flush)

    def _flush(self) -> None:
        if self._later is not None:
            self._later.cancel()
            self._later = None
        if self.closed or self._held is None:
            return
        value, self._held = self._held, None
        self._shown_at = time.monotonic()
        self._show(value)

    def close(self) -> None:
        """Nothing more is shown, held or not."""
        self.closed = True
        if self._later is not None:
            self._later.cancel()
            self._later = None
