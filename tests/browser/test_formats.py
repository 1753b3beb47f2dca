"""A DOCX and a scanned PDF through the paperclip, in real Chromium, on the real app and server:
the answer's cited locations beside it — a section with its heading, a page read by OCR."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import ask, only_loopback, open_chat, screenshot
from tests.conftest import App, ModelServer, started_app
from tests.integration.test_ocr import FIRST
from tests.support.citing_proxy import CitingProxy
from tests.support.documents import make_docx, make_scanned_pdf
from tests.support.service import free_port

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'
GUIDE = [(1, "Installation"), (0, "Run the installer first."), (1, "配置 Configuration"),
         (0, "编辑配置文件 config.toml，然后保存。"), (2, "Details"), (0, "More details here.")]


@pytest.fixture(scope="module")
def citing_app(model_server: ModelServer, log_dir: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """The app in its demo configuration, reaching the server through a proxy that can ask the
    server for an answer that cites (tests/support/citing_proxy.py)."""
    proxy = CitingProxy(model_server.root, free_port())
    proxy.start()
    try:
        yield from started_app("chainlit-formats", model_server, proxy, log_dir,
                               tmp_path_factory.mktemp("formats-data"),
                               GLM1M_API_KEY=model_server.api_key, GLM1M_OCR_WORKERS="2")
    finally:
        proxy.close()


@pytest.fixture
def page(browser: Browser, citing_app: App) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route("**/*", only_loopback)
    yield page
    context.close()


def attach_and_ask(page: Page, app: App, path: Path, citation: str, question: str) -> None:
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    page.set_input_files("#upload-button-input", str(path))
    page.wait_for_selector(f"text={path.name}")
    assert isinstance(app.proxy, CitingProxy)
    app.proxy.cite_next(citation)
    ask(page, question)


def test_a_docx_answer_shows_the_cited_section_with_its_heading(page: Page, citing_app: App,
                                                                 tmp_path: Path) -> None:
    attach_and_ask(page, citing_app, make_docx(tmp_path / "guide.docx", GUIDE), "[§ 2]",
                   "How is it configured?")
    page.wait_for_selector("text=/3 sections/", timeout=180_000)  # the budget, in sections
    link = page.wait_for_selector(f"{ANSWERS} .element-link:has-text('§ 2')", timeout=300_000)
    link.click()
    page.wait_for_selector("text=§ 2 · 配置 Configuration · ¶ 1", timeout=30_000)
    page.wait_for_selector("text=/编辑配置文件 config.toml/")
    screenshot(page, "docx-cited-section")


def test_a_scanned_pdf_answer_shows_the_page_read_by_ocr(page: Page, citing_app: App,
                                                         tmp_path: Path) -> None:
    attach_and_ask(page, citing_app, make_scanned_pdf(tmp_path / "scan.pdf", [FIRST, FIRST]), "[p. 2]",
                   "What does the guide say?")
    link = page.wait_for_selector(f"{ANSWERS} .element-link:has-text('p. 2')", timeout=300_000)
    link.click()
    page.wait_for_selector("text=/安装指南/", timeout=30_000)  # the OCR text, beside the answer
    page.wait_for_selector("text=/quick brown fox/")
    screenshot(page, "scanned-pdf-cited-page")


def test_ocr_progress_shows_its_rate_and_stop_ends_the_ocr_processes(page: Page, citing_app: App,
                                                                      tmp_path: Path) -> None:
    from tests.integration.test_ocr import children
    from tests.support.metrics import eventually

    attach_and_ask(page, citing_app, make_scanned_pdf(tmp_path / "long.pdf", [FIRST] * 16), "[p. 1]",
                   "Summarise it.")
    # The status line while OCR runs: pages read of all, pages per second, time left.
    page.wait_for_selector("text=/scanned pages \\(OCR\\): [1-9][0-9]* of 16 pages — [0-9.]+ pages\\/s, "
                           "about [0-9]+ s left/", timeout=180_000)
    workers = children(citing_app.service.pid)
    assert workers, "OCR runs in worker processes of the app"
    screenshot(page, "ocr-progress")
    page.click("#stop-button")
    eventually(lambda: not children(citing_app.service.pid), 30, "the OCR processes ended")
    # Ended is not yet gone: a zombie keeps /proc/PID until the app joins it, once its OCR loop has
    # seen the stop (documents/ocr.py `end`); a CI run looked in between.
    eventually(lambda: not any(Path(f"/proc/{pid}").exists() for pid in workers), 30,
               "the app joined its OCR processes")
    page.wait_for_selector("#chat-submit")  # the chat goes on
