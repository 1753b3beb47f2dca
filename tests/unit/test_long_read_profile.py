"""`glm1m serve --profile auto` gives vLLM --block-size 256 where it was measured to shorten a long
first read (one H200, bf16 KV cache, no KV tier: docs/benchmarks.md, 2026-12-03), and nowhere else."""

from __future__ import annotations

from glm1m.server.gpus import Gpu
from glm1m.server.plan import GIB
from glm1m.server.profile import LONG_READ_BLOCK, profile_flags

H200 = Gpu("NVIDIA H200", 143_771)
MODEL = "THUDM/glm-4-9b-chat-1m-hf"


def flags(profile: str, gpus: list[Gpu], host_gib: int = 128, count: int = 1,
          layout: str = "data") -> list[str]:
    return profile_flags(profile, MODEL, gpus, count, None, layout=layout, host_bytes=host_gib * GIB)


def test_auto_on_one_h200_reads_with_256_token_blocks() -> None:
    auto = flags("auto", [H200])
    assert LONG_READ_BLOCK == ["--block-size", "256"]
    assert auto[auto.index("--block-size") + 1] == "256" and "--kv-cache-dtype" not in auto
    assert auto[auto.index("--max-model-len") + 1] == "1048576"  # 1,048,576 is 4,096 blocks of 256


def test_fp8kv_keeps_vllms_block_no_page_size_moved_its_kernel() -> None:
    assert "--block-size" not in flags("fp8kv", [H200])


def test_not_with_the_host_tier_nor_off_hopper_nor_tensor_parallel_all_unmeasured() -> None:
    assert "--kv-offloading-size" in (tiered := flags("auto", [H200], host_gib=1024))
    assert "--block-size" not in tiered
    a100 = Gpu("NVIDIA A100-SXM4-80GB", 81_920)
    assert "--block-size" not in flags("auto", [a100])
    assert "--block-size" not in flags("auto", [H200, H200], count=2, layout="tensor")
    assert "--block-size" in flags("auto", [H200, H200], count=2)  # replicas: one H200 each
    assert "--block-size" not in flags("none", [H200])
