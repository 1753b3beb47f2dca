"""The user's shelf on the page: the Shelf command lists this chat's documents and the shelf
(name, pages or sections, tokens, when added), with a button for each thing a person does
there — add a shelf document to the chat, take one out of the chat, delete one from the shelf.

Why a command and buttons: Chainlit 2.12 has no side panel of the app's own. Chat settings hold
only fixed widgets (no list that changes as documents come and go, no button), starters show on
an empty chat only, and commands are the composer's own menu: a command ("Shelf", a button in
the composer) shows the list as a message where it is asked for, and actions under that message
(the one clickable thing Chainlit puts in a message) do what each line offers. An action's work
runs as the chat's task (stoppable.py), so the stop button ends it: adding or taking out a
document counts the new set with the server, which can take a while; a stop leaves the chat's
documents as they were.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable

import chainlit as cl
from chainlit.types import CommandDict

from glm1m.chainlit_app import session
from glm1m.chainlit_app.client import llm
from glm1m.chainlit_app.document_flow import PageDoor, forget_documents, take_up, user_shelf
from glm1m.chainlit_app.i18n import count_of, in_every_language, t
from glm1m.chainlit_app.status import AUTHOR, say, says_own_stop
from glm1m.documents.asking import OpenedSet, settle
from glm1m.documents.sets import DocumentSet
from glm1m.documents.shelf import AsyncShelf, Entry, NotOnShelf, count_key
from glm1m.settings import get_settings
from glm1m.sizes import mb

COMMANDS = in_every_language("shelf_command_name")  # the command's id is the name the composer shows
LISTED_MAX = 20  # shelf documents listed with buttons, latest first: more would bury the chat


def commands(lang: str) -> list[CommandDict]:
    """For cl.context.emitter.set_commands: the Shelf command, as a button in the composer."""
    return [CommandDict(id=COMMANDS[lang], icon="library", description=t(lang, "shelf_command"),
                        button=True, persistent=False, selected=False)]


def is_shelf(command: str | None) -> bool:
    return command in COMMANDS.values()


def entry_line(lang: str, entry: Entry, counted_as: str) -> str:
    """"contract.pdf — 12 pages, 9,310 tokens, added 2026-12-02 09:14"."""
    tokens = entry.tokens.get(counted_as)
    counted = t(lang, "shelf_tokens", tokens=tokens) if tokens is not None else t(lang, "shelf_not_counted")
    added = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.added))
    return t(lang, "shelf_entry", name=entry.name, held=count_of(lang, entry.locations, entry.unit),
             tokens=counted, added=added)


def named_like(entries: list[Entry], named: str) -> list[Entry]:
    """Those whose name holds `named` (the words sent with the command), else all: the composer
    sends no empty message, so "list" or "show" must not hide the shelf."""
    found = [e for e in entries if named.strip().lower() in e.name.lower()]
    return (found or entries)[:LISTED_MAX]


def listing(lang: str, documents: DocumentSet | None, entries: list[Entry], counted_as: str,
            used_mb: float, max_mb: float, named: str = "") -> str:
    """The Shelf command's message: the chat's documents, then the shelf's (named_like)."""
    chat = ([f"- {label} · {doc.name} — {count_of(lang, len(doc.pages), doc.kind.unit)}"
             for label, doc in zip(documents.labels, documents.documents, strict=True)]
            if documents is not None else [])
    head = t(lang, "shelf_chat_head") if chat else t(lang, "shelf_chat_none")
    shown = named_like(entries, named)
    shelf_head = t(lang, "shelf_head", count=len(entries), used=used_mb, cap=max_mb)
    lines = [f"- {entry_line(lang, e, counted_as)}" for e in shown] or [t(lang, "shelf_empty")]
    return "\n".join([head, *chat, "", shelf_head, *lines])


async def in_chat(shelf: AsyncShelf, entries: list[Entry], documents: DocumentSet | None) -> set[str]:
    """The sha256 of each of `entries` whose text (its latest read, what "Add" would add) is one of
    the chat's documents, by content id as the take-out buttons name them. Only an entry with as
    many locations, of the same unit, as a chat document can be one: only those texts are opened
    (a text file is megabytes; a list of 20 must not read them all)."""
    if documents is None:
        return set()
    ids = {doc.content_id for doc in documents.documents}
    shapes = {(len(doc.pages), doc.kind.unit) for doc in documents.documents}
    found: set[str] = set()
    for entry in entries:
        if (entry.locations, entry.unit) in shapes:
            shelved = await shelf.latest(entry.sha256)
            if shelved is not None and shelved.text.content_id in ids:
                found.add(entry.sha256)
    return found


