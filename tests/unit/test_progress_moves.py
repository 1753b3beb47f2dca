"""Progress that moves while the server works (issue 26, item 2): vLLM finishes a batch of rows
(or a document's parts) together, so a count of finished ones stood at "0 of 50 rows" for a whole
run. Between finishes the line says the rows or parts in flight and the tokens come back, then a
rate in tokens, then a time left from the tokens still to come; both doors say it."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from glm1m.chainlit_app.i18n import EN, ZH
from glm1m.chainlit_app.translation_flow import rate
from glm1m.cli.bar import status_text
from glm1m.documents.mapreduce import MapReduce, ask_map_reduce
from glm1m.documents.pages import DocumentText, Page
from glm1m.llm import ChatParams, Message
from glm1m.progress import Progress, Stage, Tally
from glm1m.translation.fanout import Job
from glm1m.translation.formats import open_table
from glm1m.translation.job import run_job
from tests.support.scripted_llm import Call, ScriptedLlm

pytestmark = pytest.mark.timeout(20)


def ten_s_ago() -> float:
    """A run begun ten seconds ago: its rates are known."""
    return time.monotonic() - 10


@dataclass
class CountingLlm(ScriptedLlm):
    """A scripted server whose whole answers come back token by token (one per piece) before
    they end, as LlmClient counts them: a held call has sent all its tokens but the last and waits
    for release(text) to send that and finish."""

    async def complete_counted(self, messages: list[Message], params: ChatParams,
                               on_tokens: Callable[[int], None], retries: int | None = None) -> str:
        call = Call("complete", list(messages), params, retries)
        await self._enter(call)
        try:
            await asyncio.sleep(0)  # a network round trip
            text = self.reply(call.messages)
            pieces = [text[i:i + self.piece_chars] for i in range(0, len(text), self.piece_chars)]
            on_tokens(len(pieces) - 1)
            if self.hold(call.text):
                await self._gate(call.text).wait()
            on_tokens(1)
        except BaseException as error:
            await self._leave(call, error)
            raise
        await self._leave(call, None)
        return text


def table(tmp_path: Path, rows: int) -> Path:
    path = tmp_path / "in.csv"
    rows_text = "".join(f"row {i} {'word ' * (i % 7)}\n" for i in range(rows))
    path.write_text("text\n" + rows_text, encoding="utf-8")
    return path


async def test_rows_in_flight_and_their_tokens_move_the_line_before_any_row_finishes(tmp_path: Path) -> None:
    llm = CountingLlm(hold=lambda text: True)
    reports: list[Progress] = []
    moving = asyncio.Event()

    def on_progress(progress: Progress) -> None:
        reports.append(progress)
        if progress.tokens and progress.in_flight == 50:
            moving.set()

    source = open_table(table(tmp_path, 50))
    job = Job("French", concurrency=64, retries=0)
    task = asyncio.create_task(run_job(source, job, llm, tmp_path / "out.csv", on_progress))
    await asyncio.wait_for(moving.wait(), 10)
    now = reports[-1]
    assert not llm.ended()  # no row has finished: every one is held
    assert (now.done, now.total, now.in_flight) == (0, 50, 50) and now.tokens > 0
    assert now.line().startswith("translating: 0 of 50 rows, 50 in flight — ")
    assert "token" in now.line() and "so far" in now.line()  # no rate yet: not two seconds in
    assert status_text(now, EN).startswith("50 in flight — ")  # the CLI's bar says it too
    assert status_text(now, ZH).startswith("进行中 50——已生成 ")
    llm.release_all()
    summary = await task
    last = reports[-1]
    assert summary.complete and last.finished and last.in_flight == 0
    # Every token of every row was counted: a piece of five characters each.
    expected = sum(-(-len(c.text.upper()) // 5) for c in llm.calls)
    assert last.tokens == expected


async def test_a_document_read_part_by_part_shows_its_parts_in_flight_before_one_is_read() -> None:
    doc = DocumentText("manual.pdf", tuple(Page(n, f"Fact {n}. " * 200) for n in range(1, 9)), 8)
    llm = CountingLlm(context=2048, hold=lambda text: "<part>" in text,
                      reply=lambda m: "short notes [p. 1]" if "<part>" in m[-1]["content"] else "The answer.")
    reports: list[Progress] = []
    moving = asyncio.Event()

    def on_progress(progress: Progress) -> None:
        reports.append(progress)
        if progress.stage is Stage.READING and progress.tokens and progress.in_flight == progress.total:
            moving.set()

    plan = MapReduce(chunk_tokens=32_000, concurrency=8, note_tokens=48)
    pieces = ask_map_reduce(doc, 4.0, plan, "What does it say?", llm,
                            ChatParams(temperature=0.0, max_tokens=64), on_progress)
    task = asyncio.create_task(anext(pieces))
    await asyncio.wait_for(moving.wait(), 10)
    now = reports[-1]
    parts = now.total
    assert parts >= 2 and now.done == 0 and not llm.ended()
    assert now.line().startswith(f"reading: 0 of {parts} parts, {parts} in flight — ")
    assert now.line(ZH).startswith(f"读取：0 / {parts} 段，进行中 {parts}——已生成 ")
    llm.release_all()
    await task
    await pieces.aclose()  # type: ignore[attr-defined]
    read = [p for p in reports if p.stage is Stage.READING]
    assert read[-1].done == parts and read[-1].in_flight == 0


def test_time_left_comes_from_the_tokens_still_to_come_not_from_rows_finished() -> None:
    """A batch of 50 rows finishing together: after 10 short ones the rows rate said "56 s left"
    for a batch two seconds from its end; the tokens per character the finished rows took, times
    the input still in flight, say the truth."""
    reports: list[Progress] = []
    tally = Tally(Progress(Stage.TRANSLATING, 0, 50, unit="rows", started=ten_s_ago()), reports.append)
    for row in range(50):
        tally.start(row, 10 if row < 10 else 40)  # ten short rows, forty long ones
    assert reports[-1].in_flight == 0 and len(reports) == 1  # a start is said with the next report
    for row in range(50):  # every row has 10 tokens back: the short ones are done, 1 a character
        tally.tokens(row, 10)
    for row in range(10):
        tally.finish(row, failed=False)
    now = reports[-1]
    assert (now.done, now.in_flight, now.tokens) == (10, 40, 500)
    assert now.tokens_left == 40 * (40 - 10)  # 30 tokens still to come for each long row
    # 500 tokens in the ten seconds so far: 50 a second, so the 1,200 to come take about 24 s (a
    # loaded machine's seconds between the lines below move the rate a little).
    assert now.tokens_per_s == pytest.approx(50, rel=0.15)
    assert now.eta_s == pytest.approx(1200 / 50, rel=0.15)
    line = now.line()
    assert line.startswith("translating: 10 of 50 rows, 40 in flight — 500 tokens, ")
    assert 20 <= int(re.fullmatch(r".* tokens/s, .*about (\d+) s left", line)[1]) <= 28  # type: ignore[index]
    chinese = now.line(ZH)
    assert chinese.startswith("翻译：10 / 50 行，进行中 40——已生成 500 个词元，每秒 ")
    assert 20 <= int(re.fullmatch(r".*个词元.*约剩 (\d+) 秒", chinese)[1]) <= 28  # type: ignore[index]


def test_before_enough_rows_finish_the_line_gives_tokens_a_second_but_no_rows_rate() -> None:
    """"1 of 100 cells — 0.1 cells/s" said nothing true; the tokens say how fast it goes."""
    reports: list[Progress] = []
    tally = Tally(Progress(Stage.TRANSLATING, 0, 100, unit="cells", started=ten_s_ago()), reports.append)
    for cell in range(64):
        tally.start(cell, 20)
        tally.tokens(cell, 30)
    tally.finish(0, failed=False)
    line = reports[-1].line()
    assert re.fullmatch(r"translating: 1 of 100 cells, 63 in flight — 1,920 tokens, 1\d\d tokens/s", line)
    for cell in range(1, 10):
        tally.finish(cell, failed=False)
    assert "cells/s" in reports[-1].line()  # ten cells of this run rate them


def test_a_resumed_job_estimates_only_the_rows_this_run_has_left() -> None:
    reports: list[Progress] = []
    start = Progress(Stage.TRANSLATING, 30, 50, unit="rows", resumed=30, started=ten_s_ago())
    tally = Tally(start, reports.append)
    for row in range(30, 40):  # this run: 20 rows, 10 of them started (sizes 10)
        tally.start(row, 10)
        tally.tokens(row, 20)
    tally.finish(30, failed=False)  # 2 tokens a character
    now = reports[-1]
    # 9 in flight with 0 to come each; 10 not started, as large as those started: 10 × 20.
    assert (now.done, now.resumed, now.tokens_left) == (31, 30, 200)
    assert now.tokens_per_s == pytest.approx(20, rel=0.15)  # this run's 200 tokens over 10 s
    assert re.search(r"about (9|1[0-2]) s left$", now.line())  # 200 tokens to come at 20 a second
    assert "rows/s" not in now.line()  # one row of this run's is too few to rate them


def test_the_finished_record_says_this_runs_rate_in_rows_and_tokens() -> None:
    done = Progress(Stage.TRANSLATING, 50, 50, unit="rows", resumed=20, started=ten_s_ago(), tokens=3000)
    status = SimpleNamespace(progress=done)
    # 30 rows and 3,000 tokens in this run's ten seconds (the 20 resumed rows took none of them).
    assert re.fullmatch(r" \((3\.0|2\.9) rows/s; 3,000 tokens, (300|29\d) tokens/s\)", rate(EN, status))  # type: ignore[arg-type]
    assert re.fullmatch(r"（每秒 (3\.0|2\.9) 行；共生成 3,000 个词元，每秒 (300|29\d) 个）", rate(ZH, status))  # type: ignore[arg-type]
    plain = Progress(Stage.TRANSLATING, 50, 50, unit="rows", started=ten_s_ago())
    assert re.fullmatch(r" \((5\.0|4\.9) rows/s\)", rate(EN, SimpleNamespace(progress=plain)))  # type: ignore[arg-type]
    assert "left" not in done.line() and "in flight" not in done.line()
    assert done.line(ZH).startswith("翻译：50 / 50 行——已生成 3,000 个词元，")
    assert "约剩" not in done.line(ZH) and "进行中" not in done.line(ZH)


async def test_combining_notes_in_rounds_counts_its_groups_and_their_tokens() -> None:
    """A round said "0 of N groups" until it ended; now each group combined, and the tokens."""
    llm = CountingLlm(context=1024, reply=lambda m: ("n " * 90) if "<part>" in m[-1]["content"] else
                      ("shorter " * 20 if "Combine these notes" in m[-1]["content"] else "Done [p. 2]."))
    plain = tuple(Page(n, "Page says something plain. " * 20) for n in range(1, 301))
    doc = DocumentText("manual.pdf", plain, 300)
    reports: list[Progress] = []
    plan = MapReduce(chunk_tokens=32_000, concurrency=4, note_tokens=48)
    pieces = ask_map_reduce(doc, 4.0, plan, "What does it say?", llm,
                            ChatParams(temperature=0.0, max_tokens=64), reports.append)
    assert "".join([p async for p in pieces]) == "Done [p. 2]."
    first_round = [p for p in reports if p.stage is Stage.COMBINING_ROUND and p.round == 1]
    groups = first_round[0].total
    assert groups >= 2
    assert {p.done for p in first_round} == set(range(groups + 1))  # every group counted as it ended
    assert first_round[-1].tokens > 0 and first_round[-1].line().startswith(
        f"combining notes, round 1: {groups} of {groups} groups — ")
    assert first_round[-1].line(ZH).startswith(f"汇总笔记（第 1 轮）：{groups} / {groups} 组——已生成 ")
    assert {p.round for p in reports if p.stage is Stage.COMBINING_ROUND} == set(range(1, max(
        p.round for p in reports) + 1))  # every round numbered, from 1


def test_a_time_left_under_half_a_second_is_not_said() -> None:
    """A real map-reduce of two manuals said "about 0 s left" with two parts still being read."""
    soon = Progress(Stage.READING, 1, 3, unit="parts", in_flight=2, tokens=1_511, tokens_left=10,
                    started=time.monotonic() - 20.7)  # 73 tokens/s, 10 to come
    assert soon.eta_s is not None and soon.eta_s < 0.5
    assert "s left" not in soon.line() and "约剩" not in soon.line(ZH)
