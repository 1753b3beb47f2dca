"""A grid job: every question about every document, documents fanned out under a bound, each
finished document kept in the checkpoint, progress per cell, the table written at the end.

    summary = await run_grid(documents, asking, output, concurrency=4, on_progress=show)

The bound is documents, not cells (cells.py asks a document's questions in turn, so its later
ones are prefix-cache hits): translation/fanout.py's window is made for rows of one prompt, each
answered alone, so this is a Semaphore over documents with the bound from GLM1M_GRID_CONCURRENCY.
Stopping (cancelling the task) cancels every document in flight; the finished ones are kept.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from glm1m.catalog import Said, said
from glm1m.grid.cells import Asking, Cell, Row, Source, ask_document, key_of
from glm1m.grid.checkpoint import GridCheckpoint, checkpoint_path, job_id
from glm1m.grid.workbook import write_grid
from glm1m.progress import OnProgress, Progress, Stage, ignore
from glm1m.translation.lock import job_lock


@dataclass(frozen=True)
class Summary:
    rows: tuple[Row, ...]
    resumed: int  # documents the checkpoint had finished: not asked again
    output: Path

    @property
    def cells(self) -> tuple[Cell, ...]:
        return tuple(cell for row in self.rows for cell in row.cells)

    @property
    def complete(self) -> bool:
        """Every cell answered, none marked, every document read."""
        return all(row.problem is None for row in self.rows) and not any(
            cell.problems or cell.failed for cell in self.cells)

    def said(self, questions: int) -> Said:
        cells = self.cells
        failed = sum(cell.failed for cell in cells)
        marked = sum(cell.marked for cell in cells)
        absent = sum(cell.absent for cell in cells)
        unread = sum(row.problem is not None for row in self.rows)
        return said("cli_grid_done", cells=len(self.rows) * questions,
                    answered=len(cells) - failed - marked - absent, absent=absent, marked=marked,
                    failed=failed + unread * questions, unread=unread, output=self.output)


def reading_of(asking: Asking) -> dict[str, object]:
    """What changes a cell's answer besides its question: with the questions, the job's identity
    (checkpoint.job_id); a checkpoint of other reading is another job's."""
    return {"ocr": asking.options.ocr.mode.value, "max_tokens": asking.params.max_tokens,
            "model": asking.settings.model}


async def run_grid(documents: tuple[Source, ...], asking: Asking, output: Path, concurrency: int,
                   on_progress: OnProgress = ignore) -> Summary:
    """Ask `asking.questions` of each document and write the grid to `output` (.xlsx or .csv).
    Raises GridError for a checkpoint of another job, JobAlreadyRunning for the same job running."""
    questions = len(asking.questions)
    total = len(documents) * questions
    with job_lock(output, output.name):
        checkpoint = GridCheckpoint.open(checkpoint_path(output),
                                         job_id(asking.questions, reading_of(asking)))
        try:
            keys = [await asyncio.to_thread(key_of, source) for source in documents]
            rows: dict[int, Row] = {i: row for i, key in enumerate(keys)
                                    if (row := checkpoint.finished(key)) is not None}
            resumed = len(rows) * questions
            # Of the cells done, marked (⚠: answered, but not of its type or citing a location the
            # document lacks) and failed (no answer: a rerun asks it again) are said apart.
            state = {"done": resumed, "failed": 0, "marked": 0, "in_flight": 0}
            started = Progress(Stage.ASKING, resumed, total, unit="cells", resumed=resumed).started

            def show() -> None:
                on_progress(Progress(Stage.ASKING, state["done"], total, unit="cells",
                                     failed=state["failed"], marked=state["marked"],
                                     resumed=resumed, started=started,
                                     in_flight=state["in_flight"]))

            def on_cell(cell: Cell) -> None:
                state["done"] += 1
                state["failed"] += cell.failed
                state["marked"] += cell.marked
                show()

            limit = asyncio.Semaphore(concurrency)

            async def one(index: int) -> None:
                async with limit:
                    state["in_flight"] += 1
                    try:
                        row = await ask_document(documents[index], keys[index], asking, on_cell)
                    finally:
                        state["in_flight"] -= 1
                if row.problem is not None:  # none of its cells was asked
                    state["done"] += questions
                    state["failed"] += questions
                show()  # its last cell's line still counted it in flight
                checkpoint.record(row)
                rows[index] = row

            show()
            async with asyncio.TaskGroup() as group:  # one failing or stopped cancels the others
                for index in [i for i in range(len(documents)) if i not in rows]:
                    group.create_task(one(index))
            ordered = tuple(rows[i] for i in range(len(documents)))
            await asyncio.to_thread(write_grid, ordered, asking.questions, output, asking.lang)
        finally:
            checkpoint.close()
        summary = Summary(ordered, resumed // questions if questions else 0, output)
        if all(row.complete for row in ordered):
            checkpoint.close(remove=True)  # every document answered: nothing to resume
        return summary
