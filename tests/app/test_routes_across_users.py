"""Chainlit's own routes with login on: a user's uploads (/project/file) and a thread's elements
(/project/thread/.../element/..., /project/element) are hers alone. The real app in the
production configuration (login, SQLite history, file store), alice and bob made by `glm1m users`."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import PRODUCTION_USERS, App

pytestmark = pytest.mark.app
BOB = ("bob", PRODUCTION_USERS["bob"])


def client(app: App, login: tuple[str, str] | None) -> httpx.Client:
    cookies = app.cookies(login) if login else None
    # No kept-alive connections: uvicorn closes an idle one after 5 s, and a GET sent on it just
    # then was reset (a CI run, after the wait for the translated CSV).
    return httpx.Client(base_url=app.url, timeout=30, headers={"Cookie": cookies} if cookies else {},
                        limits=httpx.Limits(max_keepalive_connections=0))


def stored_thread(http: httpx.Client, thread_id: str, element: str, timeout_s: float = 60) -> dict:
    """The thread as its author's history returns it, once `element` is stored in it. The app has
    no event for "element written", so this asks, at most every 0.2 s."""
    deadline = time.monotonic() + timeout_s
    while True:
        reply = http.get(f"/project/thread/{thread_id}")
        if reply.status_code == 200 and any(e.get("name") == element for e in reply.json().get("elements") or []):
            return reply.json()
        assert time.monotonic() < deadline, f"{element} not stored in {thread_id}: {reply.text[:300]}"
        time.sleep(0.2)


async def test_one_users_uploads_and_elements_cannot_be_read_or_changed_by_another(
        production_app: App, healthy_proxy, tmp_path: Path) -> None:
    app = production_app
    source = tmp_path / "rows.csv"
    with source.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["id", "text"], [1, "第一行"], [2, "second row"]])
    alice = app.session()
    await alice.connect()
    await alice.started()
    ref = await alice.upload(source)
    uploaded = {"params": {"session_id": alice.session_id}}
    with client(app, app.login) as hers, client(app, BOB) as his, client(app, None) as nobody:
        assert hers.get(f"/project/file/{ref['id']}", **uploaded).content == source.read_bytes()
        for http, refused in ((his, 401), (nobody, 401)):
            assert http.get(f"/project/file/{ref['id']}", **uploaded).status_code == refused
            planted = http.post("/project/file", files={"file": ("planted.csv", b"id,text\n1,x\n", "text/csv")},
                                **uploaded)
            assert planted.status_code == refused

        start = alice.mark()
        await alice.send("", file_refs=[ref])
        produced = await alice.wait_for(lambda e: e.name == "element" and e.data.get("name") == "rows.translated.csv",
                                        180, start)
        thread_id = produced.data["threadId"]
        thread = stored_thread(hers, thread_id, "rows.translated.csv")
        element_id = next(e["id"] for e in thread["elements"] if e["name"] == "rows.translated.csv")
        route = f"/project/thread/{thread_id}/element/{element_id}"
        assert hers.get(route).status_code == 200 and hers.get(route).json()["name"] == "rows.translated.csv"
        assert his.get(route).status_code in (401, 403, 404)
        assert nobody.get(route).status_code == 401

        # A custom element pushed into alice's open tab through her session id.
        custom = {"sessionId": alice.session_id, "element": {
            "id": "planted", "type": "custom", "name": "Planted", "display": "inline",
            "threadId": thread_id, "forId": "", "props": {"text": "from bob"}}}
        before = alice.mark()
        assert his.put("/project/element", json=custom).status_code == 401
        assert his.request("DELETE", "/project/element", json={**custom, "element": {
            **custom["element"], "id": element_id}}).status_code == 401
        assert hers.get(route).status_code == 200  # still there after bob's delete
        assert not [e for e in alice.events[before:] if e.name in ("element", "update_element", "remove_element")]
    await alice.close()
