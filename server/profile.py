"""glm1m's serving profile: the flags `glm1m serve` gives vLLM on a GPU, each for a measured reason.

- No --enforce-eager: CUDA graphs on. On one H200 (vLLM 0.26.0, GLM-4-9B-Chat-1M shapes, 100
  concurrent 32-in/256-out requests) the seeds' --enforce-eager gave 11.3 req/s, CUDA graphs 29.5
  req/s: eager mode costs 2.6x (../shared/gpu/README.md, 2026-11-29).
- --enable-prefix-caching: a document's follow-up questions reuse its cached prefill; a cached
  100K-token follow-up started in 0.31 s on the H200 instead of ~7 s.
- Context, memory share, fp8 and TP/DP layout come from the memory plan (server/plan.py).
- SERVING: how the server streams and batches; measured against the plan alone side by side by
  `bench/gpu.py` (docs/benchmarks.md, "One H200: glm1m's serving profile ...").
- Profile fp8kv (opt-in): the same plan with the KV cache in fp8. On one H200 (2026-12-01,
  bench/revisit.py, FlashAttention 3) it answered a 128K-token prompt in 0.93x and a 512K one in
  0.88x the bf16 time and holds twice the tokens (1,048,576 vs 524,288 in 40 GiB; a whole H200
  keeps 2.72 1M-token documents warm instead of 1.37). Not the default: the checkpoint has no calibrated KV
  scales, and random weights cannot measure what fp8 costs in answer quality.
- --block-size 256 on a Hopper GPU with a bf16 KV cache (LONG_READ_BLOCK below): long first reads
  about 10 % faster (45.00 -> 40.32 s for 262,144 tokens on one H200, 2026-12-03).
- The disk tier (opt-in, `--kv-disk DIR`): the CPU tier with vLLM's filesystem tier behind it, so a
  restarted server loads documents back instead of computing them (server/disk_tier.py).
"""

from __future__ import annotations

from pathlib import Path

from glm1m.errors import PlanError
from glm1m.server.disk_tier import DiskTier, size_disk_tier
from glm1m.server.gpus import Gpu
from glm1m.server.host_tier import HostTier, host_memory_bytes, size_tier
from glm1m.server.plan import (
    GLM4_9B_CHAT_1M,
    KvCacheDtype,
    Layout,
    ModelShape,
    Plan,
    gpu_from_memory_mib,
    make_plan,
)

PROFILES = ("auto", "fp8kv", "none")
ALWAYS_ON_GPU = ["--enable-prefix-caching"]
# --stream-interval 8: the UI redraws at most every 0.1 s (GLM1M_STREAM_FLUSH_S), about 10 tokens at
# H200 decode speed, so sending tokens in groups of 8 costs readers nothing and saves the API server
# and every client 7 of 8 events. vLLM always sends the first token at once, so TTFT is unchanged.
# --api-server-count 4: tokenising, detokenising and SSE for hundreds of streams run in four
# processes instead of one, beside the engine core.
# --max-num-batched-tokens 16384: fewer, larger prefill chunks (vLLM's default for the API server
# on an H200 is 8192).
# Measured one at a time on one H200 at 512 concurrent (docs/benchmarks.md): the plan alone 31.6
# req/s, +stream-interval 37.4, +api-server-count 37.0, +max-num-batched-tokens 32.0, all three
# 37.4. The first two relieve the same single API-server process; the third did not move
# throughput or the 1M-token TTFT. Kept as the measured combination rather than an untried subset.
SERVING = ["--stream-interval", "8", "--api-server-count", "4", "--max-num-batched-tokens", "16384"]
# --block-size 256: FlashAttention 3 (vLLM's backend on Hopper) loads a paged KV cache with the copy
# engine (TMA) only when the page is a multiple of its tile, 128 tokens for bf16 causal attention of
# head size 128 (flash-attention hopper/flash_api.cpp, get_pagedkv_tma); vLLM's default page of 16
# takes the cp.async gather instead. One H200, vLLM 0.26.0, 2026-12-03 (docs/benchmarks.md, "The
# first read of a million tokens"): the prefill's attention kernel ran at 562 TFLOP/s with page 16
# and 643 with 128 or 256; a 262,144-token first read took 45.00 s with page 16 and 40.32 s with
# 256, a 524,288-token one 146.53 s (159.02 s with page 16 on 2026-12-01). With an fp8 KV cache no
# page moved the kernel (625-637 TFLOP/s), so fp8 keeps vLLM's default. Measured on one GPU without
# the host or disk tier and only on first reads (not the many-user throughput runs), so it is given
# only there; a request's last block may hold up to 255 unused tokens.
LONG_READ_BLOCK = ["--block-size", "256"]
HOPPER = ("H100", "H200")


