"""Issue 25: two documents attached in one message through the paperclip, in real Chromium, on the
real app and server, are read together; the passages of both stand beside the one answer, each
naming its document."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import ask, only_loopback, open_chat, screenshot
from tests.browser.test_formats import citing_app  # noqa: F401  (a fixture: the app behind a citing proxy)
from tests.conftest import App
from tests.support.citing_proxy import CitingProxy
from tests.support.pdfs import make_pdf, words_page

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'


@pytest.fixture
def page(browser: Browser, citing_app: App) -> Iterator[Page]:  # noqa: F811
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route("**/*", only_loopback)
    yield page
    context.close()


def test_two_documents_in_one_message_show_passages_of_both_beside_one_answer(
        page: Page, citing_app: App, tmp_path: Path) -> None:  # noqa: F811
    unique = uuid.uuid4().hex[:12]  # the app's shelf outlives a run: new bytes each time
    contract = make_pdf(tmp_path / "contract.pdf",
                        [f"contract {unique} " + words_page(n, 120) for n in (1, 2)])
    annex = make_pdf(tmp_path / "annex.pdf", [f"annex {unique} " + words_page(n, 120) for n in (3, 4)])
    open_chat(page, citing_app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    page.set_input_files("#upload-button-input", [str(contract), str(annex)])
    page.wait_for_selector("#attachments >> text=contract.pdf")
    page.wait_for_selector("#attachments >> text=annex.pdf")
    assert isinstance(citing_app.proxy, CitingProxy)
    citing_app.proxy.cite_next("[A p. 2] and [B p. 1]")
    ask(page, "Which one names the fees?")
    page.wait_for_selector("text=/A \\(contract.pdf\\) and B \\(annex.pdf\\).*2 documents, 4 pages/",
                           timeout=300_000)
    answer = page.locator(ANSWERS).last
    # Locators, not element handles: the answer's message is drawn again as it ends, which
    # detached a handle taken before (a helper's run: "Element is not attached to the DOM").
    first = page.locator(f"{ANSWERS} .element-link:has-text('A p. 2')")
    second = page.locator(f"{ANSWERS} .element-link:has-text('B p. 1')")
    first.wait_for(timeout=300_000)
    second.wait_for(timeout=30_000)
    assert answer.locator(".element-link").count() == 2  # both beside the one answer
    first.click(timeout=30_000)
    page.wait_for_selector("text=A · contract.pdf · p. 2", timeout=30_000)
    second.click(timeout=30_000)
    page.wait_for_selector("text=B · annex.pdf · p. 1", timeout=30_000)
    screenshot(page, "two-documents-passages")
