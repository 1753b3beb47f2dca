"""Which server a request belongs on behind a router: a key from the opening of its prompt.

A long prompt's opening names its document (the document comes first, the question last), so every
follow-up about a document carries the key its first read had, and a router that keeps a key on one
server (vllm-router's sticky_least_loaded, server/router.py) sends it to the server whose prefix
cache holds the document. Short prompts (a CSV row) differ within the opening and spread. glm1m's
client sends the key as X-Session-ID itself; `glm1m router`'s front (server/router_front.py) adds
the same key to requests from clients that send none, so both agree on where a document lives."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

SESSION_HEADER = "X-Session-ID"
AFFINITY_CHARS = 4000  # of the messages' text: past any system prompt a chat UI puts first
AFFINITY_IDS = 1000  # of a prompt given as token ids, about as many tokens as AFFINITY_CHARS


def text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of OpenAI's list of content parts."""
    if isinstance(content, list):
        return "".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return str(content or "")


def key_of_messages(messages: Sequence[dict[str, Any]]) -> str:
    return _digest("".join(text_of(m.get("content")) for m in messages)[:AFFINITY_CHARS])


def key_of_prompt(prompt: object) -> str | None:
    """/v1/completions' prompt: text, or token ids; None for a shape this does not key (a batch)."""
    if isinstance(prompt, str):
        return _digest(prompt[:AFFINITY_CHARS])
    if isinstance(prompt, list) and prompt and all(isinstance(i, int) for i in prompt[:AFFINITY_IDS]):
        return _digest(",".join(map(str, prompt[:AFFINITY_IDS])))
    return None


def headers(messages: Sequence[dict[str, Any]], key: str | None = None) -> dict[str, str]:
    """The header a request carries: `key` when its caller chose one (ChatParams.session), else
    the key of its messages' opening."""
    return {SESSION_HEADER: key or key_of_messages(messages)}


def _digest(opening: str) -> str:
    return hashlib.sha256(opening.encode()).hexdigest()[:32]
