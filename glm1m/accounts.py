"""Password accounts for the login page, and the secret Chainlit signs its login cookies with.

Users come from two places; a name in both is the environment's:
- {data_dir}/users.json (GLM1M_USERS_FILE), written by `glm1m users add NAME`, mode 0600:
  {"users": {"alice": {"n": 32768, "r": 8, "p": 1, "salt": "<hex>", "hash": "<hex>"}}}
- GLM1M_USERS, for deployments without a writable disk: comma-separated
  `name=scrypt:N:R:P:SALT:HASH` (salt and hash in hex), as `glm1m users add NAME --print` prints it,
  e.g. GLM1M_USERS='alice=scrypt:32768:8:1:0f3a...:9bc4...,bob=scrypt:...'.

Hashes are hashlib.scrypt with a random 16-byte salt; the parameters are stored with each hash so
they can be raised later without invalidating old passwords.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path

from glm1m.errors import AccountError
from glm1m.files import write_whole
from glm1m.keys import SecretFileError, read_or_create
from glm1m.settings import Settings

# 32 MiB and tens of milliseconds per guess: the interactive-login choice of the scrypt paper.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1
SALT_BYTES, HASH_BYTES = 16, 32
NAME = re.compile(r"[\w.@+-]{1,64}")
MIN_PASSWORD, MAX_PASSWORD = 8, 1024
SECRET_ENV = "CHAINLIT_AUTH_SECRET"
SECRET_FILE = "auth_secret"



@dataclass(frozen=True)
class PasswordHash:
    n: int
    r: int
    p: int
    salt: str  # hex
    hash: str  # hex

    @classmethod
    def of(cls, password: str) -> PasswordHash:
        salt = secrets.token_bytes(SALT_BYTES)
        return cls(SCRYPT_N, SCRYPT_R, SCRYPT_P, salt.hex(),
                   _scrypt(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P, HASH_BYTES).hex())

    def matches(self, password: str) -> bool:
        expected = bytes.fromhex(self.hash)
        salt = bytes.fromhex(self.salt)
        candidate = _scrypt(password, salt, self.n, self.r, self.p, len(expected))
        return hmac.compare_digest(candidate, expected)

    def encode(self) -> str:
        """The one-line form GLM1M_USERS takes."""
        return f"scrypt:{self.n}:{self.r}:{self.p}:{self.salt}:{self.hash}"

    @classmethod
    def decode(cls, text: str) -> PasswordHash:
        scheme, n, r, p, salt, digest = text.split(":")
        if scheme != "scrypt":
            raise ValueError(f"unknown scheme {scheme!r}")
        return cls.checked(int(n), int(r), int(p), salt, digest)

    @classmethod
    def checked(cls, n: int, r: int, p: int, salt: str, hash: str) -> PasswordHash:
        """The fields as stored, refused (ValueError) unless scrypt can take them."""
        bytes.fromhex(salt), bytes.fromhex(hash)  # ValueError unless both are hex
        # The bound keeps scrypt's memory (128·n·r·p bytes) under 512 MiB and its maxmem legal.
        if n < 2 or n & (n - 1) or r < 1 or p < 1 or n * r * p > 2**22 or not hash:
            raise ValueError("bad scrypt parameters")
        return cls(n, r, p, salt, hash)


# Verifying an unknown name costs as much as a known one, so timing does not tell which names exist.
_DECOY = PasswordHash(SCRYPT_N, SCRYPT_R, SCRYPT_P, "00" * SALT_BYTES, "00" * HASH_BYTES)


class Accounts:
    """Reads the users file on every check, so `glm1m users add` works without a restart."""

    def __init__(self, path: Path, env_users: str = "") -> None:
        self.path = path
        self.env = _parse_env(env_users)

    @classmethod
    def from_settings(cls, settings: Settings) -> Accounts:
        """Raises AccountError when GLM1M_USERS is malformed."""
        return cls(settings.users_path, settings.users)

    def verify(self, name: str, password: str) -> bool:
        """True when name exists and password is its password. Takes tens of milliseconds."""
        stored = self.users().get(name)
        too_long = len(password) > MAX_PASSWORD  # no stored password is; hash a decoy, not it
        against = _DECOY if stored is None or too_long else stored
        matches = against.matches(password[:MAX_PASSWORD])
        return stored is not None and not too_long and matches

    def add_user(self, name: str, password: str) -> bool:
        """Add name, or set its password if it exists; True when it is new. Raises AccountError."""
        check_name(name)
        check_password(password)
        if name in self.env:
            raise AccountError(f"{name} is defined by GLM1M_USERS; change the password there.")
        users = self._read_file()
        created = name not in users
        users[name] = PasswordHash.of(password)
        self._write_file(users)
        return created

    def users(self) -> dict[str, PasswordHash]:
        return {**self._read_file(), **self.env}

    def require_users(self) -> None:
        """Raise AccountError when nobody could log in (call at startup when auth is on)."""
        if not self.users():
            raise AccountError(f"Login is on but no user exists: run `glm1m users add NAME` "
                               f"(writes {self.path}) or set GLM1M_USERS, or set GLM1M_AUTH=false.")

    def _read_file(self) -> dict[str, PasswordHash]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return {name: PasswordHash.checked(**fields) for name, fields in raw["users"].items()}
        except FileNotFoundError:
            return {}
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise AccountError(f"{self.path} is not a glm1m users file ({error!r}); fix or "
                               f"remove it and add the users again with `glm1m users add NAME`."
                               ) from error

    def _write_file(self, users: dict[str, PasswordHash]) -> None:
        body = json.dumps({"users": {n: asdict(h) for n, h in sorted(users.items())}}, indent=2)
        write_whole(self.path, (body + "\n").encode("utf-8"))  # 0600; a crash keeps the old file


def check_name(name: str) -> None:
    if not NAME.fullmatch(name):
        raise AccountError(f"User name {name!r} is not accepted: use 1 to 64 letters, digits or "
                           f"the characters . _ @ + -.")


def check_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(f"The password must be {MIN_PASSWORD} to {MAX_PASSWORD} characters "
                           f"long.")


def ensure_auth_secret(data_dir: Path) -> str:
    """CHAINLIT_AUTH_SECRET from the environment, else the one kept in {data_dir}/auth_secret,
    made on first run (mode 0600) so logins survive restarts. The caller puts it in os.environ,
    where Chainlit reads it."""
    if secret := os.environ.get(SECRET_ENV):
        return secret
    try:
        return read_or_create(data_dir / SECRET_FILE, nbytes=48)
    except SecretFileError as error:
        raise AccountError(f"{error} (Everyone then logs in anew.)") from error


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
    # OpenSSL's default memory cap is exactly 32 MiB, just under what n=2**15, r=8 needs.
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=dklen,
                          maxmem=128 * n * r * p + (1 << 20))


def _parse_env(value: str) -> dict[str, PasswordHash]:
    users: dict[str, PasswordHash] = {}
    for entry in filter(None, (e.strip() for e in value.split(","))):
        name, _, encoded = entry.partition("=")
        try:
            check_name(name)
            users[name] = PasswordHash.decode(encoded)
        except (ValueError, AccountError) as error:
            raise AccountError(f"GLM1M_USERS entry {name!r} is not name=scrypt:N:R:P:SALT:HASH "
                               f"({error}); make one with `glm1m users add NAME --print`."
                               ) from error
    return users
