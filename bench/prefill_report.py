"""The markdown tables of bench/prefill_levers.py's results folder (kernels.json, levers.json).

    python -m bench.prefill_levers report docs/results/h200-2026-12-03-first-read
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.attn_kernels import CHUNK, LAYERS


def kernel_table(kernels: dict) -> list[str]:
    depths = sorted({int(d) for v in kernels["variants"].values() for d in v.get("chunk_s", {})})
    head = " | ".join(f"chunk ending at {d:,}: s (TFLOP/s)" for d in depths)
    rows = [f"| KV dtype, page | rel. error vs fp32 | {head} | attention of a 989,011-token prefill |",
            "|---|---|" + "---|" * len(depths) + "---|"]
    for v in kernels["variants"].values():
        if "error" in v:
            rows.append(f"| {v['dtype']}, {v['page']} | – | {v['error'][:120]} |")
            continue
        cells = " | ".join(f"{v['chunk_s'][str(d)] * 1000:.1f} ms ({v['chunk_tflops'][str(d)]:.0f})"
                           for d in depths)
        rows.append(f"| {v['dtype']}, {v['page']} | {v['rel_error_vs_fp32']:.2e} | {cells} | "
                    f"{v['prefill_attention_s']['989011']:.1f} s |")
    return rows


def sweep_table(kernels: dict) -> list[str]:
    swept = [v for v in kernels["variants"].values() if v.get("chunk_sweep_at_524288")]
    if not swept:
        return []
    chunks = sorted(int(c) for c in swept[0]["chunk_sweep_at_524288"]) + [CHUNK]
    rows = ["| KV dtype, page | " + " | ".join(f"chunk {c:,}" for c in sorted(chunks)) + " |",
            "|---|" + "---|" * len(chunks)]
    for v in swept:
        sweep = {int(c): e["tflops"] for c, e in v["chunk_sweep_at_524288"].items()}
        sweep[CHUNK] = v["chunk_tflops"]["524288"]
        rows.append(f"| {v['dtype']}, {v['page']} | "
                    + " | ".join(f"{sweep[c]:.0f} TFLOP/s" for c in sorted(chunks)) + " |")
    return rows


def server_table(runs: dict[str, dict]) -> list[str]:
    rows = ["| results file | server | ready after | prompt tokens | TTFT (client) | vLLM's own TTFT | "
            "bf16 FLOP floor |", "|---|---|---|---|---|---|---|"]
    for file, levers in runs.items():
        rows += [row.replace("| ", f"| {file} | ", 1) for row in server_rows(levers)]
    return rows


def server_rows(levers: dict) -> list[str]:
    rows = []
    for name, s in levers["servers"].items():
        if not s["prompts"]:  # failed, or cut (the driver never came back to say why)
            rows.append(f"| {name} | – | – | {s.get('error', 'no result: cut')[:160]} | | |")
        for tokens, p in s["prompts"].items():
            own = f"{p['vllm_ttft_s']:.2f} s" if p.get("vllm_ttft_s") else "–"
            rows.append(f"| {name} | {s.get('ready_s', '–')} s | {int(tokens):,} | {p['ttft_s']:.2f} s | "
                        f"{own} | {p['floor_s']} s |")
    return rows


def report(folder: Path) -> str:
    kernels = json.loads((folder / "kernels.json").read_text())
    runs = {path.name: json.loads(path.read_text()) for path in sorted(folder.glob("levers*.json"))}
    lines = [f"Device: {kernels.get('device')}, torch {kernels.get('torch')}; matrix ceilings "
             f"{kernels.get('ceilings')}; one layer, chunk {CHUNK:,}, x{LAYERS} layers for a prefill.", "",
             *kernel_table(kernels), "", *sweep_table(kernels), "", *server_table(runs)]
    return "\n".join(lines)
