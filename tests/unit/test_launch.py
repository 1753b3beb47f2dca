"""The vllm serve command glm1m builds, for CPU and GPU machines; how vLLM is installed and stopped."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from glm1m.cli.main import build_parser, run as cli_run
from glm1m.cli.serve import serve_options
from glm1m.server import launch, process
from glm1m.server.gpus import Gpu, parse_gpu_line
from glm1m.settings import Settings


def options(**kw) -> launch.ServeOptions:
    return launch.resolve(launch.ServeOptions(**kw), Settings())


def flag(cmd: list[str], name: str) -> str:
    """The value of `name VALUE` or `name=VALUE`."""
    joined = [a.split("=", 1)[1] for a in cmd if a.startswith(name + "=")]
    return joined[0] if joined else cmd[cmd.index(name) + 1]


def served_model(cmd: list[str]) -> str:
    """`vllm serve MODEL ...`, started as `python -m vllm.entrypoints.cli.main serve MODEL ...`:
    the CLI, which (unlike the API-server module) starts --api-server-count servers."""
    assert cmd[1:4] == ["-m", "vllm.entrypoints.cli.main", "serve"]
    assert "--model" not in cmd  # vLLM 0.26 and 0.32 warn that `serve --model` will go away
    return cmd[4]


def test_gpu_serves_the_full_1m_context_with_cuda_graphs() -> None:
    cmd = launch.vllm_command(options(gpu=True), "python")
    assert flag(cmd, "--max-model-len") == "1048576"
    assert flag(cmd, "--served-model-name") == "glm-4-9b-chat-1m"
    assert flag(cmd, "--host") == "127.0.0.1" and flag(cmd, "--port") == "8000"
    assert served_model(cmd) == launch.DEFAULT_MODEL
    assert "--enforce-eager" not in cmd


def test_cpu_demo_serves_the_built_demo_model_eagerly() -> None:
    cmd = launch.vllm_command(options(demo=True, gpu=False), "python")
    assert served_model(cmd) == str(launch.demo_model_dir(Settings()))
    assert flag(cmd, "--max-model-len") == str(launch.CPU_MAX_MODEL_LEN)
    assert "--enforce-eager" in cmd
    assert launch.vllm_env(options(demo=True))["VLLM_CPU_KVCACHE_SPACE"] == "1"


def test_api_key_goes_to_vllm_unseen_and_extra_flags_pass_through() -> None:
    served = options(gpu=True, api_key="-secret-k", extra_args=["--seed", "3"])
    cmd = launch.vllm_command(served, "python")
    assert not any("secret" in part for part in cmd)  # `ps` shows the command line to everyone
    assert launch.vllm_env(served)["VLLM_API_KEY"] == "-secret-k"
    assert cmd[-2:] == ["--seed", "3"]


def test_with_a_key_every_route_is_guarded_by_a_module_vllm_can_import(monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/opt/mine")
    served = options(demo=True, api_key="k")
    assert flag(launch.vllm_command(served, "python"), "--middleware") == launch.ROUTE_GUARD
    # vLLM's environment sees the guard's folder (which holds nothing else), never glm1m itself.
    path = launch.vllm_env(served)["PYTHONPATH"].split(":")
    assert path == [str(launch.MIDDLEWARE_DIR), "/opt/mine"]
    module = launch.ROUTE_GUARD.split(".")[0]
    assert sorted(p.name for p in launch.MIDDLEWARE_DIR.glob("*.py")) == ["__init__.py", f"{module}.py"]
    assert "--middleware" not in launch.vllm_command(options(demo=True), "python")  # no key, no guard


H200 = Gpu("NVIDIA H200", 143_771)
RTX4090 = Gpu("NVIDIA GeForce RTX 4090", 24_564)


def serve_args(monkeypatch: pytest.MonkeyPatch, gpus: list[Gpu], *argv: str):
    monkeypatch.setattr("glm1m.server.gpus.detect_gpus", lambda: gpus)
    return serve_options(build_parser().parse_args(["serve", *argv]))


def test_cli_without_gpu_or_model_falls_back_to_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("glm1m.server.gpus.detect_gpus", lambda: [])
    monkeypatch.delenv("MODEL", raising=False)
    args = build_parser().parse_args(["serve"])
    assert serve_options(args).demo


def test_cli_model_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL", "/models/glm")
    resolved = serve_args(monkeypatch, [H200], "--", "--seed", "1")
    assert (resolved.model, resolved.demo, resolved.extra_args) == ("/models/glm", False, ["--seed", "1"])


def test_auto_profile_on_an_h200_serves_1m_bf16_with_prefix_caching(monkeypatch: pytest.MonkeyPatch) -> None:
    cmd = launch.vllm_command(serve_args(monkeypatch, [H200]), "python")
    assert flag(cmd, "--max-model-len") == "1048576"
    assert flag(cmd, "--gpu-memory-utilization") == "0.92"
    assert "--enable-prefix-caching" in cmd
    assert "--quantization" not in cmd and "--kv-cache-dtype" not in cmd and "--enforce-eager" not in cmd


def test_auto_profile_on_a_4090_uses_fp8_and_an_honest_context(monkeypatch: pytest.MonkeyPatch) -> None:
    cmd = launch.vllm_command(serve_args(monkeypatch, [RTX4090]), "python")
    assert flag(cmd, "--quantization") == "fp8" and flag(cmd, "--kv-cache-dtype") == "fp8"
    assert 100_000 < int(flag(cmd, "--max-model-len")) < 1_048_576


def test_two_gpus_serve_data_parallel_behind_one_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    cmd = launch.vllm_command(serve_args(monkeypatch, [H200, H200], "--gpus", "2"), "python")
    assert flag(cmd, "--data-parallel-size") == "2" and "--tensor-parallel-size" not in cmd


def test_two_gpus_with_layout_tensor_serve_one_tensor_parallel_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    args = serve_args(monkeypatch, [H200, H200], "--gpus", "2", "--layout", "tensor")
    cmd = launch.vllm_command(args, "python")
    assert flag(cmd, "--tensor-parallel-size") == "2" and "--data-parallel-size" not in cmd
    assert flag(cmd, "--max-model-len") == "1048576"


def test_impossible_request_is_one_sentence_not_a_vllm_trace(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr("glm1m.server.gpus.detect_gpus", lambda: [RTX4090])
    code = cli_run(["serve", "--max-model-len", "1048576"])
    out = capsys.readouterr().err.strip()
    assert code == 2 and len(out.splitlines()) == 1
    assert "does not fit on one" in out and "--max-model-len" in out


def test_user_flags_after_the_profile_win(monkeypatch: pytest.MonkeyPatch) -> None:
    cmd = launch.vllm_command(serve_args(monkeypatch, [H200], "--", "--gpu-memory-utilization", "0.8"), "python")
    assert cmd[-2:] == ["--gpu-memory-utilization", "0.8"]  # vLLM takes the last occurrence


def test_nvidia_smi_line_is_parsed() -> None:
    gpu = parse_gpu_line("NVIDIA H200, 143771")
    assert (gpu.name, gpu.memory_mib) == ("NVIDIA H200", 143771)


def test_a_taken_port_is_refused_with_a_sentence() -> None:
    import socket
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        with pytest.raises(process.StartFailed, match=r"already in use.*choose another port"):
            process.require_free_port("127.0.0.1", held.getsockname()[1], "the model server")


def test_the_cpu_server_leaves_a_core_free() -> None:
    import os
    cores = os.sched_getaffinity(0)
    pinned = launch.server_cpus()
    if len(cores) >= 2:
        assert pinned is not None and len(pinned) == len(cores) - 1
    else:
        assert pinned is None


def test_serve_generates_a_key_once_into_the_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv("GLM1M_API_KEY", raising=False)
    monkeypatch.setenv("GLM1M_DATA_DIR", str(tmp_path))
    first = launch.vllm_env(serve_args(monkeypatch, [H200]))
    key = (tmp_path / "server-api-key").read_text()
    assert first["VLLM_API_KEY"] == key and len(key) >= 40
    assert (tmp_path / "server-api-key").stat().st_mode & 0o077 == 0  # owner only
    again = launch.vllm_env(serve_args(monkeypatch, [H200]))
    assert again["VLLM_API_KEY"] == key  # a restarted server keeps the key the UI knows


def test_listening_beyond_loopback_needs_expose_and_says_what_stays_open(
        monkeypatch: pytest.MonkeyPatch, capsys, tmp_path) -> None:
    monkeypatch.setattr("glm1m.server.gpus.detect_gpus", lambda: [H200])
    monkeypatch.setenv("GLM1M_DATA_DIR", str(tmp_path))
    code = cli_run(["serve", "--host", "0.0.0.0"])
    out = capsys.readouterr().err.strip()
    assert code == 2 and len(out.splitlines()) == 1 and "--expose" in out
    assert "/health, /ping and /metrics need no key" in out and "/tokenize" not in out
    options = serve_options(build_parser().parse_args(["serve", "--host", "0.0.0.0", "--expose"]))
    assert options.host == "0.0.0.0" and options.api_key
    said = capsys.readouterr().err
    assert "every route needs the API key except /health, /ping and /metrics" in said


INSTALL = Path(__file__).resolve().parents[2] / "server" / "install.sh"


def run_install(tmp_path: Path, **env: str) -> list[str]:
    """server/install.sh on a machine whose nvidia-smi lists a GPU, with a python whose venv's pip
    only writes down what it was asked to install."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: GPU-0)'\n")
    (fake / "python").write_text('#!/bin/sh\n[ "$1 $2" = "-m venv" ] || exit 1\nmkdir -p "$3/bin"\n'
                                 'printf \'#!/bin/sh\\necho "$*" >> "$PIP_LOG"\\n\' > "$3/bin/pip"\n'
                                 'chmod +x "$3/bin/pip"\n')
    for tool in fake.iterdir():
        tool.chmod(0o755)
    log = tmp_path / "pip.log"
    log.unlink(missing_ok=True)
    subprocess.run([shutil.which("bash") or "bash", str(INSTALL), str(tmp_path / "venv")], check=True,
                   env={"PATH": f"{fake}:/usr/bin:/bin", "PYTHON": str(fake / "python"),
                        "PIP_LOG": str(log), **env})
    return log.read_text().splitlines()


