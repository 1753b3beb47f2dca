"""Chainlit handlers: they only route; the flows beside them do the page's part and glm1m's core
does the work.

Start with `make run` (or `glm1m up`); with a model server already up, `chainlit run
chainlit_app/app.py` from a checkout works too.
"""

from __future__ import annotations

from typing import Any

import chainlit as cl
import chainlit.server
from chainlit.config import config as chainlit_config
from chainlit.types import ThreadDict
from starlette.datastructures import Headers

from glm1m.chainlit_app import (
    chat_start,
    document_translation_flow,
    file_only,
    grid_flow,
    history,
    leaving,
    origins,
    refusals,
    session,
    shelf_panel,
)
from glm1m.chainlit_app.chat_flow import run_chat
from glm1m.chainlit_app.document_flow import ask_document, read_documents, reopen_document
from glm1m.chainlit_app.file_only import typed_text
from glm1m.chainlit_app.i18n import t
from glm1m.chainlit_app.login import (
    check_password,
    keeps_local_history,
    local_user,
    open_accounts_and_history,
    open_history,
)
from glm1m.chainlit_app.resume import asked_in_thread, from_thread
from glm1m.chainlit_app.status import in_page_language, say, shows_errors, stop_line
from glm1m.chainlit_app.stoppable import as_task
from glm1m.chainlit_app.storage import mount_first
from glm1m.chainlit_app.translation_flow import run_translation
from glm1m.chainlit_app.upload_guard import upload_guard
from glm1m.chainlit_app.uploads import sort_uploads
from glm1m.chat import Conversation
from glm1m.settings import get_settings

file_only.install()
# `chainlit run --host` sets config.run.host before it imports this module.
origins.install(chainlit.server.app, get_settings(), chainlit_config.run.host)
mount_first(chainlit.server.app, upload_guard(get_settings()))
_history: history.HistoryDataLayer | None = None
if get_settings().auth_required:
    _accounts, _history = open_accounts_and_history(get_settings())

    @cl.password_auth_callback
    async def login(username: str, password: str) -> cl.User | None:
        return await check_password(_accounts, username, password)

elif keeps_local_history(get_settings(), chainlit_config.run.host):
    _history = open_history(get_settings())

    @cl.header_auth_callback
    async def local_login(headers: Headers) -> cl.User:
        return local_user()

if _history is not None:
    _kept = _history

    @cl.data_layer
    def data_layer() -> history.HistoryDataLayer:
        return _kept

    @cl.on_chat_resume
    @shows_errors
    async def on_chat_resume(thread: ThreadDict) -> None:
        steps = thread.get("steps") or []
        chosen = chat_start.kept_choices()
        await chat_start.start_session(from_thread(chat_start.chosen_prompt(chosen), steps), chosen,
                                       greet=False, kept=True)
        session.current().asked = asked_in_thread(steps)
        await reopen_document()


@cl.on_chat_start
async def on_chat_start() -> None:
    chosen = chat_start.kept_choices()
    await chat_start.start_session(Conversation(chat_start.chosen_prompt(chosen)), chosen,
                                   kept=_history is not None)


@cl.on_settings_update
async def on_settings_update(values: dict[str, Any]) -> None:
    await chat_start.apply_settings(values)


@cl.on_chat_end
async def on_chat_end() -> None:
    leaving.stop_when_gone()


@cl.on_stop
async def on_stop() -> None:
    await stop_line()


@cl.action_callback("shelf_add")
@shows_errors
async def on_shelf_add(action: cl.Action) -> None:
    await as_task(shelf_panel.add(str(action.payload["sha256"])))


@cl.action_callback("chat_take_out")
@shows_errors
async def on_take_out(action: cl.Action) -> None:
    await as_task(shelf_panel.take_out(str(action.payload.get("doc", "")),
                                       str(action.payload.get("name", ""))))


@cl.action_callback("shelf_delete")
@shows_errors
async def on_shelf_delete(action: cl.Action) -> None:
    await shelf_panel.ask_delete(str(action.payload["sha256"]), str(action.payload.get("name", "")))


@cl.action_callback("shelf_delete_confirmed")
@shows_errors
async def on_shelf_delete_confirmed(action: cl.Action) -> None:
    await shelf_panel.delete(str(action.payload["sha256"]))


@cl.on_message
@shows_errors
async def on_message(message: cl.Message) -> None:
    text = typed_text(message.content, message.metadata)
    if text != message.content:  # the page drew it empty: show the files' names it now carries
        await message.update()
    if shelf_panel.is_shelf(message.command):  # the composer's Shelf: its words pick what to list
        await shelf_panel.show(text.strip())
        if not message.elements:
            return
        text = ""  # files sent with it go as usual, without a question
    if (refusals.was_refused(cl.context.session.id) and not message.elements and text.strip()
            and not await refusals.send_anyway(session.lang())):
        return
    if refused := file_only.refusal(session.lang(), text, message.metadata, len(message.elements or [])):
        await cl.ErrorMessage(content=refused, author="glm1m").send()
        return
    if grid_flow.is_grid(message.command):  # the composer's Grid: documents × questions
        await grid_flow.run_grid_page(message.elements or [], text)
        return
    if document_translation_flow.is_translate(message.command):  # the composer's Translate
        await document_translation_flow.run_document_page(message.elements or [])
        return
    uploads = sort_uploads(message.elements or [])
    if left_out := uploads.left_out():
        await say(in_page_language(left_out))
    if uploads.tables:
        glossary = (uploads.glossary[0].path, uploads.glossary[0].name) if uploads.glossary else None
        await run_translation(uploads.tables[0].path, uploads.tables[0].name, glossary)
    elif uploads.documents:
        await read_documents(uploads.documents, text)
    elif uploads.other and not text.strip():
        await cl.ErrorMessage(content=t(session.lang(), "unsupported"), author="glm1m").send()
    elif session.current().document is not None:
        await ask_document(text)
    else:
        await run_chat(text, message.id)
