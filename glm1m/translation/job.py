"""A table translation job (CSV or XLSX) from file to file: the one path the UI and
`glm1m translate` share.

Cells stream from the input, through the bounded fan-out, into a checkpoint; the output is then
assembled from the input and the checkpoint — also when the job is stopped, so the rows finished
so far are never lost and a rerun continues from the first missing one. The output is assembled
beside its place and moved there whole; a stopped run never replaces a finished output.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from pathlib import Path

from glm1m.catalog import EN, render, said
from glm1m.counting import OnTokens
from glm1m.errors import TableError
from glm1m.files import replace_when_done
from glm1m.llm import Llm
from glm1m.progress import OnProgress, Progress, Stage, Tally, ignore, unit_said
from glm1m.translation.checkpoint import Checkpoint, fingerprint_of
from glm1m.translation.fanout import Job, Result, Row, translate_rows
from glm1m.translation.lock import job_lock
from glm1m.translation.source import TableSource

NOT_REACHED = render(EN, "row_not_reached")  # a row's translation_error, in English


@dataclass(frozen=True)
class Summary:
    total: int
    translated: int
    failed: int
    not_reached: int
    output: Path
    stopped: bool
    unit: str = "rows"  # "cells" when several columns are translated
    resumed: int = 0  # of `translated`, those an earlier run of the job had finished

    @property
    def complete(self) -> bool:
        return self.translated == self.total

    def line(self, lang: str = EN) -> str:
        """"300 of 300 rows translated → out.csv", with what earlier runs did, what failed and what
        was not reached, in `lang`."""
        # this run's work apart from what it found done
        resumed = said("summary_resumed", resumed=self.resumed,
                       new=self.translated - self.resumed) if self.resumed else ""
        failed = said("summary_failed", failed=self.failed) if self.failed else ""
        left = said("summary_not_reached", count=self.not_reached) if self.not_reached else ""
        return render(lang, "summary_line", translated=self.translated, total=self.total,
                      unit=unit_said(self.unit, 0), resumed=resumed, failed=failed, not_reached=left,
                      output=self.output)


@dataclass(frozen=True)
class Earlier:
    """What earlier runs of a job left beside its output: `done` of `total` cells translated;
    `finished` when the output holds them all."""
    done: int
    total: int
    unit: str
    finished: bool


def earlier_work(source: TableSource, output: Path, key: str) -> Earlier | None:
    """Whether the job keyed `key` ran before into `output` (reads the output and the checkpoint,
    and a workbook's sheet to count its rows: call it off the event loop); None when there is
    nothing of it to continue from or hand back."""
    if source.is_finished(output):
        total = source.cell_count()
        return Earlier(total, total, source.unit, True)
    done = Checkpoint.count_translated(checkpoint_path(output), key)
    return Earlier(done, source.cell_count(), source.unit, False) if done else None


def forget(output: Path) -> None:
    """Remove a job's output and checkpoint, so the same job runs again from the first row."""
    for path in (output, checkpoint_path(output)):
        path.unlink(missing_ok=True)


def job_key(source: TableSource, job: Job) -> str:
    """What makes two runs the same job: the input's bytes and every setting that changes the
    output (not the concurrency, nor the language its errors are said in: a key of earlier versions,
    which had no `lang`, stays). A checkpoint resumes only the same job. A CSV's bytes were
    hashed as it was opened; a workbook's, or a file changed since, are read here."""
    settings = {name: value for name, value in asdict(job).items() if name != "lang"}
    return fingerprint_of(source.content(), {**source.key_settings(), **settings, "concurrency": None})


def check_output(output: Path, *inputs: Path) -> None:
    """Refuse an output that is one of the files being read, by any spelling or link: the output
    is written while the input is read again, which would destroy it."""
    for path in inputs:
        if output.exists() and path.exists() and os.path.samefile(output, path):
            raise TableError(key="output_is_input", output=output, path=path)


def checkpoint_path(output: Path) -> Path:
    return output.with_name(output.name + ".progress.jsonl")


def count_rows(source: TableSource) -> int:
    """The cells to translate (the rows, with one column chosen)."""
    return source.cell_count()


async def pending_rows(source: TableSource, checkpoint: Checkpoint) -> AsyncIterator[Row]:
    index = 0
    for chunk in source.cell_chunks():
        for text in chunk:
            if not checkpoint.translated(index):
                yield Row(index, text)
            index += 1
        await asyncio.sleep(0)  # let results flow between chunks of a large file


async def run_job(source: TableSource, job: Job, llm: Llm, output: Path,
                  on_progress: OnProgress = ignore, key: str | None = None) -> Summary:
    """Translate `source` into `output`. Cancelling it still writes what was finished. `key` is
    job_key(source, job) when the caller has it already (it reads the whole input).
    Progress counts rows as they finish, whatever their order, and meanwhile the rows in flight
    and the tokens come back (progress.Tally). A run stopped short does not replace an output in
    which every row is translated (rerunning a finished job and stopping it loses nothing; the
    rows it did finish wait in the checkpoint for the next run)."""
    check_output(output, source.path)
    with job_lock(output, source.shown_name):
        return await run_locked(source, job, llm, output, on_progress, key)


async def run_locked(source: TableSource, job: Job, llm: Llm, output: Path, on_progress: OnProgress,
                     key: str | None) -> Summary:
    # Fingerprinting and counting a workbook, and assembling any output, read the whole input: in
    # a worker thread, so a 100 MB CSV does not freeze every other session's stream.
    job_id: str = key if key else await asyncio.to_thread(job_key, source, job)
    checkpoint = Checkpoint.open(checkpoint_path(output), job_id)
    total = await asyncio.to_thread(source.cell_count)
    kept = sum(1 for r in checkpoint.results.values() if r.error is None)
    # Rows in flight and their tokens move the progress while vLLM works on a batch; finished rows
    # count when they finish. `resumed`: what earlier runs did is no part of this run's rates.
    tally = Tally(Progress(Stage.TRANSLATING, kept, total, unit=source.unit, resumed=kept), on_progress)

    def started(row: Row) -> OnTokens:
        tally.start(row.index, len(row.text))
        return lambda count: tally.tokens(row.index, count)

    def finished(result: Result) -> None:
        checkpoint.record(result)
        tally.finish(result.index, failed=result.error is not None)

    stopped = True
    try:
        async for _ in translate_rows(pending_rows(source, checkpoint), job, llm, finished, started):
            pass
        stopped = False
    finally:
        summary = summarise(checkpoint, output, total, stopped, source.unit, kept)
        try:
            if worth_writing(summary, source, output):
                # Shielded: a second stop while the file is written must not cut it short.
                await asyncio.shield(asyncio.to_thread(assemble, source, checkpoint, output,
                                                       job.target_language, job.lang))
        except OSError as error:  # a full disk, a folder that went away: a sentence, rows kept
            checkpoint.close()
            raise TableError(key="output_write_failed", name=output.name,
                           reason=error.strerror) from error
        except BaseException:
            checkpoint.close()  # not assembled: keep every finished row for the next run
            raise
        checkpoint.close(remove=summary.complete)
    return summary


def worth_writing(summary: Summary, source: TableSource, output: Path) -> bool:
    """Whether the output is (re)written at the end of a run: always when it ran to the end; when
    stopped, only with a cell translated (a file of nothing but "not translated" rows told a user
    who stopped at once that there was something to download) and never over a finished output."""
    if not summary.stopped:
        return True
    if summary.translated == 0:
        return False
    return summary.complete or not source.is_finished(output)


def summarise(checkpoint: Checkpoint, output: Path, total: int, stopped: bool,
              unit: str = "rows", resumed: int = 0) -> Summary:
    translated = sum(1 for r in checkpoint.results.values() if r.error is None)
    failed = len(checkpoint.results) - translated
    return Summary(total, translated, failed, total - translated - failed, output, stopped, unit,
                   resumed)


def assemble(source: TableSource, checkpoint: Checkpoint, output: Path, language: str = "",
             lang: str = EN) -> None:
    """Write the output in the input's format (the input's cells unchanged, the translations and
    translation_error beside them) into a file beside `output` that replaces it only once whole
    (an interrupted assembly leaves the old)."""
    with replace_when_done(output) as assembling:
        source.write_output(checkpoint.results, assembling, language, render(lang, "row_not_reached"))
