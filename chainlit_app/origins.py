"""Which web pages may use the app: its own, and those GLM1M_ALLOWED_ORIGINS names.

Chainlit 2.12 lets any page in: its CORS middleware takes `allow_origins` from config.toml (["*"]
by default, echoed back with credentials), and its socket.io server is made with
`cors_allowed_origins=[]`, which turns engine.io's origin check off. With login off (the demo
default), any page a user visits could then open the socket and drive the app; with login on, a
page on another port of the same host is "same-site" and gets the cookie.

`OriginGuard` sits in front of everything (HTTP routes and the socket, websocket and polling
alike): a request that carries an `Origin` header naming another page is answered 403 with a
sentence. Browsers send Origin on every cross-origin request, on same-origin POSTs and on every
websocket handshake; requests without one (curl, scripts, top-level navigation) pass, as they
cannot come from a page in the user's browser with the user's cookies.
"""

from __future__ import annotations

import json

from fastapi import FastAPI
from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from glm1m.settings import Settings

ANY = "*"


def allowed_origins(settings: Settings) -> tuple[str, ...]:
    return tuple(o.strip().rstrip("/").lower() for o in settings.allowed_origins.split(",")
                 if o.strip())


def install(app: FastAPI, settings: Settings) -> None:
    """Put the guard in front of the app, and give Chainlit's CORS middleware the same list
    (call before the app serves its first request)."""
    allowed = allowed_origins(settings)
    for middleware in app.user_middleware:
        if middleware.cls is CORSMiddleware:
            middleware.kwargs["allow_origins"] = list(allowed)
    app.add_middleware(OriginGuard, allowed=allowed)


def own_origin(scope: Scope, headers: Headers) -> str:
    """The origin the request was addressed to: its scheme (as uvicorn's proxy-header handling
    sets it) and its Host, or the X-Forwarded-Host a reverse proxy put in front of it. A page
    cannot set either header on a request the guard lets through: browsers forbid Host, and a
    custom header makes a cross-origin request ask first (a preflight, which carries Origin)."""
    scheme = {"ws": "http", "wss": "https"}.get(scope["scheme"], scope["scheme"])
    host = headers.get("x-forwarded-host", "").split(",")[0].strip() or headers.get("host", "")
    return f"{scheme}://{host}".lower()


class OriginGuard:
    def __init__(self, app: ASGIApp, allowed: tuple[str, ...]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            if origin is not None and not self.accepts(origin.rstrip("/").lower(), scope, headers):
                await refuse(scope, send, origin)
                return
        await self.app(scope, receive, send)

    def accepts(self, origin: str, scope: Scope, headers: Headers) -> bool:
        # "null" (a sandboxed frame, a file:// page) is never the app's own.
        return origin == own_origin(scope, headers) or origin in self.allowed or ANY in self.allowed


async def refuse(scope: Scope, send: Send, origin: str) -> None:
    if scope["type"] == "websocket":  # closing before accepting answers the handshake with 403
        await send({"type": "websocket.close", "code": 1008})
        return
    sentence = (f"A page at {origin} may not use this app; if it should, add its origin to "
                f"GLM1M_ALLOWED_ORIGINS.")
    body = json.dumps({"detail": sentence}).encode()
    await send({"type": "http.response.start", "status": 403,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
