"""Issue 28, item 2, in real Chromium: three of this machine's manuals attached through the paperclip,
"look things up" clicked where the page asks how to read them; each lookup the model made stands
as a step above the answer, which opens to show what it asked for and what the app read back,
and the passage the answer cites opens beside it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from tests.app.test_look_up_ui import lookup_app  # noqa: F401  (a fixture: the app asking past 500 tokens)
from tests.app.test_real_manuals_set import SMALL, present
from tests.browser.conftest import ask, only_loopback, open_chat, screenshot
from tests.conftest import App
from tests.support.citing_proxy import CitingProxy

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'


@pytest.fixture
def page(browser: Browser, lookup_app: App) -> Iterator[Page]:  # noqa: F811
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.route("**/*", only_loopback)
    yield page
    context.close()


def test_looking_things_up_shows_each_lookup_as_a_step_that_opens(page: Page, lookup_app: App) -> None:  # noqa: F811
    open_chat(page, lookup_app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    page.set_input_files("#upload-button-input", [str(path) for path in present(SMALL)])
    for path in SMALL:
        page.wait_for_selector(f"#attachments >> text={path.name}")
    assert isinstance(lookup_app.proxy, CitingProxy)
    lookup_app.proxy.reset()
    lookup_app.proxy.cite_next("[C § 1]")
    ask(page, "Which manual is about JSON?")
    page.click("button:has-text('by looking things up')", timeout=300_000)
    page.wait_for_selector("text=/Looked things up in .*: [0-9]+ lookups?, in/", timeout=120_000)
    # The record line comes with the answer's first piece; the journal holds the answer's request
    # once its citation is shown (the stream has ended then). A CI run read the journal earlier
    # and found only the first call's request there.
    cited = page.locator(f"{ANSWERS} .element-link:has-text('C § 1')")
    cited.wait_for(timeout=60_000)
    step = page.locator("button:has-text('Find: '), button:has-text('Read: ')").first
    step.wait_for(timeout=30_000)
    name = step.inner_text()
    step.click()
    sent = [request for request, _ in lookup_app.proxy.journal if "messages" in request]
    result = next(m["content"] for m in sent[-1]["messages"] if m["role"] == "tool")
    # The step opened shows what the app read back (its first line, as the model got it).
    page.wait_for_selector(f"text={result.splitlines()[0][:40]}", timeout=30_000)
    screenshot(page, "look-up-step")
    cited.click()
    page.wait_for_selector("text=C · README.html · § 1", timeout=30_000)
    assert "→" in name
