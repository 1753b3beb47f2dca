"""A resumed thread's steps become the model's history: chat turns only, whatever else is stored."""

import json

from glm1m.chainlit_app.resume import CHAT_TURN, asked_in_thread, from_thread
from glm1m.chainlit_app.session import SessionState
from glm1m.chat import Conversation
from glm1m.llm import ChatParams


def step(kind: str, output: str, metadata) -> dict:
    return {"type": kind, "output": output, "metadata": metadata}


def test_only_marked_answers_and_their_questions_come_back_even_past_unreadable_metadata() -> None:
    steps = [
        step("user_message", "hello", {}),
        step("assistant_message", "hi there", json.dumps({CHAT_TURN: True})),  # stored as JSON text
        step("user_message", "rows.csv", {}),
        step("assistant_message", "Reading rows.csv …", {}),  # a status line, not a turn
        step("user_message", "and now?", {}),
        step("assistant_message", "garbled", "{not json"),  # a damaged row: skipped, no traceback
        step("user_message", "last", {}),
        step("assistant_message", "fine", {CHAT_TURN: True}),
    ]
    conversation = from_thread("be brief", steps)
    assert conversation.turns == [
        {"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi there"},
        {"role": "user", "content": "last"}, {"role": "assistant", "content": "fine"}]


def test_an_edited_message_rewinds_the_history_to_before_it() -> None:
    state = SessionState(Conversation("be brief"), ChatParams(0.0, 16))
    for n, message_id in enumerate(["a", "b", "c"]):
        state.rewind(message_id)
        state.conversation.turns += [{"role": "user", "content": f"q{n}"},
                                     {"role": "assistant", "content": f"r{n}"}]
    state.rewind("b")  # the page removed b's answer and c; b is asked again
    assert state.conversation.turns == [{"role": "user", "content": "q0"},
                                        {"role": "assistant", "content": "r0"}]
    assert state.asked == {"a": 0, "b": 2}


def test_a_resumed_thread_knows_where_each_question_stood() -> None:
    steps = [dict(step("user_message", "hello", {}), id="u1"),
             step("assistant_message", "hi", {CHAT_TURN: True}),
             dict(step("user_message", "rows.csv", {}), id="u2"),
             step("assistant_message", "Reading …", {}),
             dict(step("user_message", "again", {}), id="u3"),
             step("assistant_message", "sure", {CHAT_TURN: True})]
    assert asked_in_thread(steps) == {"u1": 0, "u3": 2}
