"""Issue 34, item 6, in real Chromium on the demo (random weights, whose answers cite nothing): under
a document's answer the app cites the first pages it sent, marked as the demo's, and a newcomer can
click one and read the passage beside the answer — on an English page and on a Chinese one."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import ask, open_chat, screenshot
from tests.support.pdfs import make_pdf

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'


@pytest.mark.parametrize(("locale_page", "banner", "marked"), [
    ("page", "Demo mode", "Demo: the model cited nothing"),
    ("zh_page", "演示模式", "演示：模型没有引用任何位置"),
])
def test_a_demo_answer_cites_the_pages_it_was_sent_and_a_citation_opens_its_passage(
        request: pytest.FixtureRequest, locale_page: str, banner: str, marked: str, tmp_path: Path) -> None:
    page: Page = request.getfixturevalue(locale_page)
    app = request.getfixturevalue("app")
    pdf = make_pdf(tmp_path / "lease.pdf", ["The tenant pays rent monthly. Page one ends here.",
                                            "Notice is due 42 days ahead. Page two ends here."])
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text={banner}")
    page.set_input_files("#upload-button-input", str(pdf))
    page.wait_for_selector(f"#attachments >> text={pdf.name}")
    ask(page, "What notice is due?")
    page.wait_for_selector(f"{ANSWERS} >> text={marked}", timeout=300_000)
    second = page.locator(f"{ANSWERS} .element-link:has-text('p. 2')")
    second.wait_for(timeout=60_000)
    assert page.locator(f"{ANSWERS} .element-link:has-text('p. 1')").count() >= 1
    second.click()
    page.wait_for_selector("text=Notice is due 42 days ahead.", timeout=30_000)
    screenshot(page, f"demo-citation-{locale_page}")
