"""Every route the served vLLM registers needs the API key, except the health probes and /metrics
(server/middleware/glm1m_route_guard.py). vLLM's own key check covers /v1 only: /invocations ran
chat completions for anyone (vLLM issue #58144), /tokenize ran the tokenizer."""

from __future__ import annotations

import re

import httpx
import pytest

pytestmark = pytest.mark.server
OPEN = {"/health", "/ping", "/metrics"}  # what answers without the key, and why: the guard's module
# FastAPI's own pages, which /openapi.json does not list, and a path nothing serves.
UNLISTED = [("GET", "/openapi.json"), ("GET", "/docs"), ("GET", "/docs/oauth2-redirect"),
            ("GET", "/redoc"), ("GET", "/no-such-route")]
CHAT = {"model": "glm-4-9b-chat-1m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}


def served_routes(model_server) -> list[tuple[str, str]]:
    """(method, path) of every route the server documents, asked of the server itself."""
    spec = httpx.get(f"{model_server.root}/openapi.json", headers=model_server.headers, timeout=30)
    assert spec.status_code == 200
    return [(method.upper(), path) for path, operations in spec.json()["paths"].items()
            for method in operations]


def call(root: str, method: str, path: str, headers: dict[str, str] | None = None) -> httpx.Response:
    """The route with its method and the smallest body: path parameters filled, `{}` to post."""
    url = root + re.sub(r"\{[^}]+\}", "x", path)
    body = {} if method in ("POST", "PUT", "PATCH") else None
    return httpx.request(method, url, json=body, headers=headers, timeout=60)


def test_no_route_but_the_probes_and_metrics_answers_without_the_key(model_server) -> None:
    routes = served_routes(model_server)
    # The walk really covers the routes that run the model and the tokenizer outside /v1.
    assert {("POST", "/invocations"), ("POST", "/tokenize"), ("POST", "/detokenize"),
            ("POST", "/generative_scoring"), ("GET", "/version"), ("GET", "/load")} <= set(routes)
    answers = {(method, path): call(model_server.root, method, path).status_code
               for method, path in routes + UNLISTED}
    wrong = {route: status for route, status in answers.items()
             if status != (200 if route[1] in OPEN else 401)}
    assert wrong == {}


def test_a_wrong_key_opens_nothing_and_the_right_one_runs_the_model(model_server) -> None:
    wrong = {"Authorization": "Bearer not-the-key"}
    root = model_server.root
    for path, body in (("/invocations", CHAT), ("/tokenize", {"model": CHAT["model"], "prompt": "hi"})):
        assert httpx.post(f"{root}{path}", json=body, headers=wrong, timeout=60).status_code == 401
        assert httpx.post(f"{root}{path}", json=body, timeout=60).status_code == 401
    answer = httpx.post(f"{root}/invocations", json=CHAT, headers=model_server.headers, timeout=60)
    assert answer.status_code == 200 and answer.json()["choices"]
    counted = httpx.post(f"{root}/tokenize", headers=model_server.headers, timeout=60,
                         json={"model": CHAT["model"], "prompt": "hi"})
    assert counted.status_code == 200 and counted.json()["count"] > 0
