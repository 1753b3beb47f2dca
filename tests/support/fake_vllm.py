"""A stand-in for vLLM's HTTP routes, for the real LlmClient over an httpx.MockTransport: /v1/models,
/tokenize (text or chat messages, rendered as server/glm4_chat_template.jinja renders a plain
chat), and streamed /v1/chat/completions and /v1/completions. Its tokenizer makes one id of each
character (so a prompt's ids begin with its every prefix's, as a real BPE's do between words);
`merge` makes one id of a string wherever it appears, to break that. Every request is recorded.

    fake = FakeVllm(reply="It says so [p. 2].")
    llm = LlmClient(settings, transport=fake.transport())
    ... fake.paths() == ["/tokenize", "/v1/completions"]; fake.bodies("/v1/completions")[0]["prompt"]
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx

MERGED = 0x110000  # past every code point: the one id a merged string becomes


def render(messages: list[dict[str, str]], generation: bool) -> str:
    """GLM-4's template for a chat without tools: [gMASK]<sop>, then <|role|>\\ncontent for each
    message with content, then <|assistant|> when the generation prompt is asked."""
    turns = "".join(f"<|{m['role']}|>\n{m['content']}" for m in messages if m["content"])
    return "[gMASK]<sop>" + turns + ("<|assistant|>" if generation else "")


@dataclass
class FakeVllm:
    reply: str = "OK"
    model: str = "glm-4-9b-chat-1m"
    context: int = 100_000
    finish: str = "stop"  # the last chunk's finish_reason ("length": cut at max_tokens)
    merge: str | None = None
    gives_ids: bool = True  # False: /tokenize answers the count alone (a proxy that trims it)
    piece_chars: int = 4
    requests: list[tuple[str, dict]] = field(default_factory=list)
    streams_closed: int = 0  # streamed answers whose HTTP stream the client closed (ended or stopped)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def bodies(self, path: str) -> list[dict]:
        return [body for seen, body in self.requests if seen == path]

    def ids(self, text: str) -> list[int]:
        if self.merge and self.merge in text:
            head, tail = text.split(self.merge, 1)
            return self.ids(head) + [MERGED] + self.ids(tail)
        return [ord(c) for c in text]

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else {}
        self.requests.append((request.url.path, body))
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": self.model, "max_model_len": self.context}]})
        if request.url.path == "/tokenize":
            text = (render(body["messages"], body.get("add_generation_prompt", True))
                    if "messages" in body else body["prompt"])
            tokens = self.ids(text)
            reply = {"count": len(tokens), "max_model_len": self.context, "tokens": tokens}
            return httpx.Response(200, json=reply if self.gives_ids else {"count": len(tokens)})
        if request.url.path in ("/v1/completions", "/v1/chat/completions"):
            return httpx.Response(200, stream=Streamed(self, self.sse(request.url.path == "/v1/completions")),
                                  headers={"content-type": "text/event-stream"})
        return httpx.Response(404, json={"error": {"message": "not found"}})

    def sse(self, completion: bool) -> list[str]:
        pieces = [self.reply[i:i + self.piece_chars] for i in range(0, len(self.reply), self.piece_chars)]
        events = []
        for index, piece in enumerate(pieces):
            finish = self.finish if index == len(pieces) - 1 else None
            choice = ({"index": 0, "text": piece, "finish_reason": finish, "logprobs": None} if completion
                      else {"index": 0, "delta": {"content": piece}, "finish_reason": finish})
            events.append({"id": "x", "object": "text_completion" if completion else "chat.completion.chunk",
                           "created": 0, "model": self.model, "choices": [choice]})
        return [f"data: {json.dumps(event)}\n\n" for event in events] + ["data: [DONE]\n\n"]


class Streamed(httpx.AsyncByteStream):
    """A streamed answer, one event at a time (a turn of the loop between), that counts its close."""

    def __init__(self, fake: FakeVllm, events: list[str]) -> None:
        self.fake, self.events = fake, events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self.events:
            await asyncio.sleep(0)
            yield event.encode()

    async def aclose(self) -> None:
        self.fake.streams_closed += 1
