"""PDFs in the real app: upload, budget shown, answer streamed, follow-ups from the prefix cache."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.chainlit_client import ChainlitSession
from tests.support.metrics import scrape
from tests.support.pdfs import make_pdf, words_page
from tests.unit.test_documents_real_pdf import looping_pdf

pytestmark = pytest.mark.app


def streamed_answers(chat: ChainlitSession, start: int) -> list[str]:
    ids = {e.data["id"] for e in chat.events[start:] if e.name == "stream_start"}
    return [m["output"] for m in chat.messages(start) if m["id"] in ids and m["output"]]


def shown(chat: ChainlitSession, start: int) -> list[str]:
    return [e.data.get("output") or "" for e in chat.events[start:] if e.name in ("new_message", "update_message")]


async def test_pdf_upload_shows_the_budget_and_answers_then_follow_up_hits_cache(
        app, tmp_path, chat: ChainlitSession) -> None:
    await chat.change_settings({"system_prompt": "", "temperature": 0.0, "max_tokens": 24})
    make_pdf(tmp_path / "report.pdf", [words_page(n, 250) for n in range(1, 4)])
    ref = await chat.upload(tmp_path / "report.pdf", mime="application/pdf")
    start = await chat.ask("What is on page 2?", file_refs=[ref])
    assert any("**report.pdf**: 3 pages" in o and "of the served 8,192-token context" in o
               and "Reading it whole" in o for o in shown(chat, start))
    assert streamed_answers(chat, start) and not any(m.get("isError") for m in chat.messages(start))
    hits = scrape(app.server.root)["vllm:prefix_cache_hits_total"]
    start = await chat.ask("And page 3?")
    assert scrape(app.server.root)["vllm:prefix_cache_hits_total"] - hits > 1000
    assert streamed_answers(chat, start)


async def test_a_document_stopped_before_its_answer_says_so_once(
        healthy_proxy, tmp_path, chat: ChainlitSession) -> None:
    """"Stopped reading …" and not also Chainlit's own "Task manually stopped." (status.py)."""
    await chat.change_settings({"system_prompt": "", "temperature": 0.0, "max_tokens": 24})
    make_pdf(tmp_path / "held.pdf", [words_page(n, 250) for n in range(1, 4)])
    ref = await chat.upload(tmp_path / "held.pdf", mime="application/pdf")
    healthy_proxy.hold_next_stream(120)  # the server "reads" the prompt until the stop
    start = chat.mark()
    await chat.send("What is on page 2?", [ref])
    assert await asyncio.to_thread(healthy_proxy.holding.wait, 120)
    await chat.stop()
    ours = await chat.wait_for(lambda e: e.name == "update_message" and "Stopped reading **held.pdf** after"
                               in (e.data.get("output") or ""), 30, start)
    theirs = await chat.wait_for(lambda e: e.name == "new_message"
                                 and e.data.get("output") == "Task manually stopped.", 30, start)
    # Chainlit sends its line itself before on_stop; on_stop takes it away (stop_line).
    await chat.wait_for(lambda e: e.name == "delete_message" and e.data.get("id") == theirs.data["id"],
                        30, start)
    assert ours.data["id"] != theirs.data["id"]
    assert [m["output"] for m in chat.messages(start)].count(ours.data["output"]) == 1


async def test_a_pdf_read_in_part_says_which_page_was_lost(tmp_path, chat: ChainlitSession) -> None:
    await chat.change_settings({"system_prompt": "", "temperature": 0.0, "max_tokens": 8})
    ref = await chat.upload(looping_pdf(tmp_path / "loop.pdf", ["first page", "second page"]),
                            mime="application/pdf")
    start = await chat.ask("What is on page 2?", file_refs=[ref])
    assert "Page 3 of loop.pdf could not be read (the file is damaged or cut short there): the text " \
           "lacks it. Download or export it again for the whole text." in shown(chat, start)
    assert chat.answers(start) and not any(m.get("isError") for m in chat.messages(start))


async def test_a_renamed_non_pdf_gets_a_sentence_and_chat_goes_on(tmp_path, chat: ChainlitSession) -> None:
    (tmp_path / "scan.pdf").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
    ref = await chat.upload(tmp_path / "scan.pdf", mime="application/pdf")
    start = await chat.ask("", file_refs=[ref])
    errors = [m["output"] for m in chat.messages(start) if m.get("isError")]
    assert any("is not a PDF" in e for e in errors)
    await chat.change_settings({"system_prompt": "", "temperature": 1.0, "max_tokens": 16})
    start = await chat.ask("hello")
    assert chat.answers(start) and not any(m.get("isError") for m in chat.messages(start))


async def test_a_table_with_documents_is_translated_alone_and_the_documents_are_named(
        tmp_path, chat: ChainlitSession) -> None:
    """Documents go together (test_sets_ui.py); a table is translated on its own, and the documents
    attached with it are named, not silently dropped."""
    await chat.change_settings({"system_prompt": "", "temperature": 0.0, "max_tokens": 8})
    (tmp_path / "rows.csv").write_text("id,text\n1,合同\n", encoding="utf-8")
    make_pdf(tmp_path / "one.pdf", [words_page(1, 100)])
    refs = [await chat.upload(tmp_path / "rows.csv"), await chat.upload(tmp_path / "one.pdf", mime="application/pdf")]
    start = await chat.ask("", file_refs=refs)
    assert any("Only rows.csv is read: a table is translated on its own, so one.pdf was not read." in o
               for o in shown(chat, start))
    await chat.wait_for(lambda e: e.name == "element" and e.data.get("name") == "rows.translated.csv", 60, start)
    assert not any("**one.pdf**" in o for o in shown(chat, start))
