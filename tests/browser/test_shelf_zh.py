"""The Shelf command on a Chinese page (Chromium with locale zh-CN), in real Chromium on the real
app and server: its composer button 文档架 lists the chat's document in Chinese, and the take-out
button under the list takes it out of the chat, saying so in Chinese; clicked again, the stale
button says the list changed and shows it as it is; a document in the chat has no add button, and
an older list's add, pressed once it joined, says it is in the chat already and shows the list;
delete asks once, naming the document."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import ask, open_chat, screenshot
from tests.support.pdfs import make_pdf, words_page

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'


def test_the_shelf_command_on_a_chinese_page_lists_the_chats_document_and_takes_it_out(
        zh_page: Page, app, tmp_path: Path) -> None:
    page = zh_page
    unique = uuid.uuid4().hex[:12]  # the app's shelf outlives a run: new bytes, and a new name, each time
    contract = make_pdf(tmp_path / f"合同-{unique}.pdf", [f"contract {unique} " + words_page(n, 120)
                                                           for n in (1, 2)])
    open_chat(page, app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=演示模式")
    page.set_input_files("#upload-button-input", str(contract))
    page.wait_for_selector(f"#attachments >> text={contract.name}")
    ask(page, "这份文档讲什么？")
    # The status line's record once the answer begins (the budget line above it goes then).
    page.wait_for_selector(f"text=/已读取 {contract.name}：2 页，[\\d,]+ 个词元，整篇，用时/",
                           timeout=300_000)
    # The answer itself is not under test here (3,000 demo tokens take minutes): stop it.
    page.click("#stop-button")
    page.wait_for_selector("#chat-submit", timeout=120_000)  # the composer is back

    page.click("[id='command-文档架']")  # the composer's command button, named in Chinese
    ask(page, "全部")  # the composer sends no empty message; words no name holds list them all
    listed = page.wait_for_selector("text=此对话的文档：", timeout=60_000).evaluate(
        f"e => e.closest('{ANSWERS}').innerText")
    assert f"A · {contract.name} — 2 页" in listed, listed
    assert "你的文档架" in listed and "份文档" in listed, listed
    assert f"{contract.name} — 2 页，" in listed and " 加入" in listed, listed  # its shelf line
    # In the chat already: no "加入" (add) for it, only its take-out above and the delete.
    assert not page.locator(f"button:has-text('加入 {contract.name}')").count()
    assert page.locator(f"button:has-text('从文档架删除 {contract.name}')").count()
    screenshot(page, "zh-shelf-listed")

    page.click(f"button:has-text('把 A（{contract.name}）移出此对话')")
    page.wait_for_selector(f"text=/A（{contract.name}）已移出此对话，此对话现在没有文档/", timeout=60_000)
    assert not page.locator("text=is out of this chat").count()
    screenshot(page, "zh-shelf-taken-out")

    # The same button again: its document has left, so the page says the list changed, names it,
    # and shows the list as it is now (issue 34, item 2: before, a letter reached whatever held it).
    page.click(f"button:has-text('把 A（{contract.name}）移出此对话')")
    page.wait_for_selector(f"text=/列表已变化：{contract.name} 已不在此对话中/", timeout=60_000)
    page.wait_for_selector("text=此对话还没有文档。", timeout=60_000)
    # Out of the chat, the list offers "加入" again; once added, the same button is stale: the page
    # says the document is in the chat already, as A, and shows the list, adding nothing twice.
    add = page.locator(f"button:has-text('加入 {contract.name}')").last
    add.click()
    page.wait_for_selector("text=请提问：问题会发给这些文档。", timeout=120_000)
    add.click()
    page.wait_for_selector(f"text=/列表已变化：{contract.name} 已作为文档 A 在此对话中/", timeout=60_000)
    assert not page.locator("text=/B · /").count()
    screenshot(page, "zh-shelf-stale-add")
    page.click(f"button:has-text('从文档架删除 {contract.name}') >> nth=-1")
    page.wait_for_selector(f"text=/要从文档架删除 {contract.name} 吗？/", timeout=60_000)
    assert not page.locator(f"text=/已从文档架删除 {contract.name}/").count()  # asked, not done
    page.click(f"button:has-text('是，删除 {contract.name}')")
    page.wait_for_selector(f"text=/已从文档架删除 {contract.name}/", timeout=60_000)
    screenshot(page, "zh-shelf-stale-and-delete")
