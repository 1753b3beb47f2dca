"""The one progress line both doors show: counts, failures, rate and time left from units finished."""

from __future__ import annotations

import time

from glm1m.progress import Progress


def test_the_line_counts_failures_and_gives_rate_and_time_left_from_finished_units() -> None:
    started = time.monotonic() - 10
    line = Progress("translating", 30, 300, unit="rows", failed=2, started=started).line()
    assert line.startswith("translating: 30 of 300 rows (2 failed) — 3.0 rows/s, about 90 s left")


def test_a_resumed_job_rates_only_what_this_run_did_and_a_finished_one_has_no_time_left() -> None:
    started = time.monotonic() - 10
    resumed = Progress("translating", 150, 300, unit="rows", resumed=100, started=started)
    assert "5.0 rows/s, about 30 s left" in resumed.line()
    done = Progress("translating", 300, 300, unit="rows", started=started)
    assert done.line() == "translating: 300 of 300 rows — 30.0 rows/s"


def test_nothing_done_yet_or_a_stage_marker_shows_no_rate() -> None:
    assert Progress("translating", 0, 300, unit="rows").line() == "translating: 0 of 300 rows"
    marker = Progress("combining notes", 9, 9, unit="parts", resumed=9)
    assert marker.line() == "combining notes: 9 of 9 parts"


def test_time_left_waits_for_enough_finished_units_but_a_short_job_gets_it_at_once() -> None:
    started = time.monotonic() - 0.8
    first = Progress("translating", 1, 3000, unit="rows", started=started)  # the first row, alone
    assert first.eta_s is None and "left" not in first.line()
    assert "1.2 rows/s" in first.line()  # the rate is still said
    batch = Progress("translating", 64, 3000, unit="rows", started=started)
    assert batch.eta_s is not None and "s left" in batch.line()
    parts = Progress("reading", 1, 6, unit="parts", started=started)
    assert parts.eta_s is not None
