"""The shelf on the page (shelf_panel.py), over the real app's socket and its action route, on the
real server: the Shelf command lists the chat's documents and the user's shelf; its buttons take
a document out of the chat, add a shelf document to another chat (not read again), and delete
one from the shelf while the chat that holds it keeps asking it."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from tests.conftest import App
from tests.support.chainlit_client import ChainlitSession
from tests.support.pdfs import make_pdf, words_page

pytestmark = pytest.mark.app
SETTINGS = {"system_prompt": "", "temperature": 0.0, "max_tokens": 8}


def shown(chat: ChainlitSession, start: int) -> list[str]:
    return [e.data.get("output") or "" for e in chat.events[start:]
            if e.name in ("new_message", "update_message")]


async def open_chat(app: App) -> ChainlitSession:
    chat = app.session()
    await chat.connect()
    await chat.started()
    await chat.change_settings(SETTINGS)
    return chat


async def shelf(chat: ChainlitSession, words: str = "list") -> tuple[str, dict[str, dict]]:
    """Choose the Shelf command: its list, and its buttons by label."""
    start = await chat.ask(words, command="Shelf")
    listed = next(m["output"] for m in chat.messages(start) if "**Your shelf**" in (m.get("output") or ""))
    return listed, {a["label"]: a for a in chat.actions(start)}


def asked(app: App) -> str:
    """What the last answer's prompt held: the documents, then the question."""
    return app.proxy.journal[-1][0]["messages"][-1]["content"]


async def test_the_shelf_command_lists_and_its_buttons_take_out_add_and_delete(
        production_app: App, healthy_proxy, tmp_path: Path) -> None:
    unique = uuid.uuid4().hex[:12]  # the shelf outlives a run: new bytes, and names, each time
    contract, annex, appendix = (make_pdf(tmp_path / f"{name}-{unique}.pdf",
                                          [f"{name} {unique} " + words_page(n, 120) for n in (1, 2)])
                                 for name in ("contract", "annex", "appendix"))
    first = await open_chat(production_app)
    refs = [await first.upload(path, mime="application/pdf") for path in (contract, annex, appendix)]
    await first.ask("What is this?", file_refs=refs, timeout=300)
    listed, buttons = await shelf(first)
    assert f"- A · {contract.name} — 2 pages" in listed and f"- B · {annex.name} — 2 pages" in listed
    # Read together, they were counted as a set: the shelf has no count of either alone yet.
    assert f"- {contract.name} — 2 pages, not counted for this server yet, added " in listed
    # In the chat already: its shelf line offers no "Add", only "Take A … out" above and "Delete".
    assert f"Add {contract.name}" not in buttons and f"Delete {contract.name} from the shelf" in buttons

    start = await first.click(buttons[f"Take A ({contract.name}) out of this chat"])
    await first.wait_for(lambda e: e.name == "update_message"
                         and "Ask your question" in (e.data.get("output") or ""), 60, start)
    assert any(f"**A** ({contract.name}) is out of this chat." in line for line in shown(first, start))
    # The same, older list: its buttons name documents by content, not by letter. annex is A now,
    # and appendix B: "Take B (annex)" takes annex out, not the document now in B's place.
    start = await first.click(buttons[f"Take B ({annex.name}) out of this chat"])
    await first.wait_for(lambda e: e.name == "update_message"
                         and "Ask your question" in (e.data.get("output") or ""), 60, start)
    assert any(f"**A** ({annex.name}) is out of this chat." in line for line in shown(first, start))
    start = await first.click(buttons[f"Take A ({contract.name}) out of this chat"])
    await first.wait_for(lambda e: "**Your shelf**" in str(e.data), 60, start)
    lines = shown(first, start)
    assert any(f"The list changed: **{contract.name}** is no longer in this chat." in line for line in lines)
    assert any(f"- A · {appendix.name} — 2 pages" in line for line in lines)  # the list as it is now
    await first.ask("And now?", timeout=300)
    # appendix alone, as if attached alone
    assert asked(production_app).startswith(f'<document name="{appendix.name}">')
    await first.close()

    second = await open_chat(production_app)
    _, buttons = await shelf(second, contract.name)
    stale_add = buttons[f"Add {contract.name}"]
    start = await second.click(stale_add)
    lines = shown(second, start)
    assert any(f"**{contract.name}** is on the shelf" in line for line in lines)  # not read again
    assert not any("Reading **" in line for line in lines)
    _, buttons = await shelf(second, annex.name)
    await second.click(buttons[f"Add {annex.name}"])
    listed, buttons = await shelf(second, contract.name)
    assert any(line.startswith(f"- {contract.name} — 2 pages, ") and " tokens, added " in line
               for line in listed.splitlines()), listed  # counted alone when it was added alone
    assert f"Add {contract.name}" not in buttons  # in this chat now: the new list offers no "Add"
    # The older list's "Add": it joined since, so the page says so and shows the list, adding nothing.
    start = await second.click(stale_add)
    await second.wait_for(lambda e: "**Your shelf**" in str(e.data), 60, start)
    lines = shown(second, start)
    assert any(f"The list changed: **{contract.name}** is already in this chat, as document A" in line
               for line in lines), lines
    now = next(line for line in lines if "**Your shelf**" in line)
    assert f"- A · {contract.name}" in now and f"- B · {annex.name}" in now and "- C · " not in now, now
    assert not any("Reading **" in line or "is on the shelf" in line for line in lines)  # not read again
    start = await second.click(buttons[f"Delete {contract.name} from the shelf"])
    # Delete asks once, naming the document; nothing is deleted until the answer.
    await second.wait_for(lambda e: f"Delete **{contract.name}** from your shelf?" in str(e.data), 60, start)
    listed, _ = await shelf(second, contract.name)
    assert f"- {contract.name} — " in listed
    confirm = next(a for a in second.actions(start) if a["label"] == f"Yes, delete {contract.name}")
    start = await second.click(confirm)
    await second.wait_for(lambda e: f"Deleted **{contract.name}** from your shelf" in str(e.data), 60, start)
    listed, _ = await shelf(second)
    assert f"- A · {contract.name}" in listed and f"- {contract.name} — " not in listed
    await second.ask("Which is which?", timeout=300)  # the chat keeps the deleted one's text
    prompt = asked(production_app)
    assert prompt.index(f'label="A" name="{contract.name}"') < prompt.index(f'label="B" name="{annex.name}"')
    await second.close()


