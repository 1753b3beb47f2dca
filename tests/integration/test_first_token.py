"""A streamed answer may take many minutes to begin (the server reads the whole prompt first):
no timeout cuts that wait while the server is alive; a dead server or the first-token limit ends
it, each with its own sentence. The fault proxy in front of the real server holds the first byte."""

from __future__ import annotations

import asyncio
import gc
import time

import pytest

from glm1m.errors import ServerTooSlow, ServerUnavailable
from glm1m.llm import ChatParams, LlmClient, text_of
from glm1m.settings import Settings

pytestmark = pytest.mark.server
PARAMS = ChatParams(temperature=0.0, max_tokens=16, extra={"ignore_eos": True})
HELLO = [{"role": "user", "content": "hello"}]
REQUEST_TIMEOUT_S = 2.0


def client(proxy, **settings: float) -> LlmClient:
    return LlmClient(Settings(base_url=f"{proxy.url}/v1", request_timeout_s=REQUEST_TIMEOUT_S,
                              retries=0, health_poll_s=0.5, **settings))


async def test_a_first_piece_later_than_the_request_timeout_still_arrives_whole(healthy_proxy) -> None:
    llm = client(healthy_proxy)
    healthy_proxy.hold_next_stream(3 * REQUEST_TIMEOUT_S)
    started = time.monotonic()
    try:
        text = text_of([piece async for piece in llm.stream_chat(HELLO, PARAMS)])
    finally:
        await llm.aclose()
    assert time.monotonic() - started >= 3 * REQUEST_TIMEOUT_S  # it did wait past the timeout
    assert text and text == "".join(healthy_proxy.streamed_text())


async def test_a_server_that_stops_answering_its_health_check_ends_the_wait(healthy_proxy) -> None:
    llm = client(healthy_proxy)
    healthy_proxy.hold_next_stream(60)
    stream = llm.stream_chat(HELLO, PARAMS)
    first = asyncio.ensure_future(anext(stream))
    assert await asyncio.to_thread(healthy_proxy.holding.wait, 30)  # the server is "reading"
    healthy_proxy.fail_matching("", 503)  # from now on every request (so /health) fails
    started = time.monotonic()
    try:
        with pytest.raises(ServerUnavailable, match="stopped answering its health check"):
            await first
    finally:
        await stream.aclose()
        await llm.aclose()
    assert time.monotonic() - started < 20


async def test_the_first_token_limit_ends_the_wait_with_its_own_sentence(healthy_proxy) -> None:
    llm = client(healthy_proxy, first_token_timeout_s=3.0)
    healthy_proxy.hold_next_stream(30)
    started = time.monotonic()
    try:
        with pytest.raises(ServerTooSlow, match="GLM1M_FIRST_TOKEN_TIMEOUT_S"):
            [piece async for piece in llm.stream_chat(HELLO, PARAMS)]
    finally:
        await llm.aclose()
    assert 3.0 <= time.monotonic() - started < 15


async def test_a_wait_for_the_first_piece_that_is_cancelled_closes_the_stream(healthy_proxy) -> None:
    """The page's stop button while the server still reads the prompt: the app cancels the task
    waiting for the first piece. The HTTP stream must close then, or the server generates the
    whole answer into a socket nobody reads (a CI run found such an answer in a later test)."""
    llm = client(healthy_proxy)
    healthy_proxy.hold_next_stream(2)
    stream = llm.stream_chat(HELLO, ChatParams(temperature=0.0, max_tokens=300, extra={"ignore_eos": True}))
    first = asyncio.ensure_future(anext(stream))
    gc.disable()  # in the app, cycles through the stopped task's traceback kept the stream alive
    try:
        assert await asyncio.to_thread(healthy_proxy.holding.wait, 30)  # the server is "reading"
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        assert await asyncio.to_thread(healthy_proxy.client_left.wait, 30), "the stream stayed open"
    finally:
        gc.enable()
        await llm.aclose()
    assert healthy_proxy.journal == []  # the answer was not generated to its end for nobody
