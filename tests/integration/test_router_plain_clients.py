"""A client that sends no X-Session-ID (the openai SDK as Open WebUI or a script uses it) behind
`glm1m router --policy cache_aware`, in front of the two real demo servers of test_router.py:
which replica read each document and which one answered its follow-up, from each server's own
/metrics."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Iterator

import pytest
from openai import AsyncOpenAI

from glm1m.server.launch import SERVED_NAME
from tests.conftest import ROOT, app_env
from tests.support.router_stack import ROUTER_START_TIMEOUT_S, RouterStack, router_stack
from tests.support.service import Service, free_port

__all__ = ["router_stack"]  # the session fixture, imported so pytest finds it here
pytestmark = pytest.mark.server
SUCCESS, HITS = "vllm:request_success_total", "vllm:prefix_cache_hits_total"
SYSTEM = "You are a helpful assistant."  # one system prompt for every chat, as such clients send


@pytest.fixture(scope="module")
def cache_aware(router_stack: RouterStack) -> Iterator[str]:
    """A second `glm1m router`, with the policy for header-less clients, before the same replicas."""
    port = free_port()
    service = Service("vllm-router-cache-aware",
                      [sys.executable, "-m", "glm1m.cli", "router", "--policy", "cache_aware",
                       *[a for r in router_stack.replicas for a in ("--backend", r.root)],
                       "--port", str(port), "--metrics-port", str(free_port())],
                      ready=r"router ready at", log_dir=router_stack.log_dir, cwd=str(ROOT),
                      env=app_env(GLM1M_DATA_DIR=str(router_stack.data_dir)))
    try:
        service.wait_ready(ROUTER_START_TIMEOUT_S)
        assert "X-Session-ID" not in service.output()  # no advice to send a header it does not need
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        service.stop()


def document(name: str) -> str:
    """~4,700 tokens of words, different for each name (and from test_router.py's documents)."""
    rng = random.Random(f"plain-{name}")
    return " ".join(f"{rng.choice(('clause', 'party', 'term', 'notice'))}{rng.randint(0, 999)}"
                    for _ in range(700))


async def ask(client: AsyncOpenAI, messages: list[dict[str, str]]) -> str:
    reply = await client.chat.completions.create(model=SERVED_NAME, messages=messages,  # type: ignore[arg-type]
                                                 max_tokens=2, temperature=0)
    return reply.choices[0].message.content or "-"


def opening(name: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{document(name)}\n\nWhat does it say?"}]


def delta(before: list[float], after: list[float]) -> list[float]:
    return [b - a for a, b in zip(before, after, strict=True)]


async def test_a_plain_clients_documents_spread_and_each_follow_up_finds_its_reader(
        router_stack: RouterStack, cache_aware: str) -> None:
    client = AsyncOpenAI(base_url=cache_aware, api_key=router_stack.key, max_retries=0, timeout=300)
    names = [f"together-{d}" for d in range(4)]
    try:
        served = router_stack.counts(SUCCESS)
        # Four users' documents at once: each new one goes to the replica with fewer in flight.
        answers = await asyncio.gather(*(ask(client, opening(n)) for n in names))
        read = delta(served, router_stack.counts(SUCCESS))
        assert sum(read) == 4 and min(read) >= 1, read  # measured: 2 / 2
        followed = []
        for name, answer in zip(names, answers, strict=True):
            messages = opening(name) + [{"role": "assistant", "content": answer},
                                        {"role": "user", "content": "And the last clause?"}]
            hits, served = router_stack.counts(HITS), router_stack.counts(SUCCESS)
            await ask(client, messages)
            replica = delta(served, router_stack.counts(SUCCESS)).index(1.0)
            gained = delta(hits, router_stack.counts(HITS))
            # The document was in that replica's prefix cache and not in the other's: it read it.
            assert gained[replica] > 4000 and gained[1 - replica] == 0.0, gained
            followed.append(replica)
        assert sorted(followed) == sorted(i for i, n in enumerate(read) for _ in range(int(n)))
    finally:
        await client.close()


async def test_one_at_a_time_a_plain_clients_documents_all_go_to_one_replica(
        router_stack: RouterStack, cache_aware: str) -> None:
    """What no policy of vllm-router 0.1.17 does (server/router.py): with nothing in flight,
    cache_aware gives a new document to the first replica every time. A release that spreads them
    breaks this test: then the policy can do both and become the default."""
    client = AsyncOpenAI(base_url=cache_aware, api_key=router_stack.key, max_retries=0, timeout=300)
    try:
        served = router_stack.counts(SUCCESS)
        for d in range(4):
            await ask(client, opening(f"one-by-one-{d}"))
        assert sorted(delta(served, router_stack.counts(SUCCESS))) == [0.0, 4.0]
    finally:
        await client.close()
