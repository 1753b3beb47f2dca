"""Whole-document questions go to the real demo server as token ids (documents/prompt_ids.py): the
ids are exactly those vLLM makes of the chat, the second question's prompt is served from the
first's prefix cache, and the answer streams."""

from __future__ import annotations

import json

import httpx
import pytest

from glm1m.documents.answer import OpenDocument, answer, whole_prompt
from glm1m.documents.budget import Strategy, measure
from glm1m.documents.mapreduce import MapReduce
from glm1m.documents.pages import DocumentText, Page
from glm1m.llm import ChatParams, LlmClient, text_of
from glm1m.settings import Settings
from tests.support.metrics import scrape

pytestmark = pytest.mark.server
HITS = "vllm:prefix_cache_hits_total"
# The demo model's weights are random: without ignore_eos it may end at once, and nothing streams.
PARAMS = ChatParams(temperature=0.0, max_tokens=12, extra={"ignore_eos": True})


class Recording(httpx.AsyncBaseTransport):
    """The network, with every request's path and JSON body noted."""

    def __init__(self) -> None:
        self.network = httpx.AsyncHTTPTransport()
        self.seen: list[tuple[str, dict]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else {}
        self.seen.append((request.url.path, body))
        return await self.network.handle_async_request(request)

    async def aclose(self) -> None:
        await self.network.aclose()

    def bodies(self, path: str) -> list[dict]:
        return [body for seen, body in self.seen if seen == path]


def report() -> DocumentText:
    pages = tuple(Page(n, f"Page {n} of the maintenance manual: check valve {n} every {n + 2} weeks. " * 12)
                  for n in range(1, 7))
    return DocumentText("manual.pdf", pages, len(pages))


async def test_two_questions_go_as_ids_and_the_second_hits_the_firsts_prefix(model_server) -> None:
    recording = Recording()
    llm = LlmClient(Settings(base_url=model_server.base_url, retries=0), transport=recording)
    try:
        text = report()
        budget = await measure(text, llm, threshold=6000)
        doc = OpenDocument(text, budget, Strategy.WHOLE, MapReduce(2000, 2, 24))
        hits, answers = [], []
        for question in ("What does page 2 say?", "And page 5?"):
            before = scrape(model_server.root)[HITS]
            pieces = [piece async for piece in answer(doc, question, llm, PARAMS)]
            hits.append(scrape(model_server.root)[HITS] - before)
            answers.append(pieces)
        chat_ids = [(await llm.tokenize_chat(whole_prompt(text, q)))["tokens"]
                    for q in ("What does page 2 say?", "And page 5?")]
        parts = [b for b in recording.bodies("/tokenize") if "messages" in b
                 and text.pages[0].text in b["messages"][-1]["content"]]
        part_ids = (await llm.tokenize_chat(parts[0]["messages"], generation=False))["tokens"]
    finally:
        await llm.aclose()

    sent = recording.bodies("/v1/completions")
    assert recording.bodies("/v1/chat/completions") == [] and len(sent) == 2
    # vLLM's own ids of each chat, the document's part tokenized once (the last two: this test's).
    assert [body["prompt"] for body in sent] == chat_ids
    assert len(parts) == 1 + 2 and all(body["prompt"][:len(part_ids)] == part_ids for body in sent)
    assert len(part_ids) > 0.9 * budget.tokens
    # The second prompt's document came from the first's blocks in the prefix cache.
    assert hits[1] >= len(part_ids) - 256, (hits, len(part_ids))
    for pieces in answers:
        assert len(pieces) >= 2 and text_of(pieces).strip(), pieces
