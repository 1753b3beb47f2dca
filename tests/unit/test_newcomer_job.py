"""Issue 26 in the core: a job stopped before any row is translated writes no file; a resumed
job's summary counts the earlier run's rows apart; earlier_work tells a finished job from a
half-done one; only columns with text are offered."""

from __future__ import annotations

import asyncio
import datetime
from pathlib import Path

import openpyxl
import pytest

from glm1m.cli.translate import stopped_line
from glm1m.progress import Progress
from glm1m.translation.fanout import Job
from glm1m.translation.formats import open_table
from glm1m.translation.job import checkpoint_path, earlier_work, forget, job_key, run_job
from glm1m.translation.table import is_text
from tests.support.scripted_llm import ScriptedLlm

pytestmark = pytest.mark.timeout(10)
ROWS = 8
JOB = Job("French", concurrency=3, retries=0)


def write_input(tmp_path: Path) -> Path:
    path = tmp_path / "in.csv"
    lines = ["id,day,text,empty,note"] + [f"{i},2024-01-0{i + 1},row {i},,n{i}" for i in range(ROWS)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def test_a_stop_before_any_row_is_translated_writes_no_file(tmp_path: Path) -> None:
    source = open_table(write_input(tmp_path))
    out = tmp_path / "out.csv"
    llm = ScriptedLlm(hold=lambda text: True)
    task = asyncio.create_task(run_job(source, JOB, llm, out))
    await llm.wait_started(JOB.concurrency)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not out.exists()
    assert stopped_line(out, source) == "stopped before any row was translated; nothing was written."
    assert earlier_work(source, out, job_key(source, JOB)) is None  # nothing to continue from


async def test_a_resumed_job_counts_earlier_rows_apart_and_a_finished_one_is_known(tmp_path: Path) -> None:
    source = open_table(write_input(tmp_path))
    out, key = tmp_path / "out.csv", job_key(source, JOB)
    first_three = {"row 0", "row 1", "row 2"}
    llm = ScriptedLlm(hold=lambda text: text not in first_three)
    task = asyncio.create_task(run_job(source, JOB, llm, out))
    await llm.wait_finished(3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    earlier = earlier_work(source, out, key)
    assert earlier is not None and (earlier.done, earlier.total, earlier.finished) == (3, ROWS, False)

    progress: list[Progress] = []
    summary = await run_job(source, JOB, ScriptedLlm(), out, progress.append, key)
    assert (summary.translated, summary.resumed) == (ROWS, 3)
    assert summary.line().startswith(f"{ROWS} of {ROWS} rows translated (3 by an earlier run, 5 by this one)")
    earlier = earlier_work(source, out, key)
    assert earlier is not None and (earlier.done, earlier.total, earlier.finished) == (ROWS, ROWS, True)
    forget(out)
    assert not out.exists() and not checkpoint_path(out).exists()
    assert earlier_work(source, out, key) is None


def test_only_columns_with_text_are_offered(tmp_path: Path) -> None:
    csv_source = open_table(write_input(tmp_path))
    assert (csv_source.column, csv_source.text_columns()) == ("text", ("text", "note"))
    book = openpyxl.Workbook()
    book.active.append(["id", "day", "title", "empty", "body"])
    book.active.append([1, datetime.date(2024, 1, 5), "hi", None, "yo"])
    book.active.append([2, "2024-01-06", "there", None, "7"])
    book.save(tmp_path / "in.xlsx")
    xlsx_source = open_table(tmp_path / "in.xlsx")
    assert (xlsx_source.column, xlsx_source.text_columns()) == ("title", ("title", "body"))
    assert [is_text(v) for v in ("2024年1月5日", "05.01.2024", "9:30", "1,234.5", "Q1 2024", "第1行")] == [
        False, False, False, False, True, True]
