"""One run of a job at a time: two tabs, a double submit or two terminals on the same output would
share one checkpoint and one output file (work done twice, rows interleaved, then a missing file)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from glm1m.errors import JobAlreadyRunning


@contextmanager
def job_lock(output: Path, name: str) -> Iterator[None]:
    """Hold the job of `output` for the duration; JobAlreadyRunning (with what to do) when another
    run holds it, in this process or another. The lock ends with the process, a crash included."""
    path = output.with_name(output.name + ".lock")
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # per open file: a second open conflicts too
    except BlockingIOError:
        os.close(fd)
        raise JobAlreadyRunning(key="job_running", name=name) from None
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
