"""Issue 37, item 1 on the page: a real PDF (two pages of the shared-mime-info specification)
translated with the Translate command, ⚙'s "PDF: original and translation" on, comes back with
each original page followed by its translated one — downloaded and opened with PyMuPDF. The demo's
random words make the translated pages' text noise; the originals must be untouched."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from playwright.sync_api import Page

from tests.browser.conftest import open_chat, screenshot
from tests.browser.test_chosen_settings import FADED_IN
from tests.browser.test_translate_document_page import download, send_translate

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'
SPEC = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")


def test_a_pdf_comes_back_with_original_and_translated_pages_in_turn(page: Page, app, tmp_path: Path) -> None:
    assert SPEC.is_file(), "`make system-tools` installs shared-mime-info"
    src = tmp_path / "spec.pdf"
    with pymupdf.open(SPEC) as whole:
        whole.select([0, 1])
        whole.save(src)
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    page.click("#chat-settings-open-modal")
    page.wait_for_function(FADED_IN)
    page.click("#bilingual")
    page.click("[role=dialog] button:has-text('Confirm')")
    page.wait_for_selector("[role=dialog]", state="detached")
    send_translate(page, "en", src)
    page.wait_for_selector("text=/Finished: .* sections translated/", timeout=300_000)
    screenshot(page, "translate-pdf-bilingual")
    out = download(page, "spec.translated.pdf", tmp_path / "downloads")
    with pymupdf.open(src) as before, pymupdf.open(out) as after:
        assert after.page_count == 2 * before.page_count
        for n, original in enumerate(before):
            assert after[2 * n].get_text() == original.get_text()  # the original, then its translation
            assert after[2 * n + 1].get_text() != original.get_text()