def test_a_gpu_machine_installs_the_vllm_the_benchmarks_measured(tmp_path: Path) -> None:
    assert run_install(tmp_path)[-1] == "install vllm==0.26.0"  # docs/benchmarks.md
    assert run_install(tmp_path, GLM1M_GPU_VLLM="0.27.1")[-1] == "install vllm==0.27.1"


LEADER = """
import signal, subprocess, sys
log = sys.argv[1]
engine = subprocess.Popen([sys.executable, "-c", sys.argv[2], log], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE)
left_behind = subprocess.Popen([sys.executable, "-c",
                                "import signal; print('up', flush=True); signal.pause()"],
                               stdout=subprocess.PIPE)
engine.stdout.readline(), left_behind.stdout.readline()

def stop(*_):  # what vLLM's API server does on SIGTERM: stop its engine itself, in order
    engine.stdin.close()
    engine.wait()
    sys.exit(0)

signal.signal(signal.SIGTERM, stop)
print(left_behind.pid, flush=True)
signal.pause()
"""
ENGINE = """
import signal, sys
def killed(*_):
    open(sys.argv[1], "a").write("engine got SIGTERM under its API server\\n")
    sys.exit(1)
signal.signal(signal.SIGTERM, killed)
print("up", flush=True)
sys.stdin.read()
open(sys.argv[1], "a").write("engine stopped by its API server\\n")
"""


