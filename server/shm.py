"""vLLM's KV region in /dev/shm: room for it before a start, and the region a killed vLLM left behind.

How vLLM 0.26.0 uses /dev/shm (read from its source; paths under vllm/):
- The CPU tier of TieringOffloadingSpec, the spec glm1m's disk tier names (server/disk_tier.py),
  is ONE file per engine, `/dev/shm/vllm_offload_{engine_id}.mmap`, of --kv-offloading-size GiB
  (v1/kv_offload/cpu/shared_offload_region.py: created O_CREAT|O_EXCL, then every page written by
  MADV_POPULATE_WRITE), and each data-parallel engine has its own (engine_id gets `_dp{rank}`,
  v1/engine/utils.py). /dev/shm is a tmpfs, so it must have that much room: Docker gives a
  container 64 MB unless `docker run --shm-size`.
- The plain CPU tier (CPUOffloadingSpec: glm1m's host tier without --kv-disk) is pinned anonymous
  memory instead (cpu/spec.py gives its worker no region), which /dev/shm does not bound. On the
  H200 (docs/results/h200-2026-12-01-second) the 82 GiB CPUOffloadingSpec server logged no mmap
  file; each fs-tier server logged "Created mmap file /dev/shm/vllm_offload_... (25.77 GB)".
- vLLM unlinks the file in SharedOffloadRegion.cleanup(), which an engine core killed at shutdown
  never runs (v1/utils.py `shutdown`: SIGKILL to what is alive after 5 s, "Process manager: force
  killing remaining processes"): on the H200 a stopped server's 6 GiB region stayed in /dev/shm,
  holding 6 GiB of RAM, until deleted by hand. That SIGKILL is not waited for, so the engine may
  still be unmapping its region when the server's leader has exited: glm1m waits for the stopped
  server's process group to be gone before it looks.
"""

from __future__ import annotations

import math
import os
import select
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from glm1m.catalog import Said, said
from glm1m.errors import StartFailed
from glm1m.server.flags import kv_extra_config, last_value
from glm1m.server.plan import GIB

SHM_DIR = Path("/dev/shm")  # vLLM's path is fixed; tests point this elsewhere
PROC = Path("/proc")
REGION_GLOB = "vllm_offload_*.mmap"
TIERING_SPEC = "TieringOffloadingSpec"
# A SIGKILLed engine core unpins and unmaps its region on the way out; this bounds the wait for a
# stopped server's processes to finish exiting (process.stop has already killed them).
EXIT_WAIT_S = 30.0


def region_bytes(cmd: list[str]) -> int:
    """The /dev/shm room one `vllm serve` command line needs: --kv-offloading-size GiB for each
    data-parallel engine where the native backend runs TieringOffloadingSpec, else 0."""
    size = last_value(cmd, "--kv-offloading-size")
    if size is None or (last_value(cmd, "--kv-offloading-backend") or "native") != "native":
        return 0
    if kv_extra_config(cmd).get("spec_name") != TIERING_SPEC:
        return 0
    try:
        engines = int(last_value(cmd, "--data-parallel-size", "-dp") or 1)
        return math.ceil(float(size) * GIB) * max(1, engines)
    except ValueError:
        return 0  # vLLM refuses a size or count that is not a number


def regions(directory: Path | None = None) -> frozenset[Path]:
    """vLLM's region files in the directory now (none when it cannot be read)."""
    folder = SHM_DIR if directory is None else directory
    try:
        return frozenset(folder.glob(REGION_GLOB))
    except OSError:
        return frozenset()


def _free_bytes(folder: Path) -> int:
    try:
        st = os.statvfs(folder)
    except OSError:
        return 0  # no such directory: vLLM could not create its region there either
    return st.f_bavail * st.f_frsize


def _gib(n: int) -> str:
    return f"{n / GIB:.1f} GiB"


def require_room(need_bytes: int, servers: int = 1, directory: Path | None = None) -> None:
    """StartFailed (one sentence) when the directory has less room than `need_bytes`, the regions
    of `servers` vLLM servers about to start; it says what unmapped regions there hold."""
    folder = SHM_DIR if directory is None else directory
    free = _free_bytes(folder)
    if need_bytes <= 0 or free >= need_bytes:
        return
    whose = said("shm_whose_one") if servers == 1 else said("shm_whose_many", servers=servers)
    mapped = _mapped_files()
    orphans = [p for p in regions(folder) if not _mapped(p, mapped)]
    held = sum(_held_bytes(p) for p in orphans)
    stale = said("shm_stale", held=_gib(held), count=len(orphans), glob=REGION_GLOB) if orphans else ""
    raise StartFailed(key="shm_no_room", whose=whose, folder=folder, need=_gib(need_bytes),
                      free=_gib(free), stale=stale, size=math.ceil(need_bytes / GIB))


