"""`glm1m users add NAME`, run through its own argument parser."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from glm1m.accounts import Accounts
from glm1m.cli.main import run as cli_run


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GLM1M_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("GLM1M_USERS_FILE", raising=False)
    monkeypatch.delenv("GLM1M_USERS", raising=False)
    return tmp_path


def glm1m(argv: list[str], stdin: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return cli_run(argv)


def test_add_with_password_on_stdin_lets_the_user_log_in(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert glm1m(["users", "add", "alice", "--password-stdin"], "correct horse\n", monkeypatch) == 0
    assert "added alice" in capsys.readouterr().err
    assert Accounts(data_dir / "users.json").verify("alice", "correct horse")


@pytest.mark.parametrize("name, password, says", [
    ("bad name", "correct horse\n", "User name 'bad name' is not accepted"),
    ("alice", "short\n", "8 to 1024 characters"),
    ("alice", "", "--password-stdin got no input"),
])
def test_bad_input_exits_2_with_one_line(data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str], name: str,
                                         password: str, says: str) -> None:
    assert glm1m(["users", "add", name, "--password-stdin"], password, monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.startswith("glm1m: ") and says in err and err.count("\n") == 1
    assert not (data_dir / "users.json").exists()


def test_typed_passwords_that_differ_write_nothing(data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    typed = iter(["correct horse", "correct hoarse"])
    monkeypatch.setattr("getpass.getpass", lambda prompt: next(typed))
    assert glm1m(["users", "add", "alice"], "", monkeypatch) == 2
    assert "differ" in capsys.readouterr().err
    assert not (data_dir / "users.json").exists()


def test_print_gives_a_line_for_glm1m_users(data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert glm1m(["users", "add", "bob", "--password-stdin", "--print"], "correct horse\n",
                 monkeypatch) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("bob=scrypt:")
    assert Accounts(data_dir / "users.json", line).verify("bob", "correct horse")
    assert not (data_dir / "users.json").exists()


def test_up_asks_for_the_first_user_or_says_how_to_add_one(tmp_path, monkeypatch) -> None:
    from glm1m.cli.users import ensure_first_user
    from glm1m.settings import Settings

    monkeypatch.setenv("GLM1M_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("GLM1M_USERS", raising=False)
    monkeypatch.delenv("GLM1M_AUTH", raising=False)
    assert ensure_first_user(Settings(demo=True), interactive=False) is None  # demo: no login
    real = Settings(demo=False)
    assert "glm1m users add NAME" in ensure_first_user(real, interactive=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "alice")
    monkeypatch.setattr("getpass.getpass", lambda prompt: "a-long-password-1")
    assert ensure_first_user(real, interactive=True) is None
    assert Accounts.from_settings(real).verify("alice", "a-long-password-1")
    assert ensure_first_user(real, interactive=False) is None  # someone can log in now


def test_up_with_a_malformed_glm1m_users_ends_on_one_sentence_from_the_one_handler(
        tmp_path, monkeypatch, capsys: pytest.CaptureFixture[str]) -> None:
    """ensure_first_user no longer turns the error into text itself: it goes on to cli/main.py,
    which says it (exit 2) before `glm1m up` starts anything."""
    from glm1m.cli.main import run
    from glm1m.cli.users import ensure_first_user
    from glm1m.errors import UserFacingError
    from glm1m.settings import Settings

    monkeypatch.setenv("GLM1M_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("GLM1M_LANG", "en")
    monkeypatch.setenv("GLM1M_USERS", "alice=not-a-hash")
    monkeypatch.setenv("GLM1M_AUTH", "true")  # the demo (no GPU here) runs open otherwise
    with pytest.raises(UserFacingError) as refused:
        ensure_first_user(Settings(demo=False), interactive=False)
    assert refused.value.exit_code == 2
    monkeypatch.setattr("glm1m.server.gpus.detect_gpus", lambda: [])
    monkeypatch.setattr("glm1m.server.process.start", lambda *a, **k: pytest.fail("started"))
    assert run(["up", "--port", "9", "--ui-port", "9"]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and said[0] == f"glm1m: {refused.value.in_language('en')}", said


def test_remove_ends_the_login_and_an_unknown_name_gets_a_sentence(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert glm1m(["users", "add", "alice", "--password-stdin"], "correct horse\n", monkeypatch) == 0
    assert glm1m(["users", "add", "bob", "--password-stdin"], "battery staple\n", monkeypatch) == 0
    capsys.readouterr()
    assert glm1m(["users", "remove", "alice"], "", monkeypatch) == 0
    assert "removed alice" in capsys.readouterr().err
    accounts = Accounts(data_dir / "users.json")
    assert not accounts.verify("alice", "correct horse") and accounts.verify("bob", "battery staple")

    assert glm1m(["users", "remove", "alice"], "", monkeypatch) == 2
    err = capsys.readouterr().err
    assert err == f"glm1m: There is no user 'alice' in {data_dir / 'users.json'}; nothing was removed.\n"
