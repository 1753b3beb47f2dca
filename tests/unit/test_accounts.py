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
    FailedLogins,
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


def test_a_login_is_bound_to_the_password_it_was_checked_against(accounts: Accounts) -> None:
    accounts.add_user("alice", "correct horse")
    first = accounts.log_in("alice", "correct horse")
    assert first and first == accounts.credential("alice")
    assert accounts.log_in("alice", "wrong horse") is None
    assert first not in accounts.path.read_text()  # nothing stored gives it away, nor the reverse
    accounts.add_user("alice", "correct horse")  # the same password again: a new salt
    assert accounts.credential("alice") not in (None, first)
    accounts.remove_user("alice")
    assert accounts.credential("alice") is None
    assert not accounts.verify("alice", "correct horse")


def test_removing_an_unknown_or_environment_user_says_why_and_changes_nothing(tmp_path: Path) -> None:
    accounts = Accounts(tmp_path / "users.json", f"bob={PasswordHash.of('from the env').encode()}")
    accounts.add_user("alice", "correct horse")
    with pytest.raises(AccountError, match=r"There is no user 'carol' in .*users.json; nothing was removed\."):
        accounts.remove_user("carol")
    with pytest.raises(AccountError, match="defined by GLM1M_USERS; remove it there"):
        accounts.remove_user("bob")
    assert set(accounts.users()) == {"alice", "bob"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_failed_logins_lock_a_name_for_the_rest_of_the_window_wherever_they_come_from() -> None:
    clock = Clock()
    failures = FailedLogins(per_name=3, per_address=100, window_s=900, clock=clock)
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        failures.begin("alice", address)
        clock.now += 60
    with pytest.raises(AccountError, match=r"^Too many failed logins for alice; wait 12 minutes and try again\.$"):
        failures.begin("alice", "10.0.0.4")
    failures.begin("bob", "10.0.0.4")  # other names are not locked
    clock.now += 12 * 60 + 1  # the first failure has aged out
    failures.begin("alice", "10.0.0.4")


def test_failed_logins_lock_an_address_whatever_names_it_tries() -> None:
    clock = Clock()
    failures = FailedLogins(per_name=100, per_address=3, window_s=900, clock=clock)
    for name in ("a", "b", "c"):
        failures.begin(name, "2001:db8::1")
    with pytest.raises(AccountError, match="from this address; wait 15 minutes"):
        failures.begin("alice", "2001:db8::ffff")  # the same /64
    failures.begin("alice", "2001:db8:0:1::1")  # the next /64
    failures.begin("alice", "::ffff:10.0.0.1")  # IPv4 clients of a dual-stack socket are their own
    failures.begin("alice", "::ffff:10.0.0.2")


def test_a_login_that_succeeds_frees_its_name_but_not_its_address() -> None:
    failures = FailedLogins(per_name=2, per_address=3, window_s=900, clock=Clock())
    failures.begin("alice", "10.0.0.1")
    failures.succeeded("alice", "10.0.0.1", failures.begin("alice", "10.0.0.1"))
    failures.begin("alice", "10.0.0.1")  # alice may try again: her count started anew
    failures.succeeded("bob", "10.0.0.1", failures.begin("bob", "10.0.0.1"))
    failures.begin("carol", "10.0.0.1")  # the address's third failure: bob's login undid none
    with pytest.raises(AccountError, match="from this address"):
        failures.begin("dave", "10.0.0.1")
