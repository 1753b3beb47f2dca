"""What a person reads when the model server fails: each HTTP status and network failure of the
real client (LlmClient over an httpx.MockTransport) becomes one error class and one sentence that
says what to do."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from glm1m.errors import ContextTooLong, ServerBusy, ServerError, ServerUnavailable, UserFacingError
from glm1m.llm import ChatParams, LlmClient
from glm1m.settings import Settings

MESSAGES = [{"role": "user", "content": "Hello"}]
PARAMS = ChatParams(temperature=0.0, max_tokens=8)
Handler = Callable[[httpx.Request], httpx.Response]


def client(tmp_path: Path, handler: Handler) -> LlmClient:
    settings = Settings(base_url="http://127.0.0.1:9/v1", retries=0, api_key="k", data_dir=tmp_path)
    return LlmClient(settings, transport=httpx.MockTransport(handler))


def answering(status: int, body: str = '{"error": {"message": "no"}}') -> Handler:
    return lambda request: httpx.Response(status, text=body, headers={"content-type": "application/json"})


def unreachable(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


async def streamed(llm: LlmClient) -> str:
    return "".join([piece async for piece in llm.stream_chat(MESSAGES, PARAMS)])


# Every way the core reaches the server.
CALLS: dict[str, Callable[[LlmClient], Awaitable[object]]] = {
    "models": lambda llm: llm.max_model_len(),
    "tokenize": lambda llm: llm.count_text_tokens("Hello"),
    "tokenize chat": lambda llm: llm.count_chat_tokens(MESSAGES),
    "complete": lambda llm: llm.complete(MESSAGES, PARAMS),
    "stream": streamed,
}


async def failure(tmp_path: Path, handler: Handler, call: str) -> UserFacingError:
    llm = client(tmp_path, handler)
    try:
        with pytest.raises(UserFacingError) as raised:
            await CALLS[call](llm)
    finally:
        await llm.aclose()
    return raised.value


@pytest.mark.parametrize("call", list(CALLS))
async def test_a_refused_key_names_the_setting_to_fix(tmp_path: Path, call: str) -> None:
    error = await failure(tmp_path, answering(401), call)
    assert type(error) is ServerError
    assert "refused glm1m's API key" in str(error) and "GLM1M_API_KEY" in str(error)
    assert str(tmp_path / "server-api-key") in str(error)


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("call", list(CALLS))
async def test_a_busy_server_says_wait(tmp_path: Path, call: str, status: int) -> None:
    error = await failure(tmp_path, answering(status), call)
    assert type(error) is ServerBusy
    assert f"HTTP {status}" in str(error) and "Wait a few seconds" in str(error)


@pytest.mark.parametrize("call", list(CALLS))
async def test_an_unreachable_server_says_how_to_start_it(tmp_path: Path, call: str) -> None:
    error = await failure(tmp_path, unreachable, call)
    assert type(error) is ServerUnavailable
    assert "http://127.0.0.1:9/v1 is not answering" in str(error) and "glm1m serve" in str(error)


@pytest.mark.parametrize("call", ["complete", "stream"])
async def test_a_prompt_past_the_context_says_start_a_new_chat(tmp_path: Path, call: str) -> None:
    body = json.dumps({"error": {"message": "This model's maximum context length is 8192 tokens.",
                                 "type": "BadRequestError", "code": 400}})
    error = await failure(tmp_path, answering(400, body), call)
    assert type(error) is ContextTooLong
    assert "no longer fits the model's context window" in str(error) and "new chat" in str(error)


@pytest.mark.parametrize("call", ["complete", "stream"])
async def test_another_bad_request_is_not_called_a_context_overflow(tmp_path: Path, call: str) -> None:
    body = '{"error": {"message": "temperature must be >= 0"}}'
    error = await failure(tmp_path, answering(400, body), call)
    assert type(error) is ServerError
    assert "HTTP 400" in str(error) and "temperature must be" in str(error)


@pytest.mark.parametrize("call", list(CALLS))
async def test_a_server_failure_shows_the_status(tmp_path: Path, call: str) -> None:
    error = await failure(tmp_path, answering(500, "boom inside"), call)
    assert type(error) is ServerError
    assert "HTTP 500" in str(error)


async def test_a_server_serving_another_model_says_which(tmp_path: Path) -> None:
    body = json.dumps({"data": [{"id": "other-model", "max_model_len": 4096}]})
    error = await failure(tmp_path, answering(200, body), "models")
    assert type(error) is ServerError
    assert "serves other-model, not glm-4-9b-chat-1m" in str(error) and "GLM1M_MODEL" in str(error)


async def test_requests_carry_the_key_and_reach_vllms_own_endpoints(tmp_path: Path) -> None:
    seen: list[tuple[str, str, dict[str, object]]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content or b"{}")
        seen.append((request.url.path, request.headers["authorization"], body))
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": "glm-4-9b-chat-1m", "max_model_len": 4096}]})
        return httpx.Response(200, json={"count": 7})

    llm = client(tmp_path, handler)
    try:
        assert await llm.max_model_len() == 4096
        assert await llm.max_model_len() == 4096  # learnt once
        assert await llm.count_text_tokens("Hello") == 7
        assert await llm.count_chat_tokens(MESSAGES) == 7
    finally:
        await llm.aclose()
    assert [path for path, _, _ in seen] == ["/v1/models", "/tokenize", "/tokenize"]
    assert {auth for _, auth, _ in seen} == {"Bearer k"}
    assert seen[1][2] == {"model": "glm-4-9b-chat-1m", "prompt": "Hello", "add_special_tokens": False}
    assert seen[2][2]["messages"] == MESSAGES and seen[2][2]["add_generation_prompt"] is True


def sse(text: str) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "glm-4-9b-chat-1m",
             "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


class BreaksOff(httpx.AsyncByteStream):
    """An SSE body that sends two pieces, then loses the connection."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield sse("Hel")
        yield sse("lo")
        raise httpx.ReadError("connection reset by peer")


async def test_a_stream_cut_mid_answer_says_the_part_shown_is_kept(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=BreaksOff())

    llm = client(tmp_path, handler)
    pieces: list[str] = []
    try:
        with pytest.raises(ServerUnavailable, match="stopped in the middle of the answer") as raised:
            async for piece in llm.stream_chat(MESSAGES, PARAMS):
                pieces.append(piece)
    finally:
        await llm.aclose()
    assert pieces == ["Hel", "lo"]
    assert "The part shown so far is kept" in str(raised.value)


async def test_a_whole_stream_arrives_in_pieces(tmp_path: Path) -> None:
    body = sse("Bon") + sse("jour") + b"data: [DONE]\n\n"
    llm = client(tmp_path, lambda request: httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=body))
    try:
        assert [p async for p in llm.stream_chat(MESSAGES, PARAMS)] == ["Bon", "jour"]
    finally:
        await llm.aclose()
