"""A whole-document question goes to the server as token ids (documents/prompt_ids.py): vLLM then
neither templates nor tokenizes the million-token prompt again (2 s a question on one H200). The
real client against a stand-in for vLLM's routes (tests/support/fake_vllm.py)."""

from __future__ import annotations

import time
from array import array
from pathlib import Path

import httpx
import pytest

from glm1m.documents.answer import OpenDocument, answer, open_document, whole_prompt
from glm1m.documents.asking import Door, ask, open_file
from glm1m.documents.budget import Strategy
from glm1m.documents.formats import ReadOptions
from glm1m.documents.pages import DocumentText, Page
from glm1m.documents.shelf import Shelf
from glm1m.errors import DocumentError
from glm1m.llm import ChatParams, CutAtLimit, LlmClient, text_of
from glm1m.settings import Settings
from tests.support.fake_vllm import FakeVllm, render

pytestmark = pytest.mark.timeout(20)
PARAMS = ChatParams(temperature=0.0, max_tokens=64, extra={"seed": 7})
REPLY = "It says so [p. 2]."


def settings_in(tmp_path: Path) -> Settings:
    return Settings(base_url="http://127.0.0.1:9/v1", retries=0, api_key="k", data_dir=tmp_path,
                    whole_document_threshold=100_000, map_chunk_tokens=2_000, map_concurrency=2,
                    map_note_tokens=64)


def report() -> DocumentText:
    return DocumentText("report.pdf", tuple(Page(n, f"Fact of page {n}. " * 30) for n in range(1, 6)), 5)


async def asked(doc: OpenDocument, question: str, llm: LlmClient) -> list[str]:
    return [piece async for piece in answer(doc, question, llm, PARAMS)]


def document_tokenized(fake: FakeVllm, text: DocumentText) -> list[dict]:
    """The /tokenize requests that carried the document's text."""
    first = text.pages[0].text
    return [b for b in fake.bodies("/tokenize") if first in str(b.get("messages") or b.get("prompt"))]


async def test_a_whole_document_question_goes_as_ids_and_its_follow_up_reuses_them(tmp_path: Path) -> None:
    fake = FakeVllm(reply=REPLY, context=20_000)
    llm = LlmClient(settings_in(tmp_path), transport=fake.transport())
    try:
        doc = await open_document(report(), llm, settings_in(tmp_path), PARAMS.max_tokens)
        assert doc.strategy is Strategy.WHOLE
        counted = len(fake.bodies("/tokenize"))
        assert "".join(await asked(doc, "What is it about?", llm)) == REPLY
        first_tokenized = document_tokenized(fake, doc.text)[1:]  # [0]: its count when it was read
        assert "".join(await asked(doc, "And page 3?", llm)) == REPLY
    finally:
        await llm.aclose()

    # The document's part was tokenized once, as chat messages without the generation prompt.
    assert len(first_tokenized) == 1 and first_tokenized[0]["add_generation_prompt"] is False
    assert document_tokenized(fake, doc.text)[1:] == first_tokenized
    part = first_tokenized[0]["messages"]
    part_ids = fake.ids(render(part, generation=False))
    assert part[-1]["content"].endswith("</document>\n\n")

    sent = fake.bodies("/v1/completions")
    assert fake.bodies("/v1/chat/completions") == [] and len(sent) == 2
    for body, question in zip(sent, ("What is it about?", "And page 3?"), strict=True):
        prompt = body["prompt"]
        assert all(isinstance(i, int) for i in prompt) and prompt[:len(part_ids)] == part_ids
        # Exactly the ids the chat route would have made of the same messages.
        assert prompt == fake.ids(render(whole_prompt(doc.text, question), generation=True))
        assert body["stream"] is True and body["seed"] == 7 and "kv_transfer_params" not in body
        assert body["max_tokens"] == min(PARAMS.max_tokens, 20_000 - len(prompt))
    # Besides, /tokenize saw each question in a small frame (the part's last line), and the part's
    # frame once: 4 requests for two questions, one of them with the document.
    asked_since = fake.bodies("/tokenize")[counted:]
    assert len(asked_since) == 4 and [b["add_generation_prompt"] for b in asked_since] == [
        True, False, False, True]


async def test_the_answer_is_fitted_and_a_cut_one_says_so(tmp_path: Path) -> None:
    fake = FakeVllm(reply=REPLY, context=2_850, finish="length")
    llm = LlmClient(settings_in(tmp_path), transport=fake.transport())
    try:
        doc = await open_document(report(), llm, settings_in(tmp_path), 16)
        pieces = await asked(doc, "What is it about?", llm)
    finally:
        await llm.aclose()
    (body,) = fake.bodies("/v1/completions")
    assert body["max_tokens"] == 2_850 - len(body["prompt"]) < PARAMS.max_tokens
    assert text_of(pieces) == REPLY and isinstance(pieces[-1], CutAtLimit)


async def test_map_reduce_parts_still_go_as_chat(tmp_path: Path) -> None:
    fake = FakeVllm(reply=REPLY, context=20_000)
    llm = LlmClient(settings_in(tmp_path), transport=fake.transport())
    try:
        doc = await open_document(report(), llm, settings_in(tmp_path), PARAMS.max_tokens,
                                  Strategy.MAP_REDUCE)
        assert "".join(await asked(doc, "What is it about?", llm)) == REPLY
    finally:
        await llm.aclose()
    assert fake.bodies("/v1/completions") == [] and len(fake.bodies("/v1/chat/completions")) >= 2


