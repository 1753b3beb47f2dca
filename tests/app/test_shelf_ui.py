"""The shelf on the page: a document attached in one chat and attached again in a new chat (under
another name) starts at once, with no reading step, and is told that this server read it before;
another user reads it for themselves."""

from __future__ import annotations

import uuid

import pytest

from tests.conftest import PRODUCTION_USERS
from tests.support.chainlit_client import ChainlitSession
from tests.support.pdfs import make_pdf, words_page

pytestmark = pytest.mark.app


def shown(chat: ChainlitSession, start: int) -> list[str]:
    return [e.data.get("output") or "" for e in chat.events[start:]
            if e.name in ("new_message", "update_message")]


async def attach(chat: ChainlitSession, path, name: str) -> list[str]:
    """Attach `path` as `name` in `chat` and ask about it; what the page showed meanwhile."""
    copy = path.with_name(name)
    copy.write_bytes(path.read_bytes())
    await chat.change_settings({"system_prompt": "", "temperature": 0.0, "max_tokens": 8})
    ref = await chat.upload(copy, mime="application/pdf")
    start = await chat.ask("What is on page 2?", file_refs=[ref])
    assert not any(m.get("isError") for m in chat.messages(start)), chat.messages(start)
    return shown(chat, start)


async def test_the_same_file_in_a_new_chat_is_not_read_again(app, healthy_proxy, tmp_path) -> None:
    unique = uuid.uuid4().hex  # the app's shelf outlives this test: new bytes each run
    pdf = make_pdf(tmp_path / "source.pdf", [f"{unique} " + words_page(n, 200) for n in range(1, 4)])
    first, second = app.session(), app.session()
    for chat in (first, second):
        await chat.connect()
        await chat.started()
    try:
        read = await attach(first, pdf, "lease.pdf")
        assert any("Reading **lease.pdf**" in o for o in read)
        assert not any("read it before" in o for o in read), read
        again = await attach(second, pdf, "Copy of lease.pdf")
        assert not any("Reading **" in o or "Counting tokens" in o for o in again), again
        assert any("**Copy of lease.pdf** is on the shelf" in o for o in again)
        assert any("**Copy of lease.pdf**: 3 pages" in o and "Reading it whole" in o for o in again)
        # The server answered the first chat's question whole: the second is told it may hold it.
        assert any("Asking Copy of lease.pdf again" in o and "this server read it before (at " in o
                   for o in again), again
    finally:
        await first.close()
        await second.close()
    if app.login is None:
        return
    other = app.session(login=("bob", PRODUCTION_USERS["bob"]))  # never reaches alice's shelf
    await other.connect()
    await other.started()
    try:
        assert any("Reading **lease.pdf**" in o for o in await attach(other, pdf, "lease.pdf"))
    finally:
        await other.close()