def test_stop_lets_the_leader_stop_its_children_then_kills_what_it_left(tmp_path: Path) -> None:
    """vLLM's API server stops its engine core and workers itself on SIGTERM; a signal to the
    whole group reached them under a live API server. Stragglers are still killed."""
    log = tmp_path / "log"
    leader = subprocess.Popen([sys.executable, "-c", LEADER, str(log), ENGINE], stdout=subprocess.PIPE,
                              start_new_session=True)  # as process.start starts vLLM and the UI
    try:
        straggler = os.pidfd_open(int(leader.stdout.readline()))  # type: ignore[union-attr]
        process.stop(leader, grace_s=30)
        assert log.read_text() == "engine stopped by its API server\n"
        assert select.select([straggler], [], [], 10)[0], "the process the leader left is still running"
        os.close(straggler)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader.pid, signal.SIGKILL)  # the group, whatever the test found
        leader.wait()
        leader.stdout.close()  # type: ignore[union-attr]


def test_a_python_without_vllm_is_named_in_one_sentence(monkeypatch: pytest.MonkeyPatch, capsys,
                                                         tmp_path: Path) -> None:
    monkeypatch.setattr("glm1m.server.gpus.detect_gpus", lambda: [])
    monkeypatch.setenv("GLM1M_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("GLM1M_VLLM_PYTHON", sys.executable)  # the app's venv: no vLLM in it
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]
    code = cli_run(["serve", "--demo", "--port", str(port)])
    said = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and said[-1].startswith(f"glm1m: {sys.executable} has no package named vllm")
    assert len(said) == 2  # the `starting: ...` line, then the one sentence
