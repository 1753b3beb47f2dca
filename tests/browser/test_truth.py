"""A page that tells the truth (issue 17), in real Chromium against the real app and server: stop
is there for a whole translation that went through the column choice and hands back the rows
finished; progress moves before the end; closing the tab stops the job and keeps its rows; a read
document leaves a record, not a stale waiting line; the first page says what glm1m does."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from glm1m.chainlit_app.leaving import GRACE_S
from tests.browser.conftest import ask, only_loopback, open_chat, screenshot
from tests.support.metrics import eventually, running

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'
FORMATS = ("PDF", "DOCX", "EPUB", "MOBI", "FB2", "XPS", "TXT", "Markdown", "HTML", "OCR", "CSV", "XLSX")


def make_csv(path: Path, rows: int) -> list[str]:
    """An id and a text column (the id is not offered: no column choice)."""
    texts = [f"第{i}行。 row {i}" for i in range(rows)]
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["id", "text"], *[[i, t] for i, t in enumerate(texts)]])
    return texts


def start_translation(page: Page, url: str, source: Path, rows: str = "3,000") -> None:
    """Attach `source` alone (no words), choose the column, and wait until rows are finishing."""
    open_chat(page, url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    page.set_input_files("#upload-button-input", str(source))
    page.wait_for_selector(f"text={source.name}")
    ask(page, "")
    # The file-only message shows the file's name, not an empty bubble.
    page.wait_for_selector(f'[data-step-type="user_message"] >> text=Attached: {source.name}')
    # No column choice: the numeric id column is not offered, so "text" is the only one.
    # Rows counted as they finish: a count between none and all, long before the end.
    page.wait_for_selector(f"text=/translating: [1-9][0-9,]* of {rows} rows/", timeout=120_000)


def read_rows(path: str | Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(Path(path).read_text(encoding="utf-8-sig"))))


def test_stop_after_the_column_choice_hands_back_the_finished_rows(page: Page, app, tmp_path) -> None:
    texts = make_csv(tmp_path / "big.csv", 3000)
    start_translation(page, app.url, tmp_path / "big.csv")
    page.wait_for_selector("text=/closing it stops the job/")  # said before the job runs
    page.wait_for_selector("#stop-button", timeout=10_000)  # stop is there for the job
    screenshot(page, "translation-stop-button")
    page.click("#stop-button")
    eventually(lambda: running(app.server.root) == 0, 30, "every translation request was cancelled")
    page.wait_for_selector("text=Stopped. The rows finished so far", timeout=60_000)
    page.wait_for_selector("text=/Stopped: [0-9,]+ of 3,000 rows translated after/")  # the record
    with page.expect_download() as download:
        page.locator("a:has-text('big.translated.csv'), button:has-text('big.translated.csv')").last.click()
    rows = read_rows(download.value.path())
    assert [r["text"] for r in rows] == texts
    assert 0 < sum(1 for r in rows if r["translation"]) < 3000


def test_closing_the_tab_stops_the_job_and_keeps_the_finished_rows(
        browser: Browser, app, healthy_proxy, data_dir, tmp_path) -> None:
    # Long enough that the grace period and the stop come well before its end, on any machine.
    texts = make_csv(tmp_path / "closed.csv", 30_000)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route("**/*", only_loopback)
    try:
        start_translation(page, app.url, tmp_path / "closed.csv", rows="30,000")
        page.wait_for_selector("text=/Keep this tab open: closing it stops the job/")
        # That line opens the job, a moment before its first requests reach the server (a
        # clean-clone CI run once read 0 there), so the server is watched until they do.
        eventually(lambda: running(app.server.root) > 0, 30, "the job's requests reached the server")
    finally:
        context.close()
    eventually(lambda: running(app.server.root) == 0, GRACE_S + 60, "the job stopped once its tab closed")
    outputs: list[Path] = []
    eventually(lambda: bool(outputs.extend(data_dir.glob("translations/*/*/closed.translated.csv"))
                            or outputs), 60, "the stopped job wrote its finished rows")
    rows = read_rows(outputs[0])
    assert [r["text"] for r in rows] == texts
    finished = [r for r in rows if r["translation"]]
    assert 0 < len(finished) < 30_000
    assert all("job stopped before this row" in r["translation_error"] for r in rows if not r["translation"])


def test_a_read_document_leaves_a_record_and_follow_ups_leave_no_stale_line(
        page: Page, app, tmp_path) -> None:
    from tests.support.pdfs import make_pdf, words_page

    make_pdf(tmp_path / "manual.pdf", [words_page(n, 250) for n in range(1, 4)])
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    page.set_input_files("#upload-button-input", str(tmp_path / "manual.pdf"))
    page.wait_for_selector("text=manual.pdf")
    ask(page, "What does page 2 say?")
    record = page.wait_for_selector(
        "text=/Read manual\\.pdf: 3 pages, [0-9,]+ tokens, whole, in [0-9.]+ s\\./", timeout=180_000)
    assert not page.locator("text=/is reading all/").count()  # the waiting line became the record
    page.wait_for_selector("#stop-button", timeout=60_000)
    page.click("#stop-button")
    eventually(lambda: running(app.server.root) == 0, 30, "generation stopped on the server")
    page.wait_for_selector("#chat-submit")
    before = page.locator(ANSWERS).count()
    ask(page, "And page 3?")
    page.wait_for_function(f"n => document.querySelectorAll('{ANSWERS}').length > n", arg=before)
    page.wait_for_function(  # the follow-up's answer, its waiting line gone
        f"() => {{ const last = [...document.querySelectorAll('{ANSWERS}')].at(-1).innerText;"
        f" return last.length > 20 && !last.includes('Asking manual.pdf again'); }}", timeout=120_000)
    page.click("#stop-button")
    eventually(lambda: running(app.server.root) == 0, 30, "generation stopped on the server")
    screenshot(page, "document-record")
    assert not page.locator("text=/is reading all|Asking manual\\.pdf again/").count()
    assert page.locator("text=/Read manual\\.pdf: 3 pages/").count() == 1
    assert "whole" in record.inner_text()


def test_the_first_page_says_what_glm1m_does_and_names_the_formats(page: Page, app) -> None:
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    greeting = page.locator(ANSWERS).first.inner_text()
    for name in FORMATS:
        assert name in greeting, name
    assert "paperclip" in greeting and "translate" in greeting and "stop button" in greeting
    page.click("#readme-button")
    readme = page.wait_for_selector("text=/A long-document workbench/").evaluate(
        "e => e.closest('[role=dialog]').innerText")
    for name in FORMATS:
        assert name in readme, name
    assert "Demo mode" in readme and "random weights" in readme
    # The banner sends a newcomer here for the real model: the Readme says how to serve it.
    assert "Readme button" in greeting
    assert "Serving the real model" in readme and "make run" in readme and "glm1m plan" in readme
    screenshot(page, "readme")
