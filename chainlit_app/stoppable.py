"""Work an action button starts, run as the chat's task so that the stop button ends it.

A reach-in: Chainlit 2.12 awaits an action's callback inside its POST /project/action request
(server.py `call_action`), not as the session's task, so the page shows no stop button and a
stop cancels nothing, while a shelf document joining a chat may count a whole set with the
server. A message is run as a task the stop handler cancels (socket.py: `process_message` under
`session.current_task`, between the emitter's task_start and task_end); an action's work is run
the same way here. tests/unit/test_chainlit_reach_ins.py fails if the stop handler stops
cancelling `current_task` or the emitter loses task_start/task_end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import chainlit as cl


async def as_task(work: Coroutine[Any, Any, None]) -> None:
    """Run `work` as the chat's current task; a stop ends it (its own `except CancelledError`
    says what was stopped) and the action's request then returns as if it had finished."""
    context = cl.context
    task = asyncio.ensure_future(work)  # copies the context: cl.context works inside
    context.session.current_task = task
    await context.emitter.task_start()
    try:
        await task
    except asyncio.CancelledError:
        if not task.cancelled():  # the request itself went away: the work goes with it
            task.cancel()
            raise
    finally:
        if context.session.current_task is task:
            context.session.current_task = None
        await context.emitter.task_end()
