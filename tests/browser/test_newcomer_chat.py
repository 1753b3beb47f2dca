"""Issue 26, item 1: a file attached before "New Chat" is not dropped without a word. The new chat
has a new session that never received the file; the message is refused with a sentence, and
nothing goes to the model."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import ask, open_chat, screenshot
from tests.browser.test_newcomer_translation import write_csv

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'


def test_a_file_attached_before_new_chat_is_refused_with_a_sentence(page: Page, app, tmp_path) -> None:
    source = write_csv(tmp_path / "before.csv", ["id", "text"], [[i, f"line {i}"] for i in range(3)])
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    page.set_input_files("#upload-button-input", str(source))
    page.wait_for_selector("#attachments >> text=before.csv")
    page.click("#new-chat-button")
    page.click("#confirm")
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")  # the new chat's greeting
    page.wait_for_selector("#attachments >> text=before.csv")  # the chip stayed in the message box
    ask(page, "")
    page.wait_for_selector("text=/attached before “New Chat”.*did not arrive, and nothing was sent to "
                           "the model/", timeout=60_000)
    page.wait_for_selector('[data-step-type="user_message"] >> text=/Attached: a file from before/')
    page.wait_for_selector("#chat-submit")
    screenshot(page, "newcomer-file-before-new-chat")
    assert app.proxy.journal == []  # the model was not asked
    assert page.locator("text=before.translated.csv").count() == 0
