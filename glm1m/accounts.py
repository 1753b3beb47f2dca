"""Password accounts for the login page, and the secret Chainlit signs its login cookies with.

Users come from two places; a name in both is the environment's:
- {data_dir}/users.json (GLM1M_USERS_FILE), written by `glm1m users add NAME`, mode 0600:
  {"users": {"alice": {"n": 32768, "r": 8, "p": 1, "salt": "<hex>", "hash": "<hex>"}}}
- GLM1M_USERS, for deployments without a writable disk: comma-separated
  `name=scrypt:N:R:P:SALT:HASH` (salt and hash in hex), as `glm1m users add NAME --print` prints it,
  e.g. GLM1M_USERS='alice=scrypt:32768:8:1:0f3a...:9bc4...,bob=scrypt:...'.

Hashes are hashlib.scrypt with a random 16-byte salt; the parameters are stored with each hash so
they can be raised later without invalidating old passwords.

A login is bound to the stored hash it was checked against (`credential`, a digest of its salt and
hash): a new password draws a new salt, so removing a user or changing a password ends every
session that began before, without a list of sessions to keep. `FailedLogins` counts wrong
passwords per name and per address and refuses more before any hash is computed.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import math
import os
import re
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from glm1m.catalog import said
from glm1m.errors import AccountError
from glm1m.files import write_whole
from glm1m.keys import SecretFileError, read_or_create
from glm1m.settings import Settings

# 32 MiB and tens of milliseconds per guess: the interactive-login choice of the scrypt paper.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1
SALT_BYTES, HASH_BYTES = 16, 32
MAX_NAME = 64
NAME = re.compile(rf"[\w.@+-]{{1,{MAX_NAME}}}")
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

    @property
    def credential(self) -> str:
        """What a login carries to say which password it was checked against. The salt is never
        shown anywhere, so this digest tells nothing about the password."""
        return hashlib.sha256(b"glm1m-login\0" + bytes.fromhex(self.salt) + bytes.fromhex(self.hash)
                              ).hexdigest()[:32]

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
        return self.log_in(name, password) is not None

    def log_in(self, name: str, password: str) -> str | None:
        """The credential of name's password when password is it, else None. Takes tens of
        milliseconds, whether or not the name exists."""
        stored = self.users().get(name)
        too_long = len(password) > MAX_PASSWORD  # no stored password is; hash a decoy, not it
        against = _DECOY if stored is None or too_long else stored
        matches = against.matches(password[:MAX_PASSWORD])
        return stored.credential if stored is not None and not too_long and matches else None

    def credential(self, name: str) -> str | None:
        """The credential a login of name must carry to be still valid; None once name is gone."""
        stored = self.users().get(name)
        return stored.credential if stored is not None else None

    def add_user(self, name: str, password: str) -> bool:
        """Add name, or set its password if it exists; True when it is new. Raises AccountError."""
        check_name(name)
        check_password(password)
        if name in self.env:
            raise AccountError(key="user_in_env_password", name=name)
        users = self._read_file()
        created = name not in users
        users[name] = PasswordHash.of(password)
        self._write_file(users)
        return created

    def remove_user(self, name: str) -> None:
        """Remove name from the users file; its sessions end with it. Raises AccountError."""
        if name in self.env:
            raise AccountError(key="user_in_env_remove", name=name)
        users = self._read_file()
        if name not in users:
            raise AccountError(key="user_unknown", name=repr(name), path=self.path)
        del users[name]
        self._write_file(users)

    def users(self) -> dict[str, PasswordHash]:
        return {**self._read_file(), **self.env}

    def require_users(self) -> None:
        """Raise AccountError when nobody could log in (call at startup when auth is on)."""
        if not self.users():
            raise AccountError(key="users_none", path=self.path)

    def _read_file(self) -> dict[str, PasswordHash]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return {name: PasswordHash.checked(**fields) for name, fields in raw["users"].items()}
        except FileNotFoundError:
            return {}
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise AccountError(key="users_file_bad", path=self.path, error=repr(error)) from error

    def _write_file(self, users: dict[str, PasswordHash]) -> None:
        body = json.dumps({"users": {n: asdict(h) for n, h in sorted(users.items())}}, indent=2)
        write_whole(self.path, (body + "\n").encode("utf-8"))  # 0600; a crash keeps the old file


class FailedLogins:
    """Login attempts that failed in the last `window_s` seconds, per name and per address (IPv6
    by /64, what one host usually holds). `begin` refuses an attempt once either has too many;
    called before the password is hashed, a flood of guesses costs a dictionary look-up each, not
    tens of milliseconds of scrypt and 32 MiB."""

    MAX_KEYS = 100_000  # names and addresses remembered at most; the oldest go first

    def __init__(self, per_name: int, per_address: int, window_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_name, self.per_address, self.window_s = per_name, per_address, window_s
        self.clock = clock
        self._times: dict[tuple[str, str], deque[float]] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> FailedLogins:
        return cls(settings.login_failures_per_name, settings.login_failures_per_address,
                   settings.login_window_s)

    def begin(self, name: str, address: str) -> float:
        """Count an attempt as failed until `succeeded` says otherwise (so concurrent guesses
        cannot all pass the limit at once); returns its time. Raises AccountError, saying how
        long to wait, while the address or the name is locked out."""
        now = self.clock()
        keys = (("address", _network(address)), ("name", name[:MAX_NAME]))
        for (kind, value), limit in zip(keys, (self.per_address, self.per_name), strict=True):
            recent = self._recent((kind, value), now)
            if len(recent) >= limit:
                minutes = max(1, math.ceil((recent[-limit] + self.window_s - now) / 60))
                whose = said("logins_from_address") if kind == "address" else said(
                    "logins_for_name", name=value)
                raise AccountError(key="logins_locked", whose=whose, count=minutes)
        for key in keys:
            self._times[key] = self._times.pop(key, deque())  # last in order: the newest
            self._times[key].append(now)
        while len(self._times) > self.MAX_KEYS:
            del self._times[next(iter(self._times))]
        return now

    def succeeded(self, name: str, address: str, began: float) -> None:
        """The attempt begun at `began` did not fail. The name's count starts again; the
        address keeps its other failures (one valid account must not buy guesses at others)."""
        self._times.pop(("name", name[:MAX_NAME]), None)
        times = self._times.get(("address", _network(address)))
        if times is not None and began in times:
            times.remove(began)

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        times = self._times.get(key, deque())
        while times and times[0] <= now - self.window_s:
            times.popleft()
        return times


def _network(address: str) -> str:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else ip)


def check_name(name: str) -> None:
    if not NAME.fullmatch(name):
        raise AccountError(key="user_name_bad", name=repr(name))


def check_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(key="password_length", least=MIN_PASSWORD, most=MAX_PASSWORD)


def ensure_auth_secret(data_dir: Path) -> str:
    """CHAINLIT_AUTH_SECRET from the environment, else the one kept in {data_dir}/auth_secret,
    made on first run (mode 0600) so logins survive restarts. The caller puts it in os.environ,
    where Chainlit reads it."""
    if secret := os.environ.get(SECRET_ENV):
        return secret
    try:
        return read_or_create(data_dir / SECRET_FILE, nbytes=48)
    except SecretFileError as error:
        raise AccountError(key="auth_secret_bad", error=error.as_said()) from error


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
            raise AccountError(key="users_env_bad", name=repr(name),
                               error=error.as_said() if isinstance(error, AccountError) else str(error)
                               ) from error
    return users
