"""The one value a chat session keeps in cl.user_session: everything typed, in one place."""

from __future__ import annotations

from dataclasses import dataclass, field

import chainlit as cl

from glm1m.chainlit_app.i18n import EN, language_of
from glm1m.chat import Conversation
from glm1m.documents.answer import OpenDocument
from glm1m.documents.sets import DocumentSet
from glm1m.llm import ChatParams

KEY = "glm1m"
LANGUAGES = ["English", "简体中文", "繁體中文", "日本語", "한국어", "Français", "Deutsch", "Español"]


@dataclass
class SessionState:
    conversation: Conversation
    params: ChatParams
    target_language: str = LANGUAGES[0]
    lang: str = EN  # the browser's language for the app's own sentences: i18n.EN or i18n.ZH
    source_language: str | None = None  # None: the model detects it
    # The user chose target_language in ⚙ (now or kept): else it is the page's default, which
    # gives way to the other language for a table already written in it (translation/written_in.py).
    target_chosen: bool = False
    bilingual: bool = False  # ⚙: a PDF comes back with original and translated pages in turn
    start_at_once: bool = False  # ⚙: a translation starts without asking its languages first
    document: OpenDocument | None = None  # what follow-up questions go to: its documents' text
    documents: DocumentSet | None = None  # the chat's documents (A, B, …); one attached next joins
    # Chat messages by id → how many conversation turns came before them, so an edited message
    # (Chainlit sends it again with its id, after removing the later ones) rewinds the history.
    asked: dict[str, int] = field(default_factory=dict)
    says_stop: bool = False  # a running job reports its own stop (status.says_own_stop)

    def rewind(self, message_id: str) -> None:
        """Before answering `message_id`: if it was asked before (an edit), forget it and every
        turn after it, as the page does."""
        if message_id in self.asked:
            keep = self.asked[message_id]
            del self.conversation.turns[keep:]
            self.asked = {k: n for k, n in self.asked.items() if n < keep}
        self.asked[message_id] = len(self.conversation.turns)


def start(state: SessionState) -> None:
    cl.user_session.set(KEY, state)


def user_id() -> str | None:
    """The logged-in (or local) user of this socket; None with nobody logged in."""
    user = getattr(cl.context.session, "user", None)
    return user.identifier if user is not None else None


def browser_language() -> str:
    """i18n.EN or i18n.ZH, from the language Chainlit read off this socket's Accept-Language."""
    return language_of(getattr(cl.context.session, "language", None))


def lang() -> str:
    """The current session's language; English outside a started session."""
    state = cl.user_session.get(KEY)
    return state.lang if isinstance(state, SessionState) else EN


def says_stop() -> bool:
    """Whether the running job reports its own stop; False outside a started session."""
    state = cl.user_session.get(KEY)
    return state.says_stop if isinstance(state, SessionState) else False


def current() -> SessionState:
    state = cl.user_session.get(KEY)
    assert isinstance(state, SessionState), "on_chat_start or on_chat_resume sets the state first"
    return state