def model_shape(model: str) -> ModelShape:
    """A local folder's own shapes; a hub id is taken to be GLM-4-9B-Chat-1M."""
    folder = Path(model)
    return ModelShape.from_config_dir(folder) if (folder / "config.json").exists() else GLM4_9B_CHAT_1M


def plan_for(model: str, detected: list[Gpu], gpus: int, max_model_len: int | None,
             layout: Layout = "data", kv_cache_dtype: KvCacheDtype | None = None) -> Plan:
    """Plan on the smallest detected GPU, so every GPU used can hold its share."""
    smallest = min(detected, key=lambda g: g.memory_mib)
    spec = gpu_from_memory_mib(smallest.name, smallest.memory_mib)
    return make_plan(model_shape(model), spec, gpus=gpus, max_model_len=max_model_len, layout=layout,
                     kv_cache_dtype=kv_cache_dtype)


def sized_tier(profile: str, model: str, detected: list[Gpu], gpus: int, max_model_len: int | None,
               layout: Layout = "data", host_bytes: int | None = None) -> tuple[Plan, HostTier]:
    """The plan of profile auto or fp8kv and the host tier sized for it (host_bytes: the machine's
    memory, default the real one); PlanError when the request cannot fit."""
    plan = plan_for(model, detected, gpus, max_model_len, layout,
                    kv_cache_dtype="fp8" if profile == "fp8kv" else None)
    return plan, size_tier(plan, host_memory_bytes() if host_bytes is None else host_bytes)


def disk_tier_for(profile: str, model: str, detected: list[Gpu], gpus: int,
                  max_model_len: int | None, root: Path, cap_bytes: int, layout: Layout = "data",
                  host_bytes: int | None = None, user_cpu_gib: float | None = None) -> DiskTier:
    """The disk tier at root for this profile and machine; PlanError for profile none (no sizing
    to put a CPU tier in) or a host without room for the CPU tier it needs."""
    if profile == "none":
        raise PlanError(key="kv_disk_profile")
    plan, host = sized_tier(profile, model, detected, gpus, max_model_len, layout, host_bytes)
    return size_disk_tier(plan, host, root, cap_bytes, user_cpu_gib)


def profile_flags(profile: str, model: str, detected: list[Gpu], gpus: int,
                  max_model_len: int | None, layout: Layout = "data",
                  host_bytes: int | None = None, disk: DiskTier | None = None) -> list[str]:
    """The flags for `profile` on this machine (host_bytes: its memory, default the real one);
    PlanError when the request cannot fit. The host KV tier is on only where it holds more than
    the GPU cache does (server/host_tier.py); a disk tier (from disk_tier_for) replaces its flags
    with its own, which size the CPU tier themselves."""
    if profile == "none":
        flags = ["--max-model-len", str(max_model_len)] if max_model_len else []
        split = "--tensor-parallel-size" if layout == "tensor" else "--data-parallel-size"
        return flags + ([split, str(gpus)] if gpus > 1 else [])
    plan, tier = sized_tier(profile, model, detected, gpus, max_model_len, layout, host_bytes)
    return (plan.vllm_flags() + ALWAYS_ON_GPU + SERVING
            + (LONG_READ_BLOCK if measured_block_win(plan, detected, disk is not None or tier.on) else [])
            + (disk.vllm_flags() if disk is not None else tier.vllm_flags()))


def measured_block_win(plan: Plan, detected: list[Gpu], tiered: bool) -> bool:
    """Where LONG_READ_BLOCK was measured faster: bf16 KV cache, one GPU per engine, Hopper, no tier."""
    return (plan.kv_cache_dtype == "auto" and plan.tensor_parallel == 1 and not tiered
            and all(any(name in gpu.name for name in HOPPER) for gpu in detected))
