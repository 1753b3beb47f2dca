"""CSV translation through glm1m's engine vs `vllm bench serve`, same server, same shapes, one run.

Starts its own model server (`glm1m serve`, the demo model unless --model is given), measures the
prompt length of the app's translation requests with the server's /tokenize, then alternates:
vLLM's own load generator at the same concurrency, prompt length (shared system-prompt prefix
included) and output length, and the app path (CSV in → engine → checkpoint → CSV out). Prints a
table of req/s and the ratio; writes JSON to bench/results/.

    .venv/bin/python bench/translate_vs_raw.py --rows 400 --concurrency 32 --max-tokens 16
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import platform
import statistics
import subprocess
import tempfile
import time
from datetime import date
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

from glm1m.llm import Llm, LlmClient
from glm1m.server import launch, process
from glm1m.settings import Settings
from glm1m.translation.fanout import Job
from glm1m.translation.job import run_job
from glm1m.translation.table import open_source

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def write_rows(path: Path, count: int, round_no: int = 0) -> list[str]:
    # Each round gets its own rows: a repeated prompt would be served from the prefix cache.
    texts = [f"第{round_no}-{i}条：本合同自双方签字之日起生效。Clause {i}: this contract takes "
             f"effect on signing." for i in range(count)]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "text"])
        writer.writerows([i, t] for i, t in enumerate(texts))
    return texts


def tokens(root: str, messages: list[dict]) -> int:
    reply = httpx.post(f"{root}/tokenize", timeout=30, json={
        "model": launch.SERVED_NAME, "messages": messages, "add_generation_prompt": True})
    return reply.json()["count"]


def prompt_shape(root: str, job: Job, sample: str) -> tuple[int, int]:
    """(whole prompt tokens, shared system-prompt tokens) of one translation request."""
    system = [{"role": "system", "content": job.system_prompt()}]
    whole = tokens(root, [*system, {"role": "user", "content": sample}])
    prefix = tokens(root, [*system, {"role": "user", "content": ""}])
    return whole, prefix


def run_raw(root: str, model_dir: str, rows: int, concurrency: int, input_len: int,
            prefix_len: int, output_len: int, out_dir: Path, n: int) -> float:
    name = f"raw-{n}.json"
    subprocess.run([
        launch.vllm_python(Settings()), "-m", "vllm.entrypoints.cli.main", "bench", "serve",
        "--backend", "openai-chat", "--endpoint", "/v1/chat/completions", "--base-url", root,
        "--model", launch.SERVED_NAME, "--tokenizer", model_dir, "--dataset-name", "random",
        "--random-input-len", str(input_len - prefix_len), "--random-prefix-len", str(prefix_len),
        "--random-output-len", str(output_len), "--ignore-eos", "--num-prompts", str(rows),
        "--max-concurrency", str(concurrency), "--seed", str(n), "--disable-tqdm",
        "--save-result", "--result-dir", str(out_dir), "--result-filename", name,
    ], check=True, capture_output=True)
    return json.loads((out_dir / name).read_text())["request_throughput"]


async def run_app(root: str, rows: int, job: Job, out_dir: Path, n: int) -> float:
    csv_path = out_dir / f"rows-{n}.csv"
    write_rows(csv_path, rows, n)
    llm = LlmClient(Settings(base_url=f"{root}/v1"))
    try:
        started = time.perf_counter()
        summary = await run_job(open_source(csv_path), job, llm, out_dir / f"app-{n}.csv")
        elapsed = time.perf_counter() - started
    finally:
        await llm.aclose()
    assert summary.complete, summary.line()
    return summary.total / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", default=None, help="model folder (default: the demo model)")
    parser.add_argument("--port", type=int, default=8010)
    args = parser.parse_args()

    settings = Settings()
    options = launch.resolve(launch.ServeOptions(
        model=args.model or launch.DEFAULT_MODEL, demo=args.model is None, port=args.port,
        max_model_len=8192, gpu=launch.machine_has_gpu()), settings)
    work = Path(tempfile.mkdtemp(prefix="glm1m-bench-"))
    server = launch.start(options, settings, log_path=str(work / "vllm.log"))
    try:
        launch.wait_ready(server, options, str(work / "vllm.log"))
        root = options.base_url
        texts = write_rows(work / "sample.csv", args.rows, -1)
        job = Job("English", concurrency=args.concurrency, max_tokens=args.max_tokens)
        input_len, prefix_len = prompt_shape(root, job, texts[len(texts) // 2])
        raw, app = [], []
        for n in range(args.rounds):  # alternate, so drift on a shared machine hits both alike
            raw.append(run_raw(root, options.model, args.rows, args.concurrency, input_len,
                               prefix_len, args.max_tokens, work, n))
            app.append(asyncio.run(run_app(root, args.rows, job, work, n)))
    finally:
        process.stop(server)
    report(args, options, input_len, prefix_len, raw, app)


def report(args, options, input_len: int, prefix_len: int, raw: list[float], app: list[float]) -> None:
    ratio = statistics.median(app) / statistics.median(raw)
    table = Table(title=f"{args.rows} rows, concurrency {args.concurrency}, prompt {input_len} tokens "
                        f"({prefix_len} shared), {args.max_tokens} out")
    for column in ("path", "req/s per round", "median req/s"):
        table.add_column(column)
    table.add_row("vllm bench serve", ", ".join(f"{x:.1f}" for x in raw), f"{statistics.median(raw):.1f}")
    table.add_row("glm1m translate engine", ", ".join(f"{x:.1f}" for x in app), f"{statistics.median(app):.1f}")
    table.add_row("ratio app / raw", "", f"{ratio:.2f}")
    Console().print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    result = {"date": date.today().isoformat(), "machine": platform.node(), "cpu_count": len(
        __import__("os").sched_getaffinity(0)), "model": options.model, "rows": args.rows,
        "concurrency": args.concurrency, "max_tokens": args.max_tokens, "input_len": input_len,
        "prefix_len": prefix_len, "raw_req_s": raw, "app_req_s": app, "ratio": ratio}
    path = RESULTS / f"translate-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