async def test_the_stop_button_ends_a_shelf_document_joining_the_chat_and_the_chat_keeps_its_own(
        production_app: App, healthy_proxy, tmp_path: Path) -> None:
    """Adding a shelf document counts the new set with the server, which can take long: the stop
    button ends it (the action runs as the chat's task), says so once, and the chat keeps the
    documents it had."""
    unique = uuid.uuid4().hex[:12]
    kept, extra = (make_pdf(tmp_path / f"{name}-{unique}.pdf", [f"{name} {unique} " + words_page(n, 120)
                                                               for n in (1, 2)])
                   for name in ("kept", "extra"))
    first = await open_chat(production_app)
    await first.ask("What is this?", file_refs=[await first.upload(extra, mime="application/pdf")],
                    timeout=300)
    await first.close()
    chat = await open_chat(production_app)
    await chat.ask("What is this?", file_refs=[await chat.upload(kept, mime="application/pdf")], timeout=300)
    _, buttons = await shelf(chat, extra.name)
    production_app.proxy.hold_next_tokenize(90)  # counting kept + extra takes 90 s
    clicking = asyncio.create_task(chat.click(buttons[f"Add {extra.name}"]))
    assert await asyncio.to_thread(production_app.proxy.holding.wait, 60), "the set was never counted"
    start = chat.mark()
    await chat.stop()
    await asyncio.wait_for(clicking, 30)  # the button's request ends with the stop, not after 90 s
    await chat.wait_for(lambda e: "Stopped while counting the chat's documents with " in str(e.data),
                        30, start)
    await chat.ask("And now?", timeout=300)
    assert asked(production_app).startswith(f'<document name="{kept.name}">')  # extra did not join
    await chat.close()
