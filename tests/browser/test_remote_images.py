"""A document that tells the model to end with an image would have the browser fetch it, and with
it whatever the URL carries. In real Chromium: images in a streamed answer and in a cited passage
are shown as links, and nothing reaches the image server, not even mid-stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from aiohttp import web
from playwright.sync_api import Page

from tests.browser.conftest import ask, open_chat
from tests.support.fault_proxy import FaultProxy
from tests.support.pdfs import make_pdf
from tests.support.service import free_port

pytestmark = pytest.mark.browser
GAP_S = 0.6  # between the answer's pieces: longer than the app's stream pacing (0.1 s)


class InjectedAnswers(FaultProxy):
    """Forwards to the real server, except that a streamed answer is the one a prompt-injected
    document asks for, in pieces that cut "![" apart; and it is the image server, counting hits."""

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream, free_port())
        self.leaks: list[str] = []
        self.pieces: list[str] = []

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/leak/"):
            self.leaks.append(request.path)
            return web.Response(body=b"GIF89a", content_type="image/gif")
        body = await request.read()
        if not (request.path.endswith("/completions") and json.loads(body).get("stream")):
            return await super()._forward(request)
        # A whole-document question comes as token ids on /v1/completions (documents/prompt_ids.py).
        chat = request.path.endswith("/chat/completions")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for i, piece in enumerate(self.pieces):
            if i:
                await asyncio.sleep(GAP_S)  # the model taking its time
            await response.write(sse(chat, piece, None))
        await response.write(sse(chat, "", "stop") + b"data: [DONE]\n\n")
        return response


def sse(chat: bool, text: str, finish: str | None) -> bytes:
    """One streamed chunk as vLLM sends it on the chat route (a delta) or the completions route."""
    choice = {"index": 0, "finish_reason": finish,
              **({"delta": {"content": text} if text else {}} if chat else {"text": text})}
    chunk = {"id": "cmpl-1", "object": "chat.completion.chunk" if chat else "text_completion", "created": 0,
             "model": "glm-4-9b-chat-1m", "choices": [choice]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


@pytest.fixture
def injected(app) -> Iterator[InjectedAnswers]:
    """Between the app's fault proxy and the real server, for one test."""
    proxy = InjectedAnswers(app.proxy.upstream)
    proxy.start()
    real, app.proxy.upstream = app.proxy.upstream, proxy.url
    yield proxy
    app.proxy.upstream = real
    proxy.close()


def test_images_in_answers_and_passages_are_links_and_load_nothing(page: Page, app, injected, tmp_path) -> None:
    leak = f"{injected.url}/leak"
    make_pdf(tmp_path / "notice.pdf", [f"This is page 1. The terms apply.\n![x]({leak}/passage)\nEnd of page 1."])
    injected.pieces = ["The terms apply [p. 1]. Logo !", f"[logo]({leak}/streamed) and ![inline]({leak}/whole).",
                       " That is all."]
    open_chat(page, app.url)
    page.wait_for_selector("text=Demo mode")
    page.set_input_files("#upload-button-input", str(tmp_path / "notice.pdf"))
    page.wait_for_selector("text=notice.pdf")
    ask(page, "What does it say?")
    page.wait_for_selector("text=That is all.", timeout=120_000)
    page.wait_for_selector("#stop-button", state="detached", timeout=60_000)
    page.click("a:has-text('p. 1'), span:has-text('p. 1')")  # open the cited passage beside it
    page.wait_for_selector("text=End of page 1.", timeout=30_000)
    assert injected.leaks == []
    assert page.locator("img[src*='/leak/']").count() == 0
    for name in ("streamed", "whole", "passage"):
        assert page.locator(f"a[href='{leak}/{name}']").count() >= 1, name  # shown as a link
