"""The one progress line both doors show: counts, failures, rate and time left from units finished,
in English and in Chinese (a stage and a unit are ids said from the catalog)."""

from __future__ import annotations

import time

from glm1m.catalog import EN, ZH
from glm1m.progress import Progress, Stage


def test_the_line_counts_failures_and_gives_rate_and_time_left_from_finished_units() -> None:
    started = time.monotonic() - 10
    progress = Progress(Stage.TRANSLATING, 30, 300, unit="rows", failed=2, started=started)
    assert progress.line().startswith("translating: 30 of 300 rows (2 failed) — 3.0 rows/s, about 90 s left")
    assert progress.line(ZH).startswith("翻译：30 / 300 行（2 个失败）——每秒 3.0 行，约剩 90 秒")


def test_a_resumed_job_rates_only_what_this_run_did_and_a_finished_one_has_no_time_left() -> None:
    started = time.monotonic() - 10
    resumed = Progress(Stage.TRANSLATING, 150, 300, unit="rows", resumed=100, started=started)
    assert "5.0 rows/s, about 30 s left" in resumed.line()
    done = Progress(Stage.TRANSLATING, 300, 300, unit="rows", started=started)
    assert done.line() == "translating: 300 of 300 rows — 30.0 rows/s"
    assert done.line(ZH) == "翻译：300 / 300 行——每秒 30.0 行"


def test_nothing_done_yet_or_a_stage_marker_shows_no_rate() -> None:
    assert Progress(Stage.TRANSLATING, 0, 300, unit="rows").line() == "translating: 0 of 300 rows"
    assert Progress(Stage.TRANSLATING, 0, 300, unit="rows").line(ZH) == "翻译：0 / 300 行"
    marker = Progress(Stage.COMBINING, 9, 9, unit="parts", resumed=9)
    assert marker.line() == "combining notes: 9 of 9 parts"
    assert marker.line(ZH) == "汇总笔记：9 / 9 段"


def test_time_left_waits_for_enough_finished_units_but_a_short_job_gets_it_at_once() -> None:
    started = time.monotonic() - 0.8
    first = Progress(Stage.TRANSLATING, 1, 3000, unit="rows", started=started)  # the first row, alone
    assert first.eta_s is None and "left" not in first.line()
    assert "1.2 rows/s" in first.line()  # the rate is still said
    batch = Progress(Stage.TRANSLATING, 64, 3000, unit="rows", started=started)
    assert batch.eta_s is not None and "s left" in batch.line()
    parts = Progress(Stage.READING, 1, 6, unit="parts", started=started)
    assert parts.eta_s is not None


def test_every_stage_says_its_words_and_fields_in_both_languages_with_plurals() -> None:
    """A round of combining keeps its number in both languages; one of one is singular in English;
    a rate's unit stays plural ("1.0 pages/s")."""
    first = Progress(Stage.COMBINING_ROUND, 0, 3, unit="groups", round=2)
    assert first.line(EN) == "combining notes, round 2: 0 of 3 groups"
    assert first.line(ZH) == "汇总笔记（第 2 轮）：0 / 3 组"
    ocr = Progress(Stage.OCR, 1, 1, unit="pages", started=time.monotonic() - 1)
    assert ocr.line(EN) == "reading scanned pages (OCR): 1 of 1 page — 1.0 pages/s"
    assert ocr.line(ZH) == "识别扫描页（OCR）：1 / 1 页——每秒 1.0 页"
    counting = Progress(Stage.COUNTING, 64, 128, unit="sections")
    assert counting.line(EN) == "counting tokens: 64 of 128 sections"
    assert counting.line(ZH) == "统计词元：64 / 128 节"
    reading = Progress(Stage.READING, 0, 2, unit="parts", in_flight=2, tokens=1, started=time.monotonic())
    assert reading.line(EN) == "reading: 0 of 2 parts, 2 in flight — 1 token so far"
    assert reading.line(ZH) == "读取：0 / 2 段，进行中 2——已生成 1 个词元"
