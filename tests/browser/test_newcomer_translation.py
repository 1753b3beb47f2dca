"""Issue 26 on an English page: a stop with nothing finished hands over nothing, and reads once;
the same table attached again is offered back when done and continued when half done, the record
counting the earlier run apart; several columns wait for Start; only columns with text are
offered; each setting has a help line."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import ask, open_chat, screenshot

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'
HELD_S = 120  # every translation request answered this late: none finishes before the stop


def write_csv(path: Path, header: list[str], rows: list[list[object]], delimiter: str = ",",
              title: str | None = None) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        if title is not None:
            f.write(title + "\n")
        csv.writer(f, delimiter=delimiter).writerows([header, *rows])
    return path


def attach(page: Page, path: Path) -> None:
    """Attach `path` alone, without words, and send it. The input is emptied first: the page
    takes no change event for the file it last took, and the same file is attached again here."""
    page.eval_on_selector("#upload-button-input", "input => { input.value = '' }")
    page.set_input_files("#upload-button-input", str(path))
    page.wait_for_selector(f"#attachments >> text={path.name}")
    ask(page, "")


def start(page: Page, url: str) -> None:
    open_chat(page, url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")


def test_a_stop_before_any_row_is_finished_says_so_hands_over_nothing_and_reads_once(
        page: Page, app, tmp_path) -> None:
    source = write_csv(tmp_path / "held.csv", ["text"], [[f"line {i}"] for i in range(20)])
    app.proxy.hold_every_completion(HELD_S)
    start(page, app.url)
    attach(page, source)
    page.wait_for_selector("text=/translating: 0 of 20 rows/", timeout=60_000)
    page.click("#stop-button")
    page.wait_for_selector("text=/Stopped after [0-9.]+ s, before any row was translated: there is no "
                           "file to hand over/", timeout=60_000)
    # Chainlit's own "Task manually stopped." is taken away: one stop message, not two.
    page.wait_for_selector("text=Task manually stopped.", state="detached", timeout=10_000)
    page.wait_for_selector("#chat-submit")
    screenshot(page, "newcomer-stop-nothing-finished")
    assert page.locator("text=held.translated.csv").count() == 0
    assert page.locator("text=/rows finished so far/").count() == 0


def test_a_finished_table_attached_again_offers_its_result_or_a_fresh_run(page: Page, app, tmp_path) -> None:
    source = write_csv(tmp_path / "done.csv", ["text"], [[f"clause {i}"] for i in range(6)])
    start(page, app.url)
    attach(page, source)
    page.wait_for_selector("text=/Finished: 6 of 6 rows translated in/", timeout=300_000)
    asked = len(app.proxy.journal)
    attach(page, source)
    page.wait_for_selector("text=/done.csv was translated already in this chat, with these settings: "
                           "all 6 rows/", timeout=60_000)
    screenshot(page, "newcomer-finished-offer")
    page.click("button:has-text('The result')")
    page.wait_for_selector("text=/The translation of done.csv made before: 6 of 6 rows translated/",
                           timeout=60_000)
    with page.expect_download() as download:
        page.locator("a:has-text('done.translated.csv'), button:has-text('done.translated.csv')").last.click()
    rows = list(csv.DictReader(open(download.value.path(), encoding="utf-8-sig")))
    assert [r["text"] for r in rows] == [f"clause {i}" for i in range(6)]
    assert all(r["translation"] for r in rows)
    assert len(app.proxy.journal) == asked  # handed back, not translated again
    attach(page, source)
    page.click("button:has-text('Translate again')", timeout=60_000)
    # A second record, from a fresh run: the text is on the page twice (three pieces around it).
    page.wait_for_function("() => document.body.innerText.split('Finished: 6 of 6 rows translated in')"
                           ".length > 2", timeout=300_000)
    assert len(app.proxy.journal) == asked + 6


def test_a_half_done_table_attached_again_continues_and_counts_this_run_apart(
        page: Page, app, tmp_path) -> None:
    rows = 150
    source = write_csv(tmp_path / "half.csv", ["text"], [[f"term {i}"] for i in range(rows)])
    start(page, app.url)
    attach(page, source)
    page.wait_for_selector(f"text=/translating: [1-9][0-9]* of {rows} rows/", timeout=120_000)
    page.click("#stop-button")
    record = page.wait_for_selector(f"text=/Stopped: [0-9,]+ of {rows} rows translated after/",
                                    timeout=60_000)
    done = int(re.search(r"Stopped: ([0-9,]+) of", record.inner_text()).group(1).replace(",", ""))
    assert 0 < done < rows
    page.wait_for_selector("#chat-submit")
    attach(page, source)
    page.wait_for_selector(f"text=Continuing: {done} of {rows} rows were done before; translating the "
                           f"other {rows - done}.", timeout=60_000)
    page.wait_for_selector(f"text=/Finished: {rows} of {rows} rows translated \\({done} by an earlier run, "
                           f"{rows - done} by this one\\) in/", timeout=300_000)
    screenshot(page, "newcomer-continued")


def test_several_columns_are_chosen_in_one_question_that_waits_for_start(page: Page, app, tmp_path) -> None:
    source = write_csv(tmp_path / "cols.csv", ["id", "day", "title", "body"],
                       [[i, f"2024-01-{i + 1:02d}", f"title {i}", f"body {i}"] for i in range(4)],
                       delimiter=";", title="Quarterly terms")
    start(page, app.url)
    attach(page, source)
    page.wait_for_selector("text=Which column should be translated?", timeout=60_000)
    page.wait_for_selector("button:has-text('Several columns')")
    assert page.locator("button", has_text=re.compile(r"^(id|day)$")).count() == 0  # no text: not offered
    page.click("button:has-text('Several columns')")
    page.wait_for_selector("text=/Chosen: none yet\\./")  # one question, not "Which column" again
    page.click("button:has-text('title')")
    page.wait_for_selector("text=/Chosen: title\\./")
    page.click("button:has-text('body')")  # the last column: the job must not start by itself
    page.wait_for_selector("text=/Chosen: title, body\\./")
    page.wait_for_selector("button:has-text('Start')")
    screenshot(page, "newcomer-several-columns")
    assert page.locator("text=/Reading cols.csv/").count() == 0
    page.click("button:has-text('✓ title')")  # taken out again
    page.wait_for_selector("text=/Chosen: body\\./")
    page.click("button:has-text('title')")
    page.wait_for_selector("text=/Chosen: body, title\\./")
    page.click("button:has-text('Start')")
    page.wait_for_selector("text=/Columns to translate: body, title\\./")
    # The job line says how the file was read: the delimiter and the title row kept untranslated.
    page.wait_for_selector("text=/as UTF-8 \\(semicolon-separated; the header is row 2; the 1 row above "
                           "it \\(a title, comments\\) is kept as it is, not translated\\)/", timeout=60_000)
    page.wait_for_selector("text=/Finished: 8 of 8 cells translated in/", timeout=300_000)


def test_each_setting_has_a_help_line(page: Page, app) -> None:
    start(page, app.url)
    page.click("#chat-settings-open-modal")
    for help_line in ("What the model is told before every chat answer", "How varied the wording is",
                      "The longest answer, in tokens", "The language an attached CSV or XLSX is translated",
                      "The language of the spreadsheet's text"):
        page.wait_for_selector(f"text={help_line}")
    # The panel fades in: the picture is taken once it is fully drawn.
    page.wait_for_function("() => [...document.querySelectorAll('[role=dialog]')].every("
                           "d => getComputedStyle(d).opacity === '1')")
    screenshot(page, "newcomer-settings-help")
