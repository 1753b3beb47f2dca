"""The disk tier's CPU tier is a file in /dev/shm (vLLM 0.26's SharedOffloadRegion): glm1m checks
there is room for it before vLLM starts, and removes the file a force-killed vLLM leaves there."""

from __future__ import annotations

import json
import mmap
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from glm1m.catalog import EN, Said
from glm1m.cli import serve as serve_cli
from glm1m.cli.main import build_parser, run as cli_run
from glm1m.errors import StartFailed
from glm1m.server import launch, process, replicas, shm
from glm1m.server.gpus import Gpu
from glm1m.server.launch import ServeOptions
from glm1m.server.plan import GIB
from glm1m.settings import Settings

H200 = Gpu("NVIDIA H200", 143_771)
MIB = 1 << 20
PETA_HOST_GIB = 1 << 20  # a host so large that glm1m's own tier outgrows any test folder
TIERING = json.dumps({"kv_connector_extra_config": {
    "spec_name": "TieringOffloadingSpec", "secondary_tiers": [{"type": "fs", "root_dir": "/kv"}]}})


@pytest.fixture
def shm_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "shm"
    folder.mkdir()
    monkeypatch.setattr(shm, "SHM_DIR", folder)
    for name in ("GLM1M_KV_DISK_DIR", "GLM1M_KV_DISK_GIB", "MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GLM1M_DATA_DIR", str(tmp_path / "data"))
    return folder


def free_gib(folder: Path) -> float:
    st = os.statvfs(folder)
    return st.f_bavail * st.f_frsize / GIB


def region(folder: Path, name: str, size: int = MIB) -> Path:
    path = folder / f"vllm_offload_{name}.mmap"
    path.write_bytes(os.urandom(size))  # random: a compressing filesystem still allocates it all
    return path


def free_port() -> int:
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        return spare.getsockname()[1]


def fake_h200(monkeypatch: pytest.MonkeyPatch, host_gib: int = 128) -> list[list[str]]:
    """An H200 on a host of host_gib; what reaches process.start is recorded, and not started."""
    monkeypatch.setattr("glm1m.server.gpus.detect_gpus", lambda: [H200])
    monkeypatch.setattr("glm1m.server.profile.host_memory_bytes", lambda: host_gib * GIB)
    monkeypatch.setattr(launch, "require_vllm", lambda python: None)
    started: list[list[str]] = []

    def start(cmd: list[str], **kw: object) -> subprocess.Popen:
        started.append(cmd)
        raise StartFailed("reached process.start")

    monkeypatch.setattr(process, "start", start)
    return started


def serve(tmp_path: Path, *argv: str) -> int:
    return cli_run(["serve", "--port", str(free_port()), "--kv-disk", str(tmp_path / "kv"), *argv])


def last(cmd: list[str], name: str) -> str:
    return [cmd[i + 1] for i, part in enumerate(cmd) if part == name][-1]


def test_a_shm_too_small_for_the_tier_is_one_sentence_and_starts_nothing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shm_dir: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    started = fake_h200(monkeypatch, host_gib=PETA_HOST_GIB)
    code = serve(tmp_path)
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 1 and started == []
    assert said.startswith(f"glm1m: with the disk tier vLLM keeps its CPU KV tier in {shm_dir}, "
                           f"which needs 998613.0 GiB free for it and has ")
    assert said.endswith("docker run --shm-size=998613g) or give a smaller --kv-offloading-size "
                         "after --.")


