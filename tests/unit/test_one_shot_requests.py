"""Which requests ask the model server to keep nothing in its host KV tier (issue 27).

vLLM's host tier stores every computed block and evicts the least recently used: one-shot work
(map-reduce parts and combining prompts, table rows) must carry `kv_transfer_params:
{"max_offload_tokens": 0}` so that it never pushes out a document a user comes back to; a
whole-document question, its follow-ups and a chat turn must not carry it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from glm1m.chat import Conversation
from glm1m.documents.answer import answer, open_document
from glm1m.documents.budget import Strategy
from glm1m.documents.mapreduce import MapReduce, ask_map_reduce
from glm1m.documents.pages import DocumentText, Page
from glm1m.llm import ChatParams, LlmClient
from glm1m.settings import Settings
from glm1m.translation.fanout import Job, Row, translate_rows
from tests.support.scripted_llm import Call, ScriptedLlm

pytestmark = pytest.mark.timeout(20)
STORE_NOTHING = {"max_offload_tokens": 0}  # what vLLM 0.26's OffloadingConnector reads
# What the app sends: vLLM sampling extras must survive beside the field.
PARAMS = ChatParams(temperature=0.0, max_tokens=64, extra={"seed": 7})


def stores_nothing(call: Call) -> bool:
    body = call.params.body() or {}
    return body.get("kv_transfer_params") == STORE_NOTHING and body.get("seed") == 7


def asks_to_keep(call: Call) -> bool:
    return "kv_transfer_params" not in (call.params.body() or {})


def pages(count: int, text: str) -> DocumentText:
    return DocumentText("manual.pdf", tuple(Page(n, text.format(n=n)) for n in range(1, count + 1)), count)


async def test_every_map_reduce_request_parts_rounds_and_the_final_answer_stores_nothing() -> None:
    # 300 pages of ~50-token notes cannot fit one 1,024-token prompt: parts, combining rounds, answer.
    llm = ScriptedLlm(context=1024, reply=lambda m: ("n " * 90) if "<part>" in m[-1]["content"] else
                      ("shorter " * 20 if "Combine these notes" in m[-1]["content"] else "Done [p. 2]."))
    plan = MapReduce(chunk_tokens=32_000, concurrency=4, note_tokens=48)
    text = "".join([p async for p in ask_map_reduce(pages(300, "Page {n} says something plain. " * 20),
                                                    4.0, plan, "What does it say?", llm, PARAMS)])
    assert text == "Done [p. 2]."
    kinds = {("part" if "<part>" in c.text else "round" if "Combine these" in c.text else "final")
             for c in llm.calls}
    assert kinds == {"part", "round", "final"}
    assert all(stores_nothing(c) for c in llm.calls), [c.text[:40] for c in llm.calls
                                                       if not stores_nothing(c)]


async def test_a_whole_document_and_its_follow_up_are_kept_but_its_map_reduce_reading_is_not(
        tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, whole_document_threshold=100_000, map_chunk_tokens=256,
                        map_concurrency=3, map_note_tokens=64)
    doc = DocumentText("report.pdf", tuple(Page(n, f"Fact of page {n}. " * 20) for n in range(1, 6)), 5)
    llm = ScriptedLlm(context=50_000, reply=lambda m: "It says so [p. 2].")
    whole = await open_document(doc, llm, settings, PARAMS.max_tokens)
    assert whole.strategy is Strategy.WHOLE
    for question in ("What is it about?", "And page 3?"):
        assert "".join([p async for p in answer(whole, question, llm, PARAMS)])
    assert len(llm.calls) == 2 and all(asks_to_keep(c) for c in llm.calls)
    assert llm.calls[0].params.body() == {"seed": 7}

    parts = await open_document(doc, llm, settings, PARAMS.max_tokens, Strategy.MAP_REDUCE)
    assert "".join([p async for p in answer(parts, "What is it about?", llm, PARAMS)])
    read = llm.calls[2:]
    assert len(read) > 2 and all(stores_nothing(c) for c in read)


async def test_a_chat_turn_is_kept() -> None:
    llm = ScriptedLlm()
    conversation = Conversation("be brief")
    assert "".join([p async for p in conversation.reply("hello", llm, PARAMS)])
    assert "".join([p async for p in conversation.reply("again", llm, PARAMS)])
    assert len(llm.calls) == 2 and all(asks_to_keep(c) for c in llm.calls)


async def test_every_translated_row_stores_nothing() -> None:
    llm = ScriptedLlm()

    async def rows() -> AsyncIterator[Row]:
        for index in range(5):
            yield Row(index, f"row {index}")

    results = [r async for r in translate_rows(rows(), Job("French", concurrency=2), llm)]
    assert [r.translation for r in results] == [f"ROW {i}" for i in range(5)]
    assert len(llm.calls) == 5
    assert all(c.params.body() == {"kv_transfer_params": STORE_NOTHING} for c in llm.calls)


# The real client: the field goes out in the JSON body, beside the sampling extras.
COMPLETION = {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [
    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}]}
CHUNK = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [
    {"index": 0, "finish_reason": "stop", "delta": {"role": "assistant", "content": "ok"}}]}


@pytest.mark.parametrize("one_shot", [True, False])
async def test_the_client_sends_the_field_only_for_one_shot_requests(tmp_path: Path, one_shot: bool) -> None:
    bodies: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        if body.get("stream"):
            sse = f"data: {json.dumps(CHUNK)}\n\ndata: [DONE]\n\n"
            return httpx.Response(200, text=sse, headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json=COMPLETION)

    settings = Settings(base_url="http://127.0.0.1:9/v1", retries=0, api_key="k", data_dir=tmp_path)
    llm = LlmClient(settings, transport=httpx.MockTransport(handler))
    params = ChatParams(temperature=0.0, max_tokens=8, extra={"seed": 7}, one_shot=one_shot)
    messages = [{"role": "user", "content": "Hello"}]
    try:
        assert await llm.complete(messages, params) == "ok"
        assert "".join([p async for p in llm.stream_chat(messages, params)]) == "ok"
    finally:
        await llm.aclose()
    assert len(bodies) == 2
    for body in bodies:
        assert body["seed"] == 7
        if one_shot:
            assert body["kv_transfer_params"] == STORE_NOTHING
        else:
            assert "kv_transfer_params" not in body
