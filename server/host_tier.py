"""The KV tier in host memory: how much of it to give vLLM's native CPU offloading, and what it buys.

vLLM 0.26's OffloadingConnector (`--kv-offloading-size GiB --kv-offloading-backend native`) writes
every KV block to host memory as it is computed and evicts least-recently-used (vllm/v1/kv_offload/
cpu/manager.py). So it holds the most recent blocks, as the GPU cache does: a tier no larger than
the GPU's KV cache holds nothing the GPU does not, and a revisited document is lost from both at
once — what a first probe on the H200 found (128 GiB of host memory beside 109 GiB of KV cache:
a 262K-token revisit took 44.33 s against 44.06 s for the first read). The tier adds only what it
holds beyond the GPU cache, so glm1m turns it on only when that is worth it: host memory per engine
at least MIN_GAIN times the engine's GPU KV cache (a real 8-GPU server with 1-2 TiB; not the lent
H200 host). Its `store_threshold` (store only blocks looked up twice) cannot keep a document that
got a follow-up either: in 0.26 the tier is looked up only past the GPU prefix-cache hit, so a
follow-up served by the GPU never counts, and a lookup stops at the first missing block, so a new
document counts only its first block (distributed/kv_transfer/kv_connector/v1/offloading/
scheduler.py). What does keep a document someone came back to is the plain LRU: every request
touches all of its blocks in the tier, GPU-served follow-ups included, so the tier holds the last
tier/document documents asked about. `arc` does no better there: a long prefill touches its own
earlier blocks once they are stored, which promotes a one-off document to ARC's "frequent" list.
Measured on one H200 (2026-12-01, bench/revisit.py, GPU KV cut to 40 GiB, a 64 GiB tier): a 262K
document revisited after two others answered in 1.48 s against 45.27 s without the tier, and was
lost after three more (44.20 s); prefills with the tier were within 0.6 % of those without.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from glm1m.catalog import Said, said
from glm1m.server.plan import GIB, Plan

# The OS, the app, vLLM's own processes and page cache keep this much, beside ONE server: on the
# lent 125 GiB H200 host an 82 GiB tier was OOM-killed (dmesg) while a second vLLM server started
# beside it. The plain tier is pinned anonymous memory; the disk tier's is a file in /dev/shm
# (server/shm.py), which a force-killed vLLM leaves behind.
RESERVED_BYTES = 32 * GIB
# What the pinned tier really takes per GiB asked: on one H200 host (2026-12-02, vLLM 0.26.0,
# docs/benchmarks.md "fourth run") an 80 GiB tier showed as 84 GiB of shared memory once vLLM was
# ready (its 40 tensors rounded up), beside ~9 GiB for vLLM's own five processes, which
# RESERVED_BYTES covers. Not the "up to 2x" a maintainer's note on vLLM PR #46278 warns of.
PINNED_COST = 1.05
# Document lengths `glm1m plan` counts kept documents for, up to the served context.
DOCUMENT_TOKENS = (131_072, 262_144, 524_288, 1_048_576)
MIN_GAIN = 1.25  # host tier per engine over GPU KV cache per engine, below which it buys nothing
MIN_TIER_BYTES = 16 * GIB


@dataclass(frozen=True)
class HostTier:
    host_bytes: int  # the machine's memory
    tier_bytes_per_engine: int  # --kv-offloading-size, per engine (vLLM counts it across TP ranks)
    gpu_kv_bytes_per_engine: int
    doc_bytes: int  # KV of one full-length (max_model_len) document
    engines: int  # data-parallel replicas, each with a tier of its own
    doc_tokens: int = 1_048_576  # max_model_len

    @property
    def on(self) -> bool:
        return (self.tier_bytes_per_engine >= MIN_TIER_BYTES
                and self.tier_bytes_per_engine >= MIN_GAIN * self.gpu_kv_bytes_per_engine)

    @property
    def warm_documents(self) -> tuple[float, float]:
        """Full-length documents one engine keeps warm: GPU alone, and GPU with the tier (the
        tier holds the most recent blocks, the GPU's among them, so the larger of the two counts)."""
        gpu = self.gpu_kv_bytes_per_engine / self.doc_bytes
        tier = self.tier_bytes_per_engine / self.doc_bytes if self.on else 0.0
        return gpu, max(gpu, tier)

    def kept_by_size(self) -> list[tuple[int, int, int]]:
        """(tokens, on the GPU, with the tier): whole documents of each length one engine keeps
        warm. Whole ones only: a document missing its tail is read again from there. Since issue 27
        one-shot work stores nothing in the tier, so what it holds are documents read whole."""
        per_token = self.doc_bytes / self.doc_tokens
        sizes = sorted({t for t in DOCUMENT_TOKENS if t < self.doc_tokens} | {self.doc_tokens})
        kept = []
        for tokens in sizes:
            gpu = int(self.gpu_kv_bytes_per_engine // (tokens * per_token))
            tier = int(self.tier_bytes_per_engine // (tokens * per_token)) if self.on else 0
            kept.append((tokens, gpu, max(gpu, tier)))
        return kept

    def kept_said(self) -> Said:
        return said("host_kept", sizes=[said("host_kept_size", k=tokens // 1024, gpu=gpu, both=both)
                                        for tokens, gpu, both in self.kept_by_size()])

    def vllm_flags(self) -> list[str]:
        if not self.on:
            return []
        return ["--kv-offloading-size", str(self.tier_bytes_per_engine // GIB),
                "--kv-offloading-backend", "native"]

    def said(self) -> Said:
        gpu, both = self.warm_documents
        if not self.on:
            return said("host_tier_off", host=self.host_bytes / GIB, tier=self.tier_bytes_per_engine / GIB,
                        gpu_kv=self.gpu_kv_bytes_per_engine / GIB, gain=MIN_GAIN, gpu=gpu)
        return said("host_tier_on", tier=self.tier_bytes_per_engine / GIB, gpu=gpu, both=both)


def size_tier(plan: Plan, host_bytes: int) -> HostTier:
    engines = max(1, plan.data_parallel)
    # Asked for, so that what the pinned pool really takes (PINNED_COST) fits beside the reserve.
    per_engine = int(max(0, (host_bytes - RESERVED_BYTES) // engines) / PINNED_COST) // GIB * GIB
    return HostTier(host_bytes=host_bytes, tier_bytes_per_engine=per_engine,
                    gpu_kv_bytes_per_engine=plan.kv_tokens * plan.kv_bytes_per_token,
                    doc_bytes=plan.max_model_len * plan.kv_bytes_per_token, engines=engines,
                    doc_tokens=plan.max_model_len)


def host_memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
