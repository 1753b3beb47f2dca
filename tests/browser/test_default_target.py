"""Issue 34, item 4 (in part): the default target is never the language the table is already in.
A Chinese table on an English page went "into Simplified Chinese" without a word; now it goes
into English, and the job's head says why and how to choose another language — on a Chinese page
the same for an English table."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import ask, open_chat, screenshot
from tests.browser.test_newcomer_translation import write_csv

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'


def translate(page: Page, url: str, greeting: str, source) -> None:
    open_chat(page, url)
    page.wait_for_selector(f"{ANSWERS} >> text={greeting}")
    page.set_input_files("#upload-button-input", str(source))
    page.wait_for_selector(f"#attachments >> text={source.name}")
    ask(page, "")


def test_a_chinese_table_on_an_english_page_goes_into_english(page: Page, app, tmp_path) -> None:
    rows = [[i, f"第{i}条：甲方应在三十日内付款"] for i in range(4)]
    source = write_csv(tmp_path / "条款.csv", ["编号", "内容"], rows)
    translate(page, app.url, "Demo mode", source)
    page.wait_for_selector("text=/column 内容 from the language the model detects into English/",
                           timeout=60_000)
    page.wait_for_selector("text=/already in Simplified Chinese, so it is translated into English/")
    page.wait_for_selector("text=/Finished: 4 of 4 rows translated in/", timeout=300_000)
    screenshot(page, "default-target-en")


def test_an_english_table_on_a_chinese_page_goes_into_chinese(zh_page: Page, app, tmp_path) -> None:
    source = write_csv(tmp_path / "terms.csv", ["id", "text"], [[i, f"The buyer pays within {i + 30} days."]
                                                               for i in range(4)])
    translate(zh_page, app.url, "演示模式", source)
    zh_page.wait_for_selector("text=/把 text 列从模型识别出的语言翻译成简体中文/", timeout=60_000)
    zh_page.wait_for_selector("text=/该表格已是英文，因此翻译成简体中文/")
    zh_page.wait_for_selector("text=/已完成：已翻译 4 \\/ 4 行，用时/", timeout=300_000)
    screenshot(zh_page, "default-target-zh")
