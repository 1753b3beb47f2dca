"""What `glm1m router` and `glm1m serve --replicas` would start, without starting it: the router's
flags, the replicas' ports and GPUs, and the key a request carries to pick its replica."""

from __future__ import annotations

import json

import httpx
import pytest
from pydantic import ValidationError

from glm1m.affinity import AFFINITY_CHARS, headers as affinity_headers
from glm1m.cli.main import build_parser
from glm1m.errors import PlanError, StartFailed
from glm1m.llm import ChatParams, LlmClient
from glm1m.server import replicas, router
from glm1m.server.launch import ServeOptions, vllm_env
from glm1m.settings import Settings


def flag(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


def test_the_router_outlasts_the_longest_wait_glm1m_allows_and_keeps_documents_on_one_replica() -> None:
    settings = Settings(first_token_timeout_s=3600, request_timeout_s=600)
    options = router.router_options(["http://a:8000/v1", "http://b:8000/"], settings, port=9000)
    cmd = router.router_command(options, "python")
    assert int(flag(cmd, "--request-timeout-secs")) >= 3600 + 600
    assert flag(cmd, "--policy") == "sticky_least_loaded"
    # A key is kept for a day unused, not the router's 2 hours: a document asked about the next
    # morning goes back to the server that read it.
    assert router.router_env()["VLLM_ROUTER_SLL_SESSION_EXPIRATION_IN_S"] == str(24 * 3600)
    assert cmd[cmd.index("--worker-urls") + 1:cmd.index("--worker-urls") + 3] == ["http://a:8000", "http://b:8000"]
    assert flag(cmd, "--prometheus-port") == "9003" and flag(cmd, "--prometheus-host") == "127.0.0.1"
    # The router is never handed the key: with it, it answered /tokenize for anyone.
    assert "--api-key" not in cmd


@pytest.mark.parametrize("backends", [[], ["a:8000"], ["http://a:8000", "http://a:8000/v1"]])
def test_backends_must_be_distinct_urls(backends: list[str]) -> None:
    with pytest.raises(StartFailed):
        router.router_options(backends, Settings())


def test_replicas_get_ports_of_their_own_and_the_router_the_usual_one() -> None:
    stack = replicas.plan_stack(ServeOptions(port=8000, demo=True, api_key="k"), 3, 1, 0, Settings())
    assert [s.port for s in stack.servers] == [8010, 8011, 8012]
    assert {s.host for s in stack.servers} == {"127.0.0.1"} and stack.router.port == 8000
    assert stack.router.backends == ("http://127.0.0.1:8010", "http://127.0.0.1:8011",
                                     "http://127.0.0.1:8012")
    assert [s.devices for s in stack.servers] == [None, None, None]


def test_each_replica_sees_its_own_group_of_gpus() -> None:
    stack = replicas.plan_stack(ServeOptions(gpu=True), 2, 2, 4, Settings())
    assert [s.devices for s in stack.servers] == ["0,1", "2,3"]
    assert vllm_env(stack.servers[1])["CUDA_VISIBLE_DEVICES"] == "2,3"
    with pytest.raises(PlanError, match="needs 6 GPUs"):
        replicas.plan_stack(ServeOptions(gpu=True), 3, 2, 4, Settings())
    with pytest.raises(PlanError):
        replicas.plan_stack(ServeOptions(), 1, 1, 0, Settings())


def test_a_documents_questions_share_a_replica_key_and_rows_do_not() -> None:
    document = "<document>" + "clause 7 applies. " * 400 + "</document>"
    assert len(document) > AFFINITY_CHARS
    first = affinity_headers([{"role": "system", "content": "s"},
                              {"role": "user", "content": document + "\n\nQuestion: page 1?"}])
    again = affinity_headers([{"role": "system", "content": "s"},
                              {"role": "user", "content": document + "\n\nQuestion: and 2?"}])
    rows = {affinity_headers([{"role": "user", "content": f"row {i}"}])["X-Session-ID"] for i in range(50)}
    assert first == again and len(rows) == 50


async def test_behind_a_router_the_client_tokenizes_on_a_server_and_names_the_document() -> None:
    seen: list[httpx.Request] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/tokenize":
            return httpx.Response(200, json={"count": 3})
        return httpx.Response(200, json={"id": "x", "object": "chat.completion", "created": 0,
                                         "model": "m", "choices": [{
                                             "index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": "ok"}}]})

    settings = Settings(base_url="http://router:8000/v1", tokenize_url="http://replica:8010/v1",
                        api_key="k")
    llm = LlmClient(settings, transport=httpx.MockTransport(reply))
    messages = [{"role": "user", "content": "a document " * 500}]
    try:
        assert await llm.count_text_tokens("hello") == 3
        assert await llm.complete(messages, ChatParams(0.0, 4)) == "ok"
    finally:
        await llm.aclose()
    tokenize, chat = seen
    assert str(tokenize.url) == "http://replica:8010/tokenize"
    assert tokenize.headers["authorization"] == "Bearer k"
    assert chat.url.host == "router"
    assert chat.headers["x-session-id"] == affinity_headers(messages)["X-Session-ID"]
    assert Settings(base_url="http://one:8000/v1").tokenize_root == "http://one:8000"


