"""The CLI's one progress display: a rich bar on stderr fed by the core's Progress."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeRemainingColumn

from glm1m.progress import OnProgress, Progress


@contextmanager
def progress_bar(transient: bool = False) -> Iterator[OnProgress]:
    """An OnProgress that draws the latest stage; stdout stays free for the command's result."""
    with Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
             TextColumn("{task.fields[status]}"), TimeRemainingColumn(),
             console=Console(stderr=True), transient=transient) as bar:
        task = bar.add_task("starting", total=None, status="")

        def show(progress: Progress) -> None:
            status = f"{progress.failed:,} failed" if progress.failed else ""
            bar.update(task, description=progress.stage, total=progress.total,
                       completed=progress.done, status=status)

        yield show
