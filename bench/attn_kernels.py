"""The attention kernel of a long prefill, alone: vLLM 0.26's FlashAttention 3 call for one prefill
chunk of GLM-4-9B-Chat-1M's shapes (32 query heads, 4 KV heads, head size 128), as the FLASH_ATTN
backend makes it, for each KV dtype and KV block (page) size, at several depths of the context.

Why the page size: FA3 loads a paged KV cache with the Hopper copy engine (TMA) only when the page
size is a multiple of its tile's kBlockN (hopper/flash_api.cpp, get_pagedkv_tma; tile_size.h: 224
for fp8 and 128 for bf16, causal, head size 128); vLLM's default block of 16 tokens takes the
'PagedKVNonTMA' kernel, which gathers K and V with cp.async instead. No vLLM server is started:
one layer's KV cache (1 GiB in fp8 at 1M tokens) is filled with random values and the same call is
timed per layer; a whole prefill is 40 layers of it per chunk.

Run on the GPU host after ../shared/gpu/README.md's install (PYTHONPATH=/tmp/site:REPO):

    python3 -m bench.attn_kernels --out RES/kernels.json

It also times the chip's dense bf16 and fp8 matrix products (the ceilings) and checks every variant
against a float32 reference on a small case first.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

HEADS, KV_HEADS, HEAD = 32, 4, 128
LAYERS = 40
CHUNK = 16_384  # glm1m's --max-num-batched-tokens: the prefill chunk
DEPTHS = (131_072, 262_144, 524_288, 1_048_576)  # where the chunk ends in the context
# (dtype, page): vLLM's default page 16 for both; pages that are multiples of kBlockN (TMA);
# fp8 256 is a large page that is NOT a multiple of 224, to tell "large page" from "TMA".
VARIANTS = (("fp8", 16), ("fp8", 256), ("fp8", 224), ("fp8", 448), ("fp8", 896),
            ("bf16", 16), ("bf16", 128), ("bf16", 256))
CHUNKS = (8_192, 32_768, 65_536)  # the chunk-size sweep, at depth CHUNK_SWEEP_DEPTH, for these:
SWEPT = (("fp8", 16), ("fp8", 448), ("bf16", 16), ("bf16", 128))
CHUNK_SWEEP_DEPTH = 524_288
DEVICE = "cuda"  # the rehearsal on a machine without a GPU sets "cpu"


def attention_flop(chunk: int, depth: int) -> float:
    """FLOPs of one causal chunk of `chunk` queries ending at position `depth`, one layer: QK^T and
    PV, 2 FLOP per multiply-add each, over the keys each query sees."""
    keys_seen = chunk * (depth - chunk) + chunk * (chunk + 1) / 2
    return 4 * HEADS * HEAD * keys_seen


class Case:
    """One layer's paged KV cache in vLLM's FLASH_ATTN layout, with queries for one chunk."""

    def __init__(self, torch, fa, dtype: str, page: int, tokens: int, chunk: int) -> None:
        self.torch, self.fa, self.dtype, self.page = torch, fa, dtype, page
        fp8 = torch.float8_e4m3fn
        self.store = fp8 if dtype == "fp8" else torch.bfloat16
        blocks = math.ceil(tokens / page)
        # vLLM 0.26: logical (blocks, kv_heads, page, 2*head), stored NHD as (blocks, page,
        # kv_heads, 2*head); K and V are the two halves of the last dimension.
        kv = torch.empty(blocks, page, KV_HEADS, 2 * HEAD, dtype=self.store, device=DEVICE)
        for start in range(0, blocks, 4096):  # fill in slices: a 1M bf16 randn at once is 2 GiB more
            part = kv[start:start + 4096]
            part.copy_(torch.randn(part.shape, device=DEVICE, dtype=torch.bfloat16).to(self.store))
        self.kv = kv
        self.key, self.value = kv[..., :HEAD], kv[..., HEAD:]
        self.block_table = torch.arange(blocks, dtype=torch.int32, device=DEVICE)[None]
        self.set_chunk(chunk)

    def set_chunk(self, chunk: int) -> None:
        torch = self.torch
        self.chunk = chunk
        q = torch.randn(chunk, HEADS, HEAD, device=DEVICE, dtype=torch.bfloat16)
        self.query = q.to(self.store)  # vLLM quantizes queries with a static scale of 1.0
        self.out = torch.empty(chunk, HEADS, HEAD, device=DEVICE, dtype=torch.bfloat16)
        self.cu_q = torch.tensor([0, chunk], dtype=torch.int32, device=DEVICE)
        ones = torch.ones(1, 1, dtype=torch.float32, device=DEVICE).expand(1, KV_HEADS)
        self.descale = ones if self.dtype == "fp8" else None

    def run(self, depth: int):
        torch, fa = self.torch, self.fa
        seqused = torch.tensor([depth], dtype=torch.int32, device=DEVICE)
        metadata = fa.get_scheduler_metadata(  # as vLLM's metadata builder asks for it
            batch_size=1, max_seqlen_q=self.chunk, max_seqlen_k=depth, num_heads_q=HEADS,
            num_heads_kv=KV_HEADS, headdim=HEAD, cache_seqlens=seqused, qkv_dtype=self.store,
            cu_seqlens_q=self.cu_q, page_size=self.page, causal=True, window_size=(-1, -1),
            num_splits=0)
        return fa.flash_attn_varlen_func(
            q=self.query, k=self.key, v=self.value, out=self.out, cu_seqlens_q=self.cu_q,
            max_seqlen_q=self.chunk, seqused_k=seqused, max_seqlen_k=depth,
            softmax_scale=HEAD ** -0.5, causal=True, block_table=self.block_table,
            scheduler_metadata=metadata, fa_version=3, q_descale=self.descale,
            k_descale=self.descale, v_descale=self.descale)

    def seconds(self, depth: int, repeats: int) -> float:
        torch = self.torch
        self.run(depth)  # warm-up
        times = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            self.run(depth)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1000)
        return statistics.median(times)


def reference_error(torch, fa, dtype: str, page: int) -> float:
    """‖out − ref‖/‖ref‖ on a small case: 1,024 queries ending at 4,480 (a multiple of every page
    tried), against float32 attention over the same (dequantized) values."""
    depth, chunk = 4_480, 1_024
    case = Case(torch, fa, dtype, page, depth, chunk)
    case.out.fill_(float("nan"))  # every element must be written
    out = case.run(depth).float()
    k = case.key.reshape(-1, KV_HEADS, HEAD)[:depth].float().repeat_interleave(HEADS // KV_HEADS, 1)
    v = case.value.reshape(-1, KV_HEADS, HEAD)[:depth].float().repeat_interleave(HEADS // KV_HEADS, 1)
    q = case.query.float()
    scores = torch.einsum("qhd,khd->hqk", q, k) * HEAD ** -0.5
    rows = torch.arange(depth - chunk, depth, device=DEVICE)[:, None]
    scores.masked_fill_(torch.arange(depth, device=DEVICE)[None, :] > rows, float("-inf"))
    ref = torch.einsum("hqk,khd->qhd", scores.softmax(-1), v)
    return float((out - ref).norm() / ref.norm())


def matmul_ceilings(torch) -> dict:
    """Dense 8192^3 products on random data, median of 10 after warm-up: bf16 and fp8 (e4m3,
    per-tensor scales, bf16 out)."""
    n = 8192
    a, b = (torch.randn(n, n, device=DEVICE, dtype=torch.bfloat16) for _ in range(2))
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn).t().contiguous().t()
    one = torch.ones((), device=DEVICE)
    ops = {"bf16": lambda: a @ b,
           "fp8": lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)}
    result = {}
    for name, op in ops.items():
        op()
        times = []
        for _ in range(10):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            op()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1000)
        result[f"{name}_tflops"] = round(2 * n**3 / statistics.median(times) / 1e12, 1)
    return result


def prefill_attention_s(per_depth: dict[int, float], tokens: int, chunk: int = CHUNK) -> float:
    """Attention seconds of a whole prefill of `tokens` in chunks: a line t = a + b·depth fitted to
    the measured per-chunk times, summed over the chunks, times the layers."""
    xs, ys = list(per_depth), list(per_depth.values())
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    total = 0.0
    for start in range(0, tokens, chunk):
        end = min(tokens, start + chunk)
        total += max(0.0, a + b * end) * (end - start) / chunk  # a last, shorter chunk: its share
    return LAYERS * total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import torch
    from vllm.vllm_flash_attn import flash_attn_interface as fa

    started = time.monotonic()
    result: dict = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                    "chunk": CHUNK, "layers": LAYERS, "variants": {}}

    def save() -> None:
        result["elapsed_s"] = round(time.monotonic() - started, 1)
        args.out.write_text(json.dumps(result, indent=1))

    result["ceilings"] = matmul_ceilings(torch)
    save()
    for dtype, page in VARIANTS:
        name = f"{dtype}-page{page}"
        entry: dict = {"dtype": dtype, "page": page}
        result["variants"][name] = entry
        try:
            entry["rel_error_vs_fp32"] = reference_error(torch, fa, dtype, page)
            case = Case(torch, fa, dtype, page, max(DEPTHS), CHUNK)
            entry["chunk_s"] = {str(d): case.seconds(d, args.repeats) for d in DEPTHS}
            entry["chunk_tflops"] = {str(d): round(attention_flop(CHUNK, d) / s / 1e12, 1)
                                     for d, s in ((int(k), v) for k, v in entry["chunk_s"].items())}
            per_depth = {int(k): v for k, v in entry["chunk_s"].items()}
            entry["prefill_attention_s"] = {str(n): round(prefill_attention_s(per_depth, n), 1)
                                            for n in (262_144, 989_011)}
            sweep = {}
            for chunk in CHUNKS if (dtype, page) in SWEPT else ():
                case.set_chunk(chunk)
                seconds = case.seconds(CHUNK_SWEEP_DEPTH, args.repeats)
                sweep[str(chunk)] = {"s": seconds, "tflops": round(
                    attention_flop(chunk, CHUNK_SWEEP_DEPTH) / seconds / 1e12, 1)}
            entry["chunk_sweep_at_524288"] = sweep
            del case
            torch.cuda.empty_cache()
        except Exception as error:  # a variant this build lacks must not stop the others
            entry["error"] = f"{type(error).__name__}: {error}"[:500]
            torch.cuda.empty_cache()
        save()
        print(name, json.dumps({k: v for k, v in entry.items() if k != "chunk_sweep_at_524288"}),
              flush=True)
    print("ceilings", result["ceilings"], "elapsed", result["elapsed_s"], flush=True)


if __name__ == "__main__":
    main()
