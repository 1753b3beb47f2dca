"""What only a browser shows: the answer growing in one bubble, the stop button, error text."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page

from glm1m.catalog import EN, render
from tests.browser.conftest import ask, open_chat, screenshot
from tests.support.metrics import eventually, running

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'
HOLD_S = 180


def answer_lengths(page: Page) -> list[int]:
    return page.eval_on_selector_all(ANSWERS, "els => els.map(e => e.innerText.length)")


def test_answer_streams_visibly_into_one_message_and_stop_ends_it(page: Page, app) -> None:
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    before = len(answer_lengths(page))
    ask(page, "Tell me a long story about a manual.")
    page.wait_for_function(f"n => document.querySelectorAll('{ANSWERS}').length > n", arg=before)
    page.wait_for_function(f"() => [...document.querySelectorAll('{ANSWERS}')].at(-1).innerText.length > 50")
    seen = answer_lengths(page)[-1]
    page.wait_for_function(
        f"n => [...document.querySelectorAll('{ANSWERS}')].at(-1).innerText.length > n + 50", arg=seen)
    assert len(answer_lengths(page)) == before + 1  # grew in place, not as new bubbles
    screenshot(page, "streaming")
    page.click("#stop-button")
    eventually(lambda: running(app.server.root) == 0, 30, "generation stopped on the server")
    page.wait_for_selector("#stop-button", state="detached")
    stopped_at = answer_lengths(page)[before]
    assert stopped_at > seen
    page.wait_for_selector("#chat-submit")
    assert answer_lengths(page)[before] == stopped_at  # nothing more arrives after stop


def test_server_down_shows_a_sentence_and_the_chat_recovers(page: Page, app) -> None:
    app.proxy.stop_listening()
    open_chat(page, app.url)
    notice = page.wait_for_selector("text=is not answering", timeout=60_000)
    assert "glm1m serve" in notice.inner_text()
    screenshot(page, "server-down")
    app.proxy.start()
    before = len(answer_lengths(page))
    ask(page, "Are you back?")
    page.wait_for_function(f"n => document.querySelectorAll('{ANSWERS}').length > n", arg=before)
    page.wait_for_function(f"() => [...document.querySelectorAll('{ANSWERS}')].at(-1).innerText.length > 0")
    page.click("#stop-button")
    eventually(lambda: running(app.server.root) == 0, 30, "generation stopped on the server")


def test_attached_csv_shows_progress_and_downloads_translated(page: Page, app, tmp_path) -> None:
    import csv
    import io

    source = tmp_path / "terms.csv"
    texts = [f"条款 {i}" for i in range(60)]
    with source.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["id", "text"], *[[i, t] for i, t in enumerate(texts)]])
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    page.set_input_files("#upload-button-input", str(source))
    page.wait_for_selector("text=terms.csv")
    ask(page, "")
    # No column choice: the numeric id column is not offered, so "text" is the only one.
    page.wait_for_selector("text=rows/s", timeout=120_000)  # live progress
    page.wait_for_selector("text=60 of 60 rows translated", timeout=300_000)
    screenshot(page, "csv-translated")
    with page.expect_download() as download:
        page.click("a:has-text('terms.translated.csv'), button:has-text('terms.translated.csv')")
    rows = list(csv.DictReader(io.StringIO(
        open(download.value.path(), encoding="utf-8-sig").read())))
    assert [r["text"] for r in rows] == texts and all(r["translation"] for r in rows)


def test_pdf_through_the_paperclip_shows_progress_and_a_streamed_answer(page: Page, app, tmp_path) -> None:
    from tests.support.pdfs import make_pdf, words_page

    make_pdf(tmp_path / "manual.pdf", [words_page(n, 250) for n in range(1, 4)])
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    page.set_input_files("#upload-button-input", str(tmp_path / "manual.pdf"))
    page.wait_for_selector("text=manual.pdf")
    before = len(answer_lengths(page))
    ask(page, "What does page 2 say?")
    page.wait_for_selector("text=3 pages", timeout=120_000)  # the budget, before the wait
    page.wait_for_function(f"n => document.querySelectorAll('{ANSWERS}').length > n + 1", arg=before)
    page.wait_for_function(f"() => [...document.querySelectorAll('{ANSWERS}')].at(-1).innerText.length > 20",
                           timeout=120_000)
    screenshot(page, "pdf-answer")
    page.click("#stop-button")
    eventually(lambda: running(app.server.root) == 0, 30, "generation stopped on the server")


def words(text: str) -> list[str]:
    """Letters and digits only: markdown rendering changes spacing and punctuation, not words."""
    return re.findall(r"[^\W_]+", text)


def test_a_prefill_of_three_minutes_keeps_the_page_alive_and_the_whole_answer_arrives(
        page: Page, app, tmp_path) -> None:
    """Chainlit can drop a message after ~45 s of silence (Chainlit issue #803); a 1M-token
    prompt takes ~10 minutes before its first token. The proxy holds the answer for 3 minutes."""
    from tests.support.pdfs import make_pdf, words_page

    make_pdf(tmp_path / "long.pdf", [words_page(n, 200) for n in range(1, 3)])
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    page.set_input_files("#upload-button-input", str(tmp_path / "long.pdf"))
    page.wait_for_selector("text=long.pdf")
    app.proxy.hold_next_stream(HOLD_S)
    ask(page, "Summarise it.")
    # The status line keeps counting while nothing comes from the server: still alive at 150 s.
    page.wait_for_selector("text=/is reading all [0-9,]+ tokens of long.pdf … 1[5-9][0-9] s/",
                           timeout=(HOLD_S + 60) * 1000)
    page.wait_for_function(
        f"() => [...document.querySelectorAll('{ANSWERS}')].at(-1).innerText.length > 20",
        timeout=(HOLD_S + 120) * 1000)
    assert app.proxy.completions_reached(1).wait(300), "the answer never finished"
    sent = words(app.proxy.streamed_text())
    page.wait_for_selector("#stop-button", state="detached", timeout=60_000)  # the task has ended
    # The whole answer is on the page, and under it the demo's line citing the pages it sent (the
    # demo model cites nothing: chainlit_app/passages.py demo_cited).
    # (A citation shows as its passage's link, which the page may draw capitalised: "P. 1".)
    demo = words(render(EN, "demo_cites", citations="[p. 1] [p. 2]").lower())
    shown = words(page.locator(ANSWERS).last.inner_text())
    assert shown[:len(sent)] == sent and [w.lower() for w in shown[len(sent):]] == demo
    assert not page.locator("text=/could not reach|lost the connection/i").count()
