"""The host guard on a small app of its own: which host names it answers under, over HTTP and
websocket, and the refusal a page gets after rebinding its name to 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket

import pytest
from fastapi import FastAPI, WebSocket
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketDenialResponse

from glm1m.chainlit_app import origins
from glm1m.settings import Settings


def client(served_host: str = "127.0.0.1", allowed_hosts: str = "") -> TestClient:
    app = FastAPI()

    @app.get("/settings")
    async def settings() -> dict:
        return {"read": True}

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await socket.accept()
        await socket.send_text("hi")
        await socket.close()

    origins.install(app, Settings(allowed_hosts=allowed_hosts, _env_file=None), served_host)
    return TestClient(app, base_url="http://127.0.0.1:8701")


def answers(http: TestClient, host: str) -> bool:
    """Whether `host` gets the HTTP route and the socket; a refusal must be the same on both."""
    headers = {"Host": host}
    reply = http.get("/settings", headers=headers)
    try:
        with http.websocket_connect("/ws", headers=headers) as ws:
            assert ws.receive_text() == "hi"
        socket_opened = True
    except WebSocketDenialResponse as denied:
        assert denied.status_code == 400 and "GLM1M_ALLOWED_HOSTS" in denied.json()["detail"]
        socket_opened = False
    assert (reply.status_code == 200) == socket_opened, (host, reply.status_code)
    return socket_opened


@pytest.mark.parametrize("host, ok", [
    ("127.0.0.1:8701", True), ("localhost:8701", True), ("LOCALHOST.:8701", True),
    ("[::1]:8701", True), ("localhost", True),
    # An address cannot be rebound, and *.localhost resolves to loopback in browsers.
    ("192.168.1.20:8701", True), ("[fe80::1]:8701", True), ("app.localhost:8701", True),
    ("evil.example:8701", False), ("evil.example", False), ("localhost.evil.example:8701", False),
    ("127.0.0.1.evil.example:8701", False), ("gpu-box:8701", False),
])
def test_only_loopback_names_and_addresses_are_answered_by_default(host: str, ok: bool) -> None:
    assert answers(client(), host) is ok


def test_a_rebinding_page_is_refused_with_a_sentence_though_host_and_origin_agree() -> None:
    rebound = {"Host": "evil.example:8701", "Origin": "http://evil.example:8701"}
    reply = client().get("/settings", headers=rebound)
    assert reply.status_code == 400
    assert reply.json()["detail"] == ("This app is not served under the host name evil.example; "
                                      "if it should answer there, add evil.example to "
                                      "GLM1M_ALLOWED_HOSTS.")
    assert "access-control-allow-origin" not in reply.headers


def test_the_name_it_listens_on_and_the_names_added_are_answered() -> None:
    assert answers(client(served_host="glm.internal"), "glm.internal:8701")
    added = client(allowed_hosts="gpu-box, GLM.example.com., .corp.example")
    for host in ("gpu-box:8701", "glm.example.com", "corp.example", "team.corp.example:443"):
        assert answers(added, host), host
    for host in ("evilcorp.example", "example.com", "gpu-box.evil.example"):
        assert not answers(added, host), host


def test_listening_on_every_address_answers_this_machines_name_and_a_star_answers_any() -> None:
    everywhere = client(served_host="0.0.0.0")
    assert answers(everywhere, f"{socket.gethostname()}:8701")
    assert answers(everywhere, "0.0.0.0:8701")  # what `glm1m up --ui-host 0.0.0.0` polls
    assert not answers(everywhere, "evil.example:8701")
    assert answers(client(allowed_hosts="*"), "evil.example:8701")


def test_a_request_without_a_host_is_refused() -> None:
    app = client().app

    async def call() -> list[dict]:
        sent: list[dict] = []

        async def receive() -> dict:
            return {"type": "http.request", "body": b""}

        async def send(message: dict) -> None:
            sent.append(message)

        await app({"type": "http", "method": "GET", "path": "/settings", "headers": [],
                   "query_string": b"", "scheme": "http", "server": ("127.0.0.1", 8701)},
                  receive, send)
        return sent

    sent = asyncio.run(call())
    assert sent[0]["status"] == 400 and b"names no host" in sent[1]["body"]
