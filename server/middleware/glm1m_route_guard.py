"""ASGI middleware that vLLM loads by `--middleware glm1m_route_guard.RouteGuard`: every route
needs the API key but the health probes and /metrics.

vLLM's own --api-key check guards only paths under /v1, /v2, /inference and /cohere (0.26.0 and
0.32.0 alike), so the served model ran for anyone on /invocations (SageMaker's chat and completion
route, vLLM issue #58144) and /generative_scoring, the tokenizer on /tokenize and /detokenize, and
/scale_elastic_ep, /load, /version and more answered without the key. This guard refuses by default:
a route vLLM adds in a later version is guarded without a change here.

It runs in vLLM's interpreter, where glm1m is not installed: standard library and plain ASGI only.
The key comes from VLLM_API_KEY, the variable `glm1m serve` hands the key to vLLM in.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Open without the key, and none of them runs the model or the tokenizer: /health (liveness probes
# of load balancers, systemd, glm1m's own readiness check), /ping (SageMaker's name for it, the same
# handler) and /metrics (Prometheus scrapes it without a key: server/monitoring/prometheus.yml).
# /version and /load have no keyless user, so they need the key like the rest.
OPEN_PATHS = frozenset({"/health", "/ping", "/metrics"})
KEY_VARIABLE = "VLLM_API_KEY"
REFUSAL = b'{"error": "Unauthorized"}'  # the body vLLM's own check sends on /v1


class RouteGuard:
    """vLLM adds it with app.add_middleware(RouteGuard), outside its own middleware, so it sees
    every request of every route, mounted ones (/metrics) included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        key = os.environb.get(KEY_VARIABLE.encode(), b"")  # bytes, as the header's are
        # Without a key nothing can match, so every guarded route refuses: fail closed.
        self._key_digest = hashlib.sha256(key).digest() if key else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._lets_through(scope):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # refused before the handshake: 403
        else:
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                (b"content-length", str(len(REFUSAL)).encode())]})
            await send({"type": "http.response.body", "body": REFUSAL})

    def _lets_through(self, scope: Scope) -> bool:
        # OPTIONS is CORS preflight, answered before any route runs (vLLM's own check lets it by too).
        if scope.get("method") == "OPTIONS":
            return True
        path = scope["path"].removeprefix(scope.get("root_path", ""))
        return path in OPEN_PATHS or self._has_key(scope)

    def _has_key(self, scope: Scope) -> bool:
        if self._key_digest is None:
            return False
        value = next((v for k, v in scope.get("headers", []) if k == b"authorization"), b"")
        scheme, _, token = value.partition(b" ")  # the header's bytes: a UTF-8 key matches as sent
        # Digests of equal length, compared in constant time: neither the key nor its length leaks.
        offered = hashlib.sha256(token).digest()
        return scheme.lower() == b"bearer" and hmac.compare_digest(offered, self._key_digest)
