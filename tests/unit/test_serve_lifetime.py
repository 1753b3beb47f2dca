"""A server glm1m starts ends with the glm1m that started it, however that one ends; a start that
finds glm1m's own vLLM on its port says which process holds it and how to stop it."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from glm1m.errors import StartFailed
from glm1m.server import launch

ROOT = Path(__file__).resolve().parents[2]
# A starter that glm1m serve stands in for: process.start, then wait to be killed.
STARTER = """
import sys, signal
from glm1m.server import process
child = process.start([sys.executable, "-c", sys.argv[1], sys.argv[2]])
print(child.pid, flush=True)
signal.pause()
"""
# The child: says it is ready, and what signal ended it.
CHILD = """
import signal, sys
def ended(number, frame):
    open(sys.argv[1], "w").write(signal.Signals(number).name)
    sys.exit(0)
signal.signal(signal.SIGTERM, ended)
print("ready", flush=True)
signal.pause()
"""
# A listener whose command line is glm1m's `vllm serve`, as /proc shows it.
FAKE_VLLM = """
import signal, socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
signal.pause()
"""
VLLM_ARGS = ["-m", "vllm.entrypoints.cli.main", "serve", "/models/glm", "--served-model-name",
             launch.SERVED_NAME]
# Starts FAKE_VLLM in a session of its own, says its pid and port, and then exits or waits.
PARENT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], *sys.argv[3:]], stdout=subprocess.PIPE,
                         start_new_session=True)
print(child.pid, child.stdout.readline().decode().strip(), flush=True)
if sys.argv[2] == "stay":
    sys.stdin.read()
"""


def exits_within(pid: int, timeout_s: float) -> bool:
    fd = os.pidfd_open(pid)  # readable once the process has exited
    try:
        return bool(select.select([fd], [], [], timeout_s)[0])
    finally:
        os.close(fd)


def test_killing_the_starter_outright_sends_its_server_sigterm(tmp_path: Path) -> None:
    """SIGTERM, not SIGKILL: vLLM's API server answers it by stopping its engine and workers."""
    ended = tmp_path / "ended"
    starter = subprocess.Popen([sys.executable, "-c", STARTER, CHILD, str(ended)], cwd=ROOT,
                               stdout=subprocess.PIPE, text=True, start_new_session=True)
    child = None
    try:
        said = {starter.stdout.readline().strip() for _ in range(2)}  # type: ignore[union-attr]
        child = int(next(line for line in said if line.isdigit()))
        assert "ready" in said
        starter.kill()  # as the OOM killer, or `kill -9`, ends glm1m serve
        assert exits_within(child, 10), "the server outlived the glm1m that started it"
        assert ended.read_text() == "SIGTERM"
    finally:
        starter.kill()
        starter.wait()
        starter.stdout.close()  # type: ignore[union-attr]
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child, signal.SIGKILL)


@contextlib.contextmanager
def fake_vllm(parent: str) -> Iterator[tuple[int, int, subprocess.Popen]]:
    """(pid, port) of a listening fake vLLM; parent "stay" keeps its starter alive as glm1m.cli."""
    starter = subprocess.Popen([sys.executable, "-c", PARENT, FAKE_VLLM, parent, *VLLM_ARGS],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pid = 0
    try:
        pid, port = map(int, starter.stdout.readline().split())  # type: ignore[union-attr]
        yield pid, port, starter
    finally:
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        starter.stdin.close()  # type: ignore[union-attr]
        starter.wait()
        starter.stdout.close()  # type: ignore[union-attr]


def test_a_vllm_left_by_an_earlier_glm1m_is_named_with_the_kill_that_stops_it() -> None:
    with fake_vllm("exit") as (pid, port, _):
        with pytest.raises(StartFailed) as refused:
            launch.require_port("127.0.0.1", port, "the model server")
    assert str(refused.value) == (
        f"port {port} on 127.0.0.1 is held by a vLLM that glm1m serve started earlier (PID {pid}, "
        f"serving glm-4-9b-chat-1m), so the model server cannot start there; stop it with "
        f"`kill {pid}` (it stops its engine and workers itself) or choose another port.")


def test_a_vllm_of_a_running_glm1m_names_that_glm1m(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch, "is_glm1m", lambda cmd: "stay" in cmd)  # the parent stands in
    with fake_vllm("stay") as (_, port, starter):
        with pytest.raises(StartFailed, match=rf"held by the vLLM of a glm1m that is still running "
                                              rf"\(PID {starter.pid}\).*`kill {starter.pid}`"):
            launch.require_port("127.0.0.1", port, "the model server")


def test_a_port_held_by_something_else_keeps_the_plain_sentence() -> None:
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(StartFailed, match=r"already in use.*Stop whatever holds it"):
            launch.require_port("127.0.0.1", port, "the model server")
