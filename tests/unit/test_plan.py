"""The GPU memory planner: its arithmetic against a real vLLM start, its choices, and `glm1m plan`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from glm1m.catalog import EN
from glm1m.cli import plan as plan_cli
from glm1m.cli.main import run as cli_run
from glm1m.server.gpus import Gpu
from glm1m.server.plan import (
    GIB,
    GLM4_9B_CHAT_1M,
    GPUS,
    ModelShape,
    PlanError,
    compare_layouts,
    evaluate,
    gpu_from_memory_mib,
    make_plan,
)

GLM = GLM4_9B_CHAT_1M
# Measured with vLLM 0.26.0 on one H200 at --gpu-memory-utilization 0.92 (2026-11-29).
VLLM_H200_WEIGHTS_GIB = 17.83
VLLM_H200_KV_TOKENS = 1_432_272


def glm_plan(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="glm1m")
    plan_cli.add_command(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["plan", *argv])


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli_run(["plan", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_one_h200_lands_within_5_percent_of_what_vllm_reported() -> None:
    h200 = gpu_from_memory_mib("NVIDIA H200", 143_771)  # nvidia-smi's memory.total
    plan = make_plan(GLM, h200, utilization=0.92)
    assert (plan.quantization, plan.kv_cache_dtype) == (None, "auto")
    assert plan.weights_bytes / GIB == pytest.approx(VLLM_H200_WEIGHTS_GIB, rel=0.05)
    assert plan.kv_tokens == pytest.approx(VLLM_H200_KV_TOKENS, rel=0.05)
    assert make_plan(GLM, GPUS["h200"]).kv_tokens == plan.kv_tokens


def test_the_calibrated_overhead_reproduces_the_measured_kv_cache() -> None:
    # Tighter than 5 %: 5 % of the KV cache is more than the whole overhead constant.
    assert make_plan(GLM, GPUS["h200"]).kv_tokens == pytest.approx(VLLM_H200_KV_TOKENS, rel=0.001)


def test_weights_are_counted_from_the_shapes() -> None:
    assert GLM.parameter_count() == 9_483_857_920
    assert GLM.weight_bytes("none") == 2 * GLM.parameter_count()
    # vLLM's fp8 leaves embeddings and lm_head in bf16, so fp8 is a bit more than half.
    assert 0.5 < GLM.weight_bytes("fp8") / GLM.weight_bytes("none") < 0.6


def test_bf16_kv_cache_takes_80_kib_per_token() -> None:
    assert GLM.kv_bytes_per_token("auto") == 80 * 1024


def test_fp8_kv_cache_halves_the_bytes_and_doubles_the_tokens() -> None:
    assert GLM.kv_bytes_per_token("fp8") == 40 * 1024
    bf16 = evaluate(GLM, GPUS["h200"], kv_cache_dtype="auto")
    fp8 = evaluate(GLM, GPUS["h200"], kv_cache_dtype="fp8")
    assert fp8.kv_tokens / bf16.kv_tokens == pytest.approx(2.0, rel=0.001)


@pytest.mark.parametrize("card", ["4090", "a10"])
def test_a_24_gb_card_gets_fp8_and_an_honest_context(card: str) -> None:
    plan = make_plan(GLM, GPUS[card])
    assert plan.quantization == "fp8" and plan.kv_cache_dtype == "fp8"
    assert 100_000 < plan.max_model_len <= plan.kv_tokens < GLM.max_positions
    assert plan.full_length_requests == 1
    flags = plan.vllm_flags()
    assert flags[flags.index("--max-model-len") + 1] == str(plan.max_model_len)
    assert {"--quantization", "--kv-cache-dtype"} <= set(flags)
    in_bf16 = evaluate(GLM, GPUS[card], quantization="none", kv_cache_dtype="auto")
    assert in_bf16.kv_tokens < plan.max_model_len / 4


def test_a_short_context_gives_up_as_little_bf16_as_it_can() -> None:
    on_4090 = make_plan(GLM, GPUS["4090"], max_model_len=32_768)
    assert (on_4090.quantization, on_4090.kv_cache_dtype) == (None, "fp8")
    on_a10 = make_plan(GLM, GPUS["a10"], max_model_len=32_768)  # fp8 KV alone is not enough there
    assert (on_a10.quantization, on_a10.kv_cache_dtype) == ("fp8", "auto")


def test_an_impossible_context_is_one_sentence() -> None:
    with pytest.raises(PlanError) as caught:
        make_plan(GLM, GPUS["4090"], max_model_len=1_048_576, quantization="none", kv_cache_dtype="auto")
    sentence = str(caught.value)
    assert "1,048,576" in sentence and "4090" in sentence and "--max-model-len" in sentence
    assert "\n" not in sentence and sentence.endswith(".") and sentence.count(". ") == 0


def test_more_context_than_the_model_has_is_refused() -> None:
    with pytest.raises(PlanError, match="at most 1,048,576 tokens"):
        make_plan(GLM, GPUS["h200"], max_model_len=2_000_000)


def test_two_gpus_compare_data_and_tensor_parallel() -> None:
    plan = make_plan(GLM, GPUS["h200"], gpus=2)
    assert (plan.data_parallel, plan.tensor_parallel) == (2, 1)  # one H200 already holds 1M tokens
    assert "--data-parallel-size" in plan.vllm_flags()
    dp, tp = compare_layouts(plan)
    assert (dp.data_parallel, tp.tensor_parallel) == (2, 2)
    assert 1.8 < tp.kv_tokens / dp.kv_tokens < 2.5  # half the weights per GPU, half the KV per token
    assert dp.requests_per_replica == 1 and dp.full_length_requests == 2
    assert tp.requests_per_replica == 2


def test_layout_tensor_puts_one_engine_over_both_gpus() -> None:
    plan = make_plan(GLM, GPUS["h200"], gpus=2, layout="tensor")
    assert (plan.tensor_parallel, plan.data_parallel) == (2, 1)
    assert plan.vllm_flags()[-2:] == ["--tensor-parallel-size", "2"]
    # vLLM 0.26 reported 3,083,968 KV tokens (2.94x of 1M) for this layout on two H200s.
    assert abs(plan.kv_tokens - 3_083_968) / 3_083_968 < 0.01 and plan.requests_per_replica == 2
    assert plan.why is not None and "--layout tensor" in plan.why.render(EN)


def test_layout_tensor_takes_the_widest_group_the_heads_allow() -> None:
    plan = make_plan(GLM, GPUS["h200"], gpus=8, layout="tensor")
    assert (plan.tensor_parallel, plan.data_parallel) == (8, 1)


def test_tensor_parallel_is_recommended_when_one_gpu_cannot_hold_1m_tokens() -> None:
    plan = make_plan(GLM, GPUS["4090"], gpus=4, max_model_len=1_048_576)
    assert (plan.tensor_parallel, plan.data_parallel) == (4, 1)
    flags = plan.vllm_flags()
    assert flags[flags.index("--tensor-parallel-size") + 1] == "4"
    assert plan.kv_tokens >= 1_048_576


def test_shapes_come_from_a_config_json(tmp_path: Path) -> None:
    config = {
        "architectures": ["GlmForCausalLM"], "vocab_size": 151552, "hidden_size": 4096,
        "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": 128, "attention_bias": True, "tie_word_embeddings": False,
        "max_position_embeddings": 1048576,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    shape = ModelShape.from_config_dir(tmp_path)
    assert shape.kv_bytes_per_token() == 80 * 1024
    assert shape.parameter_count() == GLM.parameter_count()
    assert shape.max_positions == 1_048_576


def test_chatglm_format_config_is_read_too(tmp_path: Path) -> None:
    config = {
        "padded_vocab_size": 151552, "hidden_size": 4096, "ffn_hidden_size": 13696, "num_layers": 40,
        "num_attention_heads": 32, "multi_query_attention": True, "multi_query_group_num": 4,
        "kv_channels": 128, "add_qkv_bias": True, "seq_length": 1048576,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    shape = ModelShape.from_config_dir(tmp_path)
    assert shape.parameter_count() == GLM.parameter_count()
    assert shape.kv_bytes_per_token() == GLM.kv_bytes_per_token()


def test_a_folder_without_config_is_a_plan_error(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="config.json"):
        ModelShape.from_config_dir(tmp_path)


def test_cli_prints_the_table_and_the_vllm_flags(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "--gpu", "h200")
    assert code == 0 and err == ""
    assert "1,432,272" in out
    assert "--max-model-len 1048576 --gpu-memory-utilization 0.92" in out.splitlines()


def test_cli_on_a_4090_proposes_fp8(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--gpu", "4090")
    assert code == 0
    assert "--quantization fp8 --kv-cache-dtype fp8" in out


def test_cli_shows_both_layouts_for_several_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--gpu", "h200", "--gpus", "2")
    assert code == 0
    assert "DP 2" in out and "TP 2" in out and "3,096,080" in out
    assert out.rstrip().endswith("--data-parallel-size 2")


def test_cli_layout_tensor_prints_tensor_parallel_flags(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--gpu", "h200", "--gpus", "2", "--layout", "tensor")
    assert code == 0
    assert out.rstrip().endswith("--tensor-parallel-size 2")


def test_cli_impossible_request_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "--gpu", "4090", "--max-model-len", "1048576",
                             "--quantization", "none", "--kv-cache-dtype", "auto")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "does not fit" in err


def test_cli_bad_utilisation_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "--gpu-mem", "80", "--gpu-memory-utilization", "1.5")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_cli_plans_for_the_detected_gpus(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(plan_cli, "detect_gpus", lambda: [Gpu("NVIDIA H200", 143_771)] * 2)
    code, out, _ = run_cli(capsys)
    assert code == 0 and "NVIDIA H200" in out and "--data-parallel-size 2" in out


def test_cli_without_a_gpu_asks_for_one(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(plan_cli, "detect_gpus", lambda: [])
    code, _, err = run_cli(capsys)
    assert code == 2 and "--gpu" in err and len(err.strip().splitlines()) == 1


def test_the_plan_is_said_in_the_clis_language(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`glm1m plan` says its table, its reasons and its tiers in the CLI's language (the catalog's
    serving domain); the flags stay the flags."""
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GLM1M_LANG", "zh")
    code, out, _ = run_cli(capsys, "--gpu", "h200", "--gpus", "2", "--host-mem", "1024")
    assert code == 0 and "原因：" in out and "数据并行 2（副本）" in out and "主机 KV 层开启" in out
    assert "vllm serve 参数：" in out and "--data-parallel-size 2" in out and "Why" not in out
    monkeypatch.setenv("GLM1M_LANG", "en")
    code, out, _ = run_cli(capsys, "--gpu", "h200")
    assert code == 0 and "Why: bf16 weights and bf16 KV cache hold a 1,048,576-token request on one GPU." in out
