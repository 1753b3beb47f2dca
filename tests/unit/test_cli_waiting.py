"""`glm1m summarize` while a whole document is read: a line that moves until the answer starts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from glm1m.cli import waiting
from glm1m.documents.heartbeat import until_first
from glm1m.serving import PrefillClock, Served


def waiting_lines(pieces: AsyncIterator[str], line: Callable[[float], str], every_s: float
                  ) -> AsyncIterator[str]:
    """`pieces` as summarize shows them off a terminal: its line on the core's heartbeat."""
    shown = waiting.WaitingLine(every_s, terminal=False)

    async def tick(elapsed_s: float) -> None:
        shown.show(line(elapsed_s))

    async def first(elapsed_s: float) -> None:
        shown.stop()

    return until_first(pieces, tick, shown.every_s, first)


def h200() -> PrefillClock:
    return PrefillClock(Served(model="m", gpu="NVIDIA H200", gpus=1, tensor_parallel=1, layout="data",
                               profile="auto", max_model_len=1_048_576))


def test_the_line_says_how_long_so_far_and_what_is_left_of_the_estimate() -> None:
    clock = h200()
    estimate = clock.estimate_s(1_000_000)
    assert estimate is not None and estimate > 300
    line = waiting.waiting_line("A.txt", 1_000_000, 150.0, clock)
    assert line.startswith("still reading A.txt (1,000,000 tokens): 2:30 so far")
    assert waiting.clock_text(estimate - 150) in line and "an estimate for one H200" in line


def test_past_the_estimate_the_line_says_so_instead_of_a_negative_time_left() -> None:
    line = waiting.waiting_line("A.txt", 1_000, 600.0, h200())
    assert "longer than the" in line and "still reading" in line and "left" not in line


def test_a_server_with_no_estimate_is_not_given_one() -> None:
    clock = PrefillClock(Served(model="m", gpu="cpu", gpus=0, tensor_parallel=1, layout="data",
                                profile="auto", max_model_len=32_768))
    assert waiting.waiting_line("A.txt", 1_000, 5.0, clock).endswith("no estimate yet for this server.")


async def test_lines_come_while_waiting_and_stop_once_the_answer_starts(monkeypatch) -> None:
    said: list[str] = []
    enough = asyncio.Event()

    def say(text: str) -> None:
        said.append(text)
        if len(said) >= 3:
            enough.set()

    monkeypatch.setattr(waiting, "say", say)

    async def answer():
        await enough.wait()  # the server "reads" until three lines were said
        yield "first"
        await asyncio.sleep(0.2)  # room for twenty more beats, had they not stopped
        yield " second"

    pieces = [p async for p in waiting_lines(answer(), lambda s: f"waited {s:.2f}", 0.01)]
    assert pieces == ["first", " second"]
    assert 3 <= len(said) <= 4  # the beat that may have been due as the first piece came
    assert [float(s.split()[1]) for s in said] == sorted(float(s.split()[1]) for s in said)


async def test_a_stream_that_fails_before_its_first_piece_stops_the_line(monkeypatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(waiting, "say", said.append)

    async def answer():
        await asyncio.sleep(0.05)
        raise RuntimeError("server gone")
        yield ""  # pragma: no cover

    with pytest.raises(RuntimeError, match="server gone"):
        [p async for p in waiting_lines(answer(), lambda s: "waiting", 0.01)]
    count = len(said)
    await asyncio.sleep(0.05)
    assert len(said) == count  # nothing more after the error
