"""GLM-4-9B-Chat-1M on an H200: serving profiles side by side, with vLLM's own load generator and
glm1m's own app paths, plus the HF transformers baseline; then one report (markdown + plots).

Runs on the GPU host after ../shared/gpu/README.md's install (PYTHONPATH=/tmp/site:REPO), with the
full-size model folder that `data/make_demo_model.py --full-size` writes (served with
`--load-format dummy`: random weights of the real shapes, so every workload uses --ignore-eos or a
fixed output length):

    python3 -m bench.gpu lane --gpus 0 --port 8000 --out RES glm1m:seed002,sweep,saturation hf
    python3 -m bench.gpu report RES --md docs/results/gpu-profiles.md --plots docs/results

A lane runs its steps one after another on the GPUs it is given: `PROFILE:SCENARIO,...` starts
`vllm serve` with that profile, runs the scenarios, records the KV cache vLLM reports and stops the
server; `hf` runs transformers generate(). Each scenario's result is written to RES/PROFILE.json as
soon as it is measured, so a lane cut short still leaves what it finished.

Where the step time goes: `PROFILE+profiler` starts the same server with vLLM's torch profiler armed,
and `steps-seed002` / `steps-saturation` run that workload while the profiler records 50 engine
steps, summarized by bench/step_profile.py (one steps-* scenario per server start: vLLM 0.26's
profiler records once). The glm1m-plan+stream / +apiservers / +batched profiles add one serving
flag each to the memory plan.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
MODEL = os.environ.get("GLM1M_BENCH_MODEL", "/root/full-size-model")
SERVED = "glm-4-9b-chat-1m"
VLLM = [os.environ.get("GLM1M_VLLM_PYTHON", sys.executable), "-m", "vllm.entrypoints.cli.main"]
CONTEXT = 1_048_576
SEED_FLAGS = ["--enforce-eager", "--max-num-seqs", "256", "--gpu-memory-utilization", "0.92"]
# GLM1M_BENCH_QUICK=1 shrinks every workload to check this script on the CPU demo server.
QUICK = os.environ.get("GLM1M_BENCH_QUICK") == "1"
SCALE = 1_000 if QUICK else 1
LONG_PROMPTS = {"long28k": 28_000 // SCALE, "long128k": 128_000 // SCALE,
                "long512k": 512_000 // SCALE, "long1m": 1_048_000 // SCALE}
SWEEP = (1, 10) if QUICK else (1, 10, 50, 100, 200, 500)
FOLLOWUP_DOC_TOKENS = 2_000 if QUICK else 100_000
VOCAB_LOW, VOCAB_HIGH = (10, 600) if QUICK else (1_000, 150_000)  # ordinary token ids
H200_BF16_TFLOPS = 790  # dense bf16 matmul measured on the lent H200 (device README)


def profile_flags(name: str, gpus: int, out: Path) -> list[str]:
    """The flags each named profile gives `vllm serve` besides model, port and dummy weights.
    NAME+profiler is the same server with vLLM's torch profiler ready for the steps-* scenarios."""
    from glm1m.server import profile
    from glm1m.server.gpus import detect_gpus

    if name.endswith(PROFILED):
        return profile_flags(name.removesuffix(PROFILED), gpus, out) + profiler_flags(
            traces_dir(out, name))

    if name == "seed":  # the seed articles' command line
        return ["--max-model-len", str(CONTEXT), *SEED_FLAGS]
    if name == "defaults":  # vLLM's own defaults, only the context raised to 1M
        return ["--max-model-len", str(CONTEXT)]
    planned = profile.plan_for(MODEL, detect_gpus(), 1, CONTEXT).vllm_flags() + profile.ALWAYS_ON_GPU
    if name == "glm1m-plan":  # the memory plan alone, as the two-GPU layout runs used it
        return planned
    one_flag = {"glm1m-plan+stream": profile.SERVING[0:2], "glm1m-plan+apiservers": profile.SERVING[2:4],
                "glm1m-plan+batched": profile.SERVING[4:6]}  # each serving flag on its own
    if name in one_flag:
        return planned + one_flag[name]
    extra = {"glm1m": [], "glm1m-fp8kv": ["--kv-cache-dtype", "fp8"],
             "glm1m-fp8": ["--quantization", "fp8"],  # fp8 weights: a quality trade-off
             "glm1m-tp2": ["--tensor-parallel-size", str(gpus)]}[name]
    return planned + profile.SERVING + extra


