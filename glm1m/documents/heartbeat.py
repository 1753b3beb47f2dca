"""The one heartbeat while a model reads a prompt before the first piece of its answer: a 1M-token
whole document takes about ten minutes on one H200 and the server sends nothing meanwhile, so a door
that said nothing would look hung (and Chainlit can lose a message whose socket is silent for ~45 s,
Chainlit issue #803). Each door draws the beat its own way: the CLI with rich or a line on stderr,
the page in its status message.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from glm1m.chat import close_now

Tick = Callable[[float], Awaitable[None]]  # seconds since the question went
T = TypeVar("T")  # what the stream carries (an answer's pieces)


async def until_first(pieces: AsyncIterator[T], tick: Tick, every_s: float,
                      on_first: Tick | None = None) -> AsyncIterator[T]:
    """`pieces` unchanged. Until the first of them arrives, `tick(elapsed_s)` every `every_s`
    seconds (a tick still running then is cancelled, and none follows); `on_first(elapsed_s)` is
    awaited once, before the first piece is passed on. `pieces` is closed when this is, however
    it ends (done, failed, stopped)."""
    started = time.monotonic()
    beat = asyncio.create_task(_beat(tick, every_s, started))
    first = True
    try:
        async for piece in pieces:
            if first:
                first = False
                beat.cancel()
                if on_first is not None:
                    await on_first(time.monotonic() - started)
            yield piece
    finally:
        beat.cancel()
        await close_now(pieces)  # stopped here: the HTTP stream ends now, not at GC


async def _beat(tick: Tick, every_s: float, started: float) -> None:
    while True:
        await asyncio.sleep(every_s)
        await tick(time.monotonic() - started)
