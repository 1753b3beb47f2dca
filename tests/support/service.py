"""Processes a test session starts: output kept in a log, readiness awaited as a log line, and
always stopped by PID (the whole process group, since vLLM and Chainlit spawn children)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    def __init__(self, name: str, cmd: list[str], ready: str, log_dir: Path,
                 env: dict[str, str] | None = None, cwd: str | None = None) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._ready_re = re.compile(ready)
        self._ready = threading.Event()
        self._ended = threading.Event()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     env=env, cwd=cwd, start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        with open(self.log_path, "ab") as log:
            for line in self.proc.stdout:  # type: ignore[union-attr]
                log.write(line)
                log.flush()
                if not self._ready.is_set() and self._ready_re.search(line.decode(errors="replace")):
                    self._ready.set()
        self._ended.set()
        self._ready.set()  # wake a waiter: the process ended, ready or not

    def wait_ready(self, timeout: float, port: int | None = None) -> None:
        """Until the ready line is printed, and then until `port` takes connections: Chainlit
        prints its line during startup, ~10 ms before uvicorn binds (no line follows it)."""
        deadline = time.monotonic() + timeout
        if not self._ready.wait(timeout) or self._ended.is_set():
            raise RuntimeError(f"{self.name} did not become ready; last output:\n{self.tail()}")
        while port is not None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"{self.name} never listened on {port}:\n{self.tail()}") from None
                time.sleep(0.01)

    def wait_exit(self, timeout: float) -> int:
        return self.proc.wait(timeout)

    def tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def output(self) -> str:
        self._ended.wait(10) if self.proc.poll() is not None else None
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def signal(self, sig: signal.Signals) -> None:
        os.kill(self.pid, sig)

    def stop(self, grace_s: float = 60.0) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGTERM)
                self.proc.wait(grace_s)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self._reader.join(10)
