"""A refused upload, said in the chat, and the question typed after it held.

The page's own notice of a refused file is a toast of a few seconds, and a question typed after it
went out without the file: the model then answered as if it had it. So the refusal is also a
message in the chat, which stays (and is kept with its history), and the session's next question
without a file waits for the user's choice: send it without the file, or attach another.
"""

from __future__ import annotations

import chainlit as cl
from chainlit.session import WebsocketSession

from glm1m.chainlit_app.i18n import t
from glm1m.chainlit_app.status import AUTHOR, ask_choice

# Sessions whose last upload was refused, until their next message (a set of ids: a few bytes each).
REFUSED: set[str] = set()
HOLD_TIMEOUT_S = 600  # unanswered, the question goes without the file (the first button), and says so


async def say_refused(session: WebsocketSession, sentence: str) -> None:
    """From the upload route (an HTTP request, not a chat task): the refusal as a chat message."""
    from chainlit.context import init_ws_context

    REFUSED.add(session.id)
    init_ws_context(session)
    await cl.ErrorMessage(content=sentence, author=AUTHOR).send()


def was_refused(session_id: str) -> bool:
    """Whether the session's last upload was refused since its last message; asking clears it."""
    if session_id in REFUSED:
        REFUSED.discard(session_id)
        return True
    return False


async def send_anyway(lang: str) -> bool:
    """Hold the question: True to send it without the refused file, False to wait for another."""
    choice = await ask_choice(cl.AskActionMessage(
        content=t(lang, "refused_hold"), author=AUTHOR, timeout=HOLD_TIMEOUT_S,
        actions=[cl.Action(name="refused_hold", payload={"send": True}, label=t(lang, "refused_send")),
                 cl.Action(name="refused_hold", payload={"send": False}, label=t(lang, "refused_attach"))]))
    if choice is None or choice["payload"]["send"]:
        return True
    await cl.Message(content=t(lang, "refused_attach_then"), author=AUTHOR).send()
    return False
