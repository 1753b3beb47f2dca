"""A chat turn on the page: the conversation's streamed reply, paced for the browser."""

from __future__ import annotations

import chainlit as cl

from glm1m.chainlit_app import session
from glm1m.chainlit_app.client import llm
from glm1m.chainlit_app.pacing import coalesce
from glm1m.chainlit_app.resume import CHAT_TURN
from glm1m.chainlit_app.status import Ending, say_if_cut, stream_into
from glm1m.settings import get_settings


async def run_chat(text: str, message_id: str) -> None:
    state = session.current()
    state.rewind(message_id)
    answer = cl.Message(content="", metadata={CHAT_TURN: True})  # marks it for from_thread
    pieces = state.conversation.reply(text, llm(), state.params)
    ending = Ending()
    await stream_into(answer, coalesce(ending.watch(pieces), get_settings().stream_flush_s))
    await say_if_cut(ending, state.params.max_tokens)
