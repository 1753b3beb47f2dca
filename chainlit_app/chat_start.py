"""A chat's start on the page (a new one, or one reopened from the history): its session state
and ⚙ panel from what the user chose before (chosen_settings.py) over the defaults, the composer's
commands, the greeting, and a word at once when the model server is down; and the panel's
changes, applied to the chat and kept for the user's next chats."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import chainlit as cl

from glm1m.chainlit_app import (
    chosen_settings,
    document_translation_flow,
    grid_flow,
    leaving,
    metrics,
    session,
    settings_panel,
    shelf_panel,
)
from glm1m.chainlit_app.client import llm
from glm1m.chainlit_app.i18n import TEXT, default_target, t, target_words
from glm1m.chainlit_app.session import SessionState
from glm1m.chainlit_app.status import say, show_error
from glm1m.chat import Conversation
from glm1m.errors import UserFacingError
from glm1m.llm import ChatParams
from glm1m.settings import get_settings


def kept_choices() -> chosen_settings.Chosen:
    """What this socket's user set in ⚙ before (nothing without a user)."""
    return chosen_settings.load(get_settings(), session.user_id())


def chosen_prompt(chosen: chosen_settings.Chosen) -> str:
    """The system prompt a chat begins with: the user's kept one, else the page's default."""
    return chosen.system_prompt or settings_panel.system_prompt(get_settings(), session.browser_language())


async def start_session(conversation: Conversation, chosen: chosen_settings.Chosen, greet: bool = True,
                        kept: bool = True) -> None:
    """`chosen`: the user's kept ⚙ choices (kept_choices). `kept`: the page keeps a history
    (login on, or the local user); when not, the greeting says so, before anything is lost
    rather than after a reload."""
    settings = get_settings()
    metrics.serve(settings.metrics_port)
    lang = session.browser_language()
    target = chosen.target_language or default_target(lang)
    params = ChatParams(settings.temperature if chosen.temperature is None else chosen.temperature,
                        chosen.max_tokens or settings.max_tokens)
    session.start(SessionState(conversation, params, target_language=target, lang=lang,
                               source_language=chosen.source_language,
                               target_chosen=chosen.target_language is not None,
                               bilingual=bool(chosen.bilingual),
                               start_at_once=bool(chosen.start_at_once)))
    await cl.ChatSettings(settings_panel.widgets(lang, settings, target, chosen)).send()
    await cl.context.emitter.set_commands(shelf_panel.commands(lang) + grid_flow.commands(lang)
                                          + document_translation_flow.commands(lang))
    if greet:  # a resumed thread shows the greeting it got when it began
        welcome = t(lang, "welcome", target=target_words(lang, target), grace=f"{leaving.GRACE_S:.0f}")
        if not kept:
            welcome += "\n\n" + t(lang, "history_not_kept")
        await say(f"{t(lang, 'demo_banner')}\n\n{welcome}" if settings.demo else welcome)
    await report_server_state()


async def report_server_state() -> None:
    """Say at once when the model server is not up, instead of at the first question."""
    try:
        await llm().max_model_len(refresh=True)
    except UserFacingError as error:
        await show_error(error)


async def apply_settings(values: dict[str, Any]) -> None:
    """The ⚙ panel's values, for this chat and (kept per user) the next ones."""
    state = session.current()
    state.conversation.system_prompt = values["system_prompt"]
    state.params = replace(state.params, temperature=float(values["temperature"]),
                           max_tokens=int(values["max_tokens"]))
    state.target_language = values.get("target_language") or default_target(state.lang)
    state.target_chosen = settings_panel.chosen_target(values, state.lang) is not None
    state.bilingual = bool(values.get("bilingual"))
    state.start_at_once = bool(values.get("start_at_once"))
    source = values.get("source_language")
    state.source_language = None if source in (None, *TEXT["auto_source"]) else source
    # Kept for the user's next chats (New Chat, a reload): nothing is kept without a user.
    await asyncio.to_thread(chosen_settings.save, get_settings(), session.user_id(),
                            settings_panel.chosen_of(values, get_settings(), state.lang))
