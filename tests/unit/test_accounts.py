"""Password accounts, the login secret, and when login is on."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import pytest

from glm1m.accounts import (
    AccountError,
    Accounts,
    PasswordHash,
    SECRET_ENV,
    ensure_auth_secret,
)
from glm1m.settings import Settings


@pytest.fixture
def accounts(tmp_path: Path) -> Accounts:
    return Accounts(tmp_path / "users.json")


def test_the_users_file_holds_salted_scrypt_hashes_not_passwords(accounts: Accounts) -> None:
    assert accounts.add_user("alice", "correct horse") is True
    accounts.add_user("bob", "correct horse")
    text = accounts.path.read_text()
    assert "correct horse" not in text
    users = json.loads(text)["users"]
    assert set(users["alice"]) == {"n", "r", "p", "salt", "hash"}
    alice = users["alice"]  # really scrypt, at a cost an attacker feels, from the stored values
    assert alice["n"] >= 2**15 and alice["hash"] == hashlib.scrypt(
        b"correct horse", salt=bytes.fromhex(alice["salt"]), n=alice["n"], r=alice["r"],
        p=alice["p"], dklen=len(alice["hash"]) // 2, maxmem=1 << 28).hex()
    assert users["alice"]["salt"] != users["bob"]["salt"]
    assert users["alice"]["hash"] != users["bob"]["hash"]
    assert stat.S_IMODE(accounts.path.stat().st_mode) == 0o600


def test_verify_accepts_only_the_right_password_of_that_user(accounts: Accounts) -> None:
    accounts.add_user("alice", "correct horse")
    accounts.add_user("bob", "battery staple")
    assert accounts.verify("alice", "correct horse")
    assert not accounts.verify("alice", "battery staple")
    assert not accounts.verify("alice", "correct horse ")
    assert not accounts.verify("carol", "correct horse")
    assert not accounts.verify("alice", "correct horse" + "x" * 2000)


def test_adding_an_existing_user_changes_the_password(accounts: Accounts) -> None:
    accounts.add_user("alice", "correct horse")
    assert accounts.add_user("alice", "new password") is False
    assert accounts.verify("alice", "new password")
    assert not accounts.verify("alice", "correct horse")


@pytest.mark.parametrize("name", ["", "a b", "x" * 65, "../etc", "a,b", "a=b", "tab\t"])
def test_odd_names_are_refused(accounts: Accounts, name: str) -> None:
    with pytest.raises(AccountError, match="User name"):
        accounts.add_user(name, "correct horse")
    assert not accounts.path.exists()


def test_short_passwords_are_refused(accounts: Accounts) -> None:
    with pytest.raises(AccountError, match="8 to 1024 characters"):
        accounts.add_user("alice", "short")


def test_users_from_the_environment_log_in_and_win_over_the_file(tmp_path: Path) -> None:
    encoded = PasswordHash.of("from the env").encode()
    accounts = Accounts.from_settings(Settings(data_dir=tmp_path, users=f" bob={encoded} ",
                                               _env_file=None))
    assert accounts.path == tmp_path / "users.json"
    assert accounts.verify("bob", "from the env")
    with pytest.raises(AccountError, match="GLM1M_USERS"):
        accounts.add_user("bob", "another password")


def test_a_malformed_environment_entry_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(AccountError, match="GLM1M_USERS entry 'bob'"):
        Accounts(tmp_path / "users.json", "bob=scrypt:16384:8:1:nothex:00")


def test_a_broken_users_file_is_a_clear_error(accounts: Accounts) -> None:
    accounts.path.write_text('{"users": {"alice": "plaintext"}}')
    with pytest.raises(AccountError, match="is not a glm1m users file"):
        accounts.verify("alice", "plaintext")


def test_login_on_without_any_user_says_how_to_add_one(accounts: Accounts) -> None:
    with pytest.raises(AccountError, match="glm1m users add NAME"):
        accounts.require_users()
    accounts.add_user("alice", "correct horse")
    accounts.require_users()


def test_secret_is_made_once_kept_private_and_reused(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SECRET_ENV, raising=False)
    first = ensure_auth_secret(tmp_path / "data")
    assert len(first) >= 32
    kept = tmp_path / "data" / "auth_secret"
    assert kept.read_text() == first
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert ensure_auth_secret(tmp_path / "data") == first
    assert ensure_auth_secret(tmp_path / "other") != first


def test_secret_from_the_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, "set-by-the-operator")
    assert ensure_auth_secret(tmp_path) == "set-by-the-operator"
    assert not (tmp_path / "auth_secret").exists()


def test_login_is_on_unless_the_demo_model_runs() -> None:
    assert Settings(_env_file=None).auth_required
    assert not Settings(demo=True, _env_file=None).auth_required
    assert Settings(demo=True, auth=True, _env_file=None).auth_required
    assert not Settings(auth=False, _env_file=None).auth_required


def test_an_unknown_name_or_an_overlong_password_costs_one_hash_like_a_wrong_password(
        accounts: Accounts, monkeypatch: pytest.MonkeyPatch) -> None:
    from glm1m import accounts as module

    accounts.add_user("alice", "correct horse")
    calls = []
    real = module._scrypt
    monkeypatch.setattr(module, "_scrypt", lambda *a: calls.append(a) or real(*a))
    for name, password in (("alice", "wrong"), ("mallory", "correct horse"), ("alice", "x" * 5000)):
        calls.clear()
        assert accounts.verify(name, password) is False
        assert len(calls) == 1  # the same work whatever is wrong, so timing tells nothing
