"""A chat conversation: its history, and one streamed turn that fits the served context."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any

from glm1m.errors import ContextTooLong
from glm1m.llm import ChatParams, Llm, Message, Piece, text_of

# An answer squeezed below this many tokens is not worth starting: tell the user instead.
MIN_ANSWER_TOKENS = 16


@dataclass
class Conversation:
    system_prompt: str
    turns: list[Message] = field(default_factory=list)

    def prompt(self, user_text: str) -> list[Message]:
        """The full history goes with every turn: the model itself keeps no state between calls."""
        system = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return [*system, *self.turns, {"role": "user", "content": user_text}]

    async def reply(self, user_text: str, llm: Llm, params: ChatParams) -> AsyncIterator[Piece]:
        """Stream the answer to `user_text`, and record the turn in the history.

        The turn is recorded as far as it was shown — also when the user stops it or the server
        drops mid-answer — so the history matches the screen. A turn that failed before its first
        token is not recorded, so sending it again does not duplicate it.
        """
        messages = self.prompt(user_text)
        params = await fit_to_context(messages, params, llm)
        shown: list[Piece] = []
        pieces = llm.stream_chat(messages, params)
        try:
            async for piece in pieces:
                shown.append(piece)
                yield piece
        finally:
            if shown:
                self.turns += [{"role": "user", "content": user_text},
                               {"role": "assistant", "content": text_of(shown)}]
            await close_now(pieces)


async def fit_to_context(messages: list[Message], params: ChatParams, llm: Llm) -> ChatParams:
    """Shrink max_tokens so prompt + answer fit the served context; refuse when nothing fits."""
    max_len = await llm.max_model_len()
    prompt_tokens = await llm.count_chat_tokens(messages)
    room = max_len - prompt_tokens
    if room < MIN_ANSWER_TOKENS:
        raise ContextTooLong(key="context_too_long", tokens=prompt_tokens, max=max_len)
    return replace(params, max_tokens=min(params.max_tokens, room))


async def close_now(pieces: AsyncIterator[Any]) -> None:
    """Close a stream of answer pieces now. A wrapper that is closed while its source waits at a
    yield must close the source itself: left to the garbage collector, the stopped answer's HTTP
    stream, and the server's generation, went on until a later collection (the app's stop test
    saw generation go on past 15 s in about one run in two, after other chats had run)."""
    aclose = getattr(pieces, "aclose", None)
    if aclose is not None:
        await aclose()
