"""Secrets glm1m makes for itself and keeps in the data dir: created once, readable by the owner
only, the same on every start (so a restarted UI still reaches the server, and sessions survive)."""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from chainlit_app.errors import UserFacingError
from chainlit_app.settings import Settings

SERVER_KEY_FILE = "server-api-key"


class SecretFileError(UserFacingError):
    """A secret file exists but holds nothing."""


def read_or_create(path: Path, nbytes: int = 32) -> str:
    """The secret stored at `path`; a new random one (mode 0600) the first time. Written whole
    to a temporary file and then linked into place: link() fails if another process got there
    first, and then both use the winner's secret; nobody ever reads a half-written one."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret-")  # mkstemp: mode 0600
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(secrets.token_urlsafe(nbytes))
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    secret = path.read_text(encoding="ascii").strip()
    if not secret:
        raise SecretFileError(f"{path} is empty; delete it and start again.")
    return secret


def server_api_key(settings: Settings) -> str:
    """GLM1M_API_KEY when set, else the key `glm1m serve` keeps in the data dir."""
    return settings.api_key or read_or_create(settings.data_dir / SERVER_KEY_FILE)
