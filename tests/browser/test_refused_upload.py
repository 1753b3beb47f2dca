"""Issue 34, item 3, in real Chromium: a file the app refuses (an empty CSV; the page itself turns
away a type it does not take before anything is sent) is said in the chat, where it
stays, and the question typed after it waits for a choice — on an English page (send it without the
file) and on a Chinese one (attach another: nothing goes to the model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import ask, open_chat, screenshot

pytestmark = pytest.mark.browser
SAID = ".message-content"  # in the chat, not the toast beside the paperclip
ANSWERS = '[data-step-type="assistant_message"] .message-content'


def refuse(page: Page, tmp_path: Path, url: str, banner: str) -> None:
    archive = tmp_path / "notes.csv"
    archive.write_bytes(b"")
    open_chat(page, url)
    page.wait_for_selector(f"{ANSWERS} >> text={banner}")
    page.set_input_files("#upload-button-input", str(archive))


def test_a_refused_file_stays_in_the_chat_and_the_next_question_is_sent_without_it(
        page: Page, app, tmp_path: Path) -> None:
    refuse(page, tmp_path, app.url, "Demo mode")
    page.wait_for_selector(f"{SAID} >> text=/notes.csv is empty/", timeout=60_000)
    ask(page, "Say hello.")
    page.wait_for_selector("text=/The file you attached last was not taken/", timeout=60_000)
    screenshot(page, "refused-upload-held")
    app.proxy.reset()
    answered = app.proxy.completions_reached(1)
    page.click("button:has-text('Send without it')")
    # The answer went through the proxy whole; only then is #chat-submit the one after it (right
    # after the click it is still the one before the answer began).
    assert answered.wait(120)
    page.wait_for_selector("#chat-submit", timeout=120_000)  # the answer has ended
    assert app.proxy.journal and app.proxy.journal[-1][0]["messages"][-1]["content"] == "Say hello."
    assert page.locator(f"{SAID} >> text=/notes.csv is empty/").count() == 1  # still there


def test_on_a_chinese_page_attach_another_keeps_the_question_from_the_model(
        zh_page: Page, app, tmp_path: Path) -> None:
    refuse(zh_page, tmp_path, app.url, "演示模式")
    zh_page.wait_for_selector(f"{SAID} >> text=/notes.csv 是空文件/", timeout=60_000)
    ask(zh_page, "这个压缩包里有什么？")
    zh_page.wait_for_selector("text=/你刚才附上的文件没有被接收/", timeout=60_000)
    app.proxy.reset()
    zh_page.click("button:has-text('另附文件')")
    zh_page.wait_for_selector("text=/请用回形针附上文件/", timeout=60_000)
    screenshot(zh_page, "refused-upload-attach-another-zh")
    assert not [r for r, *_ in app.proxy.journal if "messages" in r]
