"""The page's progress line: its pace. At most two updates a second, and a report that came too
soon is shown when its half second is up — not only when the next report comes, which between
batches of long rows can be half a minute later (issue 17: a count standing still, then jumping)."""

from __future__ import annotations

import asyncio
import time

from glm1m.chainlit_app.pacing import Paced


async def test_a_held_back_report_is_shown_when_its_interval_is_up() -> None:
    shown: list[tuple[int, float]] = []
    arrived = asyncio.Event()

    def show(value: int) -> None:
        shown.append((value, time.monotonic()))
        arrived.set()

    paced: Paced[int] = Paced(show, 0.2)
    began = time.monotonic()
    paced.report(0)  # the first at once
    paced.report(1)  # too soon: held
    paced.report(2)  # still too soon: replaces the held one
    assert [v for v, _ in shown] == [0]
    arrived.clear()
    await asyncio.wait_for(arrived.wait(), 5)  # no further report comes: the timer shows it
    assert [v for v, _ in shown] == [0, 2]
    assert shown[1][1] - began >= 0.2


async def test_the_last_report_is_shown_at_once_and_nothing_after_close() -> None:
    shown: list[int] = []
    paced: Paced[int] = Paced(shown.append, 60)
    paced.report(0)
    paced.report(5, last=True)
    paced.report(6)  # held for a minute
    paced.close()
    await asyncio.sleep(0)  # let the loop run anything scheduled (nothing should be)
    assert shown == [0, 5] and paced.closed
    paced.report(7, last=True)
    assert shown == [0, 5]
