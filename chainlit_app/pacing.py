"""Pace a token stream for a browser: join pieces that arrive faster than the page can draw.

Chainlit re-renders the whole markdown message on every streamed token. At vLLM's speeds (hundreds
of tokens per second) that freezes the page on slow machines; ten updates a second look the same
to a reader and cost a fraction of the work.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator


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
        await close(pieces)


async def close(pieces: AsyncIterator[str]) -> None:
    """Close `pieces` now if it is a generator. A wrapper closed while its source waits at a
    yield must close the source itself: left to the garbage collector, the model's HTTP stream
    (and the server's generation) went on after the stop button (seen with two wrappers)."""
    aclose = getattr(pieces, "aclose", None)
    if aclose is not None:
        await aclose()
