"""The origin guard on a small app of its own: which pages get through, over HTTP and websocket."""

from __future__ import annotations

import pytest
from fastapi import FastAPI, WebSocket
from fastapi.testclient import TestClient
from starlette.middleware.cors import CORSMiddleware
from starlette.websockets import WebSocketDisconnect
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from glm1m.chainlit_app import origins
from glm1m.settings import Settings


def client(allowed: str, behind_proxy: bool = False) -> TestClient:
    app = FastAPI()
    app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_credentials=True)  # as Chainlit's

    @app.post("/do")
    async def do() -> dict:
        return {"done": True}

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await socket.accept()
        await socket.send_text("hi")
        await socket.close()

    origins.install(app, Settings(allowed_origins=allowed, _env_file=None), "testserver")
    if behind_proxy:  # as uvicorn runs it, trusting a reverse proxy's X-Forwarded-* headers
        return TestClient(ProxyHeadersMiddleware(app, trusted_hosts="*"))
    return TestClient(app)  # requests go to http://testserver


@pytest.mark.parametrize("origin, ok", [
    (None, True), ("http://testserver", True), ("HTTP://TESTSERVER/", True),
    ("https://intranet.example", True), ("http://evil.example", False), ("null", False),
    ("http://testserver:8080", False), ("https://testserver", False),
])
def test_only_the_apps_own_and_the_configured_origins_pass(origin: str | None, ok: bool) -> None:
    http = client("https://intranet.example/, https://other.example")
    headers = {"Origin": origin} if origin else {}
    reply = http.post("/do", headers=headers)
    assert reply.status_code == (200 if ok else 403)
    if origin == "https://intranet.example":  # a configured page may also read the answer
        assert reply.headers["access-control-allow-origin"] == origin
    if ok:
        with http.websocket_connect("/ws", headers=headers) as socket:
            assert socket.receive_text() == "hi"
    else:
        assert "GLM1M_ALLOWED_ORIGINS" in reply.json()["detail"]
        assert "access-control-allow-origin" not in reply.headers
        with pytest.raises(WebSocketDisconnect), http.websocket_connect("/ws", headers=headers):
            pass


def test_a_star_lets_every_page_in_as_chainlit_did() -> None:
    assert client("*").post("/do", headers={"Origin": "http://evil.example"}).status_code == 200


def test_behind_a_reverse_proxy_the_page_it_serves_is_the_apps_own() -> None:
    proxied = {"X-Forwarded-Host": "glm.example", "X-Forwarded-Proto": "https"}
    assert client("", behind_proxy=True).post(
        "/do", headers={"Origin": "https://glm.example", **proxied}).status_code == 200
    assert client("", behind_proxy=True).post(
        "/do", headers={"Origin": "https://evil.example", **proxied}).status_code == 403
