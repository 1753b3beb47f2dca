"""What happens to a job when its tab closes: it stops, once the page has been gone a while.

Chainlit 2.12 keeps a closed tab's session (and its running task) for session_timeout — an hour —
so a translation went on for minutes after its tab was closed, for nobody. glm1m stops it instead:
the rows finished are kept in the job's checkpoint (and the output file), and attaching the same
file again in the same chat continues from them; the page says so when the job starts. A tab that
is only reconnecting (a network blip, a laptop waking up) gets its socket back within seconds:
Chainlit's restore_existing_session then gives the session a new socket id, and the job goes on.
"""

from __future__ import annotations

import asyncio

import chainlit as cl

GRACE_S = 20.0  # socket.io's client retries after 1-5 s; a tab gone this long is closed
_pending: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks


def stop_when_gone() -> None:
    """For on_chat_end (the socket disconnected): stop the session's running task unless the same
    session is connected again within GRACE_S."""
    session = cl.context.session
    task = getattr(session, "current_task", None)
    socket_id = getattr(session, "socket_id", None)
    if task is None or task.done():
        return

    async def stop_later() -> None:
        await asyncio.sleep(GRACE_S)
        if getattr(session, "socket_id", None) == socket_id and not task.done():
            task.cancel()

    later = asyncio.get_running_loop().create_task(stop_later())
    _pending.add(later)
    later.add_done_callback(_pending.discard)
