"""A CSV translation job from file to file: output columns, progress, stopping, resuming, and the
checkpoint's guards, against a scripted model client."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pandas as pd
import pytest

import glm1m.translation.csv_output as csv_output
from glm1m.cli.main import run as cli_run
from glm1m.cli.translate import stopped_line
from glm1m.errors import ServerError, TableError
from glm1m.progress import Progress, Stage
from glm1m.translation.checkpoint import Checkpoint
from glm1m.translation.fanout import Job, Result
from glm1m.translation.job import NOT_REACHED, Summary, checkpoint_path, job_key, run_job
from glm1m.translation.table import open_source
from tests.support.scripted_llm import ScriptedLlm

# Held calls wait on events: a bug that loses a release would hang, so fail fast instead.
pytestmark = pytest.mark.timeout(10)
ROWS = 8
JOB = Job("French", concurrency=3, retries=0)


def write_input(tmp_path: Path, rows: int = ROWS) -> Path:
    path = tmp_path / "in.csv"
    lines = ["id,text,note"] + [f"{i},row {i},n{i}" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_output(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, encoding="utf-8-sig", dtype=str, keep_default_na=False)


async def run(tmp_path: Path, llm: ScriptedLlm, job: Job = JOB,
              progress: list[Progress] | None = None) -> Summary:
    source = open_source(tmp_path / "in.csv")
    on_progress = progress.append if progress is not None else (lambda p: None)
    return await run_job(source, job, llm, tmp_path / "out.csv", on_progress)


async def test_every_row_is_translated_beside_the_original_columns(tmp_path: Path) -> None:
    write_input(tmp_path)
    summary = await run(tmp_path, ScriptedLlm())
    out = read_output(tmp_path / "out.csv")
    assert list(out.columns) == ["id", "text", "note", "translation", "translation_error"]
    assert list(out["id"]) == [str(i) for i in range(ROWS)]
    assert list(out["note"]) == [f"n{i}" for i in range(ROWS)]
    assert list(out["translation"]) == [f"ROW {i}" for i in range(ROWS)]
    assert set(out["translation_error"]) == {""}
    assert (summary.total, summary.translated, summary.complete, summary.stopped) == (ROWS, ROWS, True, False)
    assert not checkpoint_path(tmp_path / "out.csv").exists()  # a finished job leaves no sidecar


async def test_progress_counts_rows_as_they_finish(tmp_path: Path) -> None:
    write_input(tmp_path)
    bad = ServerError("The model server refused the request.")
    llm = ScriptedLlm(fail=lambda text: bad if text == "row 5" else None)
    progress: list[Progress] = []
    summary = await run(tmp_path, llm, progress=progress)
    assert [p.done for p in progress] == list(range(ROWS + 1))
    assert {(p.total, p.unit, p.stage) for p in progress} == {(ROWS, "rows", Stage.TRANSLATING)}
    assert progress[-1].finished and progress[-1].failed == 1
    assert (summary.translated, summary.failed) == (ROWS - 1, 1)
    out = read_output(tmp_path / "out.csv")
    assert (out["translation"][5], out["translation_error"][5]) == ("", str(bad))


async def test_a_stopped_job_keeps_finished_rows_and_resumes_with_the_rest(tmp_path: Path) -> None:
    write_input(tmp_path)
    first_three = {"row 0", "row 1", "row 2"}
    llm = ScriptedLlm(hold=lambda text: text not in first_three)
    progress: list[Progress] = []
    task = asyncio.create_task(run(tmp_path, llm, progress=progress))
    await llm.wait_finished(3)
    await llm.wait_started(JOB.concurrency + 3)  # three more rows are held in flight
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert llm.outcomes("finished") == sorted(first_three)
    assert [p.done for p in progress] == [0, 1, 2, 3]

    out = read_output(tmp_path / "out.csv")  # written although the job was cancelled
    assert list(out["translation"]) == ["ROW 0", "ROW 1", "ROW 2"] + [""] * (ROWS - 3)
    assert list(out["translation_error"]) == [""] * 3 + [NOT_REACHED] * (ROWS - 3)
    assert checkpoint_path(tmp_path / "out.csv").exists()

    again = ScriptedLlm()
    progress = []
    summary = await run(tmp_path, again, progress=progress)
    assert sorted(c.text for c in again.calls) == [f"row {i}" for i in range(3, ROWS)]
    assert (progress[0].done, progress[0].resumed) == (3, 3)
    assert summary.complete
    assert list(read_output(tmp_path / "out.csv")["translation"]) == [f"ROW {i}" for i in range(ROWS)]
    assert not checkpoint_path(tmp_path / "out.csv").exists()


async def test_a_rerun_retries_only_the_failed_rows(tmp_path: Path) -> None:
    write_input(tmp_path)
    bad = ServerError("refused")
    summary = await run(tmp_path, ScriptedLlm(fail=lambda text: bad if text in ("row 1", "row 6") else None))
    assert not summary.complete and summary.failed == 2
    assert checkpoint_path(tmp_path / "out.csv").exists()  # failed rows are worth another run
    again = ScriptedLlm()
    assert (await run(tmp_path, again)).complete
    assert sorted(c.text for c in again.calls) == ["row 1", "row 6"]


async def test_a_checkpoint_of_another_job_is_refused(tmp_path: Path) -> None:
    write_input(tmp_path)
    await run(tmp_path, ScriptedLlm(fail=lambda text: ServerError("x") if text == "row 0" else None))
    german = Job("German", concurrency=3, retries=0)
    source = open_source(tmp_path / "in.csv")
    assert job_key(source, german) != job_key(source, JOB)
    llm = ScriptedLlm()
    with pytest.raises(TableError, match="progress of a different input file or different settings"):
        await run(tmp_path, llm, job=german)
    assert llm.calls == []


async def test_concurrency_is_not_part_of_the_job(tmp_path: Path) -> None:
    # A rerun with more rows in flight continues the same job instead of refusing it.
    write_input(tmp_path)
    source = open_source(tmp_path / "in.csv")
    assert job_key(source, Job("French", concurrency=1, retries=0)) == job_key(source, JOB)


async def test_a_line_cut_short_by_a_kill_is_ignored_and_that_row_translated_again(tmp_path: Path) -> None:
    write_input(tmp_path)
    out = tmp_path / "out.csv"
    source = open_source(tmp_path / "in.csv")
    checkpoint = Checkpoint.open(checkpoint_path(out), job_key(source, JOB))
    for i in (0, 1):
        checkpoint.record(Result(i, f"ROW {i}"))
    checkpoint.close()
    with checkpoint_path(out).open("a", encoding="utf-8") as f:
        f.write('{"i": 2, "t": "RO')  # the process died while writing row 2
    llm = ScriptedLlm()
    summary = await run(tmp_path, llm)
    assert sorted(c.text for c in llm.calls) == [f"row {i}" for i in range(2, ROWS)]
    assert summary.complete
    assert list(read_output(out)["translation"]) == [f"ROW {i}" for i in range(ROWS)]


def parts_left(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".part")]


async def test_an_interrupted_assembly_leaves_the_previous_output_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_input(tmp_path)
    out = tmp_path / "out.csv"
    assert (await run(tmp_path, ScriptedLlm())).complete
    before = out.read_bytes()
    # The same job again, and the disk fills while the output is being written, after its first
    # chunk (assembly runs in a worker thread: a Ctrl-C reaches the main thread, which waits for it).
    monkeypatch.setattr("glm1m.translation.table.CHUNK_ROWS", 3)
    real_write = csv_output.write_chunk

    def write_then_stop(frame: pd.DataFrame, path: Path, first: bool, above: list[list[str]]) -> None:
        if not first:
            raise OSError(28, "No space left on device")
        real_write(frame, path, first, above)

    monkeypatch.setattr(csv_output, "write_chunk", write_then_stop)
    with pytest.raises(TableError, match="could not be written .No space left on device.. Free some space"):
        await run(tmp_path, ScriptedLlm(reply=lambda messages: "other"))
    assert out.read_bytes() == before  # not cut after the first chunk
    assert parts_left(tmp_path) == []
    monkeypatch.setattr(csv_output, "write_chunk", real_write)
    again = ScriptedLlm()
    assert (await run(tmp_path, again)).complete  # the interrupted run's rows were kept
    assert again.calls == [] and list(read_output(out)["translation"]) == ["other"] * ROWS


async def test_stopping_a_rerun_of_a_finished_job_keeps_its_complete_output(tmp_path: Path) -> None:
    write_input(tmp_path)
    out = tmp_path / "out.csv"
    assert (await run(tmp_path, ScriptedLlm())).complete
    complete = out.read_bytes()
    llm = ScriptedLlm(reply=lambda messages: "again", hold=lambda text: text != "row 0")
    task = asyncio.create_task(run(tmp_path, llm))
    await llm.wait_finished(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert out.read_bytes() == complete  # not replaced by one translated row and seven marked
    assert parts_left(tmp_path) == [] and checkpoint_path(out).exists()
    assert stopped_line(out) == (f"stopped. {out} keeps its earlier complete translation; run the same "
                                 f"command again to finish this run.")  # what Ctrl-C prints
    rest = ScriptedLlm(reply=lambda messages: "again")
    assert (await run(tmp_path, rest)).complete
    assert sorted(c.text for c in rest.calls) == [f"row {i}" for i in range(1, ROWS)]
    assert list(read_output(out)["translation"]) == ["again"] * ROWS


async def test_a_stopped_job_still_replaces_an_unfinished_output(tmp_path: Path) -> None:
    write_input(tmp_path)
    out = tmp_path / "out.csv"
    await run(tmp_path, ScriptedLlm(fail=lambda text: ServerError("x") if text == "row 3" else None))
    llm = ScriptedLlm(hold=lambda text: True)
    llm.release("row 3")
    task = asyncio.create_task(run(tmp_path, llm))
    await llm.wait_finished(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert list(read_output(out)["translation"]) == [f"ROW {i}" for i in range(ROWS)]


def same_file_spellings(tmp_path: Path) -> list[Path]:
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.csv").symlink_to(tmp_path / "in.csv")
    os.link(tmp_path / "in.csv", tmp_path / "hard.csv")
    return [tmp_path / "in.csv", tmp_path / "sub" / ".." / "in.csv", tmp_path / "link.csv",
            tmp_path / "hard.csv"]


async def test_an_output_that_is_the_input_is_refused_and_the_input_kept(tmp_path: Path) -> None:
    data = write_input(tmp_path).read_bytes()
    llm = ScriptedLlm()
    for output in same_file_spellings(tmp_path):
        with pytest.raises(TableError, match="is the file .* itself; writing the translation there"):
            await run_job(open_source(tmp_path / "in.csv"), JOB, llm, output)
        assert (tmp_path / "in.csv").read_bytes() == data
    assert llm.calls == []


def test_the_cli_refuses_an_output_that_is_the_input(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    data = write_input(tmp_path).read_bytes()
    glossary = tmp_path / "glossary.csv"
    glossary.write_text("合同,contract\n", encoding="utf-8")
    for output in [*same_file_spellings(tmp_path), glossary]:
        assert cli_run([
            "translate", str(tmp_path / "in.csv"), "--to", "en", "-o", str(output),
            "--glossary", str(glossary), "--base-url", "http://127.0.0.1:9/v1"]) == 2
        err = capsys.readouterr().err
        assert f"glm1m: The output {output} is the file" in err and "Choose another output file." in err
        assert "Traceback" not in err and len(err.splitlines()) == 1
    assert (tmp_path / "in.csv").read_bytes() == data
    assert glossary.read_text(encoding="utf-8") == "合同,contract\n"
