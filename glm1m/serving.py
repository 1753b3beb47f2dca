"""What `glm1m serve` started, kept in the data dir, and the prefill estimate for that server.

The estimate starts from the H200 measurement (docs/benchmarks.md), scaled by the serving GPU's
dense bf16 throughput and its tensor-parallel width, and is refined from the first-token times the
app observes on this server: after a few long prompts it is this machine's own figure.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field

from glm1m.catalog import EN, Said, render, said
from glm1m.files import write_whole
from glm1m.settings import Settings

SERVED_FILE = "served.json"
# Prefill time of one prompt on one H200 with `glm1m serve --profile auto` (vLLM 0.26.0, GLM-4-9B-
# Chat-1M shapes, bf16 KV cache, --block-size 256: server/profile.py), 2026-12-03: 262,144 tokens
# 40.32 s, 524,288 tokens 146.53 s; a*n + b*n^2 through those two points. A 1M-token read is an
# extrapolation: 507.5 s by this curve (with page 16 the 2026-11-29 curve measured 602 s at
# 1,047,000 tokens; this one says 555 s there). The fp8kv profile measured 39.99 s at 262,144 and
# 498.49 s at 989,011 (this curve: 40.32 / 496.76 s), so one curve serves both.
H200_A_S_PER_TOKEN = 2.813e-05
H200_B_S_PER_TOKEN2 = 4.794e-10
# Dense bf16 tensor throughput (TFLOP/s, published figures; a long prefill is compute-bound, 95 %
# of it attention), matched against nvidia-smi's GPU name, most specific first.
BF16_TFLOPS: tuple[tuple[str, float], ...] = (
    ("h200", 989.0), ("h100", 989.0), ("a100", 312.0), ("l40s", 362.0), ("4090", 165.0),
    ("a10", 125.0),
)
H200_TFLOPS = 989.0
TP_EFFICIENCY = 0.945  # TP 2 read a 1M-token prompt 1.89x faster than one H200 (benchmarks.md)
MIN_OBSERVED_TOKENS = 4_000  # shorter prompts say more about overheads than about prefill
OBSERVATIONS_KEPT = 20


@dataclass(frozen=True)
class Served:
    """The server `glm1m serve` started, as the app needs to know it."""
    model: str
    gpu: str  # nvidia-smi's name of the first GPU, or "cpu"
    gpus: int
    tensor_parallel: int
    layout: str  # "data" or "tensor"
    profile: str
    max_model_len: int

    def where_said(self) -> Said:
        """The GPUs it serves on, by id: "one H200", "2× H100", "this CPU server"."""
        if self.gpu == "cpu":
            return said("on_cpu_server")
        gpu = self.gpu.removeprefix("NVIDIA ")
        if self.tensor_parallel > 1:
            return said("on_gpus", count=self.tensor_parallel, gpu=gpu)
        return said("on_one_gpu", gpu=gpu)


def record(settings: Settings, served: Served) -> None:
    write_whole(settings.data_dir / SERVED_FILE, json.dumps(asdict(served), indent=2).encode())


def read(settings: Settings) -> Served | None:
    """The record `glm1m serve` left, or None (another server, or none yet)."""
    try:
        return Served(**json.loads((settings.data_dir / SERVED_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def h200_prefill_s(tokens: int) -> float:
    return H200_A_S_PER_TOKEN * tokens + H200_B_S_PER_TOKEN2 * tokens**2


def gpu_tflops(name: str) -> float | None:
    lowered = name.lower().replace(" ", "")
    return next((tflops for key, tflops in BF16_TFLOPS if key in lowered), None)


@dataclass
class PrefillClock:
    """Seconds until a whole prompt has been read, for the server in `served`: the one estimate
    both doors show (the page's process keeps one clock, which learns from what it observes)."""
    served: Served | None = None
    observed: list[float] = field(default_factory=list)  # measured / H200 estimate, per prompt

    @property
    def gpu_scale(self) -> float | None:
        """How much longer than one H200 this server takes; None when nothing is known."""
        if self.served is None:
            return 1.0  # a server glm1m did not start: the measured H200 figure, said as such
        tflops = gpu_tflops(self.served.gpu)
        if tflops is None:
            return None
        return H200_TFLOPS / tflops / max(1.0, self.served.tensor_parallel * TP_EFFICIENCY)

    @property
    def scale(self) -> float | None:
        if self.observed:
            return statistics.median(self.observed)
        return self.gpu_scale

    def estimate_s(self, tokens: int) -> float | None:
        scale = self.scale
        return None if scale is None else scale * h200_prefill_s(tokens)

    def observe(self, tokens: int, seconds: float) -> None:
        """A first token arrived `seconds` after a prompt of `tokens` (not served from cache)."""
        if tokens >= MIN_OBSERVED_TOKENS:
            self.observed = [*self.observed, seconds / h200_prefill_s(tokens)][-OBSERVATIONS_KEPT:]

    def where_said(self) -> Said:
        """What an estimate not learned from this server is for, by id: "one H200", "2× H100"
        (a server glm1m did not start: one H200)."""
        return said("on_one_gpu", gpu="H200") if self.served is None else self.served.where_said()

    def basis_said(self) -> Said:
        """Where the estimate comes from, by id (each door says it in its own language)."""
        if self.observed:
            return said("basis_seen", count=len(self.observed))
        return said("basis_gpu", where=self.where_said())

    def describe_wait(self, tokens: int, read_before: str | None = None, a_set: bool = False,
                      lang: str = EN) -> str:
        """`read_before`: when this server last read the same document ("2026-12-01 23:40"), if
        it did; then it may still hold it, and the full read is only what it costs if not.
        `a_set`: documents asked together (the same set, in the same order), not one. In `lang`."""
        seconds = self.estimate_s(tokens)
        if seconds is None:
            when = said("wait_no_estimate")
        elif seconds >= 90:
            when = said("wait_about_minutes", minutes=seconds / 60, basis=self.basis_said())
        else:
            when = said("wait_about_seconds", seconds=max(1, round(seconds)), basis=self.basis_said())
        if read_before is not None:
            what = said("wait_what_set") if a_set else said("wait_what_document")
            return render(lang, "wait_revisit", what=what, before=read_before, tokens=tokens,
                          when=when)
        return render(lang, "wait_first_answer", when=when, tokens=tokens)
