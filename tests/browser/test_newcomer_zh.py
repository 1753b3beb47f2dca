"""Issue 26 on a Chinese page (Chromium with locale zh-CN): the settings' help lines, the job line's
delimiter and title rows, several columns chosen in one question, a finished table offered back,
and a stop with nothing finished — each in Chinese."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import open_chat, screenshot
from tests.browser.test_newcomer_translation import HELD_S, attach, write_csv

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'


def start(page: Page, url: str) -> None:
    open_chat(page, url)
    page.wait_for_selector(f"{ANSWERS} >> text=演示模式")


def test_a_chinese_page_has_help_lines_several_columns_and_a_finished_table_offered_back(
        zh_page: Page, app, tmp_path: Path) -> None:
    page = zh_page
    start(page, app.url)
    page.click("#chat-settings-open-modal")
    for help_line in ("每次聊天回答前告诉模型的话", "措辞的随机程度", "回答的最大长度", "要翻译成的语言",
                      "表格文字的原语言"):
        page.wait_for_selector(f"text={help_line}")
    # The panel fades in: the picture is taken once it is fully drawn.
    page.wait_for_function("() => [...document.querySelectorAll('[role=dialog]')].every("
                           "d => getComputedStyle(d).opacity === '1')")
    screenshot(page, "newcomer-zh-settings-help")
    page.keyboard.press("Escape")
    source = write_csv(tmp_path / "条款.csv", ["编号", "内容", "备注"],
                       [[i, f"第{i}条", f"备注{i}"] for i in range(3)], delimiter=";", title="季度条款")
    attach(page, source)
    page.wait_for_selector("text=翻译哪一列？", timeout=60_000)
    assert page.locator("button", has_text="编号").count() == 0  # numbers: not offered
    page.click("button:has-text('多列')")
    page.click("button:has-text('内容')")
    page.wait_for_selector("text=/已选择：内容。/")
    page.click("button:has-text('备注')")
    page.wait_for_selector("text=/已选择：内容、备注。/")
    screenshot(page, "newcomer-zh-several-columns")
    page.click("button:has-text('开始')")
    page.wait_for_selector("text=/分号分隔；表头在第 2 行，其上 1 行（标题、注释）原样保留、不翻译/", timeout=60_000)
    page.wait_for_selector("text=/已完成：已翻译 6 \\/ 6 个单元格，用时/", timeout=300_000)
    screenshot(page, "newcomer-zh-job-line")
    attach(page, source)
    page.wait_for_selector("text=翻译哪一列？", timeout=60_000)  # the same columns: the same job
    page.click("button:has-text('多列')")
    page.click("button:has-text('内容')")
    page.wait_for_selector("text=/已选择：内容。/")
    page.click("button:has-text('备注')")
    page.wait_for_selector("text=/已选择：内容、备注。/")
    page.click("button:has-text('开始')")
    page.wait_for_selector("text=/条款.csv 已在此对话中按相同设置翻译过：全部 6 个单元格/", timeout=60_000)
    screenshot(page, "newcomer-zh-finished-offer")
    page.click("button:has-text('使用结果')")
    page.wait_for_selector("text=/之前完成的 条款.csv 译文：已翻译 6 \\/ 6 个单元格/", timeout=60_000)


def test_a_chinese_stop_with_nothing_finished_says_so_once(zh_page: Page, app, tmp_path: Path) -> None:
    page = zh_page
    source = write_csv(tmp_path / "等待.csv", ["内容"], [[f"第{i}行"] for i in range(10)])
    app.proxy.hold_every_completion(HELD_S)
    start(page, app.url)
    attach(page, source)
    page.wait_for_selector("text=/翻译：0 \\/ 10 行/", timeout=60_000)
    page.click("#stop-button")
    page.wait_for_selector("text=/已停止，用时 [0-9.]+ 秒；还没有翻译完任何行，所以没有文件可下载/",
                           timeout=60_000)
    page.wait_for_selector("text=任务已手动停止。", state="detached", timeout=10_000)
    page.wait_for_selector("#chat-submit")
    screenshot(page, "newcomer-zh-stop-nothing-finished")
    assert page.locator("text=等待.translated.csv").count() == 0
    assert page.locator("text=Task manually stopped.").count() == 0
