"""The stack the app benchmarks measure through: the vLLM demo server and the Chainlit app on free
loopback ports, started the way `glm1m up` starts them, logs in the run's folder, both stopped by
PID on the way out (also when the measurement fails)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from glm1m.cli import up as stack
from glm1m.server import launch, process
from glm1m.settings import Settings
from tests.support.service import free_port


@contextmanager
def demo_stack(folder: Path, api_key: str, **env: str) -> Iterator[str]:
    """Yield the app's URL once the server and the app answer. The app's data lives in
    `folder`/data, its metrics port is off, and `env` (GLM1M_ settings) is set in this process
    before Settings is read, so the server, the app and the benchmark all see it."""
    os.environ.update(GLM1M_DATA_DIR=str(folder / "data"), GLM1M_METRICS_PORT="0", **env)
    settings = Settings()
    options = launch.resolve(launch.ServeOptions(demo=True, port=free_port(), max_model_len=8192,
                                                 api_key=api_key), settings)
    server = launch.start(options, settings, log_path=str(folder / "vllm.log"))
    ui = None
    try:
        launch.wait_ready(server, options, str(folder / "vllm.log"))
        port = free_port()
        ui = stack.start_ui(options, "127.0.0.1", port, settings, str(folder / "chainlit.log"))
        url = f"http://127.0.0.1:{port}"
        stack.wait_ui(ui, url, str(folder / "chainlit.log"))
        yield url
    finally:
        for child in (ui, server):
            if child is not None:
                process.stop(child)
