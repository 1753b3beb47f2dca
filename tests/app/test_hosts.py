"""DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 reaches the real app
with `Host: evil.example:PORT` and a matching Origin. It gets neither the socket nor a route,
while the same requests addressed to localhost work as before."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import httpx
import pytest
import socketio

from tests.conftest import App

pytestmark = pytest.mark.app
SOCKET_PATH = "/ws/socket.io/"


def refusal(name: str) -> str:
    return (f"This app is not served under the host name {name}; if it should answer there, "
            f"add {name} to GLM1M_ALLOWED_HOSTS.")


async def websocket_handshake(app: App, host: str) -> tuple[int, bytes]:
    """The status and body that answer a socket.io websocket handshake sent with `host` (raw:
    a client library would not show the body of a refused handshake)."""
    url = urlsplit(app.url)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    writer.write((f"GET {SOCKET_PATH}?EIO=4&transport=websocket HTTP/1.1\r\nHost: {host}\r\n"
                  f"Origin: http://{host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                  f"\r\n").encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    body = await reader.readexactly(length)
    writer.close()
    await writer.wait_closed()
    return int(head.split(b" ")[1]), body


async def test_a_rebound_name_gets_no_socket_and_the_loopback_name_does(app: App, healthy_proxy) -> None:
    port = urlsplit(app.url).port
    status, body = await websocket_handshake(app, f"evil.example:{port}")
    assert status == 400 and refusal("evil.example").encode() in body
    status, _ = await websocket_handshake(app, f"localhost:{port}")
    assert status == 101  # switching protocols: the same handshake under the app's own name

    rebound = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
    page = socketio.AsyncClient(reconnection=False)  # as a page's socket.io client connects
    with pytest.raises(socketio.exceptions.ConnectionError):
        await page.connect(app.url, socketio_path=SOCKET_PATH, headers=rebound,
                           transports=["websocket"], wait_timeout=30)
    await page.disconnect()  # closes its HTTP session, though it never connected


async def test_a_rebound_name_gets_no_route_and_the_loopback_name_does(app: App, healthy_proxy) -> None:
    port = urlsplit(app.url).port
    cookie = app.cookies()
    cookies = {"Cookie": cookie} if cookie else {}
    form = {"username": app.login[0], "password": app.login[1]} if app.login else {"username": "x",
                                                                                  "password": "y"}
    calls = [("GET", "/project/settings", None), ("GET", "/", None), ("POST", "/login", form),
             ("GET", f"{SOCKET_PATH}?EIO=4&transport=polling", None)]  # the socket's first request
    async with httpx.AsyncClient(base_url=app.url, timeout=30, headers=cookies) as http:
        for method, path, data in calls:
            for name in ("evil.example", "localhost"):
                headers = {"Host": f"{name}:{port}", "Origin": f"http://{name}:{port}"}
                reply = await http.request(method, path, data=data, headers=headers)
                if name == "evil.example":
                    assert reply.status_code == 400, (path, reply.status_code, reply.text)
                    assert reply.json()["detail"] == refusal(name)
                    assert "set-cookie" not in reply.headers
                elif path == "/login" and not app.login:  # the open demo has no login
                    assert reply.json()["detail"] == "No auth_callback defined"
                else:
                    assert reply.status_code == 200, (path, reply.status_code, reply.text)
