"""A resumed thread's steps become the model's history: chat turns only, whatever else is stored."""

import json

from chainlit_app.resume import CHAT_TURN, from_thread


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
