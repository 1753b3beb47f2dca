"""Which processes listen on a TCP port, from /proc (no `ss` or `lsof` needed): a start that finds
its port taken can then say what holds it, when that is a server glm1m started earlier."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

PROC = Path("/proc")
LISTEN = "0A"  # include/net/tcp_states.h: TCP_LISTEN, as /proc/net/tcp writes it


def listening_inodes(port: int, proc: Path = PROC) -> set[str]:
    """The socket inodes listening on `port` on any address, IPv4 or IPv6."""
    inodes = set()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for row in (proc / "net" / table).read_text().splitlines()[1:]:
                fields = row.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == LISTEN and int(local.rsplit(":", 1)[1], 16) == port:
                    inodes.add(inode)
    return inodes


def socket_owners(inodes: set[str], proc: Path = PROC) -> set[int]:
    """The processes holding any of these sockets; only this user's can be seen."""
    wanted = {f"socket:[{inode}]" for inode in inodes}
    owners = set()
    for entry in proc.iterdir() if wanted else []:
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if any(os.readlink(fd) in wanted for fd in (entry / "fd").iterdir()):
                owners.add(int(entry.name))
    return owners


def _stat(pid: int, proc: Path) -> list[str]:
    """/proc/PID/stat's fields after the command name (which may hold spaces): state, ppid, pgrp."""
    try:
        return (proc / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def group_of(pid: int, proc: Path = PROC) -> int | None:
    """The process group of `pid` (a server glm1m started leads its own)."""
    fields = _stat(pid, proc)
    return int(fields[2]) if fields else None


def parent_of(pid: int, proc: Path = PROC) -> int | None:
    fields = _stat(pid, proc)
    return int(fields[1]) if fields else None


def command_line(pid: int, proc: Path = PROC) -> list[str]:
    try:
        raw = (proc / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def listeners(port: int, proc: Path = PROC) -> list[int]:
    """The processes listening on `port`, each followed by the leader of its group: vLLM's API
    servers (--api-server-count) renamed themselves VLLM::APIServer_N, their leader did not."""
    found: list[int] = []
    for pid in sorted(socket_owners(listening_inodes(port, proc), proc)):
        group = group_of(pid, proc)
        found += [p for p in (pid, group) if p is not None and p not in found]
    return found