@pytest.mark.parametrize("server", [FakeVllm(reply=REPLY, gives_ids=False),
                                    FakeVllm(reply=REPLY, merge=">\n\nQ")],
                         ids=["no ids from /tokenize", "ids that do not add up"])
async def test_a_server_that_cannot_take_ids_gets_the_question_as_chat(tmp_path: Path,
                                                                      server: FakeVllm) -> None:
    llm = LlmClient(settings_in(tmp_path), transport=server.transport())
    try:
        doc = await open_document(report(), llm, settings_in(tmp_path), PARAMS.max_tokens)
        assert "".join(await asked(doc, "What is it about?", llm)) == REPLY
    finally:
        await llm.aclose()
    assert server.bodies("/v1/completions") == []
    (chat,) = server.bodies("/v1/chat/completions")
    assert chat["messages"] == whole_prompt(doc.text, "What is it about?")


async def test_an_error_on_the_ids_route_says_what_the_chat_route_says(tmp_path: Path) -> None:
    fake = FakeVllm(reply=REPLY)

    def refusing(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/completions":
            return httpx.Response(400, json={"error": {"message": "the prompt exceeds the context length"}})
        return fake.handle(request)

    llm = LlmClient(settings_in(tmp_path), transport=httpx.MockTransport(refusing))
    try:
        doc = await open_document(report(), llm, settings_in(tmp_path), PARAMS.max_tokens)
        with pytest.raises(DocumentError, match="longer than the server's context"):
            await asked(doc, "What is it about?", llm)
    finally:
        await llm.aclose()


async def test_a_document_from_the_shelf_is_asked_as_ids_with_no_tokenize_of_it(tmp_path: Path) -> None:
    """The CLI's second run: a new process (client, open document) finds the ids on the shelf."""
    (tmp_path / "report.md").write_text("# Facts\n\n" + "Fact one is plain. " * 200, encoding="utf-8")
    shelf = Shelf.of(tmp_path, 100)
    runs = []
    for _ in range(2):
        fake = FakeVllm(reply=REPLY)
        llm = LlmClient(settings_in(tmp_path), transport=fake.transport())
        try:
            opened = await open_file(tmp_path / "report.md", "report.md", shelf, ReadOptions(), llm,
                                     settings_in(tmp_path), PARAMS.max_tokens, Door())
            said = [p async for p in ask(opened.doc, "What is it about?", llm, PARAMS, Door(),
                                         to=opened.to)]
        finally:
            await llm.aclose()
        assert "".join(said) == REPLY
        runs.append(fake)
    first, second = runs
    assert len(first.bodies("/tokenize")) == 4  # the count, the question's frame, the part, its frame
    (frame,) = second.bodies("/tokenize")  # only the question's frame: nothing of the document
    assert "Fact one" not in str(frame) and frame["add_generation_prompt"] is True
    assert second.bodies("/v1/completions")[0]["prompt"] == first.bodies("/v1/completions")[0]["prompt"]
    kept = list((tmp_path / "shelf").rglob("*.ids"))
    assert len(kept) == 1 and kept[0].stat().st_size > 4 * 1000
    assert shelf.entries()[0].bytes > kept[0].stat().st_size  # counted in the shelf's bytes


async def test_a_stopped_answer_on_the_ids_route_closes_its_http_stream(tmp_path: Path) -> None:
    fake = FakeVllm(reply="a long answer " * 50)
    llm = LlmClient(settings_in(tmp_path), transport=fake.transport())
    try:
        doc = await open_document(report(), llm, settings_in(tmp_path), PARAMS.max_tokens)
        pieces = answer(doc, "What is it about?", llm, PARAMS)
        assert await anext(pieces)
        await pieces.aclose()  # type: ignore[attr-defined]  # what cancelling the reading task leads to
        assert len(fake.bodies("/v1/completions")) == 1 and fake.streams_closed == 1
    finally:
        await llm.aclose()


async def test_a_million_ids_reach_the_server_in_well_under_a_second_of_client_work(tmp_path: Path) -> None:
    """As `prompt`, the OpenAI SDK checked each id against its types before sending: 14 s for a
    million on a 2-core machine, more than vLLM's tokenizing that the ids save. As extra_body,
    json.dumps alone: 0.15 s."""
    fake = FakeVllm(reply="ok")
    arrived: list[float] = []

    def timed(request: httpx.Request) -> httpx.Response:
        arrived.append(time.perf_counter())
        return fake.handle(request)

    llm = LlmClient(settings_in(tmp_path), transport=httpx.MockTransport(timed))
    ids = array("I", range(1_000_000))
    try:
        began = time.perf_counter()
        assert [p async for p in llm.stream_chat([{"role": "user", "content": "x"}], PARAMS, ids)] == ["ok"]
    finally:
        await llm.aclose()
    assert arrived[0] - began < 3.0
    (body,) = fake.bodies("/v1/completions")
    assert body["prompt"] == list(ids) and body["seed"] == 7
