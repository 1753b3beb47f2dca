"""One shape for progress, from the core to both doors (the CLI's bar, the page's status line).

The core calls `on_progress(Progress(...))` after each unit of work — a page read, a batch of
pages counted, a row or a document part finished — in whatever order the units finish, and, for
work the model server does, while units run: how many are in flight and how many tokens have come
back (`Tally`). vLLM batches the rows of a table and finishes them together, so a count of
finished rows alone stood at "0 of 50" for a whole 16 s run; the tokens move all along. The doors
decide how often to draw it, and say it in their language: a stage and a unit are ids, said from the
catalog (glm1m/catalog/en/progress.toml and its translations), so no door reads the core's English back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum

from glm1m.catalog import EN, Said, render

MIN_RATE_S = 0.05  # a rate over less time than this is noise
# Tokens per second over the first seconds are mostly the wait for the first token (the server
# reads the prompts first): said once this much of the run has passed.
TOKEN_RATE_AFTER_S = 2.0
# Time left is said once this run has finished this many units, or 2 % of them if fewer: the first
# row of a job finishes alone, before the server's batch does, and 1 of 3,000 rows said "about
# 2,562 s left" on the page for a job that took 90 s.
ETA_AFTER_UNITS = 10
ETA_AFTER_SHARE = 0.02
TOKEN_REPORT_S = 0.25  # a Tally reports tokens at most this often (every finish at once)


class Stage(StrEnum):
    """What is being done: an id, said as the catalog's `stage_<id>` in the reader's language."""
    READING = "reading"  # a file's pages, or a document's parts by the model (map-reduce)
    OCR = "ocr"  # scanned pages, by Tesseract
    COUNTING = "counting"  # the tokens of a document's pages, by the server
    TRANSLATING = "translating"  # a table's rows or cells
    COMBINING_ROUND = "combining_round"  # a round of combining notes in groups: Progress.round
    COMBINING = "combining"  # the notes combined into the answer: a marker of the last step
    ASKING = "asking"  # a grid's cells: each question about each document (glm1m/grid/)


@dataclass(frozen=True)
class Progress:
    stage: Stage
    done: int  # units finished so far, failed ones included
    total: int
    unit: str  # what is counted, an id of the catalog's units: "pages", "rows", "parts", ...
    failed: int = 0  # of `done`, the units that failed
    marked: int = 0  # of `done`, units with a result that is marked (a grid's ⚠ cells): not failed
    resumed: int = 0  # of `done`, the units a resumed job found already finished
    started: float = field(default_factory=time.monotonic)  # when this run of the stage began
    in_flight: int = 0  # units sent to the model server and not finished yet
    tokens: int = 0  # tokens the server has sent back to this run so far (finished units and running)
    tokens_left: int | None = None  # the core's estimate of the tokens still to come; None: unknown
    round: int = 0  # Stage.COMBINING_ROUND: which round (from 1)

    @property
    def finished(self) -> bool:
        return self.done >= self.total

    @property
    def per_s(self) -> float:
        """Units finished per second by this run (resumed units took no time here)."""
        elapsed = time.monotonic() - self.started
        return (self.done - self.resumed) / elapsed if elapsed > 0 else 0.0

    @property
    def tokens_per_s(self) -> float | None:
        """Tokens per second this run, once TOKEN_RATE_AFTER_S have passed with tokens back."""
        elapsed = time.monotonic() - self.started
        if not self.tokens or elapsed < TOKEN_RATE_AFTER_S:
            return None
        return self.tokens / elapsed

    @property
    def enough_finished(self) -> bool:
        """Whether this run has finished enough units for a time left."""
        needed = max(1, min(ETA_AFTER_UNITS, int(ETA_AFTER_SHARE * (self.total - self.resumed))))
        return self.done - self.resumed >= needed

    @property
    def eta_s(self) -> float | None:
        """Seconds left; None until enough is known. Where tokens are counted, the tokens still to
        come over the tokens per second (a batch finishing together is then seen coming); else the
        units left at this run's rate of finished units."""
        if not self.enough_finished:
            return None
        if self.tokens:
            rate = self.tokens_per_s
            if rate is None or self.tokens_left is None:
                return None
            if self.tokens_left <= 0:  # the units in flight outran the estimate: unknown, not 0 s
                return None if self.in_flight else 0.0
            return self.tokens_left / rate
        rate = self.per_s
        return (self.total - self.done) / rate if rate > 0 else None

    def details(self, lang: str = EN) -> str:
        """What follows the counts: ` (1 failed), 64 in flight — 2,310 tokens, 410 tokens/s,
        3.1 rows/s, about 93 s left`; each part once it is known ("" for none)."""
        text = render(lang, "p_marked", count=self.marked) if self.marked else ""
        text += render(lang, "p_failed", count=self.failed) if self.failed else ""
        if self.in_flight:
            text += render(lang, "p_in_flight", count=self.in_flight)
        known = self.known(lang)
        return text + (render(lang, "p_then") + render(lang, "p_sep").join(known) if known else "")

    def known(self, lang: str = EN) -> list[str]:
        """What moves while units run and what is known of the rest, each once it is known:
        tokens back, tokens/s, units/s, the time left."""
        said: list[str] = []
        tokens_per_s = self.tokens_per_s
        if self.tokens:
            said.append(render(lang, "p_tokens" if tokens_per_s is not None else "p_tokens_so_far",
                               count=self.tokens))
        if tokens_per_s is not None:
            said.append(render(lang, "p_tokens_rate", rate=tokens_per_s))
        if self.says_unit_rate():  # a rate's unit is plural in English: "1.0 rows/s"
            said.append(render(lang, "p_unit_rate", rate=self.per_s, unit=unit_said(self.unit, 0)))
        if (eta := self.eta_said()) is not None:
            said.append(render(lang, "p_eta", seconds=eta))
        return said

    def stage_words(self, lang: str = EN) -> str:
        """`combining notes, round 2`, `汇总笔记（第 2 轮）`."""
        return render(lang, f"stage_{self.stage}", round=self.round)

    def eta_said(self) -> float | None:
        """The time left as a line says it: not when finished, and not under half a second (a
        real run said "1 of 3 parts, 2 in flight — … about 0 s left" while two parts were read)."""
        eta = self.eta_s
        return eta if eta is not None and eta >= 0.5 and not self.finished else None

    def says_unit_rate(self) -> bool:
        """Whether a rate in units is said: once this run finished one; where tokens are counted
        (they say how fast it goes meanwhile), once it finished ETA_AFTER_UNITS or all of them:
        "1 of 100 cells — 0.1 cells/s" and "1 of 2 parts — 0.1 parts/s" said nothing true."""
        if self.done <= self.resumed or time.monotonic() - self.started < MIN_RATE_S:
            return False
        return not self.tokens or self.finished or self.done - self.resumed >= ETA_AFTER_UNITS

    def line(self, lang: str = EN) -> str:
        """`translating: 12 of 300 rows (1 failed), 64 in flight — 2,310 tokens, 410 tokens/s,
        about 93 s left` (`翻译：12 / 300 行（1 个失败），进行中 64——已生成 2,310 个词元，…`): the
        counts, then each of the rest once it is known."""
        return render(lang, "p_line", stage=self.stage_words(lang), done=self.done, total=self.total,
                      unit=unit_said(self.unit, self.total), details=self.details(lang))