def test_the_commands_take_the_flags() -> None:
    args = build_parser().parse_args(["router", "--backend", "http://a:1", "--backend", "http://b:2"])
    assert args.backend == ["http://a:1", "http://b:2"] and args.port == 8000
    assert build_parser().parse_args(["serve", "--replicas", "2"]).replicas == 2
    assert build_parser().parse_args(["up", "--replicas", "3"]).replicas == 3


def test_a_policy_for_clients_without_the_header_is_a_setting_or_a_flag() -> None:
    assert Settings().router_policy == router.POLICY == "sticky_least_loaded"
    settings = Settings(router_policy="cache_aware")
    backends = ["http://a:8000", "http://b:8000"]
    assert flag(router.router_command(router.router_options(backends, settings), "python"),
                "--policy") == "cache_aware"
    # The flag wins over the setting; `serve --replicas` and `up --replicas` take the setting.
    options = router.router_options(backends, settings, policy="sticky_least_loaded")
    assert flag(router.router_command(options, "python"), "--policy") == "sticky_least_loaded"
    stack = replicas.plan_stack(ServeOptions(port=8000, demo=True, api_key="k"), 2, 1, 0, settings)
    assert stack.router.policy == "cache_aware"
    args = build_parser().parse_args(["router", "--backend", "http://a:1", "--policy", "cache_aware"])
    assert args.policy == "cache_aware"
    assert build_parser().parse_args(["router", "--backend", "http://a:1"]).policy is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["router", "--backend", "http://a:1", "--policy", "consistent_hash"])
    with pytest.raises(ValidationError):
        Settings(router_policy="consistent_hash")


def test_replicas_behind_the_prefix_policy_render_prompts_for_it() -> None:
    options = ServeOptions(port=8000, demo=True, api_key="k", extra_args=["--seed", "1"])
    stack = replicas.plan_stack(options, 2, 1, 0, Settings(router_policy="cache_aware"))
    assert [s.extra_args for s in stack.servers] == [["--seed", "1", router.SCALE_OUT_FLAG]] * 2
    assert options.extra_args == ["--seed", "1"]
    stack = replicas.plan_stack(options, 2, 1, 0, Settings())
    assert [s.extra_args for s in stack.servers] == [["--seed", "1"]] * 2


def test_the_prefix_policy_is_ready_only_once_every_server_renders(monkeypatch: pytest.MonkeyPatch) -> None:
    rendering = {"http://a:1": 200, "http://b:2": 403}  # vLLM without --enable-scale-out: 403

    def post(url: str, **_: object) -> httpx.Response:
        if url.endswith("/v1/completions"):
            return httpx.Response(200, json={"choices": [{"text": "x"}]})
        return httpx.Response(rendering[url.removesuffix("/v1/chat/completions/render")])

    monkeypatch.setattr(httpx, "post", post)
    options = router.router_options(list(rendering), Settings(), api_key="k", policy="cache_aware")
    with pytest.raises(StartFailed, match="http://b:2.*--enable-scale-out"):
        router.answers_through(options)
    rendering["http://b:2"] = 200
    assert router.answers_through(options)
    rendering["http://b:2"] = 403  # the default policy asks for no rendering
    assert router.answers_through(router.router_options(list(rendering), Settings(), api_key="k"))


def test_the_front_keys_a_plain_clients_chat_as_glm1m_keys_its_own() -> None:
    from glm1m.server.router_front import session_key

    document = "clause 7 applies. " * 400
    chat = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": document + "\n\nWho are the parties?"}]
    follow_up = chat + [{"role": "assistant", "content": "A and B."},
                        {"role": "user", "content": "And the term?"}]
    key = session_key(json.dumps({"model": "m", "messages": chat}).encode())
    assert key == affinity_headers(chat)["X-Session-ID"]  # one document, one server, whoever asks
    assert session_key(json.dumps({"messages": follow_up, "stream": True}).encode()) == key
    # OpenAI's content parts carry the same text.
    parts = [{"role": m["role"], "content": [{"type": "text", "text": m["content"]}]} for m in chat]
    assert session_key(json.dumps({"messages": parts}).encode()) == key
    other = [chat[0], {"role": "user", "content": "other " * 900}]
    assert session_key(json.dumps({"messages": other}).encode()) != key
    ids = list(range(5000))
    assert session_key(json.dumps({"prompt": ids}).encode()) == session_key(
        json.dumps({"prompt": ids + [1, 2, 3]}).encode())
    # Not a single chat or completion: the router decides as it would without the front.
    assert session_key(b"not json") is None and session_key(b"[1, 2]") is None
    assert session_key(json.dumps({"prompt": [[1, 2], [3]]}).encode()) is None
