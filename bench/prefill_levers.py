"""Issue 39: which of vLLM's own levers shortens a long first read, on one H200, side by side.

One driver on the GPU host (run it under setsid: it outlives one device call): first the attention
kernel alone for every KV dtype and page size (bench/attn_kernels.py, in its own process so its
GPU memory is freed), then `vllm serve` with glm1m's profile flags once per lever the kernel figures
show a win for, one server at a time, each timed on prompts of random token ids (time to the first
streamed token, as bench/gpu.py measures it, and vLLM's own TTFT from /metrics). The fastest server
that wins at 256K is also asked a 989,011-token prompt (the 2026-12-03 1M figure's length).

    python3 -m bench.prefill_levers run --out RES            # on the host (bench/gpu_session.sh lv-*)
    python -m bench.prefill_levers report RES                # here: the markdown tables

Every server uses the flags `glm1m serve --profile fp8kv|auto` gives vLLM on one H200 at a 1M
context (server/profile.py at this commit), without the host KV tier, and `--load-format dummy`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench import gpu, revisit_1m
from bench.revisit_1m import server_ttft

PORT = 8000
PROFILE = ["--max-model-len", "1048576", "--gpu-memory-utilization", "0.92", "--enable-prefix-caching",
           "--stream-interval", "8", "--api-server-count", "4", "--max-num-batched-tokens", "16384"]
FP8 = ["--kv-cache-dtype", "fp8"]
SHORT, MEDIUM, LONG = 131_072, 262_144, 989_011
WIN = 0.97  # a page size is tried on a server only if the kernel figures give <= 97 % of page 16's time


def winning_pages(kernels: dict, dtype: str) -> list[int]:
    """Pages whose estimated attention time for a 989,011-token prefill is <= WIN x page 16's,
    fastest first."""
    times = {v["page"]: v["prefill_attention_s"]["989011"] for v in kernels["variants"].values()
             if v["dtype"] == dtype and "prefill_attention_s" in v}
    if 16 not in times:
        return []
    return sorted((p for p in times if times[p] <= WIN * times[16]), key=times.__getitem__)


Step = tuple[str, str, list[str], list[int]]  # (group, name, vLLM flags, prompt lengths)


def servers_for(kernels: dict, flashinfer: bool) -> list[Step]:
    """The servers in the order they run, fp8 (today's 498 s path) first. Within a group the next
    server runs only if the one before it failed (a page vLLM refuses falls back to the next)."""
    plan: list[Step] = [("fp8", "fp8-page16", PROFILE + FP8, [MEDIUM])]
    plan += [("fp8-win", f"fp8-page{page}", PROFILE + FP8 + ["--block-size", str(page)],
              [MEDIUM, SHORT, LONG]) for page in winning_pages(kernels, "fp8")]
    if pages := winning_pages(kernels, "bf16"):
        plan.append(("bf16", "bf16-page16", PROFILE, [MEDIUM]))
        plan += [("bf16-win", f"bf16-page{page}", PROFILE + ["--block-size", str(page)], [MEDIUM])
                 for page in pages]
    if flashinfer:  # last: FlashInfer compiles its kernels on first use on this host
        plan.append(("flashinfer", "fp8-flashinfer", PROFILE + FP8 + ["--attention-backend", "FLASHINFER"],
                     [MEDIUM]))
    return plan


class Server:
    def __init__(self, name: str, flags: list[str], out: Path) -> None:
        self.name, self.flags, self.log = name, flags, out / f"serve-{name}.log"
        self.cache = out / f"vllm-cache-{name}"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout_s: float = 600) -> float:
        cmd = [*gpu.VLLM, "serve", gpu.MODEL, "--served-model-name", gpu.SERVED, "--load-format", "dummy",
               "--host", "127.0.0.1", "--port", str(PORT), *self.flags]
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": "0", "VLLM_CACHE_ROOT": str(self.cache)}
        started = time.perf_counter()
        with self.log.open("w") as log:
            log.write(" ".join(cmd) + "\n")
            log.flush()
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True)
        (self.log.parent / "server.pid").write_text(str(self.proc.pid))  # for gpu_session.sh lv-stop
        while not gpu.healthy(PORT):
            if self.proc.poll() is not None:
                raise RuntimeError(f"vLLM exited with {self.proc.returncode} (see {self.log.name})")
            if time.perf_counter() - started > timeout_s:
                raise RuntimeError(f"vLLM not ready in {timeout_s:.0f} s")
            time.sleep(2)
        return time.perf_counter() - started

    def stop(self) -> None:
        if self.proc is None:
            return
        for sig, wait_s in ((signal.SIGTERM, 60), (signal.SIGKILL, 30)):
            try:
                os.killpg(self.proc.pid, sig)  # its own session: vLLM's engine and API processes
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=wait_s)
                break
            except subprocess.TimeoutExpired:
                continue
        deadline = time.monotonic() + 60  # the next server needs the GPU's memory back
        while time.monotonic() < deadline and gpu_used_mib() > 2048:
            time.sleep(2)


def metrics(port: int) -> dict[str, float]:
    """vLLM's counters, or none: a scrape that fails must not lose the TTFT measured beside it."""
    try:
        return revisit_1m.metrics(port)
    except (httpx.HTTPError, ValueError):
        return {}


def gpu_used_mib() -> int:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True).stdout.split()
    except FileNotFoundError:  # a machine without the driver (the rehearsal here)
        return 0
    return int(out[0]) if out else 0


