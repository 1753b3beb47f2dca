"""Secrets glm1m makes for itself and keeps in the data dir: created once, readable by the owner
only, the same on every start (so a restarted UI still reaches the server, and sessions survive)."""

from __future__ import annotations

import secrets
from pathlib import Path

from glm1m.catalog import said
from glm1m.errors import SecretFileError
from glm1m.files import write_once
from glm1m.settings import Settings

SERVER_KEY_FILE = "server-api-key"



def read_or_create(path: Path, nbytes: int = 32) -> str:
    """The secret stored at `path`; a new random one (mode 0600) the first time. Two processes
    starting at once both end up with the one that was written first."""
    try:
        if not path.exists():
            write_once(path, secrets.token_urlsafe(nbytes).encode("ascii"))
        secret = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else said("secret_not_key")
        raise SecretFileError(key="secret_unusable", path=path, reason=reason) from error
    if not secret:
        raise SecretFileError(key="secret_empty", path=path)
    return secret


def server_api_key(settings: Settings, create: bool = True) -> str:
    """GLM1M_API_KEY when set, else the key `glm1m serve` keeps in the data dir. Only the server
    side creates it (create=True); a client of a server glm1m did not start finds none: ""."""
    path = settings.data_dir / SERVER_KEY_FILE
    if settings.api_key or (not create and not path.exists()):
        return settings.api_key
    return read_or_create(path)
