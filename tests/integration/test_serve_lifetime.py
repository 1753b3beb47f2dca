"""`glm1m serve` with a demo server of its own, ended the ways a person's session ends: killed
outright (SIGKILL, as the OOM killer does) or hung up on (SIGHUP, a closed terminal). Nothing of
vLLM outlives it, and the port is free again. A start vLLM refuses says vLLM's own error line."""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from glm1m.server import process
from tests.conftest import ROOT, app_env
from tests.integration.test_serve import serve, stop, vllm_group
from tests.support.service import Service, free_port

pytestmark = pytest.mark.server
VLLM_EXIT_S = 60  # vLLM's API server stops its engine and workers on SIGTERM in a few seconds


def still_running(exits: dict[int, int], timeout_s: float) -> list[int]:
    """The pids of `exits` (pidfd -> pid) that have not exited within timeout_s, all awaited at once."""
    deadline = time.monotonic() + timeout_s
    waiting = set(exits)
    while waiting and (left := deadline - time.monotonic()) > 0:
        waiting -= set(select.select(list(waiting), [], [], left)[0])
    return sorted(exits[fd] for fd in waiting)


def test_sigkill_of_glm1m_serve_ends_every_vllm_process_and_frees_the_port(tmp_path: Path) -> None:
    with serve(tmp_path) as (service, root):
        group = vllm_group(service.pid)
        assert any(t.startswith("VLLM::EngineCore") for t in group.values())  # its children too
        exits = {os.pidfd_open(pid): pid for pid in group}  # readable once that process has exited
        try:
            service.signal(signal.SIGKILL)
            left = still_running(exits, VLLM_EXIT_S)
        finally:
            for fd in exits:
                os.close(fd)
        assert left == [], f"outlived glm1m serve: {[group[pid] for pid in left]}"
        process.require_free_port("127.0.0.1", int(root.rsplit(":", 1)[1]), "the next server")


def test_sighup_stops_glm1m_serve_and_its_vllm_cleanly(tmp_path: Path) -> None:
    with serve(tmp_path) as (service, _):
        stop(service, signal.SIGHUP)


def test_a_start_vllm_refuses_says_vllms_error_line_and_where_the_log_is(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "data"
    service = Service("serve-bad-flag", [sys.executable, "-m", "glm1m.cli", "serve", "--demo", "--port",
                                         str(port), "--", "--dtype", "bogus"],
                      ready=r"$^", log_dir=tmp_path, cwd=str(ROOT), env=app_env(GLM1M_DATA_DIR=str(data)))
    try:
        assert service.wait_exit(300) == 1
        said = service.output().splitlines()
    finally:
        service.stop()
    log = data / "logs" / f"vllm-{port}.log"
    assert "usage: vllm serve [model_tag] [options]" in said  # vLLM's own output is shown as before
    assert said[-1].startswith("glm1m: the model server exited with code 2 before it was ready: "
                               "the last error in its log: ")
    assert "error: argument --dtype: invalid choice: 'bogus'" in said[-1]
    assert said[-1].endswith(f"; see {log}.")
    assert "invalid choice: 'bogus'" in log.read_text()
