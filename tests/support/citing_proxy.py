"""The fault proxy, able to ask the real server to cite: the next streamed completion (chat, or a
document's question as token ids on /v1/completions) goes to vLLM with `structured_outputs:
{"regex": ...}`, so the demo model (random weights, which never writes a citation by itself)
generates an answer that ends with a given citation. The answer is still the real server's; only
its shape is constrained, as vLLM constrains any client's output."""

from __future__ import annotations

import json

from aiohttp import web

from tests.support.fault_proxy import FaultProxy


class CitingProxy(FaultProxy):
    def __init__(self, upstream: str, port: int) -> None:
        super().__init__(upstream, port)
        self._cite: str | None = None

    def cite_next(self, citation: str) -> None:
        """The next streamed answer: a few random words, then `citation` (e.g. "[§ 2]")."""
        with self._lock:
            self._cite = citation

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        with self._lock:
            cite = self._cite
            streamed = request.path.endswith("completions") and b'"stream": true' in body.replace(
                b'"stream":true', b'"stream": true')
            if cite is not None and streamed:
                self._cite = None
        if cite is not None and streamed:
            sent = json.loads(body)
            words = r"[a-z]{2,8}( [a-z]{2,8}){1,4}"
            sent["structured_outputs"] = {"regex": f"{words} {escape(cite)}\\."}
            # aiohttp keeps the body it read; the forwarding reads it again from there.
            request._read_bytes = json.dumps(sent).encode()  # noqa: SLF001
        return await super()._forward(request)


def escape(text: str) -> str:
    import re

    return re.escape(text)
