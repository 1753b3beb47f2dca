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

`HostGuard` sits in front of that: a request addressed to a host name the app is not served
under is answered 400. The origin check alone cannot stop DNS rebinding: a page on
evil.example whose name is made to resolve to 127.0.0.1 sends `Host: evil.example:PORT` and
`Origin: http://evil.example:PORT`, which match, so it is the app's "own" page (measured on the
unguarded app: a socket.io session opened, /project/settings answered 200). The browser sets
Host from the page's address and no page can change it, so answering only the names the app is
served under (as Starlette's TrustedHostMiddleware, Jupyter and Vite do) closes that door.
"""

from __future__ import annotations

import ipaddress
import json
import socket

from fastapi import FastAPI
from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from glm1m.settings import Settings

ANY = "*"


def allowed_origins(settings: Settings) -> tuple[str, ...]:
    return tuple(o.strip().rstrip("/").lower() for o in settings.allowed_origins.split(",")
                 if o.strip())


# The names every machine gives itself; a page elsewhere cannot make its own address one of them.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
# A --host that listens on every address names no host: users reach it by the machine's names.
WILDCARD_HOSTS = ("", "0.0.0.0", "::")


def allowed_hosts(settings: Settings, served_host: str) -> tuple[str, ...]:
    """The host names the app answers under: loopback's, the one it listens on (a wildcard
    address: this machine's own name), and GLM1M_ALLOWED_HOSTS."""
    own = socket.gethostname() if served_host.strip("[]") in WILDCARD_HOSTS else served_host
    added = (h.strip() for h in settings.allowed_hosts.split(","))
    return tuple(dict.fromkeys(host_name(h) for h in (*LOOPBACK_NAMES, own, *added) if h.strip()))


def install(app: FastAPI, settings: Settings, served_host: str = "127.0.0.1") -> None:
    """Put the guards in front of the app (the host check first), and give Chainlit's CORS
    middleware the origin list; `served_host` is the address the app listens on (`chainlit run
    --host`). Call before the app serves its first request."""
    allowed = allowed_origins(settings)
    for middleware in app.user_middleware:
        if middleware.cls is CORSMiddleware:
            middleware.kwargs["allow_origins"] = list(allowed)
    app.add_middleware(OriginGuard, allowed=allowed)
    app.add_middleware(HostGuard, allowed=allowed_hosts(settings, served_host))  # outermost


def host_name(host: str) -> str:
    """The name in a Host header or a setting, without its port, brackets or final dot:
    "[::1]:8001" -> "::1", "Localhost.:8001" -> "localhost"."""
    host = host.strip().lower()
    if host.startswith("["):  # an IPv6 literal, bracketed because of the port after it
        return host[1:].split("]")[0]
    if host.count(":") == 1:
        host = host.split(":")[0]
    return host.rstrip(".")


def is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostGuard:
    def __init__(self, app: ASGIApp, allowed: tuple[str, ...]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            name = host_name(Headers(scope=scope).get("host", ""))
            if not self.accepts(name):
                await refuse_host(scope, send, name)
                return
        await self.app(scope, receive, send)

    def accepts(self, name: str) -> bool:
        # An IP address and *.localhost cannot be rebound: no one's DNS answers for them, so a page
        # addressed by one is at that address (Vite lets both through for the same reason).
        if not name:
            return False
        return (name in self.allowed or ANY in self.allowed or is_address(name)
                or name.endswith(".localhost")
                or any(a.startswith(".") and (name.endswith(a) or name == a[1:]) for a in self.allowed))


def own_origin(scope: Scope, headers: Headers) -> str:
    """The origin the request was addressed to: its scheme (as uvicorn's proxy-header handling
    sets it) and its Host, or the X-Forwarded-Host a reverse proxy put in front of it. A page
    cannot set either header on a request the guard lets through: browsers forbid Host, and a
    custom header makes a cross-origin request ask first (a preflight, which carries Origin). A
    page made same-origin by DNS rebinding could send X-Forwarded-Host, but HostGuard has
    refused it already: its Host names the page's own host."""
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


async def refuse_host(scope: Scope, send: Send, name: str) -> None:
    sentence = (f"This app is not served under the host name {name}; if it should answer "
                f"there, add {name} to GLM1M_ALLOWED_HOSTS." if name else
                "This request names no host (its Host header is missing); the app answers only "
                "requests addressed to the names it is served under.")
    body = json.dumps({"detail": sentence}).encode()
    start = {"status": 400, "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]}
    if scope["type"] == "http":
        await send({"type": "http.response.start", **start})
        await send({"type": "http.response.body", "body": body})
    elif "websocket.http.response" in scope.get("extensions", {}):
        # uvicorn answers the handshake with this response, the sentence included.
        await send({"type": "websocket.http.response.start", **start})
        await send({"type": "websocket.http.response.body", "body": body})
    else:  # closing before accepting answers the handshake with 403
        await send({"type": "websocket.close", "code": 1008})
