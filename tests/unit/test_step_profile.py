"""The step-time summary that docs/benchmarks.md quotes: per-step period, GPU busy and idle time
and kernel families, read from a torch profiler trace shaped like vLLM 0.26's."""

from bench.step_profile import summarize


def step(ts: float, decode: int) -> dict:
    return {"ph": "X", "cat": "user_annotation", "ts": ts, "dur": 500,
            "name": f"execute_context_0(0)_generation_{decode}({decode})"}


def kernel(name: str, ts: float, dur: float) -> dict:
    return {"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": dur}


def test_two_steps_split_into_kernel_families_and_idle_time():
    events = [
        step(0, 100), step(1000, 100), step(2000, 100),  # two whole 1 ms periods
        kernel("nvjet_sm90_tst_256x104_64x4_4x1_v_bz_coopA_TNT", 0, 600),
        kernel("void cutlass::device_kernel<flash::FlashAttnFwdSm90<...>>", 600, 200),
        kernel("_gumbel_sample_kernel", 800, 100),  # 100 µs idle after it
        kernel("nvjet_sm90_tst_128x104_64x7_2x1_v_bz_splitK_TNT", 1000, 500),
        kernel("triton_red_fused_fused_add_rms_norm_2", 1400, 200),  # overlaps the matmul
        kernel("nvjet_sm90_tst_256x104_64x4_4x1_v_bz_coopA_TNT", 2000, 600),  # after the window
    ]
    summary = summarize(events)
    assert summary["steps"] == 2
    assert summary["tokens_per_step"] == 100
    assert summary["step_ms"] == 1.0
    # Busy is the union: 900 µs in the first period, 600 µs in the second (overlap counted once).
    assert summary["gpu_busy_ms"] == 0.75
    assert summary["gpu_idle_ms"] == 0.25
    assert summary["kernels_ms"] == {"matmul": 0.55, "attention": 0.1, "sampler": 0.05,
                                     "other (norm, rotary, activation, copies)": 0.1}


def test_a_trace_without_annotated_steps_says_so():
    assert "error" in summarize([kernel("nvjet", 0, 10)])
