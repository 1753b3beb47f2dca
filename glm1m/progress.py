"""One shape for progress, from the core to both doors (the CLI's bar, the page's status line).

The core calls `on_progress(Progress(...))` after each unit of work — a page read, a batch of
pages counted, a row or a document part finished — in whatever order the units finish. The doors
decide how often to draw it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

MIN_RATE_S = 0.05  # a rate over less time than this is noise
# Time left is said once this run has finished this many units, or 2 % of them if fewer: the first
# row of a job finishes alone, before the server's batch does, and 1 of 3,000 rows said "about
# 2,562 s left" on the page for a job that took 90 s.
ETA_AFTER_UNITS = 10
ETA_AFTER_SHARE = 0.02


@dataclass(frozen=True)
class Progress:
    stage: str  # what is being done, in words: "reading", "translating", ...
    done: int  # units finished so far, failed ones included
    total: int
    unit: str = ""  # what is counted, plural: "pages", "rows", "parts"
    failed: int = 0  # of `done`, the units that failed
    resumed: int = 0  # of `done`, the units a resumed job found already finished
    started: float = field(default_factory=time.monotonic)  # when this run of the stage began

    @property
    def finished(self) -> bool:
        return self.done >= self.total

    @property
    def per_s(self) -> float:
        """Units finished per second by this run (resumed units took no time here)."""
        elapsed = time.monotonic() - self.started
        return (self.done - self.resumed) / elapsed if elapsed > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at this run's rate; None until it has finished enough units to say."""
        needed = max(1, min(ETA_AFTER_UNITS, int(ETA_AFTER_SHARE * (self.total - self.resumed))))
        rate = self.per_s
        if self.done - self.resumed < needed or rate <= 0:
            return None
        return (self.total - self.done) / rate

    def line(self) -> str:
        """`translating: 12 of 300 rows (1 failed) — 3.1 rows/s, about 93 s left`; the rate once this
        run has finished a unit, the time left until all are."""
        unit = f" {self.unit}" if self.unit else ""
        text = f"{self.stage}: {self.done:,} of {self.total:,}{unit}"
        if self.failed:
            text += f" ({self.failed:,} failed)"
        if self.done > self.resumed and time.monotonic() - self.started >= MIN_RATE_S:
            text += f" — {self.per_s:.1f}{unit}/s"
            eta = self.eta_s
            text += f", about {eta:.0f} s left" if eta is not None and not self.finished else ""
        return text


OnProgress = Callable[[Progress], None]


def ignore(progress: Progress) -> None:
    """The default OnProgress: nobody is watching."""
