"""`glm1m summarize`'s door to the document path (glm1m/documents/asking.py): the progress bar
while a file is read, one line on stderr for each step, and the line that moves while the server
reads a whole document before the first word of its answer. A 1M-token prefill takes about ten
minutes on one H200 and no byte comes back until it ends, so without a line that moves the command
looks hung. A terminal gets one line redrawn every second; a pipe or a log gets one line every
GLM1M_WAIT_LINE_S. The line goes when the answer starts.
"""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack

from rich.console import Console
from rich.status import Status

from glm1m.catalog import EN, render, said
from glm1m.cli.bar import progress_bar
from glm1m.cli.output import language, say
from glm1m.cli.shelf import added_words
from glm1m.documents.asking import Asked, Door
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.lookup import Lookup
from glm1m.documents.sets import is_set
from glm1m.documents.shelf import ShelfFull, Shelved
from glm1m.progress import OnProgress, Progress, ignore
from glm1m.serving import PrefillClock

TERMINAL_REDRAW_S = 1.0


def clock_text(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


def waiting_line(name: str, tokens: int, elapsed_s: float, clock: PrefillClock,
                 read_before: bool = False, lang: str = EN) -> str:
    """Still reading, for how long, and how that compares with the estimate (named as one), in
    `lang`. `read_before`: this server read the document before, so it may answer in seconds."""
    head = said("wl_again" if read_before else "wl_reading", name=name, tokens=tokens,
                clock=clock_text(elapsed_s))
    estimate = clock.estimate_s(tokens)
    if estimate is None:
        return render(lang, "wl_no_estimate", head=head)
    if estimate - elapsed_s >= 1:
        return render(lang, "wl_left_else" if read_before else "wl_left", head=head,
                      left=clock_text(estimate - elapsed_s), basis=clock.basis_said())
    return render(lang, "wl_past", head=head, estimate=clock_text(estimate), basis=clock.basis_said())


class WaitingLine:
    """The line that moves on stderr: on a terminal, one line redrawn (rich) every second; else
    a line of its own every `every_s` (GLM1M_WAIT_LINE_S), the first once that much has passed."""

    def __init__(self, every_s: float, terminal: bool | None = None) -> None:
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self.every_s = TERMINAL_REDRAW_S if self.terminal else every_s
        self._status: Status | None = None

    def start(self, text: str) -> None:
        if self.terminal and self._status is None:
            self._status = Console(stderr=True).status(text)
            self._status.start()

    def show(self, text: str) -> None:
        if self._status is not None:
            self._status.update(text)
        elif not self.terminal:
            say(text)

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None


class TerminalDoor(Door):
    """How `glm1m summarize` asks and shows: the strategy it was given (else the budget's
    default), the bar while the file is read, a line for each step, the parts read line by line,
    and the waiting line before a whole document's answer. `close` when done, however it ends."""

    def __init__(self, wanted: Strategy | None, clock: PrefillClock, every_s: float,
                 terminal: bool | None = None) -> None:
        self.wanted = wanted
        self.clock = clock
        self.line = WaitingLine(every_s, terminal)
        self.tick_s = self.line.every_s
        self._bar = ExitStack()
        self._show: OnProgress = ignore  # the bar while reading; counting tokens is not shown
        self._said: tuple[tuple[str, int, int] | None, float] = (None, 0.0)  # the last parts line
        self.lang = language()  # the parts' lines are said in it

    def progress(self, progress: Progress) -> None:
        self._show(progress)

    async def reading(self, name: str) -> None:
        self._show = self._bar.enter_context(progress_bar(transient=True))

    async def read(self, shelved: Shelved, full: ShelfFull | None) -> None:
        self._bar.close()
        self._show = ignore
        if shelved.hit:
            say(said("cli_on_shelf", name=shelved.text.name, when=added_words(shelved.added)))
        if full is not None:
            say(full.in_language(self.lang))

    async def choose(self, name: str, budget: Budget, answer_tokens: int, before: float | None
                     ) -> Strategy:
        return self.wanted or budget.default(answer_tokens)

    async def asking(self, asked: Asked) -> None:
        self._show = self._parts_line
        doc = asked.doc
        if doc.strategy is Strategy.WHOLE:
            before = added_words(asked.before) if asked.before is not None else None
            say(self.clock.describe_wait(doc.budget.tokens, before, is_set(doc.text), self.lang))
            self.line.start(self._line(asked, 0.0))

    def _parts_line(self, progress: Progress) -> None:
        """The parts as they are read: a line when a count moves, else one every tick_s (token
        counts come about once a second, too often for a log)."""
        key, now = (progress.stage, progress.done, progress.total), time.monotonic()
        if key != self._said[0] or now - self._said[1] >= self.tick_s:
            self._said = (key, now)
            say(progress.line(self.lang))

    async def waiting(self, asked: Asked, elapsed_s: float) -> None:
        if asked.doc.strategy is Strategy.WHOLE:
            self.line.show(self._line(asked, elapsed_s))

    async def answering(self, asked: Asked, elapsed_s: float) -> None:
        self.line.stop()

    async def looked_up(self, lookup: Lookup) -> None:
        say(lookup.words(self.lang))

    def close(self) -> None:
        self._bar.close()
        self.line.stop()

    def _line(self, asked: Asked, elapsed_s: float) -> str:
        doc = asked.doc
        return waiting_line(doc.name, doc.budget.tokens, elapsed_s, self.clock, asked.again, self.lang)
