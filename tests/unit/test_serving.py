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
    assert h200 == pytest.approx(h200_prefill_s(tokens)) and 550 < h200 < 650  # measured: 604 s
    assert a100 == pytest.approx(h200 * 989 / 312)  # ~3x slower: bf16 throughput
    assert tp2 == pytest.approx(h200 / 1.89)  # measured on two H200s: 1.89x
    assert "A100" in PrefillClock(served("NVIDIA A100-SXM4-80GB")).describe_wait(tokens)


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
