"""Where a grid's requests go and what the server keeps of them (issue 36): every whole-document
question on a document carries one router key, however short the document (its prompt's opening
then holds the question); a document read whole is kept in the host KV tier between its questions,
while its cells past the context (map-reduce) keep nothing there. The model is scripted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from glm1m import affinity
from glm1m.catalog import EN
from glm1m.documents.answer import answer, document_key, open_document
from glm1m.documents.budget import Strategy
from glm1m.documents.formats import ReadOptions
from glm1m.documents.pages import DocumentText, Page
from glm1m.documents.shelf import Shelf
from glm1m.grid.cells import Asking, params_of
from glm1m.grid.job import run_grid
from glm1m.llm import ChatParams, LlmClient
from glm1m.settings import Settings
from tests.support.scripted_llm import Call, ScriptedLlm
from tests.unit.test_grid import PARTY, lease

pytestmark = pytest.mark.timeout(20)
PARAMS = ChatParams(temperature=0.0, max_tokens=64)


def short(name: str, fact: str) -> DocumentText:
    return DocumentText(name, (Page(1, f"The notice period is {fact}."),), 1)


async def asked(doc_text: DocumentText, questions: list[str], llm: ScriptedLlm,
                tmp_path: Path, strategy: Strategy | None = None) -> list[Call]:
    doc = await open_document(doc_text, llm, Settings(data_dir=tmp_path, map_chunk_tokens=256,
                                                      map_note_tokens=16), 64, strategy)
    before = len(llm.calls)
    for question in questions:
        assert "".join([piece async for piece in answer(doc, question, llm, PARAMS)])
    return llm.calls[before:]


async def test_a_short_documents_questions_carry_one_router_key_and_its_parts_none(tmp_path: Path) -> None:
    llm = ScriptedLlm(reply=lambda messages: "42 days [p. 1].")
    text = short("a.pdf", "42 days")
    first, second = await asked(text, ["What is the notice period?", "Who signs?"], llm, tmp_path)
    # Each prompt's own opening holds its question: keyed by it, the two went to different servers.
    assert len(first.text) < affinity.AFFINITY_CHARS
    assert affinity.key_of_messages(first.messages) != affinity.key_of_messages(second.messages)
    assert first.params.session == second.params.session is not None
    other, = await asked(short("b.pdf", "7 days"), ["What is the notice period?"], llm, tmp_path)
    assert other.params.session not in (None, first.params.session)  # documents still spread
    # Read part by part, each part keyed by its own opening: the parts spread over the servers.
    parts = await asked(DocumentText("c.pdf", tuple(Page(n, f"Fact {n}. " * 80) for n in range(1, 9)), 8),
                        ["What is it about?"], llm, tmp_path, Strategy.MAP_REDUCE)
    assert len(parts) > 2 and all(call.params.session is None for call in parts)


def test_a_long_documents_key_is_the_one_its_prompts_opening_gives() -> None:
    """Past AFFINITY_CHARS the document's key is what the router's front gives a plain client's
    prompt of it, so the two agree on where a document lives."""
    from glm1m.documents.answer import OpenDocument, plan_of, whole_prompt
    from glm1m.documents.budget import Budget

    text = DocumentText("long.pdf", (Page(1, "clause 7 applies. " * 400),), 1)
    doc = OpenDocument(text, Budget(1, 2000, 7200, 8192, 100_000), Strategy.WHOLE, plan_of(Settings()))
    assert document_key(doc) == affinity.key_of_messages(whole_prompt(text, "Who signs?"))


async def test_the_client_sends_the_chosen_key_as_the_session_header() -> None:
    seen: list[httpx.Request] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if json.loads(request.content).get("stream"):
            chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
                     "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
            return httpx.Response(200, text=f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n",
                                  headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json={"id": "x", "object": "chat.completion", "created": 0,
                                         "model": "m", "choices": [{
                                             "index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": "ok"}}]})

    llm = LlmClient(Settings(base_url="http://router:8000/v1", api_key="k"),
                    transport=httpx.MockTransport(reply))
    messages = [{"role": "user", "content": "a question"}]
    try:
        assert "".join([p async for p in llm.stream_chat(messages, ChatParams(0.0, 4, session="doc-7"))
                        if isinstance(p, str)]) == "ok"
        assert await llm.complete(messages, ChatParams(0.0, 4, session="doc-7")) == "ok"
        assert await llm.complete(messages, ChatParams(0.0, 4)) == "ok"
    finally:
        await llm.aclose()
    keys = [request.headers[affinity.SESSION_HEADER] for request in seen]
    assert keys == ["doc-7", "doc-7", affinity.key_of_messages(messages)]


async def test_a_grid_keeps_a_document_read_whole_in_the_kv_tier_but_not_its_cells_past_the_context(
        tmp_path: Path) -> None:
    # 300 tokens read whole by default (each of ScriptedLlm's tokens is 4 characters): the lease,
    # ~25 tokens, is read whole; the report, ~1,800, part by part.
    settings = Settings(data_dir=tmp_path / "data", whole_document_threshold=300, map_chunk_tokens=256,
                        map_note_tokens=16, max_tokens=64)
    report = tmp_path / "report.md"
    report.write_text("".join(f"# Part {n}\n\n" + "The tenant pays on time. " * 50 + "\n\n"
                              for n in range(1, 7)), encoding="utf-8")
    llm = ScriptedLlm(reply=lambda messages: "The tenant is Ann [§ 1].")
    asking = Asking((PARTY, PARTY), llm, settings, Shelf.of(tmp_path / "data", 100), ReadOptions(),
                    params_of(settings), EN, asyncio.Lock())
    await run_grid((lease(tmp_path / "a.md", "Ann"), report), asking, tmp_path / "grid.xlsx", 1)
    whole = [c for c in llm.calls if 'name="a.md"' in c.text]
    parts = [c for c in llm.calls if 'name="a.md"' not in c.text]
    assert len(whole) == 2 and len(parts) > 4
    assert all("kv_transfer_params" not in (c.params.body() or {}) for c in whole)
    assert all((c.params.body() or {}).get("kv_transfer_params") == {"max_offload_tokens": 0}
               for c in parts)
