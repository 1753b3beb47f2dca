"""Child processes that are started, waited for, and always stopped, even when their starter is
killed outright."""

from __future__ import annotations

import ctypes
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import BinaryIO

from glm1m.catalog import Said, said
from glm1m.errors import StartFailed
from glm1m.server import exit_reason

STOP_GRACE_S = 30.0
FOLLOW_POLL_S = 0.2  # how soon a line vLLM logs shows on the terminal of `glm1m serve`
CHUNK = 64 * 1024
PR_SET_PDEATHSIG = 1  # linux/prctl.h: a signal for this process when the thread that forked it ends


def start(cmd: list[str], env: dict[str, str] | None = None, cwd: str | None = None,
          log_path: str | None = None, cpus: set[int] | None = None,
          echo: bool = False) -> subprocess.Popen:
    """Start `cmd` in its own process group, so stopping it also stops what it spawned
    (vLLM runs its engine in a child process). With `log_path`, its output is appended there
    after a line that marks this start (exit_reason reads the run from it); with `echo` too, the
    log is also followed onto this process's stdout, as `glm1m serve` shows vLLM's log. The child
    writes the file itself, not through a pipe to this process: the log is whole when the child
    has exited, and a starter that dies takes nothing of the child's output with it.

    The child gets SIGTERM when the thread that calls this ends, so a starter killed by SIGKILL,
    the OOM killer or a closed terminal leaves no server holding the port and the GPUs: the
    signal vLLM's API server answers by stopping its engine and workers, which do not notice a
    leader killed outright (measured: a SIGKILLed leader left EngineCore and its worker running).
    Linux ties the signal to the forking *thread*: call this from the main thread, or one that
    lives as long as the child should."""
    out = open_log(log_path, cmd) if log_path else None
    offset = out.tell() if out is not None else 0  # where this run's output begins
    try:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, start_new_session=True, stdout=out,
                                stderr=subprocess.STDOUT if out else None,
                                preexec_fn=child_setup(os.getpid(), cpus))
    finally:
        if out is not None:
            out.close()  # the child holds its own copy
    if log_path and echo:
        threading.Thread(target=_follow, args=(proc, log_path, offset), daemon=True,
                         name=f"log of {proc.pid}").start()
    return proc


def open_log(log_path: str, cmd: list[str]) -> BinaryIO:
    out = open(log_path, "ab")  # noqa: SIM115 - closed by start
    out.write(f"{exit_reason.START_MARK}{shlex.join(cmd)}\n".encode())
    out.flush()
    return out


def child_setup(parent: int, cpus: set[int] | None) -> Callable[[], None]:
    """What the child runs between fork and exec: the parent-death signal (see `start`), then
    the CPU cores it may use. Built here, so nothing is looked up or imported in the child."""
    prctl = ctypes.CDLL(None).prctl

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # kept across exec
        if os.getppid() != parent:  # the starter died before prctl: nothing would signal us
            os.kill(os.getpid(), signal.SIGTERM)
        if cpus:
            os.sched_setaffinity(0, cpus)

    return preexec


def _follow(proc: subprocess.Popen, log_path: str, offset: int) -> None:
    """`tail -f` of the child's log from `offset` onto stdout until the child has exited; ends
    quietly when the terminal is gone (a closed ssh session)."""
    terminal = sys.stdout.buffer
    try:
        with open(log_path, "rb") as log:
            log.seek(offset)
            while True:
                exited = proc.poll() is not None  # before reading: what it wrote last is read
                chunk = log.read(CHUNK)
                if chunk:
                    terminal.write(chunk)
                    terminal.flush()
                elif exited:
                    return
                else:
                    time.sleep(FOLLOW_POLL_S)
    except (OSError, ValueError):
        return


def stop(proc: subprocess.Popen, grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM the process `start` started (the group's leader) and wait up to `grace_s` for it
    to exit, then SIGKILL whatever is left in its group.

    Only the leader is signalled first, as vLLM expects: its API server (or `vllm serve`'s parent
    of several) stops its API servers, engine core and workers itself, in order, where a signal to
    the group reached them all at once and the engine began its own teardown under a live API
    server. Chainlit's uvicorn, the leader of its group, gets the same SIGTERM as before. vLLM
    0.26 and 0.32 may still log an EngineDeadError traceback on a clean stop: a race in their own
    shutdown (vLLM issue #48745), measured here on 5 of 20 stops this way and 5 of 14 the old way."""
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(proc, signal.SIGKILL)  # stragglers in the group, even if the leader exited
    proc.wait()


def terminate(proc: subprocess.Popen) -> None:
    """SIGTERM to the leader only, without waiting: `stop` then waits for several at once."""
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass


def _signal_group(proc: subprocess.Popen, sig: signal.Signals) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def free_loopback_port() -> int:
    """A port nothing listens on now, for a process this one starts next (the kernel's choice)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def require_free_port(host: str, port: int, what: str | Said) -> None:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise StartFailed(key="port_in_use", port=port, host=host, what=what,
                              reason=error.strerror) from error


def wait_until(ready: Callable[[], bool], proc: subprocess.Popen, what: str | Said, timeout_s: float,
               log_path: str | None = None) -> None:
    """Poll `ready` until it is true; fail early if `proc` exits (a readiness probe, not a test).
    Either failure says why, from the log: the error it ends with, a process killed by a signal."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise StartFailed.of(exit_reason.exited_said(what, proc.returncode, log_path,
                                                         said("when_before_ready")))
        if ready():
            return
        time.sleep(0.5)
    raise StartFailed.of(exit_reason.not_ready_said(what, timeout_s, log_path))