def from_log(path: Path) -> dict:
    """What vLLM says it chose: backend, FA version, KV tokens, block size, engine start."""
    keep = ("attention backend", "FlashAttention version", "GPU KV cache size", "init engine",
            "Chunked prefill", "FlashInfer", "kv cache", "block_size", "Error", "error")
    lines = [line.strip()[-300:] for line in path.read_text(errors="replace").splitlines()
             if any(k in line for k in keep) and "Capturing" not in line]
    return {"lines": lines[:40], **gpu.kv_from_log(path)}


def run(out: Path, flashinfer: bool, steps: Path | None = None) -> None:
    """steps: a JSON list of [group, name, flags, prompts] to run instead of the kernels' plan."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / ("levers.json" if steps is None else f"levers-{steps.stem}.json")
    result: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "servers": {}}

    def save() -> None:
        path.write_text(json.dumps(result, indent=1))

    started = time.perf_counter()
    kernels_path = out / "kernels.json"
    if steps is not None:
        kernels_path = steps  # not read as kernels: the plan below comes from the file
    try:
        if steps is not None:
            raise FileExistsError
        subprocess.run([sys.executable, "-m", "bench.attn_kernels", "--out", str(kernels_path)],
                       check=False, timeout=420)
    except subprocess.TimeoutExpired:
        result["kernels_error"] = "timed out after 420 s"
    except FileExistsError:
        pass
    result["kernels_s"] = round(time.perf_counter() - started, 1)
    kernels = (json.loads(kernels_path.read_text()) if kernels_path.exists() and steps is None
               else {"variants": {}})
    plan = ([tuple(step) for step in json.loads(steps.read_text())] if steps is not None
            else servers_for(kernels, flashinfer))
    result["plan"] = [list(step) for step in plan]
    save()
    served: set[str] = set()
    for group, name, flags, prompts in plan:
        if group in served:
            continue
        server = Server(name, flags, out)
        entry: dict = {"flags": flags, "prompts": {}}
        result["servers"][name] = entry
        try:
            entry["ready_s"] = round(server.start(), 1)
            save()
            for tokens in prompts:
                before = metrics(PORT)
                seconds = gpu.time_first_token(PORT, gpu.random_ids(tokens, seed=tokens))
                moved = {k: after - before.get(k, 0.0) for k, after in metrics(PORT).items()}
                entry["prompts"][str(tokens)] = {
                    "ttft_s": round(seconds, 2), "vllm_ttft_s": server_ttft(moved),
                    "floor_s": round(gpu.prefill_floor_s(tokens), 1)}
                save()
                print(name, tokens, entry["prompts"][str(tokens)], flush=True)
            served.add(group)
        except Exception as error:  # one server's failure must not cost the others
            entry["error"] = f"{type(error).__name__}: {error}"[:500]
        finally:
            server.stop()
            entry["log"] = from_log(server.log)
            entry["elapsed_s"] = round(time.perf_counter() - started, 1)
            save()
    print("done", round(time.perf_counter() - started, 1), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help="on the GPU host: kernels, then the servers")
    run_parser.add_argument("--out", type=Path, required=True)
    run_parser.add_argument("--flashinfer", action="store_true", help="last, FlashInfer with fp8 KV")
    run_parser.add_argument("--steps", type=Path, help="JSON [[group, name, flags, prompts], ...]: "
                            "these servers instead of the kernels and their plan")
    report_parser = sub.add_parser("report", help="the markdown tables from a results folder")
    report_parser.add_argument("results", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        run(args.out, args.flashinfer, args.steps)
    else:
        from bench.prefill_report import report
        print(report(args.results))


if __name__ == "__main__":
    main()
