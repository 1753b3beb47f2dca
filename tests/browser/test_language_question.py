"""Issue 34, item 4 (the rest): a translation says its languages, with a one-click change, before
its first row or section goes out. A table with one text column started at once, so a user could
not check ⚙ first; now, while the target is the page's default, the job asks "From … into X" with
"Start: into X" and "Into Y instead", and starts by itself when nobody answers. ⚙'s "Translations
start at once" skips the question. The Translate command's document gets the same question and
the same language check as tables (never into the language it is written in).

In real Chromium on the real app and demo server, in English and Chinese; the app asks for
QUESTION_S seconds (the other tests' apps run with the question off, tests/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import ask, only_loopback, open_chat, screenshot
from tests.browser.test_newcomer_translation import write_csv
from tests.browser.test_translate_document_page import send_translate
from tests.conftest import App, ModelServer, started_app
from tests.support.fault_proxy import FaultProxy

pytestmark = pytest.mark.browser
QUESTION_S = 12  # long enough for a click on a busy 2-core machine, short enough to wait out
JOB_S = 240
ANSWERS = '[data-step-type="assistant_message"] .message-content'
FADED_IN = ("() => [...document.querySelectorAll('[role=dialog]')]"
            ".every(d => getComputedStyle(d).opacity === '1')")
FRENCH = ["Le vendeur livre la marchandise dans les trente jours.",
          "L'acheteur paie la facture à réception.", "Le contrat prend fin le 31 décembre.",
          "Les deux parties signent en deux exemplaires."]


@pytest.fixture(scope="module")
def asking_app(model_server: ModelServer, fault_proxy: FaultProxy, log_dir: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    yield from started_app("chainlit-language-question", model_server, fault_proxy, log_dir,
                           tmp_path_factory.mktemp("question-data"), GLM1M_API_KEY=model_server.api_key,
                           GLM1M_LANGUAGE_QUESTION_S=str(QUESTION_S))


def new_page(browser: Browser, locale: str) -> Page:
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.route("**/*", only_loopback)
    return page


def attach(page: Page, source: Path) -> None:
    page.set_input_files("#upload-button-input", str(source))
    page.wait_for_selector(f"#attachments >> text={source.name}")
    ask(page, "")


def targets(proxy: FaultProxy) -> list[str]:
    """The system messages of the translation requests the server got."""
    return [json.dumps(request["messages"][0]["content"], ensure_ascii=False)
            for request, _ in list(proxy.journal) if request.get("messages")]


def test_the_other_language_is_one_click_away_before_any_row_goes_out(
        browser: Browser, asking_app: App, healthy_proxy: FaultProxy, tmp_path: Path) -> None:
    page = new_page(browser, "en-US")
    try:
        open_chat(page, asking_app.url)
        page.wait_for_selector(f"{ANSWERS} >> text=Demo mode", timeout=60_000)
        attach(page, write_csv(tmp_path / "clauses.csv", ["id", "text"],
                               [[i, text] for i, text in enumerate(FRENCH)]))
        page.wait_for_selector("text=/From the language the model detects into Simplified Chinese: "
                               f"starts by itself in {QUESTION_S} s/", timeout=60_000)
        screenshot(page, "language-question-en")
        assert healthy_proxy.journal == []  # nothing sent while the question is open
        page.click("button:has-text('Into English instead')")
        page.wait_for_selector("text=/column text from the language the model detects into English/",
                               timeout=60_000)
        page.wait_for_selector("text=/Finished: 4 of 4 rows translated in/", timeout=JOB_S * 1000)
        sent = targets(healthy_proxy)
        assert len(sent) == 4 and all("English" in s and "Simplified Chinese" not in s for s in sent)
        assert page.locator("text=/already in/").count() == 0  # the user's choice, not the check's
    finally:
        page.context.close()


def test_nobody_answering_starts_the_job_into_the_default(
        browser: Browser, asking_app: App, healthy_proxy: FaultProxy, tmp_path: Path) -> None:
    page = new_page(browser, "zh-CN")
    try:
        open_chat(page, asking_app.url)
        page.wait_for_selector(f"{ANSWERS} >> text=演示模式", timeout=60_000)
        attach(page, write_csv(tmp_path / "条款.csv", ["编号", "内容"],
                               [[i, f"第{i}条：甲方应在三十日内付款。"] for i in range(3)]))
        page.wait_for_selector(f"text=/从模型识别出的语言翻译成英文：{QUESTION_S} 秒后自动开始/",
                               timeout=60_000)
        assert healthy_proxy.journal == []
        page.wait_for_selector("text=/未及时选择，因此采用第一个选项：开始：翻译成英文/",
                               timeout=(QUESTION_S + 60) * 1000)
        page.wait_for_selector("text=/已完成：已翻译 3 \\/ 3 行，用时/", timeout=JOB_S * 1000)
        screenshot(page, "language-question-zh")
        assert all("English" in s for s in targets(healthy_proxy))
    finally:
        page.context.close()


def test_start_at_once_in_settings_skips_the_question(
        browser: Browser, asking_app: App, healthy_proxy: FaultProxy, tmp_path: Path) -> None:
    page = new_page(browser, "en-US")
    try:
        open_chat(page, asking_app.url)
        page.wait_for_selector(f"{ANSWERS} >> text=Demo mode", timeout=60_000)
        page.click("#chat-settings-open-modal")
        page.wait_for_function(FADED_IN)
        assert page.locator("[role=dialog] >> text=Translations start at once").count() == 1
        page.click("#start_at_once")
        page.click("[role=dialog] button:has-text('Confirm')")
        page.wait_for_selector("[role=dialog]", state="detached")
        attach(page, write_csv(tmp_path / "clauses.csv", ["id", "text"],
                               [[i, text] for i, text in enumerate(FRENCH[:2])]))
        page.wait_for_selector("text=/Finished: 2 of 2 rows translated in/", timeout=JOB_S * 1000)
        assert page.locator("text=/starts by itself/").count() == 0
    finally:
        page.context.close()


def test_a_document_in_the_default_language_goes_into_the_other_after_the_question(
        browser: Browser, asking_app: App, healthy_proxy: FaultProxy, tmp_path: Path) -> None:
    document = tmp_path / "合同.md"
    document.write_text("# 付款\n\n甲方应在收到发票后三十日内付款。\n\n# 交货\n\n乙方应在合同签订后十日内交货。\n",
                        encoding="utf-8")
    page = new_page(browser, "en-US")
    try:
        open_chat(page, asking_app.url)
        page.wait_for_selector(f"{ANSWERS} >> text=Demo mode", timeout=60_000)
        send_translate(page, "en", document)
        # The page's default (Simplified Chinese) is the document's own language: English is
        # offered first, the default second.
        page.wait_for_selector("text=/From the language the model detects into English: starts by "
                               "itself/", timeout=60_000)
        assert page.locator("button:has-text('Into Simplified Chinese instead')").count() == 1
        page.click("button:has-text('Start: into English')")
        page.wait_for_selector("text=/already in Simplified Chinese, so it is translated into English/",
                               timeout=60_000)
        page.wait_for_selector("text=/Finished: 4 of 4 sections translated/", timeout=JOB_S * 1000)
        screenshot(page, "language-question-document")
    finally:
        page.context.close()