def test_the_size_checked_is_the_users_own_after_the_dashes(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shm_dir: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # glm1m's 1,048,544 GiB does not fit, the user's 1 MiB does: vLLM takes the last value.
    started = fake_h200(monkeypatch, host_gib=PETA_HOST_GIB)
    code = serve(tmp_path, "--", "--kv-offloading-size", "0.001")
    assert code == 1 and "reached process.start" in capsys.readouterr().err
    assert [last(cmd, "--kv-offloading-size") for cmd in started] == ["0.001"]
    # And the other way: glm1m's 80 GiB is not what is checked against a size the user made huge.
    started = fake_h200(monkeypatch)
    code = serve(tmp_path, "--", "--kv-offloading-size", "100000000")
    assert code == 1 and started == []
    assert "needs 100000000.0 GiB free" in capsys.readouterr().err


def test_the_plain_host_tier_is_not_in_shm_and_is_not_checked(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shm_dir: Path) -> None:
    """CPUOffloadingSpec pins anonymous memory (the H200's 82 GiB tier logged no mmap file)."""
    fake_h200(monkeypatch, host_gib=PETA_HOST_GIB)
    options = serve_cli.serve_options(build_parser().parse_args(["serve"]))
    cmd = launch.vllm_command(options, "python")
    assert last(cmd, "--kv-offloading-size") == "998613" and shm.region_bytes(cmd) == 0
    shm.require_room(shm.region_bytes(cmd))


def test_each_data_parallel_engine_has_a_region_and_lmcache_none() -> None:
    tiered = ["--kv-offloading-size", "24", f"--kv-transfer-config={TIERING}"]
    assert shm.region_bytes(tiered) == 24 * GIB
    assert shm.region_bytes([*tiered, "--data-parallel-size", "4"]) == 4 * 24 * GIB
    assert shm.region_bytes([*tiered, "-dp", "2", "--kv-offloading-size=0.5"]) == GIB
    assert shm.region_bytes([*tiered, "--kv-offloading-backend", "lmcache"]) == 0
    assert shm.region_bytes([*tiered, "--kv-transfer-config", '{"kv_role": "kv_both"}']) == 0


def test_replicas_need_room_for_all_their_tiers_at_once(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shm_dir: Path) -> None:
    each = f"{free_gib(shm_dir) * 0.6:.3f}"  # one fits, two do not
    flags = ["--kv-offloading-size", each, "--kv-transfer-config", TIERING]
    stack = replicas.plan_stack(ServeOptions(gpu=True, profile_flags=flags), 2, 1, 2, Settings())
    monkeypatch.setattr(process, "require_free_port", lambda *a: None)
    monkeypatch.setattr(process, "start", lambda *a, **k: pytest.fail("a server was started"))
    # The need as glm1m counts it (whole bytes per engine, then GiB to one decimal): 2 x 16.275
    # printed as 32.5 while glm1m's count of it, a byte more, printed 32.6 in a CI run.
    need = 2 * shm.region_bytes(flags)
    with pytest.raises(StartFailed, match=f"the CPU KV tiers of 2 servers in {shm_dir}, which "
                                          f"needs {need / GIB:.1f} GiB"):
        replicas.start_stack(stack, Settings(), tmp_path, lambda line: None)


def test_the_sentence_names_regions_a_killed_vllm_left(shm_dir: Path) -> None:
    region(shm_dir, "dead", 2 * MIB)
    with pytest.raises(StartFailed, match=r"and 0\.0 GiB more is held by 1 vllm_offload_\*\.mmap file "
                                          r"that no running process maps \(a killed vLLM's: delete them\)"):
        shm.require_room(1 << 60)


def test_a_new_unmapped_region_is_removed_and_what_was_there_before_stays(shm_dir: Path) -> None:
    earlier = region(shm_dir, "another-server")
    before = shm.regions()
    left = region(shm_dir, "ours-killed")
    others = [shm_dir / "vllm_offload_x.txt", shm_dir / "notes.mmap"]
    for path in others:
        path.write_text("not vLLM's")
    removed = shm.remove_left_behind(before)
    assert removed.paths == (left,) and not left.exists() and removed.freed_bytes >= MIB
    assert earlier.exists() and all(p.exists() for p in others)
    assert removed.said().render(EN) == (f"removed 1 KV region file a killed vLLM left in {shm_dir} "
                              f"(vllm_offload_ours-killed.mmap): 0.0 GiB of memory given back")


def test_a_new_region_a_live_process_maps_stays(shm_dir: Path) -> None:
    before = shm.regions()
    path = region(shm_dir, "running")
    with path.open("r+b") as file, mmap.mmap(file.fileno(), 0):
        assert shm.remove_left_behind(before).paths == ()
        assert path.exists()
    assert shm.remove_left_behind(before).paths == (path,)  # unmapped now: removed


# The engine core vLLM SIGKILLs at shutdown goes on unpinning and unmapping its region after the
# server's leader has exited; this one holds its map a second after it is told to stop.
HOLDER = """
import mmap, sys, time
file = open(sys.argv[1], "r+b")
region = mmap.mmap(file.fileno(), 0)
print("mapped", flush=True)
sys.stdin.read()
time.sleep(1.0)
"""


def test_a_stopped_servers_region_is_removed_once_its_processes_have_exited(shm_dir: Path) -> None:
    before = shm.regions()
    path = region(shm_dir, "engine")
    engine = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert engine.stdout is not None and engine.stdout.readline() == "mapped\n"
        assert shm.remove_left_behind(before).paths == ()  # another live server's: it stays
        assert engine.stdin is not None
        engine.stdin.close()
        assert shm.remove_left_behind(before, [engine.pid]).paths == (path,)
        assert engine.poll() is not None
    finally:
        engine.kill()
        engine.wait()
        engine.stdout.close()  # type: ignore[union-attr]


def test_serve_removes_the_region_its_vllm_left_once_it_has_stopped(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shm_dir: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    earlier = region(shm_dir, "another-server")
    fake_h200(monkeypatch)

    def start(cmd: list[str], **kw: object) -> subprocess.Popen:
        region(shm_dir, "ours")  # what a force-killed engine core leaves
        return subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"], start_new_session=True)

    monkeypatch.setattr(process, "start", start)
    code = serve(tmp_path, "--", "--kv-offloading-size", "0.001")
    err = capsys.readouterr().err
    assert code == 1 and "exited with code 3" in err
    assert "removed 1 KV region file a killed vLLM left in" in err and "vllm_offload_ours.mmap" in err
    assert earlier.exists() and not (shm_dir / "vllm_offload_ours.mmap").exists()


def test_a_replica_restarted_after_a_kill_first_gets_its_regions_memory_back(
        shm_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = shm.regions()
    stack = replicas.plan_stack(ServeOptions(demo=True), 2, 1, 0, Settings())
    blocked = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    killed = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    other = subprocess.Popen(blocked, stdin=subprocess.PIPE, start_new_session=True)
    router = subprocess.Popen(blocked, stdin=subprocess.PIPE, start_new_session=True)
    left = region(shm_dir, "killed-replica")
    again: list[subprocess.Popen] = []

    def start(options: ServeOptions, settings: Settings, log_path: str | None = None) -> subprocess.Popen:
        assert not left.exists()  # given back before the new one starts
        router.stdin.close()  # type: ignore[union-attr]  # then the stack stops: supervise returns
        again.append(subprocess.Popen(blocked, stdin=subprocess.PIPE, start_new_session=True))
        return again[-1]

    monkeypatch.setattr(launch, "start", start)
    said: list[Said] = []  # the lines the CLI says, each in its language
    procs = [killed, other, router]
    try:
        assert replicas.supervise(procs, stack, Settings(), tmp_path, said.append, before) == 1
    finally:
        for proc in [other, router, *again]:
            proc.kill()
            proc.wait()
            proc.stdin.close()  # type: ignore[union-attr]
    assert len(again) == 1 and any("vllm_offload_killed-replica.mmap" in line.render(EN) for line in said)


def test_up_removes_the_region_its_vllm_left_once_it_has_stopped(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shm_dir: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`glm1m up` starts the same server as `glm1m serve`, so it gives the memory back the same way."""

    monkeypatch.setenv("GLM1M_AUTH", "false")  # no first user to ask for before the server starts
    earlier = region(shm_dir, "another-server")
    fake_h200(monkeypatch)

    def start(cmd: list[str], **kw: object) -> subprocess.Popen:
        region(shm_dir, "ours")
        return subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"], start_new_session=True)

    monkeypatch.setattr(process, "start", start)
    code = cli_run(["up", "--port", str(free_port()), "--kv-disk", str(tmp_path / "kv"), "--",
         "--kv-offloading-size", "0.001"])
    err = capsys.readouterr().err
    assert code == 1 and "exited with code 3" in err
    assert "vllm_offload_ours.mmap" in err
    assert earlier.exists() and not (shm_dir / "vllm_offload_ours.mmap").exists()


def test_up_with_replicas_gives_back_what_its_replicas_left(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shm_dir: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from glm1m.cli import up as up_cli

    before = shm.regions()
    earlier = region(shm_dir, "another-server")
    monkeypatch.setattr(serve_cli, "plan_replicas", lambda args, options, settings: object())

    def start_stack(*args: object) -> list[subprocess.Popen]:
        region(shm_dir, "replica-0")  # its engine was force-killed as the stack failed to start
        raise StartFailed("replica 1 did not start")

    monkeypatch.setattr(replicas, "start_stack", start_stack)
    args = build_parser().parse_args(["up", "--replicas", "2"])
    # The error goes on to cli/main.py, which says it and exits 1 (its class's code), after what
    # the stack left is given back.
    with pytest.raises(StartFailed) as failed:
        up_cli.up_replicas(args, ServeOptions(demo=True), Settings(), before | {earlier})
    assert failed.value.exit_code == 1 and "replica 1 did not start" in str(failed.value)
    assert "vllm_offload_replica-0.mmap" in capsys.readouterr().err
    assert earlier.exists() and not (shm_dir / "vllm_offload_replica-0.mmap").exists()
