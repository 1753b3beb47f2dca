"""Where one engine step's time goes, read from the torch profiler trace that vLLM's worker writes
(`--profiler-config '{"profiler": "torch", ...}'`, then POST /start_profile).

vLLM annotates every worker step as `execute_context_N(T)_generation_M(G)`. Between two step starts
the GPU either runs kernels or waits for the CPU (scheduler, input preparation, launches): the idle
share is what the Python side costs. Kernel time is split by what the kernel does, from its name
(vLLM 0.26's sampler kernels are `_gumbel_sample_kernel` and friends), so the table shows which part
bounds a step; the top kernels are listed too, so a misfiled name shows.

    python3 -m bench.step_profile TRACE.pt.trace.json.gz
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

STEP = re.compile(r"^execute_context_(\d+)\((\d+)\)_generation_(\d+)\((\d+)\)")
# Kernel families by name; the first match wins, so communication and attention come before the
# generic matmul words (some attention kernels are built from cutlass templates).
FAMILIES = (
    ("sampler", ("sample", "gumbel", "topk", "top_k", "top_p")),
    ("communication", ("nccl", "allreduce", "all_reduce", "cross_device_reduce", "multimem")),
    ("attention", ("flash", "fmha", "attn", "attention", "reshape_and_cache", "paged")),
    ("matmul", ("gemm", "cutlass", "nvjet", "xmma", "cublas", "matmul", "wgmma", "splitk")),
)


def load(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        return json.load(handle)["traceEvents"]


def family(kernel: str) -> str:
    lowered = kernel.lower()
    for name, words in FAMILIES:
        if any(word in lowered for word in words):
            return name
    return "other (norm, rotary, activation, copies)"


def summarize(events: list[dict]) -> dict:
    """Per-step averages over the profiled steps: period, GPU busy and idle, kernel families."""
    steps = sorted((e for e in events if e.get("ph") == "X" and STEP.match(e.get("name", ""))
                    and e.get("cat") == "user_annotation"), key=lambda e: e["ts"])
    if len(steps) < 2:
        return {"error": f"{len(steps)} annotated steps in the trace; need at least 2"}
    start, end = steps[0]["ts"], steps[-1]["ts"]  # whole periods only: last step starts the end
    count = len(steps) - 1
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
               and start <= e["ts"] < end]
    by_family: dict[str, float] = defaultdict(float)
    by_kernel: dict[str, float] = defaultdict(float)
    for kernel in kernels:
        by_family[family(kernel["name"])] += kernel["dur"]
        by_kernel[kernel["name"]] += kernel["dur"]
    busy = busy_time([(k["ts"], min(k["ts"] + k["dur"], end)) for k in kernels])
    per_step = lambda us: round(us / count / 1000, 3)  # noqa: E731 - µs total → ms per step
    batch = [sum(int(g) for g in STEP.match(s["name"]).groups()[1::2]) for s in steps[:-1]]
    top = sorted(by_kernel.items(), key=lambda kv: -kv[1])[:12]
    return {
        "steps": count,
        "tokens_per_step": round(sum(batch) / count, 1),
        "step_ms": per_step(end - start),
        "gpu_busy_ms": per_step(busy),
        "gpu_idle_ms": per_step(end - start - busy),
        "kernels_ms": {name: per_step(us) for name, us in
                       sorted(by_family.items(), key=lambda kv: -kv[1])},
        "top_kernels_ms": [[name[:90], per_step(us)] for name, us in top],
    }


def busy_time(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of intervals: kernels on several streams may overlap."""
    total, reach = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


def main() -> None:
    print(json.dumps(summarize(load(Path(sys.argv[1]))), indent=1))


if __name__ == "__main__":
    main()
