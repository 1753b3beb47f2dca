"""The KV tier on disk: vLLM's filesystem tier behind the CPU tier, so that a restarted server
loads a document's KV from files instead of computing it again.

How vLLM 0.26.0 runs it (read from its source; paths under vllm/):
- `--kv-transfer-config` whose kv_connector_extra_config names `"spec_name":
  "TieringOffloadingSpec"` (registered in v1/kv_offload/factory.py) and `"secondary_tiers":
  [{"type": "fs", "root_dir": DIR}]` (v1/kv_offload/tiering/spec.py, factory.py, fs/manager.py),
  given beside `--kv-offloading-size GiB --kv-offloading-backend native`: vLLM keeps that config
  and only sets the connector (OffloadingConnector), its role (kv_both) and cpu_bytes_to_use
  (config/vllm.py `_post_init_kv_transfer_config`). KVTransferConfig accepts a config without a
  connector or role (config/kv_transfer.py checks the role only when a connector is named), so the
  JSON carries the tier alone and a later `--kv-offloading-size` still sets the CPU tier's size.
- Write-through: every block stored to the CPU tier is written to every secondary tier
  (tiering/manager.py), as `DIR/<model>_<hash>_r0/<hhh>/<hh>_g0/<block hash>.bin`, first as
  `<name>.bin_<random>.tmp`, then os.replace'd (tiering/fs/io.py), opened O_DIRECT. Nothing ever
  evicts those files: glm1m prunes them (below).
- A lookup asks whether the block's file exists; a hit is first copied into the CPU tier, which
  must have room for it (`_initiate_promotion`: a full CPU tier turns the rest into misses). With
  a CPU tier smaller than a document, the promotions of its later blocks evict its own earlier
  ones, which the next lookup then promotes again, so the CPU tier holds at least one full-length
  document (`size_disk_tier`).
- File names come from the prefix hashes, seeded from os.urandom unless PYTHONHASHSEED is set
  (v1/core/kv_cache_utils.py `init_none_hash`): without a fixed seed a restarted server never
  finds the previous run's files. glm1m sets it (server/launch.py) unless the user did.
- Failures (tiering/fs/io.py, fs/thread_pool.py, tiering/manager.py): a failed write (a full disk)
  removes its .tmp file, logs "block I/O failed" and releases the CPU block: no harm. A load whose
  file vanished after the lookup fails its promotion and frees the CPU blocks, but the lookup's
  "the file exists" stays cached for the request until it finishes (tiering/async_lookup.py), so
  every scheduler step promotes it again and fails again: the request waits until it is aborted.
  So glm1m prunes only before vLLM starts, never while it runs, and the folder grows by the KV of
  every token computed (80 KiB in bf16, 40 KiB in fp8) until the next start.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from glm1m.catalog import Said, said
from glm1m.errors import PlanError, StartFailed
from glm1m.server.flags import kv_extra_config
from glm1m.server.host_tier import HostTier
from glm1m.server.plan import GIB, KIB, Plan

SPEC_NAME = "TieringOffloadingSpec"
HASH_SEED = "0"  # any fixed value; vLLM's FileSystemTierManager docstring suggests "0"
# A block's .tmp file lives for one os.write of about a megabyte; one this old belongs to a writer
# that died (a killed server), not to one still writing.
STALE_TMP_S = 600.0


@dataclass(frozen=True)
class DiskTier:
    root: Path  # absolute: vLLM writes below it
    cap_bytes: int  # glm1m prunes the folder down to this before each start
    cpu_bytes_per_engine: int  # the CPU tier glm1m gives vLLM: the disk tier's gateway
    host_tier_on: bool  # the host tier's own sizing turned it on (else the CPU tier is a gateway only)
    kv_bytes_per_token: int
    doc_tokens: int  # max_model_len: the longest document the CPU tier must hold to load it back
    user_cpu_gib: float | None = None  # --kv-offloading-size given after --, which vLLM takes instead

    def vllm_flags(self) -> list[str]:
        config = {"kv_connector_extra_config": {
            "spec_name": SPEC_NAME, "secondary_tiers": [{"type": "fs", "root_dir": str(self.root)}]}}
        return ["--kv-offloading-size", str(self.cpu_bytes_per_engine // GIB),
                "--kv-offloading-backend", "native",
                "--kv-transfer-config", json.dumps(config, separators=(",", ":"))]

    def said(self) -> Said:
        if self.user_cpu_gib is not None:
            cpu = said("disk_cpu_user", gib=self.user_cpu_gib)
        elif self.host_tier_on:
            cpu = said("disk_cpu_host", gib=self.cpu_bytes_per_engine / GIB)
        else:
            cpu = said("disk_cpu_own", gib=self.cpu_bytes_per_engine / GIB, tokens=self.doc_tokens)
        return said("disk_tier_on", root=self.root, cap=self.cap_bytes / GIB, cpu=cpu,
                    kib=self.kv_bytes_per_token / KIB, seed=HASH_SEED)


def size_disk_tier(plan: Plan, host: HostTier, root: Path, cap_bytes: int,
                   user_cpu_gib: float | None = None) -> DiskTier:
    """The CPU tier is the host tier's size where that is on; else one full-length document's KV,
    the least that loads a document back whole (a smaller one churns, see the module docstring).
    PlanError when the host cannot give each engine that much, unless the user chose a size."""
    doc_bytes = math.ceil(plan.max_model_len * plan.kv_bytes_per_token / GIB) * GIB
    if host.on:
        cpu = host.tier_bytes_per_engine
    elif host.tier_bytes_per_engine >= doc_bytes or user_cpu_gib is not None:
        cpu = doc_bytes
    else:
        raise PlanError(key="kv_disk_cpu_short", doc_gib=doc_bytes / GIB, tokens=plan.max_model_len,
                        host_gib=host.host_bytes / GIB, engine_gib=host.tier_bytes_per_engine / GIB)
    return DiskTier(root=root.expanduser().resolve(), cap_bytes=cap_bytes, cpu_bytes_per_engine=cpu,
                    host_tier_on=host.on, kv_bytes_per_token=plan.kv_bytes_per_token,
                    doc_tokens=plan.max_model_len, user_cpu_gib=user_cpu_gib)


def wants_fixed_hash_seed(vllm_args: list[str]) -> bool:
    """Whether the last --kv-transfer-config of a vllm serve command names a secondary tier: its
    files are found again only under the same PYTHONHASHSEED."""
    return bool(kv_extra_config(vllm_args).get("secondary_tiers"))


@dataclass(frozen=True)
class Pruned:
    root: Path
    cap_bytes: int
    removed_files: int
    removed_bytes: int
    stale_tmp_files: int
    kept_bytes: int
    free_bytes: int  # left on the folder's filesystem after pruning

    def said(self) -> Said:
        held = said("disk_held", root=self.root, kept=self.kept_bytes / GIB, cap=self.cap_bytes / GIB)
        what = (said("disk_pruned", files=self.removed_files, gib=self.removed_bytes / GIB, held=held)
                if self.removed_files else said("disk_nothing_to_prune", held=held))
        stale = said("disk_stale_removed", files=self.stale_tmp_files) if self.stale_tmp_files else ""
        fills = said("disk_fills_first") if self.kept_bytes + self.free_bytes < self.cap_bytes else ""
        free = said("disk_free", gib=self.free_bytes / GIB)
        return said("disk_pruned_line", what=what, stale=stale, free=free, fills=fills)


@dataclass(frozen=True)
class _File:
    path: Path
    size: int
    last_used: float


def _walk(root: Path) -> Iterator[_File]:
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            try:
                st = path.lstat()
            except FileNotFoundError:  # another server's writer renamed it meanwhile
                continue
            # atime: a block read back since it was written counts as used then, where the mount
            # records reads (relatime does, once a day); mtime alone would be first-written order.
            yield _File(path, st.st_size, max(st.st_atime, st.st_mtime))


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def prune(root: Path, cap_bytes: int, now: float | None = None) -> Pruned:
    """Remove the least recently used block files until the folder holds at most cap_bytes; .tmp
    files younger than STALE_TMP_S (a writer of another running server) stay, older ones go.
    Only before vLLM starts: a file removed under a running server can stall a request (see the
    module docstring). StartFailed when the folder cannot be created or read."""
    now = time.time() if now is None else now
    try:
        root.mkdir(parents=True, exist_ok=True)
        files = list(_walk(root))
    except OSError as error:
        raise StartFailed(key="kv_disk_unusable", root=root, reason=error.strerror) from error
    stale = [f for f in files if f.path.name.endswith(".tmp") and now - f.last_used > STALE_TMP_S]
    stale_removed = sum(_remove(f.path) for f in stale)
    total = sum(f.size for f in files) - sum(f.size for f in stale)
    removed = removed_bytes = 0
    for block in sorted((f for f in files if f.path.suffix == ".bin"), key=lambda f: f.last_used):
        if total <= cap_bytes:
            break
        total -= block.size
        if _remove(block.path):
            removed, removed_bytes = removed + 1, removed_bytes + block.size
    return Pruned(root=root, cap_bytes=cap_bytes, removed_files=removed, removed_bytes=removed_bytes,
                  stale_tmp_files=stale_removed, kept_bytes=total,
                  free_bytes=shutil.disk_usage(root).free)
