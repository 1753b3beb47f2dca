"""The CLI's one progress display: a rich bar on stderr fed by the core's Progress."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn

from glm1m.cli.output import language
from glm1m.progress import OnProgress, Progress


@contextmanager
def progress_bar(transient: bool = False) -> Iterator[OnProgress]:
    """An OnProgress that draws the latest stage in the CLI's language (output.language); stdout
    stays free for the command's result.

    Beside the count, what moves while units run and what is known of the rest, the core's own
    words (Progress.details): `50 in flight — 1,234 tokens, 310 tokens/s, about 4 s left`. rich's
    own time-remaining column is not used: it rates finished units only, and a batch the server
    finishes together left it at -:--:-- until the end.
    """
    with Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
             TextColumn("{task.fields[status]}"), console=Console(stderr=True),
             transient=transient) as bar:
        task = bar.add_task("", total=None, status="")
        lang = language()

        def show(progress: Progress) -> None:
            bar.update(task, description=progress.stage_words(lang), total=progress.total,
                       completed=progress.done, status=status_text(progress, lang))

        yield show


def status_text(progress: Progress, lang: str) -> str:
    """Progress.details without its leading separator: `(1 failed), 50 in flight — …`,
    `（1 个失败），进行中 50——…`."""
    return progress.details(lang).lstrip(" ,，—")
