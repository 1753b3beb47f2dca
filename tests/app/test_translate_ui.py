"""CSV translation in the real app: attach, choose the column, watch progress, download."""

from __future__ import annotations

import csv
import io
import re

import pytest

from tests.support.chainlit_client import ChainlitSession

pytestmark = pytest.mark.app


def make_csv(path, rows: int) -> list[str]:
    texts = [f"第{i}行。 row {i}" for i in range(rows)]
    with path.open("w", newline="", encoding="gbk") as f:  # Chinese Excel's default encoding
        writer = csv.writer(f)
        writer.writerow(["编号", "内容"])
        writer.writerows([i, t] for i, t in enumerate(texts))
    return texts


async def test_csv_is_translated_with_progress_and_comes_back_as_a_file(tmp_path, chat: ChainlitSession) -> None:
    texts = make_csv(tmp_path / "合同.csv", 120)
    ref = await chat.upload(tmp_path / "合同.csv")
    chat.choose_action = lambda actions: next(a for a in actions if a["payload"]["column"] == "内容")
    start = chat.mark()
    await chat.send("", file_refs=[ref])
    done = await chat.wait_for(lambda e: e.name in ("new_message", "update_message")
                               and "rows translated" in (e.data.get("output") or "")
                               and not e.data.get("output", "").startswith(("0 of",)), 300, start)
    shown = [e.data.get("output") or "" for e in chat.events[start:]
             if e.name in ("new_message", "update_message")]
    assert any("as GB18030 (GBK)" in o and "column **内容**" in o for o in shown)
    assert any("translating:" in o and "rows/s" in o for o in shown), shown  # live progress
    # Between finished rows the line moves with the rows in flight and the tokens come back.
    assert any(re.search(r"translating: [\d,]+ of 120 rows, [\d,]+ in flight — [\d,]+ tokens", o)
               for o in shown), shown
    assert "120 of 120 rows translated" in done.data["output"]
    file_element = await chat.wait_for(lambda e: e.name == "element" and e.data.get("type") == "file"
                                       and e.data.get("name") == "合同.translated.csv", 60, start)
    data = (await chat.download(file_element.data)).decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(data)))
    assert [r["内容"] for r in rows] == texts
    assert all(r["translation"] and not r["translation_error"] for r in rows)


async def test_another_file_of_the_same_name_in_the_same_chat_is_a_new_job(tmp_path, chat: ChainlitSession) -> None:
    results = []
    for n, rows in enumerate((3, 5)):  # same name, other contents: not the first job's checkpoint
        (tmp_path / str(n)).mkdir()
        texts = make_csv(tmp_path / str(n) / "list.csv", rows)
        chat.choose_action = lambda actions: next(a for a in actions if a["payload"]["column"] == "内容")
        start = chat.mark()
        await chat.send("", file_refs=[await chat.upload(tmp_path / str(n) / "list.csv")])
        element = await chat.wait_for(lambda e: e.name == "element" and e.data.get("name") == "list.translated.csv",
                                      120, start)
        errors = [m["output"] for m in chat.messages(start) if m.get("isError")]
        assert errors == [], errors
        data = (await chat.download(element.data)).decode("utf-8-sig")
        results.append(([r["内容"] for r in csv.DictReader(io.StringIO(data))], texts))
    assert [got for got, _ in results] == [texts for _, texts in results]


async def test_header_only_csv_gets_a_sentence(tmp_path, chat: ChainlitSession) -> None:
    (tmp_path / "empty.csv").write_text("id,text\n", encoding="utf-8")
    ref = await chat.upload(tmp_path / "empty.csv")
    start = await chat.ask("", file_refs=[ref])
    errors = [m["output"] for m in chat.messages(start) if m.get("isError")]
    assert any("has a header but no rows" in e for e in errors)


async def test_stop_cancels_outstanding_requests_and_keeps_finished_rows(app, tmp_path, chat: ChainlitSession) -> None:
    from tests.support.metrics import eventually, running
    import asyncio

    texts = make_csv(tmp_path / "big.csv", 3000)
    ref = await chat.upload(tmp_path / "big.csv")
    chat.choose_action = lambda actions: next(a for a in actions if a["payload"]["column"] == "内容")
    start = chat.mark()
    await chat.send("", file_refs=[ref])
    await chat.wait_for(lambda e: e.name == "update_message" and "rows/s" in (e.data.get("output") or "")
                        and not e.data["output"].startswith("0 translated"), 120, start)
    # A fan-out, not one row at a time. vLLM's gauge is a sample of one engine step: a clean-clone
    # CI run once read 0 at the instant the first count came, so it is watched for a while.
    await asyncio.to_thread(eventually, lambda: running(app.server.root) > 1, 15,
                            "more than one translation request running at once")
    await chat.stop()
    await asyncio.to_thread(eventually, lambda: running(app.server.root) == 0, 15,
                            "every outstanding translation request was cancelled")
    stopped = await chat.wait_for(lambda e: e.name == "new_message"
                                  and (e.data.get("output") or "").startswith("Stopped."), 60, start)
    element = await chat.wait_for(lambda e: e.name == "element" and e.data.get("name") == "big.translated.csv"
                                  and e.data.get("forId") == stopped.data["id"], 60, start)
    rows = list(csv.DictReader(io.StringIO((await chat.download(element.data)).decode("utf-8-sig"))))
    assert [r["内容"] for r in rows] == texts  # nothing lost
    finished = [r for r in rows if r["translation"]]
    assert 0 < len(finished) < 3000
    assert all("job stopped before this row" in r["translation_error"] for r in rows if not r["translation"])


async def test_glossary_csv_attached_beside_the_data_goes_into_every_prompt(
        app, tmp_path, chat: ChainlitSession) -> None:
    make_csv(tmp_path / "rows.csv", 5)
    (tmp_path / "glossary.csv").write_text("term,translation\n合同,contract\n甲方,Party A\n", encoding="utf-8")
    refs = [await chat.upload(tmp_path / "rows.csv"), await chat.upload(tmp_path / "glossary.csv")]
    chat.choose_action = lambda actions: next(a for a in actions if a["payload"]["column"] == "内容")
    start = chat.mark()
    await chat.send("", file_refs=refs)
    await chat.wait_for(lambda e: e.name == "new_message" and "5 of 5 rows translated"
                        in (e.data.get("output") or ""), 120, start)
    assert any("with 2 glossary terms" in (e.data.get("output") or "") for e in chat.events[start:])
    # The rows' requests (streamed, so their tokens are counted as they come back: issue 26).
    prompts = [request["messages"][0]["content"] for request, _ in app.proxy.journal
               if request["messages"][0]["content"].startswith("You are a professional translator")]
    assert len(prompts) == 5 and all("合同 → contract" in p and "甲方 → Party A" in p for p in prompts)
