"""The fault proxy as an identity "translator": every streamed chat completion still goes to the
real vLLM server, which reads the prompt and generates its answer, but the answer the client gets
is the request's last user message (for a document's section: the section itself). A document
translated through it must come back equal to its input, element for element: the structure
round trip of issue 37. The glossary's request (structured JSON) passes as the server wrote it.
A section sent as token ids (/v1/completions) is read back as chat through the server's
/detokenize (FaultProxy._as_chat).
"""

from __future__ import annotations

import json

import aiohttp
from aiohttp import web

from glm1m.doc_translation.prompt import GLOSSARY_ASK
from tests.support.fault_proxy import FaultProxy


class IdentityProxy(FaultProxy):
    async def _relay(self, request: web.Request, response: web.StreamResponse,
                     upstream: aiohttp.ClientResponse, body: bytes, cut_after: int | None,
                     epoch: int) -> None:
        sent = await self._as_chat(request, json.loads(body) if body else {})
        messages = sent.get("messages") or []
        asked = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), None)
        if (not request.path.endswith("completions") or not sent.get("stream")
                or upstream.status != 200 or not isinstance(asked, str)
                or asked.startswith(GLOSSARY_ASK.split(",")[0])):
            await super()._relay(request, response, upstream, body, cut_after, epoch)
            return
        received = b"".join([chunk async for chunk in upstream.content.iter_any()])  # all generated
        self._journal(sent, received, epoch)
        await response.write(answered(received, asked))
        await response.write_eof()


def answered(stream: bytes, text: str) -> bytes:
    """The server's event stream with its words replaced by `text`: the first piece carrying
    content holds all of it, the others none; a stream cut at max_tokens ends as finished."""
    out, given = [], False
    for event in stream.decode("utf-8").split("\n\n"):
        if not event.startswith("data: ") or event == "data: [DONE]":
            out.append(event)
            continue
        chunk = json.loads(event[len("data: "):])
        for choice in chunk.get("choices", ()):
            delta = choice.get("delta", {})
            if "content" in delta and delta["content"] is not None:
                delta["content"], given = ("" if given else text), True
            if "text" in choice:  # /v1/completions: the piece is the choice's text
                choice["text"], given = ("" if given else text), True
            if choice.get("finish_reason") == "length":
                choice["finish_reason"] = "stop"
        out.append("data: " + json.dumps(chunk, ensure_ascii=False))
    return "\n\n".join(out).encode("utf-8")
