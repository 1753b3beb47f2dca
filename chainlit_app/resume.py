"""A resumed thread's conversation, rebuilt from the steps Chainlit stored for it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from glm1m.chat import Conversation
from glm1m.llm import Message

CHAT_TURN = "glm1m_chat_turn"  # metadata key on chat answers, so a resumed thread can rebuild them


def from_thread(system_prompt: str, steps: Sequence[Mapping[str, Any]]) -> Conversation:
    """The conversation of a resumed thread, from the messages Chainlit stored for it: each chat
    answer (marked CHAT_TURN) with the user message before it. Status lines, errors, documents
    and translations are not chat turns and stay out of the model's history, as they were."""
    turns: list[Message] = []
    asked: str | None = None
    for step in steps:
        if step.get("type") == "user_message":
            asked = step.get("output") or ""
        elif step.get("type") == "assistant_message" and asked is not None and is_turn(step):
            turns += [{"role": "user", "content": asked},
                      {"role": "assistant", "content": step.get("output") or ""}]
            asked = None
    return Conversation(system_prompt, turns)


def asked_in_thread(steps: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Each chat question's message id → the turns before it, as from_thread rebuilds them, so an
    edit after a resume rewinds the history too (SessionState.rewind)."""
    asked: dict[str, int] = {}
    turns = 0
    pending: str | None = None
    for step in steps:
        if step.get("type") == "user_message":
            pending = str(step.get("id") or "")
        elif step.get("type") == "assistant_message" and pending is not None and is_turn(step):
            asked[pending] = turns
            turns += 2
            pending = None
    return asked


def is_turn(step: Mapping[str, Any]) -> bool:
    metadata = step.get("metadata") or {}
    if isinstance(metadata, str):  # some data layers hand metadata back as JSON text
        try:
            metadata = json.loads(metadata or "{}")
        except ValueError:  # unreadable: not a mark glm1m wrote, so not a turn
            return False
    return isinstance(metadata, dict) and bool(metadata.get(CHAT_TURN))
