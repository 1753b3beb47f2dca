"""The host-memory KV tier is sized from the host and turned on only where it keeps documents the
GPU cache cannot (vLLM 0.26 writes every block to it as computed and evicts LRU)."""

from __future__ import annotations

import argparse

import pytest

from glm1m.catalog import EN
from glm1m.cli import plan as plan_cli
from glm1m.server.gpus import Gpu
from glm1m.server.host_tier import PINNED_COST, RESERVED_BYTES, size_tier
from glm1m.server.plan import GIB, GLM4_9B_CHAT_1M, GPUS, make_plan
from glm1m.server.profile import profile_flags

H200 = Gpu("NVIDIA H200", 143_771)


def test_the_lent_h200_host_keeps_it_off_since_it_would_hold_nothing_more_than_the_gpu() -> None:
    tier = size_tier(make_plan(GLM4_9B_CHAT_1M, GPUS["h200"]), 128 * GIB)
    assert not tier.on and tier.vllm_flags() == []
    assert tier.warm_documents == pytest.approx((1.37, 1.37), abs=0.01)  # vLLM: 1.37x a 1M request


def test_a_large_host_turns_it_on_and_says_how_many_1m_documents_stay_warm() -> None:
    tier = size_tier(make_plan(GLM4_9B_CHAT_1M, GPUS["h200"]), 1024 * GIB)
    # 992 GiB beside the 32 reserved, asked as 944 since the pinned pool takes 1.05x (84 GiB for 80 on the H200)
    assert tier.on and tier.vllm_flags() == ["--kv-offloading-size", "944", "--kv-offloading-backend", "native"]
    gpu, both = tier.warm_documents
    assert gpu == pytest.approx(1.37, abs=0.01) and both == pytest.approx(944 / 80, abs=0.1)  # 80 GiB each


def test_glm1m_plan_counts_whole_documents_of_each_length_kept_warm() -> None:
    """Whole documents only (a document missing its tail is read again from there), for each
    length up to the served context: what a user keeping a shelf of documents can expect."""
    large = size_tier(make_plan(GLM4_9B_CHAT_1M, GPUS["h200"]), 1024 * GIB)
    assert large.kept_by_size() == [(131_072, 10, 94), (262_144, 5, 47), (524_288, 2, 23), (1_048_576, 1, 11)]
    small = size_tier(make_plan(GLM4_9B_CHAT_1M, GPUS["h200"]), 128 * GIB)
    assert [both for _, _, both in small.kept_by_size()] == [10, 5, 2, 1]  # tier off: the GPU's alone
    assert "512K tokens 2 -> 23" in large.kept_said().render(EN)


def test_the_tier_asked_for_leaves_the_reserve_once_pinned() -> None:
    for host_gib in (160, 512, 1024, 2048):
        tier = size_tier(make_plan(GLM4_9B_CHAT_1M, GPUS["h200"]), host_gib * GIB)
        assert tier.tier_bytes_per_engine * PINNED_COST + RESERVED_BYTES <= host_gib * GIB


def test_data_parallel_replicas_share_the_host_and_each_gets_its_own_tier() -> None:
    tier = size_tier(make_plan(GLM4_9B_CHAT_1M, GPUS["h200"], gpus=8), 2048 * GIB)
    assert tier.engines == 8 and tier.tier_bytes_per_engine == 240 * GIB  # (2048 - 32) / 8 / 1.05


def test_the_serving_profile_adds_the_tier_only_on_a_host_that_gains_from_it() -> None:
    small = profile_flags("auto", "THUDM/glm-4-9b-chat-1m-hf", [H200], 1, None, host_bytes=128 * GIB)
    large = profile_flags("auto", "THUDM/glm-4-9b-chat-1m-hf", [H200], 1, None, host_bytes=1024 * GIB)
    assert "--kv-offloading-size" not in small
    assert large[-4:] == ["--kv-offloading-size", "944", "--kv-offloading-backend", "native"]


def test_the_fp8kv_profile_is_the_plan_with_an_fp8_kv_cache_and_sizes_the_tier_for_it() -> None:
    auto = profile_flags("auto", "THUDM/glm-4-9b-chat-1m-hf", [H200], 1, None, host_bytes=1024 * GIB)
    fp8 = profile_flags("fp8kv", "THUDM/glm-4-9b-chat-1m-hf", [H200], 1, None, host_bytes=1024 * GIB)
    assert "--kv-cache-dtype" not in auto  # bf16 stays the default: fp8's quality cost is unmeasured
    assert fp8[fp8.index("--kv-cache-dtype") + 1] == "fp8"
    assert [f for f in fp8 if f != "--kv-cache-dtype" and f != "fp8"] == auto  # nothing else changes
    plan = make_plan(GLM4_9B_CHAT_1M, GPUS["h200"], kv_cache_dtype="fp8")
    gpu, both = size_tier(plan, 1024 * GIB).warm_documents
    assert gpu == pytest.approx(2.72, abs=0.02)  # vLLM reported 2,852,224 tokens: 2.72x a 1M request
    assert both == pytest.approx(944 / 40, abs=0.2)  # 40 KiB per token in fp8: twice the documents


def plan_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="glm1m")
    plan_cli.add_command(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["plan", *argv])


def test_glm1m_plan_host_mem_prints_the_tier_and_its_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert plan_cli.run_plan(plan_args("--gpu", "h200", "--host-mem", "1024")) == 0
    out = capsys.readouterr().out
    assert "host KV tier on" in out and "11.80 with the tier" in out and "1,024K tokens 1 -> 11" in out
    assert out.strip().splitlines()[-1].endswith("--kv-offloading-size 944 --kv-offloading-backend native")
    assert plan_cli.run_plan(plan_args("--gpu", "h200", "--host-mem", "0")) == 2
    assert "--host-mem must be positive" in capsys.readouterr().err
