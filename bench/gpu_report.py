"""The markdown tables and matplotlib plots of one `bench/gpu.py` run (a folder of PROFILE.json)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; the GPU host and CI have no display
import matplotlib.pyplot as plt  # noqa: E402

ORDER = ["seed", "defaults", "glm1m-plan", "glm1m-plan+profiler", "glm1m-plan+stream",
         "glm1m-plan+apiservers", "glm1m-plan+batched", "glm1m", "glm1m+profiler", "glm1m-fp8kv",
         "glm1m-fp8", "glm1m-tp2"]
LABEL = {"seed": "(a) seeds' flags", "defaults": "(b) vLLM defaults",
         "glm1m-plan": "glm1m memory plan only", "glm1m": "(c) glm1m profile",
         "glm1m-plan+profiler": "glm1m memory plan only (profiler armed)",
         "glm1m-plan+stream": "plan + `--stream-interval 8`",
         "glm1m-plan+apiservers": "plan + `--api-server-count 4`",
         "glm1m-plan+batched": "plan + `--max-num-batched-tokens 16384`",
         "glm1m+profiler": "(c) glm1m profile (profiler armed)",
         "glm1m-fp8kv": "(c) glm1m + fp8 KV cache", "glm1m-fp8": "(c') glm1m + fp8 weights (quality trade-off)",
         "glm1m-tp2": "glm1m, TP 2 (two GPUs)"}


def load(results: Path) -> dict[str, dict]:
    """Every PROFILE.json of a run (vllm bench's own raw-*.json files are not profiles)."""
    runs = {p.stem: json.loads(p.read_text()) for p in results.glob("*.json")
            if not p.stem.startswith("raw-")}
    return dict(sorted(runs.items(), key=lambda kv: ORDER.index(kv[0]) if kv[0] in ORDER else 99))


def tensor_parallel(run: dict) -> int:
    flags = run.get("flags", [])
    return int(flags[flags.index("--tensor-parallel-size") + 1]) if "--tensor-parallel-size" in flags else 1


def cell(run: dict, scenario: str, key: str, fmt: str = "{:.1f}") -> str:
    value = run.get(scenario, {})
    return fmt.format(value[key]) if isinstance(value, dict) and value.get(key) is not None else "–"


def throughput_table(runs: dict[str, dict]) -> list[str]:
    lines = ["| profile | seed 002 req/s | out tok/s | TPOT ms | saturation req/s | out tok/s | "
             "TTFT / TPOT ms | KV tokens | 1M requests at once |", "|---|---|---|---|---|---|---|---|---|"]
    for name, run in runs.items():
        if name == "hf":
            continue
        reported = run.get("vllm_reported", {})
        kv = reported.get("kv_tokens") or []
        conc = reported.get("max_concurrency_1m") or []
        lines.append(
            f"| {LABEL.get(name, name)} | {cell(run, 'seed002', 'request_throughput')} | "
            f"{cell(run, 'seed002', 'output_throughput', '{:,.0f}')} | "
            f"{cell(run, 'seed002', 'median_tpot_ms')} | {cell(run, 'saturation', 'request_throughput')} | "
            f"{cell(run, 'saturation', 'output_throughput', '{:,.0f}')} | "
            f"{cell(run, 'saturation', 'median_ttft_ms', '{:,.0f}')} / "
            f"{cell(run, 'saturation', 'median_tpot_ms')} | {', '.join(f'{k:,}' for k in kv) or '–'} | "
            f"{', '.join(f'{c:.2f}' for c in conc) or '–'} |")
    hf = runs.get("hf", {}).get("hf")
    if hf:
        b1, b100 = hf["batch1"], hf["batch100"]
        lines.append(f"| (d) HF transformers {hf['transformers']} generate(), batch 1 / static batch 100 | "
                     f"{b1['req_s']:.2f} / {b100['req_s']:.2f} | {b1['out_tok_s']:,.0f} / "
                     f"{b100['out_tok_s']:,.0f} | – | – | – | – | – | – |")
    return lines


def long_table(runs: dict[str, dict]) -> list[str]:
    lines = ["| profile | prompt tokens | TTFT s | FLOP floor s (its GPUs) | TTFT / floor |",
             "|---|---|---|---|---|"]
    for name, run in runs.items():
        gpus = tensor_parallel(run)  # the floor is one GPU's; TP splits the FLOPs over its GPUs
        for key in ("long28k", "long128k", "long512k", "long1m"):
            r = run.get(key)
            if isinstance(r, dict) and "ttft_s" in r:
                floor = r["floor_s"] / gpus
                lines.append(f"| {LABEL.get(name, name)} | {r['tokens']:,} | {r['ttft_s']:.1f} | "
                             f"{floor:.1f} | {r['ttft_s'] / floor:.2f} |")
    hf = runs.get("hf", {}).get("hf")
    if hf:
        lines.append(f"| (d) HF transformers | 28,000 | {hf['prefill28k_s']:.2f} | – | – |")
    return lines


def app_table(runs: dict[str, dict]) -> list[str]:
    lines = ["| profile | path | raw (vLLM) | glm1m app path | app / raw |", "|---|---|---|---|---|"]
    for name, run in runs.items():
        f = run.get("followup")
        if isinstance(f, dict) and "raw" in f and "app" in f:
            raw, app = f["raw"], f["app"]
            lines.append(f"| {LABEL.get(name, name)} | {raw['doc_tokens']:,}-token document: first "
                         f"question TTFT s | {raw['first_s']:.2f} | {app['first_s']:.2f} "
                         f"({app['doc_tokens']:,} tokens) | {app['first_s'] / raw['first_s']:.2f} |")
            lines.append(f"| {LABEL.get(name, name)} | cached follow-up TTFT s (median of 3) | "
                         f"{raw['followup_s']:.3f} | {app['followup_s']:.3f} | "
                         f"{app['followup_s'] / raw['followup_s']:.2f} |")
        t = run.get("translate")
        if isinstance(t, dict) and "ratio" in t:
            lines.append(f"| {LABEL.get(name, name)} | CSV translation req/s ({t['rows']} rows, "
                         f"concurrency {t['concurrency']}, {t['input_len']} in / {t['max_tokens']} out) | "
                         f"{', '.join(f'{x:.1f}' for x in t['raw_req_s'])} | "
                         f"{', '.join(f'{x:.1f}' for x in t['app_req_s'])} | {t['ratio']:.2f} "
                         f"(throughput, higher is better) |")
    return lines


def steps_table(runs: dict[str, dict]) -> list[str]:
    """Where a step's time goes (bench/step_profile.py), ms per step over the profiled steps."""
    lines = ["| profile | workload | tokens / step | step | GPU busy | GPU idle | matmul | attention | "
             "sampler | other kernels |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, run in runs.items():
        for key, r in run.items():
            if key.startswith("steps-") and isinstance(r, dict) and "step_ms" in r:
                k = r["kernels_ms"]
                other = sum(v for f, v in k.items() if f.startswith("other")) or None
                lines.append(f"| {LABEL.get(name, name)} | {key.removeprefix('steps-')} | "
                             f"{r['tokens_per_step']:.0f} | {r['step_ms']:.2f} | {r['gpu_busy_ms']:.2f} | "
                             f"{r['gpu_idle_ms']:.2f} | " + " | ".join(
                                 f"{v:.2f}" if v is not None else "–"
                                 for v in (k.get("matmul"), k.get("attention"), k.get("sampler"), other))
                             + " |")
    return lines


def finish(fig, ax, path: Path) -> None:
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_sweep(runs: dict[str, dict], path: Path) -> None:
    """req/s against concurrency; no file when the run has no sweep."""
    lines = {}
    for name, run in runs.items():
        points = [*(run.get("sweep") or []), run.get("seed002")]
        points = sorted((p for p in points if isinstance(p, dict) and p.get("request_throughput")),
                        key=lambda p: p["concurrency"])
        if len(points) > 2:
            lines[name] = points
    if not lines:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, points in lines.items():
        ax.plot([p["concurrency"] for p in points], [p["request_throughput"] for p in points],
                marker="o", label=LABEL.get(name, name))
    ax.set(xscale="log", xlabel="concurrent requests (32 in / 256 out)", ylabel="req/s",
           title="Concurrency sweep, one H200")
    ax.axhline(88, ls="--", c="grey", lw=1, label="decode roofline at batch 100 (88 req/s)")
    finish(fig, ax, path)


def plot_profiles(runs: dict[str, dict], path: Path) -> None:
    """req/s per profile for the workloads the run measured; no file when it measured none."""
    workloads = [w for w in ("seed002", "saturation")
                 if any(isinstance(r.get(w), dict) and r[w].get("request_throughput") for r in runs.values())]
    names = [n for n, r in runs.items() if any(isinstance(r.get(w), dict) for w in workloads)]
    if not names:
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(workloads)
    for i, scenario in enumerate(workloads):
        values = [runs[n].get(scenario, {}).get("request_throughput") or 0 for n in names]
        ax.bar([x + i * width for x in range(len(names))], values, width, label=scenario)
    ax.set_xticks([x + width * (len(workloads) - 1) / 2 for x in range(len(names))], names, rotation=20,
                  fontsize=8)
    ax.set(ylabel="req/s", title="Serving profiles, one H200 (dummy-weight GLM-4-9B-Chat-1M)")
    finish(fig, ax, path)


def plot_ttft(runs: dict[str, dict], path: Path) -> None:
    """Time to first token against prompt length, with the FLOP floor for each GPU count drawn."""
    fig, ax = plt.subplots(figsize=(6, 4))
    floors: dict[int, list[tuple[int, float]]] = {}
    for name, run in runs.items():
        points = [run[k] for k in ("long28k", "long128k", "long512k", "long1m")
                  if isinstance(run.get(k), dict) and "ttft_s" in run[k]]
        if points:
            gpus = tensor_parallel(run)
            ax.plot([p["tokens"] for p in points], [p["ttft_s"] for p in points], marker="o",
                    label=LABEL.get(name, name))
            floors.setdefault(gpus, [(p["tokens"], p["floor_s"] / gpus) for p in points])
    if not floors:
        plt.close(fig)
        return
    for gpus, floor in floors.items():
        ax.plot(*zip(*floor), ls="--", c="grey" if gpus == 1 else "silver",
                label=f"FLOP floor, {gpus} GPU{'s' if gpus > 1 else ''} at 790 TFLOP/s each")
    ax.set(xscale="log", yscale="log", xlabel="prompt tokens", ylabel="time to first token, s",
           title="Long prompts")
    finish(fig, ax, path)


def write_report(results: Path, md: Path, plots: Path) -> None:
    runs = load(results)
    plots.mkdir(parents=True, exist_ok=True)
    stem = results.name  # plots sit beside the results folder, named after it
    plot_profiles(runs, plots / f"{stem}-profiles.png")
    plot_sweep(runs, plots / f"{stem}-sweep.png")
    plot_ttft(runs, plots / f"{stem}-ttft.png")
    flags = [f"- {LABEL.get(n, n)}: `{' '.join(r.get('flags', []))}`" for n, r in runs.items() if n != "hf"]
    sections = ["### Throughput", *throughput_table(runs), "", "### Long prompts", *long_table(runs), "",
                "### App paths vs raw, same server", *app_table(runs), "",
                "### Step time (vLLM's torch profiler, ms per step)", *steps_table(runs), "",
                "### Flags", *flags, ""]
    md.write_text("\n".join(sections))
    print("\n".join(sections))