PROFILED = "+profiler"
PROFILE_DELAY_STEPS, PROFILE_STEPS = (5, 5) if QUICK else (200, 50)


def traces_dir(out: Path, profile: str) -> Path:
    return out / f"traces-{profile}"  # one per server: lanes run side by side


def profiler_flags(traces: Path) -> list[str]:
    """The worker's torch profiler, armed by POST /start_profile: it skips the first steps (the
    load ramps up), records a fixed number and writes one trace; the front end is not traced."""
    config = {"profiler": "torch", "torch_profiler_dir": str(traces.resolve()),
              "torch_profiler_with_stack": False, "ignore_frontend": True,
              "delay_iterations": PROFILE_DELAY_STEPS, "max_iterations": PROFILE_STEPS}
    return ["--profiler-config", json.dumps(config)]


# ---------------------------------------------------------------- server
def start_server(profile: str, gpus: str, port: int, log: Path) -> subprocess.Popen:
    from glm1m.server import process

    flags = profile_flags(profile, len(gpus.split(",")), log.parent)
    cmd = [*VLLM, "serve", MODEL, "--served-model-name", SERVED, "--load-format", "dummy",
           "--host", "127.0.0.1", "--port", str(port), *flags]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpus}
    log.write_text(" ".join(cmd) + "\n")
    proc = process.start(cmd, env=env, log_path=str(log))
    process.wait_until(lambda: healthy(port), proc, f"vLLM ({profile})", timeout_s=900, log_path=str(log))
    return proc


def healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def kv_from_log(log: Path) -> dict:
    """What vLLM itself reports: KV cache tokens and how many 1M-token requests fit at once."""
    text = log.read_text(errors="replace")
    tokens = re.findall(r"GPU KV cache size: ([\d,]+) tokens", text)
    concurrency = re.findall(r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x", text)
    weights = re.findall(r"Model loading took ([\d.]+) Gi?B", text)
    return {"kv_tokens": [int(t.replace(",", "")) for t in tokens],
            "max_concurrency_1m": [float(c) for _, c in concurrency],
            "weights_gib": [float(w) for w in weights]}


# ---------------------------------------------------------------- workloads
def bench_command(port: int, result: Path, concurrency: int, prompts: int, in_len: int,
                  out_len: int) -> list[str]:
    """vLLM's own load generator, random prompts, fixed output length."""
    return [
        *VLLM, "bench", "serve", "--backend", "openai", "--base-url", f"http://127.0.0.1:{port}",
        "--model", SERVED, "--tokenizer", MODEL, "--dataset-name", "random",
        "--random-input-len", str(in_len), "--random-output-len", str(out_len), "--ignore-eos",
        "--num-prompts", str(prompts), "--max-concurrency", str(concurrency), "--seed", "1",
        "--disable-tqdm", "--percentile-metrics", "ttft,tpot,itl,e2el", "--save-result",
        "--result-dir", str(result.parent), "--result-filename", result.name,
    ]


def vllm_bench(port: int, name: str, out: Path, concurrency: int, prompts: int, in_len: int,
               out_len: int) -> dict:
    result = out / f"raw-{name}.json"
    subprocess.run(bench_command(port, result, concurrency, prompts, in_len, out_len), check=True,
                   capture_output=True)
    raw = json.loads(result.read_text())
    keep = ("request_throughput", "output_throughput", "completed", "duration", "mean_ttft_ms",
            "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "p99_itl_ms")
    return {"concurrency": concurrency, "prompts": prompts, "in": in_len, "out": out_len,
            **{k: raw.get(k) for k in keep}}


def profiled_steps(port: int, name: str, out: Path, traces: Path, concurrency: int, prompts: int,
                   in_len: int, out_len: int) -> dict:
    """Where the server's step time goes under a workload: the load runs, the worker's profiler
    records PROFILE_STEPS steps after PROFILE_DELAY_STEPS and writes a trace, which is summarized
    here. The run's own throughput is not kept (writing the trace stalls the engine)."""
    from bench import step_profile

    before = set(traces.glob("*.pt.trace.json*"))
    if before:  # seen on vLLM 0.26: a second /start_profile is answered 200 and records nothing
        raise RuntimeError("vLLM's profiler records once per server start; give each steps-* "
                           "scenario its own server (PROFILE+profiler:steps-...)")
    command = bench_command(port, out / f"raw-{name}.json", concurrency, prompts, in_len, out_len)
    load = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        httpx.post(f"http://127.0.0.1:{port}/start_profile", timeout=60).raise_for_status()
        load.wait(timeout=900)
    finally:
        if load.poll() is None:
            load.kill()
    deadline = time.monotonic() + 300  # the trace is written when the recorded steps end
    while not (new := set(traces.glob("*.pt.trace.json*")) - before):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no profiler trace appeared in {traces}")
        time.sleep(2)
    trace = max(new, key=lambda path: path.stat().st_mtime)
    return {"concurrency": concurrency, "in": in_len, "out": out_len, "trace": trace.name,
            **step_profile.summarize(step_profile.load(trace))}


def random_ids(count: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(VOCAB_LOW, VOCAB_HIGH) for _ in range(count)]


def time_first_token(port: int, prompt: list[int]) -> float:
    """Seconds until the first streamed token of one completion of a token-id prompt."""
    started = time.perf_counter()
    with httpx.stream("POST", f"http://127.0.0.1:{port}/v1/completions", timeout=3600, json={
        "model": SERVED, "prompt": prompt, "max_tokens": 2, "ignore_eos": True, "stream": True,
    }) as reply:
        reply.raise_for_status()
        for line in reply.iter_lines():
            if line.startswith("data: {"):
                return time.perf_counter() - started
    raise RuntimeError("the stream ended without a token")


def prefill_floor_s(tokens: int) -> float:
    """FLOPs of one causal prefill of GLM-4-9B's shapes at the H200's bf16 rate: linear layers
    2·P·n (P = 8.16e9 non-embedding weights) plus attention 2·n²·heads·head_dim·layers."""
    config = json.loads((Path(MODEL) / "config.json").read_text())
    hidden, layers = config["hidden_size"], config["num_hidden_layers"]
    heads, head_dim = config["num_attention_heads"], config.get("head_dim", 128)
    kv = config["num_key_value_heads"] * head_dim
    per_layer = hidden * (heads * head_dim + 2 * kv) + heads * head_dim * hidden \
        + 3 * hidden * config["intermediate_size"]
    flops = 2 * per_layer * layers * tokens + 2 * tokens**2 * heads * head_dim * layers
    return flops / (H200_BF16_TFLOPS * 1e12)


def long_prompt(port: int, tokens: int) -> dict:
    seconds = time_first_token(port, random_ids(tokens, seed=tokens))
    floor = prefill_floor_s(tokens)
    return {"tokens": tokens, "ttft_s": seconds, "floor_s": floor, "vs_floor": seconds / floor}


def followup_raw(port: int) -> dict:
    """One 100K-token document, then questions on it: the prefix cache serves the follow-ups."""
    document = random_ids(FOLLOWUP_DOC_TOKENS, seed=7)
    times = [time_first_token(port, document + random_ids(32, seed=100 + q)) for q in range(4)]
    return {"doc_tokens": FOLLOWUP_DOC_TOKENS, "first_s": times[0],
            "followup_s": statistics.median(times[1:]), "followups": times[1:]}


def followup_app(port: int) -> dict:
    """The same through glm1m's documents module: measure, whole-document prompt, streamed answer."""
    return asyncio.run(_followup_app(port))


async def _followup_app(port: int) -> dict:
    from glm1m.documents.answer import MapReduce, OpenDocument, answer
    from glm1m.documents.budget import Strategy, measure
    from glm1m.llm import ChatParams, Llm, LlmClient
    from glm1m.settings import Settings

    llm = LlmClient(Settings(base_url=f"http://127.0.0.1:{port}/v1", model=SERVED, request_timeout_s=3600))
    try:
        pdf = await document_of(llm, FOLLOWUP_DOC_TOKENS)
        budget = await measure(pdf, llm, threshold=CONTEXT)
        doc = OpenDocument(pdf, budget, Strategy.WHOLE, MapReduce(32_000, 8, 512))
        params = ChatParams(temperature=0.0, max_tokens=8, extra={"ignore_eos": True})
        times = []
        for question in ("Summarise it.", "What is on page 3?", "Who wrote it?", "List the dates."):
            started = time.perf_counter()
            async for _ in answer(doc, question, llm, params):
                times.append(time.perf_counter() - started)
                break
    finally:
        await llm.aclose()
    return {"doc_tokens": budget.tokens, "pages": budget.pages, "first_s": times[0],
            "followup_s": statistics.median(times[1:]), "followups": times[1:]}


async def document_of(llm, tokens: int):
    """Pages of pseudo-words, sized with the server's tokenizer to about `tokens` tokens."""
    from glm1m.documents.pages import DocumentText, Page

    rng = random.Random(11)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(5000)]

    def page(n: int) -> Page:
        return Page(n, " ".join(rng.choice(words) for _ in range(400)) + ".")

    sample = [page(n) for n in range(1, 11)]
    per_page = await llm.count_text_tokens("\n\n".join(p.text for p in sample)) / len(sample)
    count = max(1, round(tokens / per_page))
    pages = sample + [page(n) for n in range(11, count + 1)]
    return DocumentText("bench.pdf", tuple(pages[:count]), count)


def translate_app_vs_raw(port: int, out: Path, rows: int = 2000, concurrency: int = 64,
                         max_tokens: int = 64) -> dict:
    """CSV translation through the engine (CSV in, checkpoint, CSV out) vs `vllm bench serve` at
    the same concurrency, prompt shape and output length, alternating, two rounds each."""
    from bench import translate_vs_raw as tvr
    from glm1m.translation.fanout import Job

    os.environ.setdefault("GLM1M_VLLM_PYTHON", sys.executable)
    root = f"http://127.0.0.1:{port}"
    job = Job("English", concurrency=concurrency, max_tokens=max_tokens)
    texts = tvr.write_rows(out / "sample.csv", rows, -1)
    input_len, prefix_len = tvr.prompt_shape(root, job, texts[len(texts) // 2])
    raw, app = [], []
    for n in range(2):
        raw.append(tvr.run_raw(root, MODEL, rows, concurrency, input_len, prefix_len, max_tokens,
                               out, n))
        app.append(asyncio.run(tvr.run_app(root, rows, job, out, n)))
    return {"rows": rows, "concurrency": concurrency, "max_tokens": max_tokens,
            "input_len": input_len, "prefix_len": prefix_len, "raw_req_s": raw, "app_req_s": app,
            "ratio": statistics.median(app) / statistics.median(raw)}


def run_scenario(name: str, port: int, out: Path, traces: Path | None = None) -> dict | list:
    """One named workload against the server on PORT; steps-* need the server's profiler TRACES."""
    out_len = 16 if QUICK else 256
    load = {"seed002": (100, 20 if QUICK else 500, 32),  # concurrency, requests, prompt length
            "saturation": (512, 20 if QUICK else 2000, 512)}
    if name in load:
        return vllm_bench(port, name, out, *load[name], out_len)
    if name.startswith("steps-") and name.removeprefix("steps-") in load:
        return profiled_steps(port, name, out, traces or out / "profiler",
                              *load[name.removeprefix("steps-")], out_len)
    if name == "sweep":
        return [vllm_bench(port, f"sweep{c}", out, c, min(1000, max(10, 4 * c)), 32, out_len)
                for c in SWEEP if c != 100]  # 100 is seed002 itself
    if name in LONG_PROMPTS:
        return long_prompt(port, LONG_PROMPTS[name])
    if name == "followup":
        return {"raw": followup_raw(port), "app": followup_app(port)}
    if name == "translate":
        return translate_app_vs_raw(port, out, *((40, 8, 8) if QUICK else ()))
    raise SystemExit(f"unknown scenario {name}")


# ---------------------------------------------------------------- HF transformers baseline
def hf_baseline(gpus: str) -> dict:
    """transformers generate() on the same shapes (random weights, bf16, sdpa): the seeds' baseline."""
    os.environ["CUDA_VISIBLE_DEVICES"] = gpus
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    device = "cuda" if torch.cuda.is_available() else "cpu"  # cpu: a check of this script only
    config = AutoConfig.from_pretrained(MODEL)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16,
                                                 attn_implementation="sdpa").eval()
    result = {"transformers": __import__("transformers").__version__, "torch": torch.__version__}
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def generate(batch: int, in_len: int, new: int) -> float:
        ids = torch.randint(VOCAB_LOW, VOCAB_HIGH, (batch, in_len), device=device)
        sync()
        started = time.perf_counter()
        with torch.inference_mode():
            model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new,
                           min_new_tokens=new, do_sample=False, pad_token_id=0)
        sync()
        return time.perf_counter() - started

    new = 16 if QUICK else 256
    generate(1, 32, 8)  # warm-up: kernels, allocator
    for batch in (1, 100):
        seconds = generate(batch, 32, new)
        result[f"batch{batch}"] = {"seconds": seconds, "req_s": batch / seconds,
                                   "out_tok_s": batch * new / seconds}
    result["prefill28k_s"] = generate(1, LONG_PROMPTS["long28k"], 1)
    return result


# ---------------------------------------------------------------- lane
def save(out: Path, profile: str, key: str, value) -> None:
    path = out / f"{profile}.json"
    data = json.loads(path.read_text()) if path.exists() else {"profile": profile}
    data[key] = value
    path.write_text(json.dumps(data, indent=1))


def run_lane(gpus: str, port: int, out: Path, steps: list[str]) -> None:
    from glm1m.server import process

    out.mkdir(parents=True, exist_ok=True)
    for step in steps:
        profile, _, scenarios = step.partition(":")
        print(time.strftime("%H:%M:%S"), "step", step, flush=True)
        if profile == "hf":  # in a child process, so its GPU memory is freed for the next server
            subprocess.run([sys.executable, "-m", "bench.gpu", "hf", "--gpus", gpus, "--out", str(out)])
            continue
        log = out / f"{profile}.log"
        started = time.perf_counter()
        try:
            server = start_server(profile, gpus, port, log)
        except Exception as error:  # noqa: BLE001 - a failed start is recorded, the lane goes on
            save(out, profile, "error", f"start: {error}")
            continue
        save(out, profile, "startup_s", time.perf_counter() - started)
        save(out, profile, "flags", profile_flags(profile, len(gpus.split(",")), out))
        save(out, profile, "vllm_reported", kv_from_log(log))
        try:
            for scenario in filter(None, scenarios.split(",")):
                print(time.strftime("%H:%M:%S"), " ", profile, scenario, flush=True)
                try:
                    save(out, profile, scenario,
                         run_scenario(scenario, port, out, traces_dir(out, profile)))
                except Exception as error:  # noqa: BLE001 - keep the other scenarios' results
                    save(out, profile, scenario, {"error": repr(error)[:500]})
        finally:
            process.stop(server)
    print(time.strftime("%H:%M:%S"), "lane done", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lane = sub.add_parser("lane", help="run steps one after another on some GPUs")
    lane.add_argument("--gpus", default="0")
    lane.add_argument("--port", type=int, default=8000)
    lane.add_argument("--out", type=Path, required=True)
    lane.add_argument("steps", nargs="+", help="PROFILE:SCENARIO,SCENARIO... or hf")
    one = sub.add_parser("scenario", help="run scenarios against a server already running")
    one.add_argument("--port", type=int, default=8000)
    one.add_argument("--out", type=Path, required=True)
    one.add_argument("names", nargs="+")
    hf = sub.add_parser("hf", help="HF transformers generate() baseline")
    hf.add_argument("--gpus", default="0")
    hf.add_argument("--out", type=Path, required=True)
    report = sub.add_parser("report", help="markdown table and plots from lane results")
    report.add_argument("results", type=Path)
    report.add_argument("--md", type=Path, required=True)
    report.add_argument("--plots", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "lane":
        run_lane(args.gpus, args.port, args.out, args.steps)
    elif args.command == "hf":
        save(args.out, "hf", "hf", hf_baseline(args.gpus))
    elif args.command == "scenario":
        args.out.mkdir(parents=True, exist_ok=True)
        for name in args.names:
            print(name, json.dumps(run_scenario(name, args.port, args.out), indent=1))
    else:
        from bench.gpu_report import write_report
        write_report(args.results, args.md, args.plots)


if __name__ == "__main__":
    main()
