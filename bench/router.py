"""The translation and document paths through vLLM's router (two demo replicas, as
`glm1m serve --demo --replicas 2` starts them) against one of those servers directly, side by side
in one run; the router's overhead as a ratio. Starts its own stack on loopback and stops it by PID.

    .venv/bin/python -m bench.router --rows 300 --documents 6 --rounds 5 [--policy cache_aware]

Each round runs every path directly and through the router (the order alternating, after one
uncounted warm-up round), on the same servers, so both see the same machine. On a 2-core VM both
replicas are pinned to the same core (server/launch.py server_cpus), so the router can add no
compute here: what the ratio shows is its cost.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import importlib.metadata
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from glm1m.documents.answer import MapReduce, OpenDocument, answer
from glm1m.documents.budget import Strategy, measure
from glm1m.documents.pdf import extract
from glm1m.llm import ChatParams, LlmClient
from glm1m.server import replicas
from glm1m.server.launch import ServeOptions, resolve
from glm1m.server.router import POLICIES, POLICY
from glm1m.settings import Settings
from glm1m.translation.fanout import Job
from glm1m.translation.job import run_job
from glm1m.translation.table import open_source
from tests.support.pdfs import make_pdf, words_page
from tests.support.service import free_port

PARAMS = ChatParams(temperature=0.0, max_tokens=8)
PLAN = MapReduce(chunk_tokens=2000, concurrency=4, note_tokens=24)
KEY = "bench-router-key"


def settings_for(base: str, tokenize: str, folder: Path) -> Settings:
    return Settings(base_url=f"{base}/v1", tokenize_url=tokenize, api_key=KEY, data_dir=folder,
                    health_path="/readiness" if base != tokenize else "/health")


async def translation(settings: Settings, rows: Path, out: Path) -> float:
    llm = LlmClient(settings)
    try:
        start = time.perf_counter()
        summary = await run_job(open_source(rows), Job("English", max_tokens=4), llm, out)
        assert summary.complete, summary
        return summary.total / (time.perf_counter() - start)
    finally:
        await llm.aclose()
        out.unlink(missing_ok=True)


async def documents(settings: Settings, pdfs: list[Path], questions: int) -> float:
    """Every document asked `questions` questions one after the other, the documents at once."""
    llm = LlmClient(settings)

    async def one(pdf: Path) -> None:
        text = extract(pdf)
        doc = OpenDocument(text, await measure(text, llm, threshold=6000), Strategy.WHOLE, PLAN)
        for q in range(questions):
            async for _ in answer(doc, f"What does page {q + 1} say?", llm, PARAMS):
                pass

    try:
        start = time.perf_counter()
        await asyncio.gather(*(one(p) for p in pdfs))
        return len(pdfs) * questions / (time.perf_counter() - start)
    finally:
        await llm.aclose()


async def tiny(settings: Settings, count: int) -> float:
    """Median seconds of a one-token answer, one at a time: the router's added latency."""
    llm = LlmClient(settings)
    times = []
    try:
        for i in range(count):
            start = time.perf_counter()
            await llm.complete([{"role": "user", "content": f"hi {i}"}], ChatParams(0.0, 1))
            times.append(time.perf_counter() - start)
    finally:
        await llm.aclose()
    return statistics.median(times)


def write_rows(path: Path, count: int) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "text"])
        writer.writerows([i, f"row {i}: the clause number {i} of the contract."] for i in range(count))
    return path


async def measure_all(args: argparse.Namespace, router: str, direct: str, folder: Path) -> dict:
    rows = write_rows(folder / "rows.csv", args.rows)
    pdfs = [make_pdf(folder / f"doc{d}.pdf", [words_page(100 * d + n, 150) for n in range(5)])
            for d in range(args.documents)]
    paths = {"direct": settings_for(direct, direct, folder), "router": settings_for(router, direct, folder)}
    results: dict[str, dict[str, list[float]]] = {p: {"rows/s": [], "questions/s": [], "tiny s": []}
                                                  for p in paths}
    # Round 0 warms both paths up and is not counted; then the order alternates, so neither path
    # always runs first after the other's load.
    for round_ in range(args.rounds + 1):
        order = list(paths) if round_ % 2 else list(reversed(paths))
        for name in order:
            settings = paths[name]
            rows_s = await translation(settings, rows, folder / f"{name}.csv")
            questions_s = await documents(settings, pdfs, args.questions)
            tiny_s = await tiny(settings, args.tiny)
            if round_:
                results[name]["rows/s"].append(rows_s)
                results[name]["questions/s"].append(questions_s)
                results[name]["tiny s"].append(tiny_s)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--documents", type=int, default=6)
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--tiny", type=int, default=50, help="one-token answers per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--policy", choices=POLICIES, default=POLICY,
                        help="the router's policy (cache_aware: the replicas render every prompt)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        settings = Settings(data_dir=folder, router_policy=args.policy)
        port = free_port()
        options = resolve(ServeOptions(demo=True, port=port, max_model_len=8192, api_key=KEY), settings)
        stack = replicas.plan_stack(options, 2, 1, 0, settings)
        procs = replicas.start_stack(stack, settings, folder, lambda line: None)
        try:
            results = asyncio.run(measure_all(args, stack.router.base_url, stack.servers[0].base_url, folder))
        finally:
            replicas.stop_stack(procs)
    show(args, results)


def show(args: argparse.Namespace, results: dict) -> None:
    table = Table(title=f"Through vLLM's router ({args.policy}, 2 demo replicas) vs one server "
                        f"directly, median of {args.rounds} rounds")
    for column in ("path", "direct", "router", "router / direct"):
        table.add_column(column, justify="right" if column != "path" else "left")
    labels = {"rows/s": f"CSV translation, {args.rows} rows (rows/s)",
              "questions/s": f"documents, {args.documents} x {args.questions} questions (questions/s)",
              "tiny s": "one-token answer, one at a time (s, median)"}
    for key, label in labels.items():
        d, r = statistics.median(results["direct"][key]), statistics.median(results["router"][key])
        table.add_row(label, f"{d:.3f}", f"{r:.3f}", f"{r / d:.2f}")
    Console().print(table)
    print(f"vllm-router {importlib.metadata.version('vllm-router')}; all rounds: {results}")


if __name__ == "__main__":
    main()
