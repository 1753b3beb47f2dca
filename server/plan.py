"""GPU memory planner: how much context and how many full-length requests a GPU (or several) holds.

Plain arithmetic over a model's shapes, with no vLLM import, so it runs anywhere. It models vLLM's
own budget: (GPU memory × --gpu-memory-utilization) − weights − a calibrated overhead is what vLLM
gives its KV cache, in whole blocks of BLOCK_SIZE tokens.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from glm1m.catalog import Said, said
from glm1m.errors import PlanError

GIB = 1024**3
KIB = 1024

KvCacheDtype = Literal["auto", "fp8"]  # vLLM's names: "auto" stores the KV cache in the model's bf16
Quantization = Literal["none", "fp8"]  # "fp8": vLLM's online fp8 quantisation of a bf16 checkpoint
# "data": replicas, each on the fewest GPUs that hold a request (more users at once); "tensor": the
# widest tensor-parallel engine (measured on 2 H200s: 1.89x faster 1M-token prefill, 1.17x vs 1.83x
# throughput at 512 concurrent; docs/benchmarks.md).
Layout = Literal["data", "tensor"]
LAYOUTS: tuple[Layout, ...] = ("data", "tensor")

DEFAULT_UTILIZATION = 0.92
BLOCK_SIZE = 16  # vLLM's default KV block on CUDA: the cache is allocated in whole blocks
# Memory that is neither weights nor KV cache: the profiling run's activation peak (sampler logits
# included), CUDA graphs, the CUDA/torch/NCCL runtime, the driver's reserved memory (nvidia-smi
# counts it, vLLM cannot use it), and the ~0.17 GiB vLLM reports as model memory beyond the bf16
# parameter bytes. Calibrated, not derived: on one H200 (nvidia-smi total 143,771 MiB) at
# utilisation 0.92, vLLM 0.26.0 reported 17.83 GiB of weights and a 1,432,272-token KV cache
# (measured 2026-11-29). 143,771 MiB × 0.92 − 17.665 GiB (our bf16 parameter count) − 1,432,272 ×
# 80 KiB = 2.23 GiB. vLLM profiles a smaller default batch on cards under 70 GiB, so the constant
# should err on the safe side there; with tensor parallelism NCCL adds buffers it does not cover.
OVERHEAD_BYTES = int(2.23 * GIB)
# Honest context lengths are rounded down to a multiple of this: a round number, slightly under
# the exact KV capacity, that vLLM accepts as --max-model-len.
CONTEXT_STEP = 1024


@dataclass(frozen=True)
class ModelShape:
    name: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    qkv_bias: bool
    tied_embeddings: bool
    max_positions: int

    @classmethod
    def from_config_dir(cls, path: str | Path) -> ModelShape:
        """Shapes from a Hugging Face model folder's config.json (HF `glm` or THUDM `chatglm` keys)."""
        folder = Path(path)
        try:
            config = json.loads((folder / "config.json").read_text())
        except (OSError, ValueError) as error:
            raise PlanError(key="config_unreadable", folder=folder, error=error) from error
        return cls.from_config(config, name=folder.name or str(folder))

    @classmethod
    def from_config(cls, config: dict, name: str) -> ModelShape:
        def key(*names: str) -> int:
            for n in names:
                if isinstance(config.get(n), int):
                    return config[n]
            raise PlanError(key="config_lacks", name=name, names=" or ".join(names))

        heads = key("num_attention_heads")
        hidden = key("hidden_size")
        # ChatGLM-format configs name grouped-query attention differently; absent means no grouping.
        if "num_key_value_heads" in config or config.get("multi_query_attention"):
            kv_heads = key("num_key_value_heads", "multi_query_group_num")
        else:
            kv_heads = heads
        head_dim = config.get("head_dim") or config.get("kv_channels") or hidden // heads
        return cls(
            name=name, vocab_size=key("vocab_size", "padded_vocab_size"), hidden_size=hidden,
            intermediate_size=key("intermediate_size", "ffn_hidden_size"),
            num_layers=key("num_hidden_layers", "num_layers"), num_heads=heads, num_kv_heads=kv_heads,
            head_dim=int(head_dim),
            qkv_bias=bool(config.get("attention_bias", config.get("add_qkv_bias", False))),
            # Absent means untied here: counting a separate lm_head errs on the side of less room.
            tied_embeddings=bool(config.get("tie_word_embeddings", False)),
            max_positions=key("max_position_embeddings", "seq_length"),
        )

    def parameter_count(self) -> int:
        return self.linear_parameters(1) + self.other_parameters(1)

    def linear_parameters(self, tp: int) -> int:
        """Per-GPU parameters of the layers vLLM's fp8 quantises (q/k/v/o, gate_up, down)."""
        q = self.num_heads // tp * self.head_dim
        kv = self.kv_heads_per_gpu(tp) * self.head_dim
        ffn = -(-self.intermediate_size // tp)
        per_layer = self.hidden_size * (q + 2 * kv) + q * self.hidden_size + 3 * ffn * self.hidden_size
        return self.num_layers * per_layer

    def other_parameters(self, tp: int) -> int:
        """Per-GPU parameters that stay bf16 under fp8: embeddings, lm_head, biases, norms."""
        vocab_rows = -(-self.vocab_size // tp)
        embeddings = vocab_rows * self.hidden_size * (1 if self.tied_embeddings else 2)
        bias = (self.num_heads // tp + 2 * self.kv_heads_per_gpu(tp)) * self.head_dim if self.qkv_bias else 0
        norms = 2 * self.hidden_size  # input and post-attention RMSNorm, replicated on every GPU
        return embeddings + self.num_layers * (bias + norms) + self.hidden_size  # + final norm

    def weight_bytes(self, quantization: Quantization = "none", tp: int = 1) -> int:
        """Weight bytes on each GPU. vLLM's fp8 only quantises linear layers (its scales are a few
        bytes per layer and left out); embeddings and lm_head stay bf16."""
        linear_bytes = 1 if quantization == "fp8" else 2
        return self.linear_parameters(tp) * linear_bytes + self.other_parameters(tp) * 2

    def kv_heads_per_gpu(self, tp: int) -> int:
        # With more GPUs than KV heads, vLLM replicates each KV head instead of splitting it.
        return max(1, self.num_kv_heads // tp)

    def kv_bytes_per_token(self, kv_cache_dtype: KvCacheDtype = "auto", tp: int = 1) -> int:
        """KV cache bytes one token takes on each GPU: K and V for every layer and KV head."""
        element = 1 if kv_cache_dtype == "fp8" else 2
        return self.num_layers * 2 * self.kv_heads_per_gpu(tp) * self.head_dim * element

    def tensor_parallel_sizes(self, gpus: int) -> list[int]:
        """TP sizes vLLM accepts on `gpus` GPUs: dividing the GPU count and the attention heads,
        and either dividing the KV heads or a multiple of them."""
        return [tp for tp in range(1, gpus + 1)
                if gpus % tp == 0 and self.num_heads % tp == 0
                and (self.num_kv_heads % tp == 0 or tp % self.num_kv_heads == 0)]


GLM4_9B_CHAT_1M = ModelShape(
    name="GLM-4-9B-Chat-1M", vocab_size=151552, hidden_size=4096, intermediate_size=13696,
    num_layers=40, num_heads=32, num_kv_heads=4, head_dim=128, qkv_bias=True,
    tied_embeddings=False, max_positions=1_048_576,
)


@dataclass(frozen=True)
class GpuSpec:
    name: str
    memory_gib: float

    @property
    def memory_bytes(self) -> int:
        return int(self.memory_gib * GIB)


def gpu_from_memory_mib(name: str, mib: int | float) -> GpuSpec:
    """A GpuSpec from nvidia-smi's memory.total (MiB), e.g. from glm1m.server.gpus.detect_gpus()."""
    if mib <= 0:
        raise PlanError(key="gpu_memory_mib", mib=mib, name=name)
    return GpuSpec(name=name, memory_gib=mib / 1024)


# nvidia-smi's memory.total for each card, the same figure detect_gpus() reads, so a named GPU and a
# detected one plan alike. The h200 figure was read on an H200 while writing this; CUDA's total there
# was 615 MiB less (nvidia-smi: 616 MiB reserved), which OVERHEAD_BYTES absorbs. The others are the
# cards' published nvidia-smi totals, not read here.
GPUS: dict[str, GpuSpec] = {
    key: gpu_from_memory_mib(key, mib) for key, mib in {
        "h200": 143_771, "h100-80": 81_559, "a100-80": 81_920, "a100-40": 40_960,
        "l40s": 46_068, "4090": 24_564, "a10": 23_028,
    }.items()
}


@dataclass(frozen=True)
class Plan:
    model: ModelShape
    gpu: GpuSpec
    utilization: float
    tensor_parallel: int
    data_parallel: int
    quantization: Literal["fp8"] | None
    kv_cache_dtype: KvCacheDtype
    weights_bytes: int  # the whole model, as stored (fp8 linear layers when quantised)
    weights_bytes_per_gpu: int
    kv_bytes_per_token: int  # the whole model: all layers and KV heads, for one token
    kv_budget_bytes_per_gpu: int  # what is left for the KV cache on each GPU (may be negative)
    kv_tokens: int  # KV cache of one engine (replica), in whole blocks
    max_model_len: int
    why: Said | None = field(default=None, hash=False)  # explain(): why this layout and these dtypes

    @property
    def gpus(self) -> int:
        return self.tensor_parallel * self.data_parallel

    @property
    def requests_per_replica(self) -> int:
        """Requests of max_model_len tokens one engine holds at once (shorter ones fit more)."""
        return self.kv_tokens // self.max_model_len if self.max_model_len else 0

    @property
    def full_length_requests(self) -> int:
        return self.requests_per_replica * self.data_parallel

    @property
    def fits(self) -> bool:
        return self.requests_per_replica >= 1

    def vllm_flags(self) -> list[str]:
        flags = ["--max-model-len", str(self.max_model_len),
                 "--gpu-memory-utilization", f"{self.utilization:g}"]
        if self.quantization:
            flags += ["--quantization", self.quantization]
        if self.kv_cache_dtype == "fp8":
            flags += ["--kv-cache-dtype", "fp8"]
        if self.tensor_parallel > 1:
            flags += ["--tensor-parallel-size", str(self.tensor_parallel)]
        if self.data_parallel > 1:
            flags += ["--data-parallel-size", str(self.data_parallel)]
        return flags


def evaluate(model: ModelShape, gpu: GpuSpec, tensor_parallel: int = 1, data_parallel: int = 1,
             utilization: float = DEFAULT_UTILIZATION, quantization: Quantization = "none",
             kv_cache_dtype: KvCacheDtype = "auto", max_model_len: int | None = None) -> Plan:
    """The numbers for one fixed layout and dtype choice; no choosing, no raising. Without
    max_model_len the plan takes the longest context the KV cache holds (capped by the model)."""
    weights_per_gpu = model.weight_bytes(quantization, tensor_parallel)
    budget = int(gpu.memory_bytes * utilization) - weights_per_gpu - OVERHEAD_BYTES
    per_token_per_gpu = model.kv_bytes_per_token(kv_cache_dtype, tensor_parallel)
    kv_tokens = max(0, budget // (per_token_per_gpu * BLOCK_SIZE)) * BLOCK_SIZE
    if max_model_len is None:
        max_model_len = min(model.max_positions, kv_tokens // CONTEXT_STEP * CONTEXT_STEP)
    return Plan(
        model=model, gpu=gpu, utilization=utilization, tensor_parallel=tensor_parallel,
        data_parallel=data_parallel, quantization="fp8" if quantization == "fp8" else None,
        kv_cache_dtype=kv_cache_dtype, weights_bytes=model.weight_bytes(quantization),
        weights_bytes_per_gpu=weights_per_gpu, kv_bytes_per_token=model.kv_bytes_per_token(kv_cache_dtype),
        kv_budget_bytes_per_gpu=budget, kv_tokens=kv_tokens, max_model_len=max_model_len,
    )


def make_plan(model: ModelShape, gpu: GpuSpec, gpus: int = 1, utilization: float = DEFAULT_UTILIZATION,
              max_model_len: int | None = None, kv_cache_dtype: KvCacheDtype | None = None,
              quantization: Quantization | None = None, layout: Layout = "data") -> Plan:
    """The recommended plan. None for a dtype means: choose. Choosing prefers bf16 weights and bf16
    KV cache, then fp8 KV cache, then fp8 weights, and takes the first that holds one request of
    max_model_len (default: the model's full context). Layouts are tried narrowest first: data
    parallel when one GPU holds a full-length request, else the smallest tensor-parallel group that
    does, replicated over the remaining GPUs. layout="tensor" takes the widest tensor-parallel group
    instead (one engine over all the GPUs when the heads divide). Without max_model_len and with
    nothing holding the full context, it returns the longest honest context. Raises PlanError when
    nothing fits."""
    check_inputs(model, gpu, gpus, utilization, max_model_len)
    target = max_model_len or model.max_positions
    combos = dtype_combos(kv_cache_dtype, quantization)
    tps = model.tensor_parallel_sizes(gpus)
    if layout == "tensor":
        tps = tps[-1:]
    for tp in tps:
        for weights, kv in combos:
            plan = evaluate(model, gpu, tp, gpus // tp, utilization, weights, kv, target)
            if plan.fits:
                return replace(plan, why=explain(plan, combos, layout))
    # Nothing holds the target: the widest layout with the most compact dtypes holds the most.
    tp, (weights, kv) = tps[-1], combos[-1]
    roomiest = evaluate(model, gpu, tp, gpus // tp, utilization, weights, kv)
    if roomiest.max_model_len < CONTEXT_STEP:
        raise no_room_error(roomiest)
    if max_model_len is not None:
        raise too_long_error(roomiest, max_model_len)
    why = said("plan_why_nothing_holds", target=target, gpus=gpus_said(roomiest),
               dtypes=dtypes_said(roomiest))
    return replace(roomiest, why=why)


def compare_layouts(plan: Plan) -> list[Plan]:
    """The same GPUs, dtypes and context split every way vLLM allows, data parallel first."""
    return [evaluate(plan.model, plan.gpu, tp, plan.gpus // tp, plan.utilization,
                     plan.quantization or "none", plan.kv_cache_dtype, plan.max_model_len)
            for tp in plan.model.tensor_parallel_sizes(plan.gpus)]


def check_inputs(model: ModelShape, gpu: GpuSpec, gpus: int, utilization: float,
                 max_model_len: int | None) -> None:
    if not 0 < utilization <= 1:
        raise PlanError(key="utilization_range", value=utilization)
    if gpus < 1:
        raise PlanError(key="gpus_least", value=gpus)
    if gpu.memory_gib <= 0:
        raise PlanError(key="gpu_memory_gib", gib=gpu.memory_gib, name=gpu.name)
    if max_model_len is not None and max_model_len < 1:
        raise PlanError(key="max_model_len_least", value=max_model_len)
    if max_model_len is not None and max_model_len > model.max_positions:
        raise PlanError(key="max_model_len_over", model=model.name, most=model.max_positions,
                        value=max_model_len)


def dtype_combos(kv_cache_dtype: KvCacheDtype | None,
                 quantization: Quantization | None) -> list[tuple[Quantization, KvCacheDtype]]:
    """(weights, KV cache) in order of preference: bf16 keeps the model's quality; fp8 KV cache costs
    the least memory per token, so it comes before fp8 weights."""
    weights: list[Quantization] = ["none", "fp8"] if quantization is None else [quantization]
    kvs: list[KvCacheDtype] = ["auto", "fp8"] if kv_cache_dtype is None else [kv_cache_dtype]
    return [(w, kv) for w in weights for kv in kvs]


def explain(plan: Plan, combos: list[tuple[Quantization, KvCacheDtype]], layout: Layout = "data") -> Said:
    """Why this layout and these dtypes: what the cheaper-to-run or better-quality option lacked."""
    holds = said("plan_holds", dtypes=dtypes_said(plan), tokens=plan.max_model_len)
    if layout == "tensor" and plan.tensor_parallel > 1:
        return said("plan_why_tensor_asked", tp=plan.tensor_parallel, holds=holds)
    if plan.tensor_parallel > 1:
        alone = evaluate(plan.model, plan.gpu, 1, 1, plan.utilization, *combos[-1])
        return said("plan_why_split", tokens=alone.kv_tokens, dtypes=dtypes_said(alone),
                    tp=plan.tensor_parallel, holds=holds)
    index = combos.index((plan.quantization or "none", plan.kv_cache_dtype))
    if index == 0:
        return said("plan_why_one_gpu", holds=holds)
    before = evaluate(plan.model, plan.gpu, 1, 1, plan.utilization, *combos[index - 1])
    return said("plan_why_one_gpu_only", holds=holds, dtypes=dtypes_said(before), tokens=before.kv_tokens)


def dtypes_said(plan: Plan) -> Said:
    return said("plan_dtypes", weights="fp8" if plan.quantization == "fp8" else "bf16",
                kv="fp8" if plan.kv_cache_dtype == "fp8" else "bf16")


def gpus_said(plan: Plan) -> Said:
    if plan.gpus == 1:
        return said("plan_gpus_one", gpu=plan.gpu.name, gib=plan.gpu.memory_gib)
    layout = said("plan_tp", tp=plan.tensor_parallel) if plan.tensor_parallel > 1 else ""
    return said("plan_gpus_many", gpus=plan.gpus, gpu=plan.gpu.name, gib=plan.gpu.memory_gib,
                layout=layout)


def too_long_error(roomiest: Plan, wanted: int) -> PlanError:
    fp8_left = [] if roomiest.quantization else ["--quantization fp8"]
    fp8_left += [] if roomiest.kv_cache_dtype == "fp8" else ["--kv-cache-dtype fp8"]
    remedy = said("plan_fp8_or_gpus", flags=" ".join(fp8_left)) if fp8_left else said("plan_more_gpus")
    return PlanError(key="plan_too_long", wanted=wanted, gpus=gpus_said(roomiest),
                     dtypes=dtypes_said(roomiest), utilization=roomiest.utilization,
                     kv_tokens=roomiest.kv_tokens, most=roomiest.max_model_len, remedy=remedy)


def no_room_error(roomiest: Plan) -> PlanError:
    return PlanError(key="plan_no_room", model=roomiest.model.name, gpus=gpus_said(roomiest),
                     utilization=roomiest.utilization,
                     budget=roomiest.gpu.memory_bytes * roomiest.utilization / GIB,
                     weights="fp8" if roomiest.quantization else "bf16",
                     weights_gib=roomiest.weights_bytes_per_gpu / GIB, overhead=OVERHEAD_BYTES / GIB)
