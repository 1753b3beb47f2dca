"""The whole workbench on one machine: the model server, then the Chainlit UI in front of it."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx

from server import launch, process

UI_READY_TIMEOUT_S = 120.0


def ui_command(host: str, port: int) -> list[str]:
    return [sys.executable, "-m", "chainlit", "run", "chainlit_app/app.py",
            "--host", host, "--port", str(port), "--headless"]


def ui_env(server: launch.ServeOptions) -> dict[str, str]:
    env = dict(os.environ)
    env["GLM1M_BASE_URL"] = f"{server.base_url}/v1"
    env["GLM1M_DEMO"] = "true" if server.demo else "false"
    if server.api_key:
        env["GLM1M_API_KEY"] = server.api_key
    return env


def start_ui(server: launch.ServeOptions, host: str, port: int, log_path: str) -> subprocess.Popen:
    process.require_free_port(host, port, "the UI")
    # Chainlit reads .chainlit/config.toml from, and writes .files/ into, its working directory.
    return process.start(ui_command(host, port), env=ui_env(server), cwd=str(launch.ROOT),
                         log_path=log_path)


def ui_answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def wait_ui(proc: subprocess.Popen, url: str, log_path: str) -> None:
    process.wait_until(lambda: ui_answers(url), proc, "the Chainlit UI", UI_READY_TIMEOUT_S, log_path)
