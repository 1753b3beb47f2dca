"""The real vLLM demo server, through the app's own Llm client: streaming, limits, GLM stop
tokens, abort, token counts and context fitting."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from glm1m.chat import Conversation
from glm1m.errors import ContextTooLong, ServerError
from glm1m.llm import ChatParams, CutAtLimit, Llm, LlmClient, Piece, text_of
from glm1m.settings import Settings
from tests.support.metrics import eventually, running, scrape

pytestmark = pytest.mark.server
GREEDY = ChatParams(temperature=0.0, max_tokens=60)


@pytest.fixture
async def llm(model_server) -> Llm:
    client = LlmClient(Settings(base_url=model_server.base_url, retries=0))
    yield client
    await client.aclose()


def ask(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


async def collect(llm: Llm, messages: list[dict], params: ChatParams) -> list[Piece]:
    return [piece async for piece in llm.stream_chat(messages, params)]


async def test_answer_streams_in_many_chunks_and_a_cut_one_ends_with_the_marker(llm: Llm) -> None:
    pieces = await collect(llm, ask("Tell me about long documents."), GREEDY)
    assert len(pieces) >= 20
    # Random weights never stop on their own: the server ends the answer at max_tokens, and the
    # client says so with a CutAtLimit event last, no text; every other piece holds text.
    assert isinstance(pieces[-1], CutAtLimit) and not isinstance(pieces[-1], str)
    assert all(pieces[:-1]) and all(isinstance(p, str) for p in pieces[:-1])


async def test_max_tokens_is_honoured(model_server, llm: Llm) -> None:
    before = scrape(model_server.root)["vllm:generation_tokens_total"]
    await collect(llm, ask("count"), ChatParams(temperature=1.0, max_tokens=37))
    after = scrape(model_server.root)["vllm:generation_tokens_total"]
    assert after - before == 37


async def test_stop_string_ends_the_answer_before_it(llm: Llm) -> None:
    full = text_of(await collect(llm, ask("hello"), GREEDY))
    stop = full[len(full) // 2: len(full) // 2 + 3]
    cut = text_of(await collect(llm, ask("hello"), ChatParams(0.0, 60, stop=[stop])))
    assert cut == full[: full.index(stop)]


@pytest.mark.parametrize("token", ["<|user|>", "<|observation|>", "<|endoftext|>"])
async def test_glm_stop_tokens_end_generation_and_stay_out_of_the_text(
        model_server, llm: Llm, token: str) -> None:
    token_id = (await tokenize(model_server, token))[0]
    # The demo model never picks a special token by itself; force this one as the first token.
    forced = ChatParams(1.0, 50, extra={"logit_bias": {str(token_id): 100}})
    raw = httpx.post(f"{model_server.base_url}/chat/completions", timeout=60, headers=model_server.headers, json={
        "model": "glm-4-9b-chat-1m", "messages": ask("hi"), "max_tokens": 50,
        "logit_bias": {str(token_id): 100}}).json()
    assert raw["choices"][0]["finish_reason"] == "stop"
    assert raw["usage"]["completion_tokens"] == 1
    assert text_of(await collect(llm, ask("hi"), forced)) == ""


async def tokenize(server, text: str) -> list[int]:
    async with httpx.AsyncClient(headers=server.headers) as client:  # /tokenize needs the key too
        body = (await client.post(f"{server.root}/tokenize", json={
            "model": "glm-4-9b-chat-1m", "prompt": text, "add_special_tokens": False})).json()
    return body["tokens"]


async def test_closing_the_stream_aborts_the_request_on_the_server(model_server, llm: Llm) -> None:
    long_answer = ChatParams(1.0, 7000, extra={"ignore_eos": True})
    stream = llm.stream_chat(ask("write a long story"), long_answer)
    for _ in range(5):
        await anext(stream)
    assert await asyncio.to_thread(running, model_server.root) == 1
    await stream.aclose()
    # 7,000 tokens would take the CPU server most of a minute; an abort frees it at once.
    await asyncio.to_thread(eventually, lambda: running(model_server.root) == 0, 15,
                            "vllm:num_requests_running back to 0 after the stream closed")


async def test_served_context_and_exact_token_count(model_server, llm: Llm) -> None:
    assert await llm.max_model_len() == model_server.max_model_len
    messages = [{"role": "system", "content": "Be brief."}, *ask("你好，请总结这份文件。")]
    counted = await llm.count_chat_tokens(messages)
    raw = httpx.post(f"{model_server.base_url}/chat/completions", timeout=60, headers=model_server.headers,
                     json={"model": "glm-4-9b-chat-1m", "messages": messages, "max_tokens": 1}).json()
    assert counted == raw["usage"]["prompt_tokens"]


async def test_answer_is_shortened_to_fit_the_context(model_server, llm: Llm) -> None:
    conversation = Conversation(system_prompt="")
    text = "long document text " * 1500  # about 7,500 tokens of an 8,192 context
    prompt_tokens = await llm.count_chat_tokens(conversation.prompt(text))
    before = scrape(model_server.root)["vllm:generation_tokens_total"]
    async for _ in conversation.reply(text, llm, ChatParams(1.0, 4000)):
        pass
    generated = scrape(model_server.root)["vllm:generation_tokens_total"] - before
    assert generated == model_server.max_model_len - prompt_tokens


async def test_conversation_over_the_context_says_so_and_keeps_history(llm: Llm) -> None:
    conversation = Conversation(system_prompt="")
    with pytest.raises(ContextTooLong, match=r"tokens long and the model serves 8,192"):
        async for _ in conversation.reply("word " * 9000, llm, GREEDY):
            pass
    assert conversation.turns == []
    answer = text_of([p async for p in conversation.reply("short question", llm, GREEDY)])
    assert conversation.turns[-1] == {"role": "assistant", "content": answer}


def test_v1_refuses_a_request_without_the_generated_key(model_server) -> None:
    body = {"model": "glm-4-9b-chat-1m", "messages": ask("hi"), "max_tokens": 1}
    url = f"{model_server.base_url}/chat/completions"
    assert httpx.post(url, json=body, timeout=60).status_code == 401
    wrong = {"Authorization": "Bearer not-the-key"}
    assert httpx.post(url, json=body, headers=wrong, timeout=60).status_code == 401
    assert httpx.post(url, json=body, headers=model_server.headers, timeout=60).status_code == 200
    assert httpx.get(f"{model_server.base_url}/models", timeout=10).status_code == 401


async def test_a_client_with_the_wrong_key_gets_a_sentence_saying_so(model_server) -> None:
    client = LlmClient(Settings(base_url=model_server.base_url, api_key="not-the-key", retries=0))
    try:
        with pytest.raises(ServerError, match="refused glm1m's API key"):
            await collect(client, ask("hi"), ChatParams(1.0, 4))
    finally:
        await client.aclose()


def test_glm1m_serve_records_what_it_started_for_the_apps_estimates(model_server, data_dir) -> None:
    from glm1m.serving import PrefillClock, read
    from glm1m.settings import Settings

    served = read(Settings(data_dir=data_dir))
    assert served is not None
    assert (served.gpu, served.max_model_len, served.tensor_parallel) == ("cpu", 8192, 1)
    # A CPU server has no GPU figure: the app says so instead of an H200's wait.
    assert "no estimate yet" in PrefillClock(served).describe_wait(20_000)