def unit_said(unit: str, count: int) -> Said:
    """A unit ("rows", "pages", ...) as the catalog says it (`unit_<unit>`): English "row" for 1."""
    return Said(f"unit_{unit}", {"count": count})


OnProgress = Callable[[Progress], None]


def ignore(progress: Progress) -> None:
    """The default OnProgress: nobody is watching."""


class Tally:
    """One stage's units while the model server works on them, reported as Progress: units in
    flight and tokens as they come back (at most every `token_report_s`), each finish at once; and
    an estimate of the tokens still to come. A translation's length follows its input's, so the
    estimate is the tokens per character of input the finished units took, times the input not
    finished yet, less what the unfinished units have had back already: the first rows to finish
    are the short ones, and a count per row would say a batch is almost done when it has begun.

    `size` is the input's length (characters) of all the units this run is to do, where known
    (a document's parts); else the units not started yet count as the mean of those started."""

    def __init__(self, progress: Progress, on_progress: OnProgress, size: int | None = None,
                 token_report_s: float = TOKEN_REPORT_S) -> None:
        self.progress = progress
        self._on_progress = on_progress
        self._size, self._report_s = size, token_report_s
        self._to_do = progress.total - progress.done  # units this run does
        self._started = self._started_size = 0
        self._running: dict[object, list[int]] = {}  # key → [input size, tokens back so far]
        self._finished_size = self._finished_tokens = 0
        self._reported_at = float("-inf")
        self._tokens = progress.tokens
        on_progress(progress)

    def start(self, key: object, size: int) -> None:
        """A unit was sent to the server (`size`: its input's length in characters). Said with
        the next report (its first tokens, or a finish): a report for each start would double the
        page's updates and say nothing the tokens do not say a moment later."""
        self._started += 1
        self._started_size += size
        self._running[key] = [size, 0]

    def tokens(self, key: object, count: int) -> None:
        """`count` more tokens came back for the unit `key`."""
        if (unit := self._running.get(key)) is not None:
            unit[1] += count
        self._tokens += count  # a Progress is made only to report: thousands of tokens a second
        if time.monotonic() - self._reported_at >= self._report_s:
            self._report()

    def finish(self, key: object, failed: bool) -> None:
        """The unit `key` is done (`failed`: without a result); reported at once."""
        size, tokens = self._running.pop(key, [0, 0])
        if not failed:
            self._finished_size += size
            self._finished_tokens += tokens
        self.progress = replace(self.progress, done=self.progress.done + 1,
                                failed=self.progress.failed + failed)
        self._report()

    def tokens_left(self) -> int | None:
        """The tokens still to come, estimated; None before a finished unit has shown how many
        tokens a character of input takes."""
        if self._finished_size <= 0 or self._finished_tokens <= 0:
            return None
        per_char = self._finished_tokens / self._finished_size
        running = sum(max(0.0, per_char * size - got) for size, got in self._running.values())
        unstarted: float
        if self._size is not None:
            unstarted = max(0, self._size - self._started_size)
        else:
            unstarted = (self._to_do - self._started) * self._started_size / max(1, self._started)
        return round(running + per_char * unstarted)

    def _report(self) -> None:
        self._reported_at = time.monotonic()
        self.progress = replace(self.progress, in_flight=len(self._running), tokens=self._tokens,
                                tokens_left=self.tokens_left())
        self._on_progress(self.progress)
