"""Files written whole or not at all: written beside the target (mkstemp: mode 0600), then moved
into place, so a reader or a crash never sees half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _temp_with(path: Path, body: bytes) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def write_whole(path: Path, body: bytes) -> None:
    """Replace `path` with `body`."""
    tmp = _temp_with(path, body)
    try:
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_once(path: Path, body: bytes) -> None:
    """Create `path` with `body` unless it exists. link() fails when another process got there
    first; then the file keeps that process's content."""
    tmp = _temp_with(path, body)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
