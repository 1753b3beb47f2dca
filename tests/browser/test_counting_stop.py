"""Issue 34, item 5, in real Chromium: a long plain text (one section, counted in many /tokenize
calls) shows its count moving in characters, and the stop button ends a count the server is slow
to answer at once, saying so — not, minutes later, that the model server is not answering."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import ask, open_chat, screenshot

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'


def one_paragraph(path: Path, chars: int) -> Path:
    path.write_text(("clause " * (chars // 7 + 1))[:chars], encoding="utf-8")
    return path


def test_a_long_count_moves_in_characters_and_the_stop_button_ends_it(
        page: Page, app, tmp_path: Path) -> None:
    big = one_paragraph(tmp_path / "long-notes.txt", 1_000_000)  # 5 calls of 200,000 characters
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    app.proxy.hold_next_tokenize(120)
    page.set_input_files("#upload-button-input", str(big))
    page.wait_for_selector(f"#attachments >> text={big.name}")
    ask(page, "What is this?")
    page.wait_for_selector(f"text=/Counting tokens of {big.name}/", timeout=120_000)
    assert app.proxy.holding.wait(60), "the count never reached the server"
    screenshot(page, "counting-held")
    began = time.monotonic()
    page.click("#stop-button")
    page.wait_for_selector(f"text=/Stopped reading {big.name}/", timeout=30_000)
    page.wait_for_selector("#chat-submit", timeout=30_000)
    assert time.monotonic() - began < 30
    assert page.locator("text=/not answering/").count() == 0

    app.proxy.reset()  # the same file again, the server answering: the count moves, then the answer
    page.eval_on_selector("#upload-button-input", "input => { input.value = '' }")  # takes it again
    page.set_input_files("#upload-button-input", str(big))
    page.wait_for_selector(f"#attachments >> text={big.name}")
    ask(page, "And now?")
    page.wait_for_selector("text=/counting tokens: [0-9,]+ of 1,000,0[0-9]{2} characters/", timeout=120_000)
