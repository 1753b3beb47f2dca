"""An answer cut at max_tokens says so with an event, not a piece of text (llm.CutAtLimit): it is
never joined into an answer or a chat's history, the first look-up turn's cut is no answer's, and
the page's Ending takes it out of the stream it shows."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from glm1m.chainlit_app.status import Ending
from glm1m.chat import Conversation
from glm1m.documents.lookup import FIND, Limits, look_up
from glm1m.llm import ChatParams, CutAtLimit, Message, Piece, text_of
from glm1m.tool_calls import ToolCall
from tests.unit.test_lookup import SET

PARAMS = ChatParams(temperature=0.0, max_tokens=8)


async def pieces_of(*pieces: Piece) -> AsyncIterator[Piece]:
    for piece in pieces:
        yield piece


class CutModel:
    """A model whose every turn is cut: the first look-up turn after its call, the rest after text."""

    def __init__(self) -> None:
        self.turns = 0

    async def max_model_len(self, refresh: bool = False) -> int:
        return 1_000

    async def count_chat_tokens(self, messages: list[Message]) -> int:
        return 10

    def stream_chat(self, messages: list[Message], params: ChatParams) -> AsyncIterator[Piece]:
        return pieces_of("Hel", "lo", CutAtLimit())

    async def stream_turn(self, messages: Sequence[dict[str, Any]], params: ChatParams,
                          tools: Sequence[dict[str, Any]] = (), tool_choice: str = "auto"
                          ) -> AsyncIterator[Piece | ToolCall]:
        self.turns += 1
        if self.turns == 1:
            yield ToolCall("call-1", FIND, json.dumps({"words": "licence"}))
        else:
            yield "MIT [B § 2]."
        yield CutAtLimit()


def test_the_cut_is_no_text() -> None:
    assert not isinstance(CutAtLimit(), str)
    assert text_of(["Hel", "lo", CutAtLimit()]) == "Hello"


async def test_a_chat_turn_cut_keeps_its_text_in_the_history() -> None:
    conversation = Conversation("")
    pieces = [p async for p in conversation.reply("hi", CutModel(), PARAMS)]  # type: ignore[arg-type]
    assert pieces == ["Hel", "lo", CutAtLimit()]
    assert conversation.turns[-1] == {"role": "assistant", "content": "Hello"}


async def test_the_held_first_turns_cut_is_no_answers_but_the_last_turns_is() -> None:
    model = CutModel()
    pieces = [p async for p in look_up(SET, "Which licence?", model, PARAMS,  # type: ignore[arg-type]
                                       Limits(calls=2, chars=500))]
    assert model.turns == 2 and pieces == ["MIT [B § 2].", CutAtLimit()]


async def test_the_page_shows_the_text_and_notes_the_cut() -> None:
    ending = Ending()
    assert [p async for p in ending.watch(pieces_of("Hel", "lo"))] == ["Hel", "lo"] and not ending.cut
    assert [p async for p in ending.watch(pieces_of("Hel", "lo", CutAtLimit()))] == ["Hel", "lo"]
    assert ending.cut
