"""The chat flow in the real Chainlit app over its socket.io protocol, against the real server."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.chainlit_client import ChainlitSession
from tests.support.metrics import eventually, running, scrape

pytestmark = pytest.mark.app


def errors(chat: ChainlitSession, start: int) -> list[str]:
    return [m["output"] for m in chat.messages(start) if m.get("type") == "assistant_message"
            and m.get("isError")]


async def set_max_tokens(chat: ChainlitSession, value: int) -> None:
    await chat.change_settings({
        "system_prompt": "You are terse.", "temperature": 1.0, "max_tokens": value})


async def test_demo_banner_says_answers_are_noise(chat: ChainlitSession) -> None:
    banner = chat.answers()[0]["output"]
    assert "Demo mode" in banner and "random weights" in banner


async def test_answer_streams_into_one_message(app, chat: ChainlitSession) -> None:
    await set_max_tokens(chat, 400)
    start = await chat.ask("What is in chapter two?")
    answers = chat.answers(start)
    assert len(answers) == 1
    tokens = chat.tokens_for(answers[0]["id"], start)
    assert len(tokens) >= 5  # pieces are joined to at most ten updates a second
    assert "".join(tokens) == answers[0]["output"]


async def test_settings_panel_limits_new_tokens(app, chat: ChainlitSession) -> None:
    await set_max_tokens(chat, 48)
    before = scrape(app.server.root)["vllm:generation_tokens_total"]
    await chat.ask("Hello")
    assert scrape(app.server.root)["vllm:generation_tokens_total"] - before == 48


async def test_each_turn_sends_the_whole_history(app, chat: ChainlitSession) -> None:
    await set_max_tokens(chat, 40)
    prompt_tokens = []
    for question in ["first question", "second question"]:
        before = scrape(app.server.root)["vllm:prompt_tokens_total"]
        await chat.ask(question)
        prompt_tokens.append(scrape(app.server.root)["vllm:prompt_tokens_total"] - before)
    # The second prompt carries the first question and its 40-token answer.
    assert prompt_tokens[1] >= prompt_tokens[0] + 40


async def test_stop_button_aborts_generation_on_the_server(app, chat: ChainlitSession) -> None:
    start = chat.mark()
    await chat.send("Write a very long story.")  # 3,000 tokens by default: about 20 s here
    first = await chat.wait_for(lambda e: e.name == "stream_token", 60, start)
    await chat.wait_for(lambda e: e.name == "stream_token" and chat.index(e) > chat.index(first) + 5,
                        60, start)
    assert running(app.server.root) == 1
    await chat.stop()
    try:
        await asyncio.to_thread(eventually, lambda: running(app.server.root) == 0, 15,
                                "the server stopped generating after the stop button")
    except AssertionError as failed:
        raise AssertionError(f"{failed}; still forwarded then: {app.proxy.in_flight()}") from None
    shown = "".join(chat.tokens_for(first.data["id"], start))
    assert 0 < len(shown)


async def test_server_down_gives_a_sentence_and_recovers(app, chat: ChainlitSession) -> None:
    app.proxy.stop_listening()
    start = await chat.ask("Are you there?")
    assert any("is not answering" in text and "glm1m serve" in text for text in errors(chat, start))
    app.proxy.start()
    await set_max_tokens(chat, 20)
    start = await chat.ask("And now?")
    assert chat.answers(start) and not errors(chat, start)


async def test_overloaded_server_gives_a_sentence_then_works(app, chat: ChainlitSession) -> None:
    await set_max_tokens(chat, 20)
    app.proxy.fail_next(6, status=503)  # more than the app's retries
    start = await chat.ask("Busy?")
    assert any("overloaded or restarting (HTTP 503)" in text for text in errors(chat, start))
    app.proxy.reset()
    start = await chat.ask("Better now?")
    assert chat.answers(start) and not errors(chat, start)


async def test_server_dropping_mid_answer_keeps_the_shown_part(app, chat: ChainlitSession) -> None:
    await set_max_tokens(chat, 400)
    app.proxy.cut_next_stream_after(3000)
    start = await chat.ask("Tell me everything.")
    answers = [m for m in chat.answers(start) if not m.get("isError")]
    assert answers and answers[0]["output"]
    assert any("stopped in the middle of the answer" in text for text in errors(chat, start))


async def test_conversation_over_the_context_says_so_and_app_stays_up(chat: ChainlitSession) -> None:
    start = await chat.ask("word " * 9000)
    assert any("no answer fits" in text for text in errors(chat, start))
    await set_max_tokens(chat, 20)
    start = await chat.ask("short one")
    assert chat.answers(start) and not errors(chat, start)


async def test_server_down_when_a_chat_starts_is_said_at_once_and_the_chat_works_after(
        app, healthy_proxy) -> None:
    app.proxy.stop_listening()
    chat = app.session()
    await chat.connect()
    try:
        await chat.started()
        assert any("is not answering" in text for text in errors(chat, 0))  # before any question
        app.proxy.start()
        await set_max_tokens(chat, 20)
        start = await chat.ask("Back?")
        assert chat.answers(start) and not errors(chat, start)
    finally:
        await chat.close()


async def test_editing_a_message_rewinds_what_the_model_sees(app, chat: ChainlitSession) -> None:
    """The page drops the answers after an edited message and asks again; the model must not
    still see the dropped turns."""
    await set_max_tokens(chat, 8)
    sent_ids: list[str] = []

    async def send_first() -> None:
        sent_ids.append(await chat.send("first question"))

    await chat._until_task_done(send_first, 120)
    await chat.ask("second question")
    first_id = sent_ids[0]
    app.proxy.reset()
    await chat.edit(first_id, "the first question, edited")
    sent = app.proxy.journal[-1][0]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["the first question, edited"]
