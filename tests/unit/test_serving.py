"""The wait shown before a whole-document answer is the serving GPU's, not always an H200's, and
it learns this server's own speed from the prompts it reads."""

from __future__ import annotations

import pytest

from glm1m.serving import PrefillClock, Served, h200_prefill_s, read, record
from glm1m.settings import Settings


def served(gpu: str, tp: int = 1) -> Served:
    return Served(model="glm", gpu=gpu, gpus=tp, tensor_parallel=tp, layout="tensor" if tp > 1 else "data",
                  profile="auto", max_model_len=1_048_576)


def test_the_estimate_scales_with_the_serving_gpu_and_its_tensor_parallel_width() -> None:
    tokens = 1_000_000
    h200 = PrefillClock(served("NVIDIA H200")).estimate_s(tokens)
    a100 = PrefillClock(served("NVIDIA A100-SXM4-80GB")).estimate_s(tokens)
    tp2 = PrefillClock(served("NVIDIA H200", tp=2)).estimate_s(tokens)
    assert h200 == pytest.approx(h200_prefill_s(tokens)) and 480 < h200 < 530  # extrapolated: 507.5 s
    assert a100 == pytest.approx(h200 * 989 / 312)  # ~3x slower: bf16 throughput
    assert tp2 == pytest.approx(h200 / 1.89)  # measured on two H200s: 1.89x
    assert "A100" in PrefillClock(served("NVIDIA A100-SXM4-80GB")).describe_wait(tokens)


def test_the_h200_curve_is_the_auto_profiles_measured_first_reads() -> None:
    """docs/benchmarks.md, 2026-12-03: --profile auto (bf16 KV, --block-size 256) read 262,144 tokens
    in 40.32 s and 524,288 in 146.53 s; the fp8kv profile read 989,011 tokens in 498.49 s."""
    assert h200_prefill_s(262_144) == pytest.approx(40.32, rel=0.005)
    assert h200_prefill_s(524_288) == pytest.approx(146.53, rel=0.005)
    assert h200_prefill_s(989_011) == pytest.approx(498.49, rel=0.02)
    assert h200_prefill_s(1_047_000) < 602 * 0.95  # page 16 measured 602 s there (2026-11-29)


def test_an_unknown_server_says_h200_and_a_cpu_server_has_no_estimate_until_it_learns() -> None:
    assert "for one H200" in PrefillClock(None).describe_wait(200_000)
    cpu = PrefillClock(served("cpu"))
    assert cpu.estimate_s(20_000) is None and "no estimate yet" in cpu.describe_wait(20_000)
    cpu.observe(20_000, 8.0)  # what this server really took
    assert cpu.estimate_s(20_000) == pytest.approx(8.0)
    assert cpu.estimate_s(40_000) > 8.0 and "from 1 prompt read on this server" in cpu.describe_wait(40_000)


def test_short_prompts_do_not_teach_it_and_old_observations_age_out() -> None:
    clock = PrefillClock(served("NVIDIA H200"))
    clock.observe(500, 30.0)  # a short prompt: overheads, not prefill
    assert clock.observed == []
    for _ in range(30):
        clock.observe(100_000, 2 * h200_prefill_s(100_000))
    assert len(clock.observed) == 20 and clock.estimate_s(100_000) == pytest.approx(2 * h200_prefill_s(100_000))


def test_the_record_glm1m_serve_leaves_is_read_back_and_a_damaged_one_ignored(tmp_path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert read(settings) is None
    record(settings, served("NVIDIA L40S"))
    assert read(settings) == served("NVIDIA L40S")
    (tmp_path / "served.json").write_text("{not json")
    assert read(settings) is None
