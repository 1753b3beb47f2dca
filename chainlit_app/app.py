"""Chainlit handlers: they only route and report; the work is in the plain modules beside them.

Start with `make run`, or `chainlit run chainlit_app/app.py` with a model server already up.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import chainlit as cl
from chainlit.input_widget import Slider, TextInput

from chainlit_app.conversation import Conversation
from chainlit_app.errors import UserFacingError
from chainlit_app.llm import ChatParams, Llm
from chainlit_app.pacing import coalesce
from chainlit_app.settings import get_settings

DEMO_BANNER = (
    "**Demo mode.** The model server runs a tiny model with *random weights*: its answers are "
    "noise. Everything else — streaming, stop, documents, translation — works as with the real "
    "GLM-4-9B-Chat-1M. Serve the real model on a GPU to get real answers (see the README)."
)

_llm: Llm | None = None


def llm() -> Llm:
    global _llm
    if _llm is None:
        _llm = Llm(get_settings())
    return _llm


@cl.on_chat_start
async def on_chat_start() -> None:
    settings = get_settings()
    cl.user_session.set("conversation", Conversation(settings.system_prompt))
    cl.user_session.set("params", ChatParams(settings.temperature, settings.max_tokens))
    await cl.ChatSettings([
        TextInput(id="system_prompt", label="System prompt", initial=settings.system_prompt,
                  multiline=True),
        Slider(id="temperature", label="Temperature", initial=settings.temperature,
               min=0, max=2, step=0.1),
        Slider(id="max_tokens", label="Max new tokens", initial=settings.max_tokens,
               min=16, max=8192, step=16),
    ]).send()
    if settings.demo:
        await cl.Message(content=DEMO_BANNER, author="glm1m").send()
    await report_server_state()


@cl.on_settings_update
async def on_settings_update(values: dict) -> None:
    conversation: Conversation = cl.user_session.get("conversation")
    conversation.system_prompt = values["system_prompt"]
    params: ChatParams = cl.user_session.get("params")
    cl.user_session.set("params", replace(
        params, temperature=float(values["temperature"]), max_tokens=int(values["max_tokens"])))


@cl.on_message
async def on_message(message: cl.Message) -> None:
    await run_chat(message.content)


async def report_server_state() -> None:
    """Say at once when the model server is not up, instead of at the first question."""
    try:
        await llm().max_model_len(refresh=True)
    except UserFacingError as error:
        await cl.ErrorMessage(content=str(error), author="glm1m").send()


async def run_chat(text: str) -> None:
    conversation: Conversation = cl.user_session.get("conversation")
    answer = cl.Message(content="")
    try:
        pieces = conversation.reply(text, llm(), cl.user_session.get("params"))
        async for piece in coalesce(pieces, get_settings().stream_flush_s):
            await answer.stream_token(piece)
    except UserFacingError as error:
        await finish(answer)
        await cl.ErrorMessage(content=str(error), author="glm1m").send()
        return
    except asyncio.CancelledError:
        # The stop button cancels this task; keep what was shown before re-raising.
        await finish(answer)
        raise
    await finish(answer)


async def finish(answer: cl.Message) -> None:
    if answer.content:
        await answer.send()
