"""The real client's counted whole answer (glm1m/counting.py) over an httpx.MockTransport: a
table row's or a document part's tokens are counted as vLLM streams them, and the answer is
retried as `complete` retries it: a refusal (429/503) as it opens, a connection cut mid-answer
(asked again from its start), with complete's sentences once the retries are spent; a stopped
one closes its stream, so vLLM stops generating it."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest

from glm1m.counting import complete_counting
from glm1m.errors import ServerBusy, ServerUnavailable
from glm1m.llm import ChatParams, LlmClient
from glm1m.progress import Progress
from glm1m.settings import Settings
from glm1m.translation.fanout import Job
from glm1m.translation.formats import open_table
from glm1m.translation.job import run_job

pytestmark = pytest.mark.timeout(20)
MESSAGES = [{"role": "user", "content": "Bonjour"}]
PARAMS = ChatParams(temperature=0.0, max_tokens=8, one_shot=True)
Handler = Callable[[httpx.Request], httpx.Response]


@pytest.fixture(autouse=True)
def no_garbage_collector() -> Iterator[None]:
    gc.disable()  # only an explicit close counts
    try:
        yield
    finally:
        gc.enable()


def client(tmp_path: Path, handler: Handler, retries: int = 0) -> LlmClient:
    settings = Settings(base_url="http://127.0.0.1:9/v1", retries=retries, api_key="k", data_dir=tmp_path)
    return LlmClient(settings, transport=httpx.MockTransport(handler))


def sse(text: str, generated: int | None = None) -> bytes:
    chunk: dict[str, object] = {
        "id": "c", "object": "chat.completion.chunk", "created": 0, "model": "glm-4-9b-chat-1m",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    if generated is not None:  # vLLM's continuous_usage_stats
        chunk["usage"] = {"prompt_tokens": 9, "completion_tokens": generated, "total_tokens": 9 + generated}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def streaming(body: bytes | httpx.AsyncByteStream) -> httpx.Response:
    if isinstance(body, bytes):
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)


HELLO = sse("Hel", 2) + sse("lo", 5) + sse(" world", 7) + b"data: [DONE]\n\n"


async def test_the_answer_comes_whole_and_its_tokens_as_vllm_counts_them(tmp_path: Path) -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return streaming(HELLO)

    llm = client(tmp_path, handler)
    counted: list[int] = []
    try:
        assert await complete_counting(llm, MESSAGES, PARAMS, counted.append) == "Hello world"
    finally:
        await llm.aclose()
    assert counted == [2, 3, 2]  # the running count's steps: 7 tokens in all
    body = seen[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert body["kv_transfer_params"] == {"max_offload_tokens": 0}  # still a one-shot request


async def test_a_server_without_usage_is_counted_a_token_a_piece(tmp_path: Path) -> None:
    llm = client(tmp_path, lambda request: streaming(sse("Bon") + sse("jour") + b"data: [DONE]\n\n"))
    counted: list[int] = []
    try:
        assert await complete_counting(llm, MESSAGES, PARAMS, counted.append) == "Bonjour"
    finally:
        await llm.aclose()
    assert sum(counted) == 2


class BreaksOff(httpx.AsyncByteStream):
    """Two pieces, then the connection is lost."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield sse("Hel", 2)
        yield sse("lo", 5)
        raise httpx.ReadError("connection reset by peer")


async def test_an_answer_cut_short_is_asked_again_from_its_start(tmp_path: Path) -> None:
    replies: list[httpx.Response] = [streaming(BreaksOff()), streaming(HELLO)]
    llm = client(tmp_path, lambda request: replies.pop(0))
    counted: list[int] = []
    try:
        text = await complete_counting(llm, MESSAGES, PARAMS, counted.append, retries=1)
    finally:
        await llm.aclose()
    assert text == "Hello world" and not replies  # the whole second answer, not the cut first
    assert sum(counted) == 5 + 7  # the cut answer's tokens were generated too


async def test_a_cut_with_no_retries_left_says_what_complete_says(tmp_path: Path) -> None:
    llm = client(tmp_path, lambda request: streaming(BreaksOff()))
    try:
        with pytest.raises(ServerUnavailable, match="is not answering"):
            await complete_counting(llm, MESSAGES, PARAMS, lambda n: None, retries=0)
    finally:
        await llm.aclose()


async def test_a_refusal_is_retried_and_one_that_stays_says_the_server_is_busy(tmp_path: Path) -> None:
    replies = [httpx.Response(503, json={"error": {"message": "busy"}}), streaming(HELLO)]
    llm = client(tmp_path, lambda request: replies.pop(0))
    try:
        assert await complete_counting(llm, MESSAGES, PARAMS, lambda n: None, retries=1) == "Hello world"
    finally:
        await llm.aclose()
    llm = client(tmp_path, lambda request: httpx.Response(429, json={"error": {"message": "busy"}}))
    try:
        with pytest.raises(ServerBusy, match="HTTP 429"):
            await complete_counting(llm, MESSAGES, PARAMS, lambda n: None, retries=0)
    finally:
        await llm.aclose()


class Endless(httpx.AsyncByteStream):
    """One piece, then silence until closed."""

    def __init__(self) -> None:
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield sse("Hel", 1)
        await asyncio.Event().wait()

    async def aclose(self) -> None:
        self.closed = True


async def test_a_stopped_answer_closes_its_stream(tmp_path: Path) -> None:
    body = Endless()
    llm = client(tmp_path, lambda request: streaming(body))
    first = asyncio.Event()
    try:
        task = asyncio.create_task(complete_counting(llm, MESSAGES, PARAMS, lambda n: first.set()))
        await asyncio.wait_for(first.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        await llm.aclose()
    assert body.closed


async def test_a_job_on_the_real_client_counts_every_rows_tokens(tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text("text\nuno\ndos\ntres\n", encoding="utf-8")
    llm = client(tmp_path, lambda request: streaming(HELLO))
    reports: list[Progress] = []
    try:
        summary = await run_job(open_table(tmp_path / "in.csv"), Job("English", retries=0), llm,
                                tmp_path / "out.csv", reports.append)
    finally:
        await llm.aclose()
    assert summary.complete and reports[-1].tokens == 3 * 7
    assert "21 tokens" in reports[-1].line()
