"""A message that carries only files gets their names as its text, before Chainlit handles it.

Chainlit 2.12 names a chat's first interaction after its first message's text, and its page shows
the stop button only while a task runs *and* that name is not empty (`loading && firstInteraction`
in the frontend's input bar). A CSV or PDF sent without words made the name "", so the whole
translation that followed — 300 rows, minutes — had no stop button; the chat was listed without a
title and the message showed as an empty grey bubble. With the files' names as its text the
message reads "Attached: terms.csv" ("附件：terms.csv" on a Chinese page), the chat is titled by
it, and stop is there for the whole job. `typed_text` gives the handlers what the user typed:
nothing. (Words, not an emoji: a browser without an emoji font drew "📎" as an empty box.)

A file attached before "New Chat" stays in the message box, but Chainlit 2.12 keeps uploads per
socket session and the new chat has a new one: the message arrives with references to files its
session never received, which Chainlit drops without a word (emitter.process_message). Such a
message, and one with neither text nor a file, is refused with a sentence (`refusal`) instead of
being sent to the model, which answered 1,024 tokens to nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import chainlit.socket

from glm1m.chainlit_app.i18n import EN, language_of, t

FILES_ONLY = "glm1m_files_only"  # metadata: the text made from the files' names
FILES_LOST = "glm1m_files_lost"  # metadata: how many referenced files this session does not hold


def name_files(files: Mapping[str, Mapping[str, Any]], payload: dict[str, Any], lang: str = EN) -> None:
    """Give a message payload without text the names of the session's files it refers to."""
    step = payload.get("message") or {}
    refs = payload.get("fileReferences") or []
    if lost := sum(1 for ref in refs if ref.get("id") not in files):
        step["metadata"] = {**(step.get("metadata") or {}), FILES_LOST: lost}
    if (step.get("output") or "").strip() or not refs:
        return
    names = [str(files[ref["id"]]["name"]) for ref in refs if ref.get("id") in files]
    text = t(lang, "attached", names=", ".join(names)) if names else t(lang, "attached_lost")
    step["output"] = text
    step["metadata"] = {**(step.get("metadata") or {}), FILES_ONLY: text}


def typed_text(content: str, metadata: Mapping[str, Any] | None) -> str:
    """What the user typed in a message: "" for one name_files gave its text (and not edited
    since: an edit sends the message again with the user's new text)."""
    return "" if (metadata or {}).get(FILES_ONLY) == content else content


def refusal(lang: str, text: str, metadata: Mapping[str, Any] | None, files: int) -> str | None:
    """Why a message is not worked on, or None: a file it refers to never reached this session
    (attached before "New Chat"), or it holds neither text (`text`: what was typed) nor a file
    (`files`: how many arrived)."""
    if (metadata or {}).get(FILES_LOST):
        return t(lang, "files_lost")
    if not text.strip() and not files:
        return t(lang, "empty_message")
    return None


def install() -> None:
    """Wrap chainlit.socket.process_message (its client_message handler looks the name up at each
    message), once."""
    # A reach-in, not a hook: Chainlit 2.12 names the chat (init_thread(message.content), the
    # page's stop button and the history title) and drops unknown file references inside
    # emitter.process_message, before on_message, the first public hook, sees the message; no
    # setting or decorator runs earlier. tests/unit/test_chainlit_reach_ins.py fails on a release
    # that renames this function, changes its payload or names the chat differently.
    original: Callable[[Any, Any], Awaitable[None]] = chainlit.socket.process_message
    if getattr(original, "names_files", False):
        return

    async def process_message(session: Any, payload: Any) -> None:
        name_files(session.files, payload, language_of(getattr(session, "language", None)))
        await original(session, payload)

    process_message.names_files = True  # type: ignore[attr-defined]
    chainlit.socket.process_message = process_message
