"""A Chinese browser (Chromium with locale zh-CN, so Accept-Language zh-CN) reads glm1m's own
sentences in Chinese: the banner and welcome, the settings labels, the translation's choice,
status and record, an error, and the welcome page; the target language defaults to English."""

from __future__ import annotations

import csv

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import ask, open_chat, screenshot

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'


def test_a_chinese_browser_reads_banner_settings_and_a_translation_in_chinese(
        zh_page: Page, app, tmp_path) -> None:
    page = zh_page
    with (tmp_path / "合同.csv").open("w", newline="", encoding="gbk") as f:
        csv.writer(f).writerows([["编号", "内容", "备注"], *[[i, f"第{i}行", f"备注{i}"] for i in range(5)]])
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=演示模式")
    greeting = page.locator(ANSWERS).first.inner_text()
    assert "随机权重" in greeting and "DOCX" in greeting and "翻译成英文" in greeting
    page.click("#chat-settings-open-modal")
    for label in ("系统提示词", "温度", "最大新词元数", "表格翻译的目标语言", "表格的源语言"):
        page.wait_for_selector(f"text={label}")
    assert "乐于助人" in page.locator("#system_prompt").input_value()  # not the English default
    assert page.evaluate("document.documentElement.lang") == "zh-CN"  # Chainlit's index.html says "en"
    screenshot(page, "zh-settings")
    page.keyboard.press("Escape")
    page.set_input_files("#upload-button-input", str(tmp_path / "合同.csv"))
    page.wait_for_selector("text=合同.csv")
    ask(page, "")
    page.wait_for_selector('[data-step-type="user_message"] >> text=附件：合同.csv')  # no empty bubble
    page.wait_for_selector("text=翻译哪一列？", timeout=60_000)
    page.click("button:has-text('内容')")
    page.wait_for_selector("text=/已选择：\\s*内容/")  # not Chainlit's "Selected:"
    page.wait_for_selector("text=/编码 GB18030 \\(GBK\\)/", timeout=60_000)
    page.wait_for_selector("text=/把 内容 列从模型识别出的语言翻译成英文/")  # the default target: English
    page.wait_for_selector("text=/请保持此标签页打开/")
    page.wait_for_selector("text=/已完成：已翻译 5 \\/ 5 行，用时/", timeout=300_000)  # the status record
    screenshot(page, "zh-translated")
    page.click("#readme-button")
    readme = page.wait_for_selector("text=/长文档工作台/").evaluate(
        "e => e.closest('[role=dialog]').innerText")
    assert "部署真实模型" in readme and "glm1m plan" in readme


def test_a_chinese_browser_reads_an_error_in_chinese(zh_page: Page, app) -> None:
    app.proxy.stop_listening()
    open_chat(zh_page, app.url)
    notice = zh_page.wait_for_selector("text=/模型服务器.*没有响应/", timeout=60_000)
    assert "glm1m serve" in notice.inner_text()
    screenshot(zh_page, "zh-server-down")


def test_stop_on_a_chinese_page_says_so_in_chinese(zh_page: Page, app) -> None:
    from tests.support.metrics import eventually, running

    open_chat(zh_page, app.url)
    zh_page.wait_for_selector(f"{ANSWERS} >> text=演示模式")
    before = zh_page.locator(ANSWERS).count()
    ask(zh_page, "讲一个很长的故事。")
    zh_page.wait_for_function(f"n => document.querySelectorAll('{ANSWERS}').length > n", arg=before)
    zh_page.wait_for_function(
        f"() => [...document.querySelectorAll('{ANSWERS}')].at(-1).innerText.length > 50", timeout=120_000)
    zh_page.click("#stop-button")
    eventually(lambda: running(app.server.root) == 0, 30, "generation stopped on the server")
    zh_page.wait_for_selector("text=任务已手动停止。", timeout=30_000)
    assert not zh_page.locator("text=Task manually stopped.").count()
