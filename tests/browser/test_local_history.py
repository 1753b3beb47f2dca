"""Issue 34, item 1: with login off on 127.0.0.1 (the demo's default), one local user keeps the
history: a reload brings the chat back with its messages, and after New Chat it is in the sidebar
and opens again. Served where nothing is kept (GLM1M_LOCAL_HISTORY=false here), the greeting says so
before anything is lost, in the page's language."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import ask, only_loopback, open_chat, screenshot
from tests.conftest import App, started_app

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'
NOT_KEPT = {"en": "Nothing here is kept", "zh": "此处内容不会保存"}


def thread_link(page: Page, title: str):
    """The sidebar's entry of the chat whose first message was `title` (the sidebar opened)."""
    if page.locator("#thread-history").count() == 0 or not page.locator("#thread-history").is_visible():
        page.click("#sidebar-trigger-button")
    return page.locator(f'#thread-history [id^="thread-"] >> text="{title}"')


def kept_across_reload_and_new_chat(page: Page, url: str, greeting: str, words: str, name: str) -> None:
    open_chat(page, url)
    page.wait_for_selector(f"{ANSWERS} >> text={greeting}")
    assert page.locator(f"text={NOT_KEPT['en']}").count() == 0
    assert page.locator(f"text={NOT_KEPT['zh']}").count() == 0
    ask(page, words)
    page.wait_for_selector(f'[data-step-type="user_message"] >> text="{words}"')
    page.locator(ANSWERS).nth(1).wait_for(timeout=60_000)  # the demo's answer began...
    page.wait_for_selector("#chat-submit", timeout=120_000)  # ...and ended (no stop button)
    assert "/thread/" in page.url  # Chainlit moved to the chat's own address
    page.reload()  # the chat comes back at its address, messages and all
    page.wait_for_selector(f'[data-step-type="user_message"] >> text="{words}"', timeout=60_000)
    assert page.locator(ANSWERS).count() >= 2
    page.click("#new-chat-button")
    page.click("#confirm")
    page.wait_for_selector(f"{ANSWERS} >> text={greeting}")
    assert page.locator(f'[data-step-type="user_message"] >> text="{words}"').count() == 0
    thread_link(page, words).click()  # the old chat is in the sidebar
    page.wait_for_selector(f'[data-step-type="user_message"] >> text="{words}"', timeout=30_000)
    assert page.locator(ANSWERS).count() >= 2  # the greeting and the answer, reopened
    screenshot(page, name)


def test_a_chat_stays_in_the_sidebar_after_reload_and_new_chat(page: Page, app) -> None:
    kept_across_reload_and_new_chat(page, app.url, "Demo mode", "remember the walrus", "local-history-en")


def test_the_zh_page_keeps_its_chats_too(zh_page: Page, app) -> None:
    kept_across_reload_and_new_chat(zh_page, app.url, "演示模式", "记住这只海象", "local-history-zh")


@pytest.fixture(scope="module")
def forgetful_app(model_server, fault_proxy, log_dir, tmp_path_factory) -> Iterator[App]:
    """The demo with local history off: nothing is kept, as on another address with login off."""
    yield from started_app("chainlit-forgetful", model_server, fault_proxy, log_dir,
                           tmp_path_factory.mktemp("forgetful-data"), GLM1M_LOCAL_HISTORY="false")


@pytest.mark.parametrize(("locale", "lang"), [("en-US", "en"), ("zh-CN", "zh")])
def test_a_page_that_keeps_nothing_says_so_in_its_greeting(browser: Browser, forgetful_app: App,
                                                          healthy_proxy, locale: str, lang: str) -> None:
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route("**/*", only_loopback)
    try:
        open_chat(page, forgetful_app.url)
        page.wait_for_selector(f"{ANSWERS} >> text={NOT_KEPT[lang]}", timeout=60_000)
        assert page.locator("#thread-history").count() == 0  # no history to show
        screenshot(page, f"history-not-kept-{lang}")
    finally:
        context.close()
