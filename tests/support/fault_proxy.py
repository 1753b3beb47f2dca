"""An HTTP fault injector in front of the real vLLM server (not a stand-in for it).

It forwards every request to the real server and streams the real answer back, unless told to
fail: answer the next N requests with 429/503, cut a streamed answer after some bytes, or stop
listening altogether (connection refused, as when the server is down).

A completion asked as token ids (/v1/completions, documents/prompt_ids.py) is journaled with the
chat messages those ids are, as the server's /detokenize gives them back: a test reads what was
asked the same way whichever route it took.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading

import aiohttp
from aiohttp import web

HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection", "keep-alive"}


class FaultProxy:
    def __init__(self, upstream: str, port: int) -> None:
        self.upstream = upstream.rstrip("/")
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self._fail_next: list[int] = []
        self._fail_matching: dict[str, int] = {}
        # (request body, response body) of every completion that went through to the server
        self.journal: list[tuple[dict, bytes]] = []
        self._watchers: list[tuple[int, threading.Event]] = []
        self._cut_after: int | None = None
        self._hold_s: float | None = None
        self._hold_all_s: float | None = None
        self._hold_tokenize_s: float | None = None
        self.holding = threading.Event()  # set while a held stream waits (cleared by reset)
        # set when a client closed its connection before its answer was all written (cleared by reset)
        self.client_left = threading.Event()
        self._lock = threading.Lock()
        self.requests_seen = 0
        # Forwarding tasks not yet finished, and how many times they were dropped: a test that
        # ends while the app still streams an answer must not leave it running into the next
        # test's journal (a CI run found a document answer from an earlier test there).
        self._in_flight: set[asyncio.Task] = set()
        self._forwarding: dict[asyncio.Task, str] = {}  # what each is, for a failing test to say
        self._epoch = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._site: web.TCPSite | None = None

    # --- control, from the test's thread ---
    def start(self) -> None:
        if not self._thread.is_alive():
            self._thread.start()
        self._call(self._start())

    @property
    def listening(self) -> bool:
        return self._site is not None

    def stop_listening(self) -> None:
        self._call(self._stop())

    def close(self) -> None:
        self._call(self._stop())
        self._call(self._session.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def fail_next(self, count: int, status: int = 503) -> None:
        with self._lock:
            self._fail_next = [status] * count

    def fail_matching(self, text: str, status: int = 503) -> None:
        """Answer `status` to every request whose body contains `text`, however often retried."""
        with self._lock:
            self._fail_matching[text] = status

    def completions_reached(self, count: int) -> threading.Event:
        """An event set once `count` completions have gone through to the server."""
        event = threading.Event()
        with self._lock:
            self._watchers.append((count, event))
            if len(self.journal) >= count:
                event.set()
        return event

    def answers_by_prompt(self) -> dict[str, list[str]]:
        """User message -> the answers the real server gave to it (whole or streamed)."""
        answers: dict[str, list[str]] = {}
        for index, (request, body) in enumerate(list(self.journal)):
            text = request["messages"][-1]["content"]
            answer = (self.streamed_text(index) if request.get("stream")
                      else json.loads(body)["choices"][0]["message"]["content"])
            answers.setdefault(text, []).append(answer)
        return answers

    def cut_next_stream_after(self, nbytes: int) -> None:
        with self._lock:
            self._cut_after = nbytes

    def hold_next_stream(self, seconds: float) -> None:
        """The next completion's answer starts `seconds` late (headers at once, as vLLM sends
        them): what a user sees while a very long prompt is read before the first token."""
        with self._lock:
            self._hold_s = seconds

    def hold_next_tokenize(self, seconds: float) -> None:
        """The next /tokenize answers `seconds` late: a long count (a big set of documents)."""
        with self._lock:
            self._hold_tokenize_s = seconds

    def hold_every_completion(self, seconds: float) -> None:
        """Every completion's answer comes `seconds` late, until reset: a job whose requests are
        all in flight and none has finished."""
        with self._lock:
            self._hold_all_s = seconds

    def streamed_text(self, index: int = -1) -> str:
        """The text of a streamed completion (chat, or token ids) as the server sent it."""
        text = []
        for line in self.journal[index][1].decode().splitlines():
            if line.startswith("data: {"):
                for choice in json.loads(line[6:])["choices"]:
                    text.append((choice.get("delta") or {}).get("content") or choice.get("text") or "")
        return "".join(text)

    def reset(self) -> None:
        with self._lock:
            self._fail_next, self._cut_after, self._fail_matching = [], None, {}
            self._hold_s = self._hold_all_s = self._hold_tokenize_s = None
            self.holding.clear()
            self.client_left.clear()
            self.journal, self._watchers = [], []

    def drop_in_flight(self) -> None:
        """Cut every request still being forwarded, as a server restart would: the server stops
        generating for it, and it never reaches the journal."""
        with self._lock:
            self._epoch += 1
        self._call(self._cancel_in_flight())

    async def _cancel_in_flight(self) -> None:
        tasks = [task for task in self._in_flight if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _call(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(30)

    # --- the server, on the proxy's own loop ---
    async def _start(self) -> None:
        if not hasattr(self, "_session"):
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        # A short shutdown: stopping the proxy drops open streams at once, as a dying server does.
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        self._site = web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True)
        await self._site.start()

    async def _stop(self) -> None:
        if self._site is not None:
            await self._runner.cleanup()  # closes the listener and open connections
            self._site = None

    def _take_fault(self, path: str, body: bytes) -> tuple[int | None, int | None, float | None]:
        """Status faults hit the next requests of any kind; a cut hits the next completion."""
        with self._lock:
            self.requests_seen += 1
            status = self._fail_next.pop(0) if self._fail_next else None
            text = body.decode(errors="replace")
            for needle, code in self._fail_matching.items():
                if needle in text:
                    status = code
            cut = hold = None
            if status is None and path.endswith("completions"):
                cut, self._cut_after = self._cut_after, None
                hold, self._hold_s = self._hold_s or self._hold_all_s, None
            elif status is None and path.endswith("/tokenize") and self._hold_tokenize_s:
                hold, self._hold_tokenize_s = self._hold_tokenize_s, None
            return status, cut, hold

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        task = asyncio.current_task()
        assert task is not None
        self._in_flight.add(task)
        try:
            return await self._forward_now(request)
        finally:
            self._in_flight.discard(task)

    def in_flight(self) -> list[str]:
        """The requests being forwarded now (path, the last message's start, whether the client
        is still connected): what a test that finds the server busy reports."""
        return list(self._forwarding.values())

    async def _forward_now(self, request: web.Request) -> web.StreamResponse:
        with self._lock:
            epoch = self._epoch
        body = await request.read()
        task = asyncio.current_task()
        assert task is not None
        self._forwarding[task] = f"{request.path} {_last_message(body)!r}"
        task.add_done_callback(lambda done: self._forwarding.pop(done, None))
        status, cut_after, hold_s = self._take_fault(request.path, body)
        if status is not None:
            return web.json_response({"error": {"message": "injected fault", "code": status}},
                                     status=status, headers={"Retry-After": "0"})
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        async with self._session.request(request.method, self.upstream + request.rel_url.path_qs,
                                         headers=headers, data=body) as upstream:
            response = web.StreamResponse(status=upstream.status, headers={
                k: v for k, v in upstream.headers.items() if k.lower() not in HOP_HEADERS})
            await response.prepare(request)
            if hold_s and not await self._hold(request, hold_s):
                self.client_left.set()  # as vLLM does, a request whose client left is dropped
                return response
            try:
                await self._relay(request, response, upstream, body, cut_after, epoch)
            except ConnectionResetError:
                self.client_left.set()  # the client went away mid-answer
            return response

    async def _hold(self, request: web.Request, seconds: float) -> bool:
        """The simulated server still reads the prompt for `seconds`; False if the client closed
        its connection meanwhile (checked every 50 ms: aiohttp has no event for it)."""
        self.holding.set()
        deadline = self._loop.time() + seconds
        while self._loop.time() < deadline:
            if request.transport is None or request.transport.is_closing():
                return False
            await asyncio.sleep(min(0.05, deadline - self._loop.time()))
        return True

    async def _relay(self, request: web.Request, response: web.StreamResponse,
                     upstream: aiohttp.ClientResponse, body: bytes, cut_after: int | None,
                     epoch: int) -> None:
        # Each chunk goes out one chunk late, so the journal holds the whole answer before the
        # client reads its last piece ("data: [DONE]"): a test that reads the journal once its
        # stream has ended found it empty in a CI run.
        sent, received, pending = 0, [], None
        async for chunk in upstream.content.iter_any():
            if cut_after is not None and sent + len(chunk) > cut_after:
                if pending is not None:
                    await response.write(pending)
                request.transport.close()  # drop the connection mid-answer
                return
            if pending is not None:
                await response.write(pending)
            pending = chunk
            received.append(chunk)
            sent += len(chunk)
        if request.path.endswith("completions") and upstream.status == 200:
            self._journal(await self._as_chat(request, json.loads(body)), b"".join(received), epoch)
        if pending is not None:
            await response.write(pending)
        await response.write_eof()

    async def _as_chat(self, request: web.Request, body: dict) -> dict:
        """`body`, and when its prompt is token ids, the chat messages they render (GLM-4's template)."""
        if not isinstance(body.get("prompt"), list):
            return body
        # A connection of its own: after a held stream the pooled ones have sat idle past the
        # server's keep-alive and one was reset under this request ("Can not write request body").
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session, \
                session.post(self.upstream + "/detokenize", json={
                    "model": body.get("model"), "tokens": body["prompt"]},
                    headers={"Authorization": request.headers.get("Authorization", "")}) as reply:
            text = (await reply.json())["prompt"]
        return {**body, "messages": messages_of(text)}

    def _journal(self, request_body: dict, response_body: bytes, epoch: int) -> None:
        with self._lock:
            if epoch != self._epoch:
                return  # forwarded for a test that has ended
            self.journal.append((request_body, response_body))
            for count, event in self._watchers:
                if len(self.journal) >= count:
                    event.set()


def messages_of(text: str) -> list[dict[str, str]]:
    """The messages GLM-4's template rendered as `text` ("[gMASK]<sop><|system|>\n…<|user|>\n…
    <|assistant|>"), the empty turn the generation prompt opens left out."""
    parts = re.split(r"<\|(system|user|assistant|observation)\|>", text.removeprefix("[gMASK]<sop>"))
    turns = [{"role": role, "content": content.removeprefix("\n")}
             for role, content in zip(parts[1::2], parts[2::2], strict=True)]
    return turns[:-1] if turns and turns[-1] == {"role": "assistant", "content": ""} else turns


def _last_message(body: bytes) -> str:
    try:
        messages = json.loads(body).get("messages") or [{}]
        return str(messages[-1].get("content", ""))[:60]
    except (ValueError, AttributeError):
        return ""
