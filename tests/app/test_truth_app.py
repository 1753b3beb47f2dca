"""Issue 17 over Chainlit's own protocol, in the real app: a file-only message names its files
(the chat's first interaction is never empty, which is what the page's stop button needs), and an
answer the server cut at max_tokens says so and how to raise it."""

from __future__ import annotations

import csv

import pytest

from tests.support.chainlit_client import ChainlitSession

pytestmark = pytest.mark.app


async def test_a_file_only_message_names_its_file_and_titles_the_chat(
        tmp_path, chat: ChainlitSession) -> None:
    with (tmp_path / "list.csv").open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["text"], ["一"], ["二"]])
    ref = await chat.upload(tmp_path / "list.csv")
    start = chat.mark()
    await chat.send("", file_refs=[ref])
    first = await chat.wait_for(lambda e: e.name == "first_interaction", 60, start)
    assert first.data["interaction"] == "Attached: list.csv"  # the stop button shows only when not empty
    await chat.wait_for(lambda e: e.name == "update_message" and e.data.get("type") == "user_message"
                        and e.data.get("output") == "Attached: list.csv", 60, start)
    await chat.wait_for(lambda e: e.name == "element" and e.data.get("name") == "list.translated.csv",
                        120, start)


async def test_an_answer_cut_at_the_token_limit_says_so(chat: ChainlitSession) -> None:
    await chat.change_settings({"system_prompt": "", "temperature": 1.0, "max_tokens": 16})
    start = await chat.ask("Tell me a long story.")
    notes = [m["output"] for m in chat.messages(start) if m.get("type") == "system_message"]
    assert notes == ["The answer stopped at the token limit (16 tokens). For a longer one, raise "
                     "**Max new tokens** in the ⚙ settings and ask again."]
    assert len(chat.answers(start)) == 1  # the answer itself is the model's text alone


async def test_a_document_read_part_by_part_shows_its_parts_then_leaves_a_record(
        tmp_path, chat: ChainlitSession) -> None:
    from tests.support.pdfs import make_pdf, words_page

    await chat.change_settings({"system_prompt": "", "temperature": 1.0, "max_tokens": 16})
    make_pdf(tmp_path / "long.pdf", [words_page(n, 900) for n in range(1, 13)])  # past the 8,192 served
    ref = await chat.upload(tmp_path / "long.pdf", mime="application/pdf")
    start = await chat.ask("What is this?", file_refs=[ref], timeout=600)
    shown = [e.data.get("output") or "" for e in chat.events[start:]
             if e.name in ("new_message", "update_message")]
    assert any("Reading it part by part (map-reduce)" in o for o in shown)
    assert any("reading: " in o and " parts" in o for o in shown)  # the parts counted live
    final = {m["id"]: m["output"] for m in chat.messages(start)}
    records = [o for o in final.values() if o.startswith("Read **long.pdf** part by part: ")]
    assert len(records) == 1 and " parts, in " in records[0], final
    assert not any("Reading long.pdf part by part" in o for o in final.values())  # no stale line


async def test_a_chinese_tab_reads_upload_refusals_a_set_and_the_one_table_notice_in_chinese(
        app, healthy_proxy, monkeypatch, tmp_path) -> None:
    import httpx
    import socketio

    from tests.support.pdfs import make_pdf, words_page

    connect = socketio.AsyncClient.connect

    async def as_a_chinese_browser(self, *args, headers=None, **kwargs):  # what Chainlit reads
        return await connect(self, *args, headers={**(headers or {}), "Accept-Language": "zh-CN,zh;q=0.9"},
                             **kwargs)

    monkeypatch.setattr(socketio.AsyncClient, "connect", as_a_chinese_browser)
    chat = app.session()
    await chat.connect()
    try:
        await chat.started()
        assert "演示模式" in chat.answers()[0]["output"]
        async with httpx.AsyncClient(headers={"Cookie": chat.cookies} if chat.cookies else {}) as http:
            zipped = ("archive.zip", b"PK\x03\x04" + b"0" * 100, "application/zip")
            reply = await http.post(f"{chat.url}/project/file", params={"session_id": chat.session_id},
                                    files={"file": zipped})
        assert reply.status_code == 415
        assert reply.json()["detail"].startswith("archive.zip 不是 glm1m 能读取的文件"), reply.json()
        await chat.change_settings({"system_prompt": "", "temperature": 1.0, "max_tokens": 8})
        for n, name in enumerate(("one.pdf", "two.pdf")):
            make_pdf(tmp_path / name, [words_page(n + 1, 100)])
        refs = [await chat.upload(tmp_path / name, mime="application/pdf") for name in ("one.pdf", "two.pdf")]
        start = await chat.ask("这是什么？", file_refs=refs)
        shown = [m["output"] for m in chat.messages(start)]
        # Two documents in one message are read together, named and counted in Chinese.
        assert any(o.startswith("已读取 **A（one.pdf）和 B（two.pdf）**：2 份文档，2 页，") for o in shown), shown
        (tmp_path / "rows.csv").write_text("id,text\n1,合同\n", encoding="utf-8")
        make_pdf(tmp_path / "three.pdf", [words_page(3, 100)])
        refs = [await chat.upload(tmp_path / "rows.csv"),
                await chat.upload(tmp_path / "three.pdf", mime="application/pdf")]
        start = await chat.ask("", file_refs=refs)
        notice = "只读取了 rows.csv：表格要单独翻译，因此 three.pdf 未被读取。"
        await chat.wait_for(lambda e: e.name == "element" and e.data.get("name") == "rows.translated.csv", 60, start)
        assert any(o.startswith(notice) for o in [m["output"] for m in chat.messages(start)]), chat.messages(start)
    finally:
        await chat.close()