@dataclass(frozen=True)
class Removed:
    paths: tuple[Path, ...]
    freed_bytes: int  # the tmpfs pages the files held: memory given back

    def said(self) -> Said:
        return said("shm_removed", count=len(self.paths), folder=self.paths[0].parent,
                    names=[p.name for p in self.paths], freed=_gib(self.freed_bytes))


def _held_bytes(path: Path) -> int:
    try:
        return path.stat().st_blocks * 512  # allocated pages, not the nominal size
    except OSError:
        return 0


@dataclass(frozen=True)
class _Mapped:
    paths: frozenset[str]
    inodes: frozenset[tuple[int, int]]  # (st_dev, st_ino): a path may read differently in maps


def _maps_lines(proc: Path) -> Iterator[str]:
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            yield from (entry / "maps").read_text(errors="replace").splitlines()
        except OSError:
            # Gone meanwhile, or another user's (hidden to us): such a process cannot map our
            # 0600 file, unless it is root's, and then glm1m runs as root and reads it.
            continue


def _mapped_files() -> _Mapped:
    """Every file some live process maps, from /proc/*/maps: `start-end perms offset MAJ:MIN
    inode path`."""
    paths: set[str] = set()
    inodes: set[tuple[int, int]] = set()
    for line in _maps_lines(PROC):
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or fields[4] == "0":
            continue
        major, _, minor = fields[3].partition(":")
        try:
            inodes.add((os.makedev(int(major, 16), int(minor, 16)), int(fields[4])))
        except ValueError:
            pass
        paths.add(fields[5].removesuffix(" (deleted)"))
    return _Mapped(frozenset(paths), frozenset(inodes))


def _mapped(path: Path, mapped: _Mapped) -> bool:
    try:
        st = path.stat()
    except OSError:
        return True  # gone or unreadable: nothing to remove
    return str(path) in mapped.paths or (st.st_dev, st.st_ino) in mapped.inodes


def _group_members(groups: frozenset[int]) -> list[int]:
    """The processes of these process groups, from /proc/PID/stat (`pid (comm) state ppid pgrp`)."""
    members = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            after_comm = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(after_comm) > 2 and int(after_comm[2]) in groups:
            members.append(int(entry.name))
    return members


def _await_exit(pids: Iterable[int], timeout_s: float) -> None:
    """Until every pid has exited (a pidfd is readable from then on, a zombie's too) or timeout_s."""
    deadline = time.monotonic() + timeout_s
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except OSError:  # exited already, or a kernel without pidfds
            continue
        try:
            select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(fd)


def remove_left_behind(before: frozenset[Path], stopped_groups: Iterable[int] = (),
                       directory: Path | None = None, wait_s: float = EXIT_WAIT_S) -> Removed:
    """Remove the region files that were not there `before` (taken when this glm1m started) and
    that no live process maps, once the processes of `stopped_groups` (the process groups of
    glm1m's stopped vLLM servers) have exited. Another server's region stays: it was there before,
    or it maps it. Only a server that created its file and has not mapped it yet (between two
    system calls) could lose one. Files this user does not own are never touched."""
    groups = frozenset(stopped_groups)
    if groups:
        _await_exit(_group_members(groups), wait_s)
    folder = SHM_DIR if directory is None else directory
    new = sorted(p for p in regions(folder) - before if _owned(p))
    if not new:
        return Removed((), 0)
    mapped = _mapped_files()
    removed: list[Path] = []
    freed = 0
    for path in new:
        if _mapped(path, mapped):
            continue
        held = _held_bytes(path)
        try:
            path.unlink()
        except OSError:
            continue  # gone meanwhile, or not ours to remove: never a reason to fail a stop
        removed.append(path)
        freed += held
    return Removed(tuple(removed), freed)


def _owned(path: Path) -> bool:
    """A plain file of this user: vLLM's region is one (0600, its creator's)."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()
