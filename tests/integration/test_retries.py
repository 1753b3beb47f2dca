"""Retries that retry: one 503 or one 429 on /tokenize, /v1/models or the chat completion does
not fail a turn; a server that stays overloaded gets the sentence once the retries are spent."""

from __future__ import annotations

import pytest

from glm1m.errors import ServerBusy
from glm1m.llm import ChatParams, LlmClient, text_of
from glm1m.settings import Settings

pytestmark = pytest.mark.server
HELLO = [{"role": "user", "content": "hello"}]
PARAMS = ChatParams(temperature=0.0, max_tokens=4)
RETRIES = 2


def client(proxy) -> LlmClient:
    return LlmClient(Settings(base_url=f"{proxy.url}/v1", retries=RETRIES))


@pytest.mark.parametrize("status", [503, 429])
async def test_one_refusal_on_each_call_is_retried_and_the_turn_succeeds(healthy_proxy, status: int) -> None:
    llm = client(healthy_proxy)
    try:
        healthy_proxy.fail_next(1, status)
        assert await llm.max_model_len(refresh=True) == 8192
        healthy_proxy.fail_next(1, status)
        assert await llm.count_text_tokens("hello there") > 0
        healthy_proxy.fail_next(1, status)
        assert await llm.count_chat_tokens(HELLO) > 0
        healthy_proxy.fail_next(1, status)
        assert text_of([p async for p in llm.stream_chat(HELLO, PARAMS)])
        healthy_proxy.fail_next(1, status)
        assert await llm.complete(HELLO, PARAMS)
    finally:
        await llm.aclose()


async def test_a_server_that_stays_overloaded_gets_the_sentence_after_the_retries(healthy_proxy) -> None:
    llm = client(healthy_proxy)
    healthy_proxy.fail_matching("", 503)
    try:
        before = healthy_proxy.requests_seen
        with pytest.raises(ServerBusy, match="overloaded or restarting"):
            await llm.count_text_tokens("hello")
        assert healthy_proxy.requests_seen - before == RETRIES + 1  # asked, then retried twice
    finally:
        await llm.aclose()
