"""`glm1m router`'s front: vllm-router behind it on a loopback port, and every request passed on
as it came, except that a chat or completion without a session header gets one.

Why it exists (measured with two demo servers, tests/integration/test_router_plain_clients.py):
vllm-router 0.1.17 keys a chat on a header only, and a plain OpenAI client (the openai SDK, Open
WebUI, LibreChat) sends none, so all of its documents went to one server; its cache_aware policy
reads the messages but gives every new document to the first server unless others are in flight.
No policy spreads a plain client's documents sent one at a time and keeps each one's follow-ups
where it was read. With the key glm1m's own client sends (glm1m.affinity: a hash of the prompt's
opening) added here, sticky_least_loaded does both: a new document goes to the server holding the
fewest keys, its follow-ups to the server that read it. A request that names a session itself
(any header vllm-router keys on) is passed on untouched, so glm1m's client and a client that
keys its own conversations keep their keys.

Only a keyless POST to a chat or completion route is parsed (json.loads of the body: a chat of 3.8
million characters, 7.8 MB as JSON, took 26 ms, a prompt of a million token ids 128 ms, on a 2-core
EPYC; glm1m's own client sends its key and is not parsed); everything else, and every answer, is
relayed as bytes and streamed as it comes. A caller that goes away mid-answer closes the request to
the router, which closes it to vLLM, which stops the generation.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Sequence

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from glm1m.affinity import SESSION_HEADER, key_of_messages, key_of_prompt
from glm1m.server import process

KEYED_PATHS = ("/v1/chat/completions", "/v1/completions")
# The headers vllm-router 0.1.17 keys a request on, in its order (server/router.py): one present
# means the caller chose its key.
SESSION_HEADERS = frozenset({b"x-session-id", b"x-user-id", b"x-tenant-id", b"x-correlation-id",
                             b"x-request-id", b"x-trace-id"})
# Hop-by-hop headers and the ones the relay sets again for the bytes it sends.
NOT_RELAYED = frozenset({"host", "content-length", "connection", "keep-alive", "transfer-encoding",
                         "upgrade", "proxy-connection"})
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
STOP_GRACE_S = 5  # open streams get this long after SIGTERM (a stopped router takes no new work)


def session_key(body: bytes) -> str | None:
    """The key glm1m's client would have sent for this request's prompt, or None for a body that
    is not a single chat or completion (then the router decides as it would without the front)."""
    try:
        request = json.loads(body)
    except ValueError:
        return None
    if not isinstance(request, dict):
        return None
    messages = request.get("messages")
    if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
        return key_of_messages(messages)
    return key_of_prompt(request.get("prompt"))


def forwarded_headers(request: Request, body: bytes) -> list[tuple[bytes, bytes]]:
    headers = [(k, v) for k, v in request.headers.raw if k.decode("latin-1") not in NOT_RELAYED]
    if (request.method == "POST" and request.url.path in KEYED_PATHS
            and not any(k in SESSION_HEADERS for k, _ in headers)):
        key = session_key(body)
        if key is not None:
            headers.append((SESSION_HEADER.lower().encode(), key.encode()))
    return headers


def front(upstream: str) -> Starlette:
    client = httpx.AsyncClient(base_url=upstream, timeout=None,
                               limits=httpx.Limits(max_connections=None, max_keepalive_connections=64))

    async def relay(request: Request) -> Response:
        body = await request.body()
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        sent = client.build_request(request.method, target, content=body,
                                    headers=forwarded_headers(request, body))
        try:
            reply = await client.send(sent, stream=True)
        except httpx.HTTPError as error:
            return PlainTextResponse(f"glm1m router: vllm-router did not answer ({error!r})\n",
                                     status_code=502)
        headers = {k: v for k, v in reply.headers.items() if k.lower() not in NOT_RELAYED}
        return StreamingResponse(_bytes(reply), status_code=reply.status_code, headers=headers,
                                 background=BackgroundTask(reply.aclose))

    @contextlib.asynccontextmanager
    async def closed(_app: Starlette) -> AsyncIterator[None]:
        yield
        await client.aclose()

    return Starlette(routes=[Route("/{path:path}", relay, methods=METHODS)], lifespan=closed)


async def _bytes(reply: httpx.Response) -> AsyncIterator[bytes]:
    try:
        async for chunk in reply.aiter_raw():
            yield chunk
    finally:
        await reply.aclose()  # the caller left mid-answer: the router and vLLM are told at once


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m glm1m.server.router_front --host H --port P --upstream URL -- ROUTER COMMAND`:
    start the router (its log goes where this process's output goes), serve the front until
    SIGTERM, then stop the router."""
    parser = argparse.ArgumentParser(prog="glm1m.server.router_front")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="where the router listens")
    parser.add_argument("router", nargs=argparse.REMAINDER, help="-- and the router's command")
    args = parser.parse_args(argv)
    command = args.router[1:] if args.router[:1] == ["--"] else args.router
    router = process.start(command)
    try:
        uvicorn.run(front(args.upstream), host=args.host, port=args.port, log_level="warning",
                    access_log=False, timeout_graceful_shutdown=STOP_GRACE_S)
    finally:
        process.stop(router)
    return 0


if __name__ == "__main__":
    sys.exit(main())
