"""A GLM1M_* value glm1m cannot use stops every `glm1m` command (`--help` still prints), with one
sentence naming the variable and what it expects, and exit status 2: never pydantic's report.
The real CLI in a subprocess; no model server is needed, nothing gets that far."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from glm1m.cli.main import build_parser
from glm1m.errors import SettingsError
from glm1m.settings import Settings, load_settings, settings_error

ROOT = Path(__file__).resolve().parents[2]
SUBCOMMANDS = sorted(next(action for action in build_parser()._actions
                          if isinstance(action, argparse._SubParsersAction)).choices)
MAP_CONCURRENCY = ("glm1m: GLM1M_MAP_CONCURRENCY is 'abc', but it must be a whole number of at "
                   "least 1: fix it, or unset it for the default (8).")


def clean_env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLM1M_") and k != "MODEL"}
    return {**env, "PYTHONPATH": str(ROOT), **values}


def run_all(argvs: list[list[str]], env: dict[str, str], cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """Each argv through `python -m glm1m.cli`, all started at once (each takes about a second)."""
    procs = [subprocess.Popen([sys.executable, "-m", "glm1m.cli", *argv], cwd=cwd, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for argv in argvs]
    results = []
    for argv, proc in zip(argvs, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess([*argv], proc.returncode, out, err))
    return results


def test_every_command_says_which_variable_is_bad_and_help_still_works(tmp_path: Path) -> None:
    """Help never depends on the environment (issue 35: a bad GLM1M_ value refused --help)."""
    assert {"serve", "up", "summarize", "translate", "extract", "users", "plan"} <= set(SUBCOMMANDS)
    runnable = [["plan"], ["up"], ["serve"], ["shelf", "list"], ["extract", "x.pdf"],
                ["summarize", "x.pdf"], ["translate", "x.csv", "--to", "en"], ["users", "remove", "x"]]
    helps = [["--help"], *([name, "--help"] for name in SUBCOMMANDS)]
    results = run_all(helps + runnable, clean_env(GLM1M_MAP_CONCURRENCY="abc"), tmp_path)
    for result in results[:len(helps)]:
        assert result.returncode == 0 and result.stdout.startswith("usage: glm1m"), result.args
        assert result.stderr == "", result.args
    for result in results[len(helps):]:
        assert (result.returncode, result.stdout, result.stderr) == (2, "", MAP_CONCURRENCY + "\n"), \
            result.args


def test_a_bad_value_in_dot_env_is_named_with_the_values_it_may_take(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("GLM1M_OCR=sometimes\nGLM1M_TEMPERATURE=3\n")
    [result] = run_all([["summarize", "report.pdf"]], clean_env(), tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "glm1m: GLM1M_TEMPERATURE is '3', but it must be a number from 0 to 2: fix it, or unset it "
        "for the default (0.7). GLM1M_OCR is 'sometimes', but it must be one of auto, always or "
        "never: fix it, or unset it for the default (auto)."]


def test_good_settings_leave_help_as_it_was(tmp_path: Path) -> None:
    [result] = run_all([["--help"]], clean_env(GLM1M_MAP_CONCURRENCY="4"), tmp_path)
    assert result.returncode == 0 and result.stdout.startswith("usage: glm1m")


@pytest.mark.parametrize(("variable", "value", "expects"), [
    ("GLM1M_AUTH", "maybe", "must be true or false: fix it, or unset it."),
    ("GLM1M_DOCUMENT_MAX_MB", "0", "must be a number greater than 0: fix it, or unset it for the default "
                                   "(200)."),
    # Its name before: the sentence names the variable that was set, not the alias's first name.
    ("GLM1M_PDF_MAX_MB", "0", "must be a number greater than 0: fix it, or unset it for the default (200)."),
    ("GLM1M_OCR_DPI", "9000",
     "must be a whole number from 50 to 600: fix it, or unset it for the default (150)."),
    ("GLM1M_RETRIES", "-1", "must be a whole number of at least 0: fix it, or unset it for the default (2)."),
    # The values come from the field as values (settings.one_of), not read back out of its pattern.
    ("GLM1M_OCR", "sometimes",
     "must be one of auto, always or never: fix it, or unset it for the default (auto)."),
])
def test_the_sentence_says_what_the_variable_expects(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     variable: str, value: str, expects: str) -> None:
    monkeypatch.chdir(tmp_path)  # no .env
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert str(raised.value) == f"{variable} is {value!r}, but it {expects}"
    monkeypatch.delenv(variable)
    assert isinstance(load_settings(), Settings)


def test_a_value_a_command_passed_from_its_options_is_named_as_the_option() -> None:
    """`glm1m summarize --max-tokens 0` builds Settings(max_tokens=0): the flag was wrong, not
    GLM1M_MAX_TOKENS."""
    with pytest.raises(ValidationError) as raised:
        Settings(max_tokens=0, _env_file=None)
    assert str(settings_error(raised.value)) == (
        "--max-tokens 0 is not usable: it must be a whole number of at least 1.")


def test_the_document_limit_is_read_under_its_new_name_and_its_old_one(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    """GLM1M_DOCUMENT_MAX_MB limits every document format; GLM1M_PDF_MAX_MB, its name before, is
    still read, and with both set the new one counts."""
    monkeypatch.chdir(tmp_path)  # no .env
    monkeypatch.setenv("GLM1M_PDF_MAX_MB", "5")
    assert load_settings().document_max_mb == 5
    monkeypatch.setenv("GLM1M_DOCUMENT_MAX_MB", "7")
    assert load_settings().document_max_mb == 7
    monkeypatch.delenv("GLM1M_PDF_MAX_MB")
    assert load_settings().document_max_mb == 7
    (tmp_path / ".env").write_text("GLM1M_PDF_MAX_MB=9\n")
    monkeypatch.delenv("GLM1M_DOCUMENT_MAX_MB")
    assert load_settings().document_max_mb == 9
    assert Settings(document_max_mb=3, _env_file=None).document_max_mb == 3