async def show(named: str = "") -> None:
    """The Shelf command: the list, and a button for each thing to do."""
    state, settings = session.current(), get_settings()
    lang, shelf = state.lang, user_shelf()
    entries = await shelf.aio.entries()
    counted_as = count_key(settings.model, await llm().max_model_len())
    documents = state.documents
    # Buttons name a document by its content, never by letter: after a take-out the letters move,
    # and an older list's "Take B out" reached the document that became B.
    actions = [cl.Action(name="chat_take_out", payload={"doc": doc.content_id, "name": doc.name},
                         label=t(lang, "shelf_take_out", label=label, name=doc.name))
               for label, doc in zip(documents.labels, documents.documents, strict=True)
               ] if documents is not None else []
    shown = named_like(entries, named)
    here = await in_chat(shelf.aio, shown, documents)
    for entry in shown:
        if entry.sha256 not in here:  # one in the chat has its "Take … out" above, not "Add"
            actions.append(cl.Action(name="shelf_add", payload={"sha256": entry.sha256},
                                     label=t(lang, "shelf_add", name=entry.name)))
        actions.append(cl.Action(name="shelf_delete", payload={"sha256": entry.sha256, "name": entry.name},
                                 label=t(lang, "shelf_delete", name=entry.name)))
    used = await shelf.aio.used_bytes()
    await cl.Message(content=listing(lang, documents, entries, counted_as, mb(used), mb(shelf.max_bytes),
                                     named),
                     author=AUTHOR, actions=actions).send()


async def add(sha256: str) -> None:
    """A shelf document joins the chat's documents, after them, as a file attached now does.
    Already in the chat (an older list's button: the list now offers no "Add" for it): said,
    with the list now, as take_out says a stale button."""
    state, settings = session.current(), get_settings()
    shelf = user_shelf()
    shelved = await shelf.aio.latest(sha256)
    if shelved is None:
        await say(t(state.lang, "shelf_gone"))
        return
    before = state.documents or DocumentSet(())
    ids = [doc.content_id for doc in before.documents]
    if shelved.text.content_id in ids:
        held = before.labels[ids.index(shelved.text.content_id)]
        await say(t(state.lang, "shelf_add_already", name=shelved.text.name, label=held))
        await show()
        return
    door = PageDoor(state.lang, state.documents)
    await door.read(shelved, None)
    if (label := before.label_of(shelved.text)) is not None:
        await door.already(shelved.text.name, label)
        return
    documents = before.with_document(shelved.text)
    counting = settle(documents, [shelved], shelf, llm(), settings, state.params.max_tokens, door)
    opened = await settled(door, shelved.text.name, counting)
    await take_up(opened.documents, opened.doc, door)
    assert door.status is not None  # door.read made it
    await door.status.finish(t(state.lang, "doc_ask_now"))


async def take_out(content_id: str, name: str) -> None:
    """The chat's document with this content leaves it, whatever letter it has now; those after it
    move up a letter. Not in the chat any more (an older list's button): said, with the list now."""
    state, settings = session.current(), get_settings()
    documents = state.documents
    ids = [doc.content_id for doc in documents.documents] if documents is not None else []
    if documents is None or content_id not in ids:
        await say(t(state.lang, "shelf_list_changed", name=name))
        await show()
        return
    label = documents.labels[ids.index(content_id)]
    left = documents.without(label)
    if not left.documents:
        await forget_documents()
        await say(t(state.lang, "doc_taken_out_all", label=label, name=name))
        return
    door = PageDoor(state.lang, left)
    await door.line(t(state.lang, "doc_taken_out", label=label, name=name))
    opened = await settled(door, name,
                           settle(left, [], user_shelf(), llm(), settings, state.params.max_tokens, door))
    await take_up(opened.documents, opened.doc, door)
    assert door.status is not None  # door.line made it
    await door.status.finish(t(state.lang, "doc_ask_now"))


async def settled(door: PageDoor, name: str, work: Awaitable[OpenedSet]) -> OpenedSet:
    """`work` (the new set, counted), or on a stop the door's line says so, once (not Chainlit's
    line too), and the chat keeps the documents it had: nothing changed before the count."""
    try:
        with says_own_stop():
            return await work
    except asyncio.CancelledError:
        if door.status is not None:
            await door.status.finish(t(session.lang(), "shelf_change_stopped", name=name))
        raise


async def ask_delete(sha256: str, name: str) -> None:
    """Delete asks once: a line naming the document, with the one button that deletes it."""
    lang = session.lang()
    await cl.Message(content=t(lang, "shelf_delete_ask", name=name), author=AUTHOR,
                     actions=[cl.Action(name="shelf_delete_confirmed", payload={"sha256": sha256},
                                        label=t(lang, "shelf_delete_yes", name=name))]).send()


async def delete(sha256: str) -> None:
    """A document leaves the shelf; the chats that hold it keep their text."""
    lang = session.lang()
    try:
        removed = await user_shelf().aio.remove(sha256)
    except NotOnShelf:
        await say(t(lang, "shelf_gone"))
        return
    await say(t(lang, "shelf_deleted", name=removed.name))
