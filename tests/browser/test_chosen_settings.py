"""Issue 34, item 4 (in part): what a user sets in ⚙ holds in their next chats. The target
language chosen in the panel was lost on New Chat; now New Chat (and a reload) starts with it: the
greeting names it and the panel shows it, on en and zh pages. (tests/conftest.py's a_first_visit
forgets the choice before the next test.)"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import only_loopback, open_chat, screenshot

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'
FADED_IN = ("() => [...document.querySelectorAll('[role=dialog]')]"
            ".every(d => getComputedStyle(d).opacity === '1')")
ONE_ANSWER = "() => document.querySelectorAll('[data-step-type=\"assistant_message\"]').length === 1"


def choose_target(page: Page, language: str, confirm: str) -> None:
    page.click("#chat-settings-open-modal")
    page.wait_for_function(FADED_IN)
    page.locator("[role=dialog] [role=combobox]").first.click()  # the target language's choices
    page.click(f"[role=option] >> text={language}")
    page.click(f"[role=dialog] button:has-text('{confirm}')")
    page.wait_for_selector("[role=dialog]", state="detached")


def shown_target(page: Page) -> str:
    page.click("#chat-settings-open-modal")
    page.wait_for_function(FADED_IN)
    shown = page.locator("[role=dialog] [role=combobox]").first.inner_text()
    page.keyboard.press("Escape")
    return shown.strip()


def new_chat(page: Page, greeting: str) -> None:
    page.click("#new-chat-button")
    page.click("#confirm")
    page.wait_for_function(ONE_ANSWER)  # the old chat's messages are gone
    page.wait_for_selector(f"{ANSWERS} >> text={greeting}")


@pytest.mark.parametrize(("locale", "greeting", "default", "chosen", "confirm"), [
    ("en-US", "Demo mode", "Simplified Chinese", "Japanese", "Confirm"),
    ("zh-CN", "演示模式", "英文", "日文", "确认"),
])
def test_the_target_chosen_in_settings_holds_after_new_chat_and_a_reload(
        browser, app, healthy_proxy, locale: str, greeting: str, default: str, chosen: str,
        confirm: str) -> None:
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route("**/*", only_loopback)
    try:
        open_chat(page, app.url)
        page.wait_for_selector(f"{ANSWERS} >> text={greeting}")
        assert default in page.locator(ANSWERS).first.inner_text()
        choose_target(page, chosen, confirm)
        new_chat(page, greeting)
        assert chosen in page.locator(ANSWERS).first.inner_text()  # the greeting names it
        assert shown_target(page) == chosen
        page.reload()
        page.wait_for_selector(f"{ANSWERS} >> text={greeting}", timeout=60_000)
        assert chosen in page.locator(ANSWERS).first.inner_text()
        screenshot(page, f"chosen-target-{locale}")
    finally:
        context.close()
