"""What `glm1m summarize` says while the server reads a whole document before the first word of
its answer: a 1M-token prefill takes about ten minutes on one H200 and no byte comes back until it
ends, so without a line that moves the command looks hung. A terminal gets one line redrawn every
second; a pipe or a log gets one line every GLM1M_WAIT_LINE_S. The line goes when the answer starts.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable

from rich.console import Console

from glm1m.chat import close_now
from glm1m.cli.output import say
from glm1m.serving import PrefillClock

TERMINAL_REDRAW_S = 1.0


def clock_text(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


def waiting_line(name: str, tokens: int, elapsed_s: float, clock: PrefillClock,
                 read_before: bool = False) -> str:
    """Still reading, for how long, and how that compares with the estimate (named as one).
    `read_before`: this server read the document before, so it may answer in seconds instead."""
    head = f"still reading {name} ({tokens:,} tokens): {clock_text(elapsed_s)} so far"
    if read_before:
        head = (f"asking {name} again ({tokens:,} tokens): {clock_text(elapsed_s)} so far; this "
                f"server read it before, so the answer starts in seconds if it still holds it")
    estimate = clock.estimate_s(tokens)
    if estimate is None:
        return f"{head}; no estimate yet for this server."
    if estimate - elapsed_s >= 1:
        left = "else about" if read_before else "about"
        return f"{head}, {left} {clock_text(estimate - elapsed_s)} left (an estimate {clock.basis})."
    return (f"{head}, longer than the {clock_text(estimate)} estimated {clock.basis}; the server "
            f"still answers its health check, so it is still reading.")


async def _beat(show: Callable[[float], None], every_s: float) -> None:
    started = time.monotonic()
    while True:
        await asyncio.sleep(every_s)
        show(time.monotonic() - started)


async def until_first_piece(pieces: AsyncIterator[str], line: Callable[[float], str],
                            every_s: float, terminal: bool | None = None) -> AsyncIterator[str]:
    """`pieces`, saying `line(elapsed)` until the first of them arrives."""
    terminal = sys.stderr.isatty() if terminal is None else terminal
    status = Console(stderr=True).status(line(0.0)) if terminal else None
    if status is not None:
        status.start()
    beat = asyncio.create_task(_beat(
        (lambda s: status.update(line(s))) if status is not None else (lambda s: say(line(s))),
        TERMINAL_REDRAW_S if terminal else every_s))
    try:
        async for piece in pieces:
            if not beat.done():
                beat.cancel()
                if status is not None:
                    status.stop()
            yield piece
    finally:
        beat.cancel()
        if status is not None:
            status.stop()
        await close_now(pieces)
