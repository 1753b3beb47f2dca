"""A whole answer whose tokens are counted as they come back: `complete_counting`.

vLLM batches the rows of a table (and a document's parts) and finishes them together, so a whole
answer (`Llm.complete`) says nothing until the batch ends: "translating: 0 of 50 rows" stood for a
whole 16 s run. Streamed, an answer's tokens can be counted while it is generated, and the
progress moves with them.

Why a stream and not vLLM's usage on the whole answer: the usage comes with the answer, at the
end, which is what there was already. Why not the server's /metrics: it counts every user's tokens,
and a router may hide it. The stream keeps `complete`'s retries (see `counted_completion`).

This is LlmClient's path (it uses the client's connection and its HTTP-status-to-sentence
mapping): glm1m/llm.py is at the length the layer test allows, so it lives beside it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import httpx
import openai

from glm1m import affinity
from glm1m.llm import ChatParams, Llm, LlmClient, Message, _openai_messages, backoff_s

OnTokens = Callable[[int], None]  # `n` more tokens of an answer came back

# vLLM's running usage on every chunk of a stream (`continuous_usage_stats`): the exact count of
# tokens generated so far. A server that sends none is counted one token a chunk (vLLM's pace).
COUNTED_STREAM = {"stream_options": {"include_usage": True, "continuous_usage_stats": True}}


def no_tokens(count: int) -> None:
    """The default OnTokens: nobody counts."""


@runtime_checkable
class CountsTokens(Protocol):
    """An Llm other than LlmClient that counts its own answers' tokens (a stand-in in tests)."""

    async def complete_counted(self, messages: list[Message], params: ChatParams, on_tokens: OnTokens,
                               retries: int | None = None) -> str: ...


async def complete_counting(llm: Llm, messages: list[Message], params: ChatParams,
                            on_tokens: OnTokens = no_tokens, retries: int | None = None,
                            ids: Sequence[int] | None = None) -> str:
    """llm.complete(messages, params, retries): one whole answer, retried the same way, with
    on_tokens(n) as its tokens come back where the client can count them (LlmClient, or one that
    is CountsTokens); another Llm is asked with complete() and reports none, and progress then
    moves by finished units only. `ids`: the messages as the server's token ids
    (documents/prompt_ids.py), sent on /v1/completions instead (LlmClient only)."""
    if isinstance(llm, LlmClient):
        return await counted_completion(llm, messages, params, on_tokens, retries, ids)
    if isinstance(llm, CountsTokens):
        return await llm.complete_counted(messages, params, on_tokens, retries)
    return await llm.complete(messages, params, retries=retries)


class _CutShort(Exception):
    """A counted answer's stream ended before its end: the connection dropped, or was silent for
    GLM1M_REQUEST_TIMEOUT_S."""


async def counted_completion(llm: LlmClient, messages: list[Message], params: ChatParams,
                             on_tokens: OnTokens, retries: int | None = None,
                             ids: Sequence[int] | None = None) -> str:
    """LlmClient.complete, streamed and counted. Retried as complete() is: the OpenAI client
    retries 429/503/timeouts/refused connections as the request opens, `retries` times (else
    GLM1M_RETRIES) with its exponential backoff, and ends with the same sentences; an answer cut
    short is asked again from its start after backoff_s, as the client asks a whole answer again
    when its reply is cut, and ends with complete()'s "not answering" when the retries are spent.
    The tokens of a cut answer were generated and stay counted. Cancelling it closes the stream,
    which makes vLLM stop generating the answer."""
    retries = llm.settings.retries if retries is None else retries
    for attempt in range(retries + 1):
        try:
            return await _counted_once(llm, retries, messages, params, on_tokens, ids)
        except _CutShort as cut:
            if attempt == retries:
                raise llm._unreachable() from cut.__cause__
        await asyncio.sleep(backoff_s(attempt))
    raise AssertionError("unreachable")


async def _counted_once(llm: LlmClient, retries: int, messages: list[Message], params: ChatParams,
                        on_tokens: OnTokens, ids: Sequence[int] | None) -> str:
    client = llm._client.with_options(max_retries=retries)
    # As LlmClient._open_stream sends ids: in the body as they are (the SDK checks each item of
    # `prompt`, 14 s a million).
    route: Any = client.chat.completions if ids is None else client.completions
    prompt: dict[str, Any] = {"messages": _openai_messages(messages)} if ids is None else {"prompt": ""}
    body = {**(params.body() or {}), **COUNTED_STREAM, **({} if ids is None else {"prompt": list(ids)})}
    try:
        stream = await route.create(
            model=llm.settings.model, **prompt, stream=True,
            temperature=params.temperature, max_tokens=params.max_tokens, stop=params.stop,
            extra_body=body, extra_headers=affinity.headers(messages, params.session),
        )
    except openai.APIError as exc:
        raise llm._user_error(exc) from exc
    text: list[str] = []
    counted = 0
    try:
        async for chunk in stream:
            choice = chunk.choices[0] if chunk.choices else None  # chat: a delta; ids: text
            if choice and (piece := choice.delta.content if ids is None else choice.text):
                text.append(piece)
            usage = chunk.usage
            now = usage.completion_tokens if usage is not None else counted + bool(chunk.choices)
            if now > counted:
                on_tokens(now - counted)
                counted = now
    except (openai.APIError, httpx.HTTPError) as exc:
        raise _CutShort() from exc
    finally:
        await stream.close()
    return "".join(text)
