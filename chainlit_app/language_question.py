"""The languages of a translation said before its first row or section goes out, with a one-click
change (issue 34: a table with one text column started at once, so the user could not check ⚙
first). Asked only where the target is the page's default — not chosen in ⚙ — and the user has
not turned on "Translations start at once"; the question starts the job by itself after
GLM1M_LANGUAGE_QUESTION_S, so a user who walks away still gets the work done."""

from __future__ import annotations

import chainlit as cl

from glm1m.chainlit_app import session
from glm1m.chainlit_app.i18n import t, target_words
from glm1m.chainlit_app.status import AUTHOR, ask_choice
from glm1m.settings import get_settings
from glm1m.translation.written_in import CHINESE, ENGLISH


def asks() -> bool:
    """Whether a translation starting now asks its languages first."""
    state = session.current()
    return not (state.target_chosen or state.start_at_once) and get_settings().language_question_s > 0


async def confirm_target(source: str | None, target: str) -> str:
    """The target the user starts with: `target`, or the other of the page's two languages when
    its button is clicked. `source`: the source language chosen in ⚙ (None: detected)."""
    if target not in (ENGLISH, CHINESE):
        return target
    lang, wait = session.lang(), get_settings().language_question_s
    other = CHINESE if target == ENGLISH else ENGLISH
    source_words = target_words(lang, source) if source else t(lang, "tr_detected")
    answer = await ask_choice(cl.AskActionMessage(
        content=t(lang, "tr_languages_question", source=source_words, target=target_words(lang, target),
                  seconds=wait, setting=t(lang, "label_start_at_once")),
        author=AUTHOR, timeout=wait, actions=[
            cl.Action(name="target", payload={"target": target},
                      label=t(lang, "tr_languages_start", target=target_words(lang, target))),
            cl.Action(name="target", payload={"target": other},
                      label=t(lang, "tr_languages_other", target=target_words(lang, other)))]))
    return str(answer["payload"]["target"]) if answer else target
