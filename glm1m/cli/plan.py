"""`glm1m plan`: print the GPU memory plan for GLM-4-9B-Chat-1M and the vllm serve flags it implies."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from glm1m.catalog import render, said
from glm1m.cli.output import fail, language
from glm1m.errors import PlanError
from glm1m.server.gpus import detect_gpus

if TYPE_CHECKING:  # rich loads when a plan is shown, not for `glm1m --help`
    from rich.console import Console
    from rich.table import Table

    from glm1m.server.disk_tier import DiskTier
    from glm1m.server.host_tier import HostTier
from glm1m.server.plan import (
    DEFAULT_UTILIZATION,
    GIB,
    GLM4_9B_CHAT_1M,
    GPUS,
    KIB,
    LAYOUTS,
    OVERHEAD_BYTES,
    GpuSpec,
    ModelShape,
    Plan,
    compare_layouts,
    dtypes_said,
    gpu_from_memory_mib,
    gpus_said,
    make_plan,
)


def add_command(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plan", help="how much context and how many requests fit; prints the vllm serve flags",
        description="GPU memory plan for GLM-4-9B-Chat-1M (or --model's shapes) under vLLM.")
    gpu = parser.add_mutually_exclusive_group()
    gpu.add_argument("--gpu", choices=list(GPUS), help="a known GPU (default: the ones nvidia-smi lists)")
    gpu.add_argument("--gpu-mem", type=float, metavar="GiB",
                     help="memory of each GPU, as nvidia-smi reports it")
    parser.add_argument("--gpus", type=int, default=None,
                        help="number of GPUs (default: as many as detected, 1 with --gpu/--gpu-mem)")
    parser.add_argument("--gpu-memory-utilization", type=float, default=DEFAULT_UTILIZATION,
                        help=f"vLLM's share of each GPU (default {DEFAULT_UTILIZATION})")
    parser.add_argument("--max-model-len", type=int, default=None,
                        help="context to plan for (default: the model's full context, "
                             "else the longest that fits)")
    parser.add_argument("--kv-cache-dtype", choices=["auto", "fp8"], default=None,
                        help="auto = bf16 like the weights (default: the planner chooses)")
    parser.add_argument("--quantization", choices=["none", "fp8"], default=None,
                        help="none = bf16 weights; fp8 = vLLM's online fp8 (default: the planner chooses)")
    add_layout_arg(parser)
    parser.add_argument("--host-mem", type=float, default=None, metavar="GiB",
                        help="host memory for the KV tier (default: this machine's when planning its "
                             "own GPUs); says how many full-length documents stay warm with it")
    parser.add_argument("--kv-disk", default=None, metavar="DIR",
                        help="plan the KV tier on disk at DIR (default: $GLM1M_KV_DISK_DIR, empty "
                             "= off): says its cap and the CPU tier it loads documents back through")
    parser.add_argument("--model", type=Path, default=None, metavar="PATH",
                        help="model folder whose config.json gives the shapes (default: GLM-4-9B-Chat-1M)")
    parser.set_defaults(run=run_plan)


def add_layout_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--layout", choices=LAYOUTS, default="data",
                        help="with several GPUs: data = replicas (more users at once, the default); "
                             "tensor = one engine over the GPUs (faster long prompts, more KV room "
                             "per request)")


def run_plan(args: argparse.Namespace) -> int:
    """The plan's table; a plan that cannot fit is a PlanError, said by cli/main.py (exit 2)."""
    model = ModelShape.from_config_dir(args.model) if args.model else GLM4_9B_CHAT_1M
    gpu, count = planned_gpus(args)
    plan = make_plan(model, gpu, gpus=count, utilization=args.gpu_memory_utilization,
                     max_model_len=args.max_model_len, kv_cache_dtype=args.kv_cache_dtype,
                     quantization=args.quantization, layout=args.layout)
    if args.host_mem is not None and args.host_mem <= 0:
        return fail(said("cli_host_mem", value=args.host_mem))
    from rich.console import Console

    from glm1m.server.disk_tier import size_disk_tier
    from glm1m.server.host_tier import host_memory_bytes, size_tier
    from glm1m.settings import Settings

    settings = Settings()
    disk_dir = args.kv_disk or settings.kv_disk_dir
    # The disk tier's CPU tier is sized from host memory: this machine's unless --host-mem says.
    host = int(args.host_mem * GIB) if args.host_mem else (
        host_memory_bytes() if (args.gpu is None and args.gpu_mem is None) or disk_dir else None)
    tier = size_tier(plan, host) if host else None
    disk = None
    if disk_dir and tier:
        disk = size_disk_tier(plan, tier, Path(disk_dir), int(settings.kv_disk_gib * GIB))
    show(plan, Console(highlight=False), tier, disk)
    return 0


def planned_gpus(args: argparse.Namespace) -> tuple[GpuSpec, int]:
    if args.gpu is not None:
        return GPUS[args.gpu], args.gpus or 1
    if args.gpu_mem is not None:
        return GpuSpec(name=f"{args.gpu_mem:g} GiB GPU", memory_gib=args.gpu_mem), args.gpus or 1
    detected = detect_gpus()
    if not detected:
        raise PlanError(key="no_gpu_found", gpus=list(GPUS))
    # Mixed cards plan as the smallest, since every engine must fit on each GPU it gets.
    smallest = min(detected, key=lambda g: g.memory_mib)
    return gpu_from_memory_mib(smallest.name, smallest.memory_mib), args.gpus or len(detected)


def show(plan: Plan, console: Console, tier: HostTier | None = None,
         disk: DiskTier | None = None) -> None:
    """The plan on stdout in the CLI's language; the vllm serve flags last, as one line."""
    lang = language()
    console.print(plan_table(plan, lang))
    if plan.why is not None:
        console.print(render(lang, "plan_why", why=plan.why))
    if plan.gpus > 1:
        console.print(layouts_table(plan, lang))
        console.print(render(lang, "plan_layouts_note"))
    if tier is not None:
        console.print(render(lang, "plan_host_tier", gib=tier.host_bytes / GIB, line=tier.said()))
        console.print(tier.kept_said().render(lang))
    if disk is not None:
        console.print(render(lang, "plan_disk_tier", line=disk.said()))
    console.print(render(lang, "plan_flags"))
    flags = plan.vllm_flags() + (disk.vllm_flags() if disk else tier.vllm_flags() if tier else [])
    print(shlex.join(flags), flush=True)  # plain print: rich would wrap a long line


def plan_table(plan: Plan, lang: str) -> Table:
    from rich.table import Table

    table = Table(title=render(lang, "plan_table_title", model=plan.model.name, gpus=gpus_said(plan)),
                  show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    split = plan.tensor_parallel > 1
    kv_per_gpu_token = plan.model.kv_bytes_per_token(plan.kv_cache_dtype, plan.tensor_parallel)
    table.add_row(render(lang, "plan_row_gpu_memory", utilization=plan.utilization),
                  gib(plan.gpu.memory_bytes * plan.utilization))
    table.add_row(render(lang, "plan_row_weights_per_gpu" if split else "plan_row_weights",
                         dtype="fp8" if plan.quantization else "bf16"), gib(plan.weights_bytes_per_gpu))
    table.add_row(render(lang, "plan_row_other"), gib(OVERHEAD_BYTES))
    table.add_row(render(lang, "plan_row_kv_per_gpu" if split else "plan_row_kv",
                         dtype="fp8" if plan.kv_cache_dtype == "fp8" else "bf16"),
                  gib(max(0, plan.kv_budget_bytes_per_gpu)))
    table.add_row(render(lang, "plan_row_kv_per_token"),
                  render(lang, "plan_kib_per_gpu", kib=plan.kv_bytes_per_token / KIB,
                         per_gpu=kv_per_gpu_token / KIB) if split
                  else f"{plan.kv_bytes_per_token / KIB:g} KiB")
    table.add_row(render(lang, "plan_row_kv_tokens"), f"{plan.kv_tokens:,}")
    table.add_row(render(lang, "plan_row_max_len"), f"{plan.max_model_len:,}")
    table.add_row(render(lang, "plan_row_requests"), requests(plan, lang))
    table.add_row(render(lang, "plan_layout"), layout_name(plan, lang))
    table.add_row(render(lang, "plan_row_dtypes"), dtypes_said(plan).render(lang))
    return table


def layouts_table(chosen: Plan, lang: str) -> Table:
    from rich.table import Table

    table = Table(title=render(lang, "plan_layouts_title", gpus=chosen.gpus, tokens=chosen.max_model_len,
                               dtypes=dtypes_said(chosen)))
    table.add_column(render(lang, "plan_layout"))
    for key in ("plan_col_weights", "plan_col_kv_tokens", "plan_col_requests", "plan_col_in_all"):
        table.add_column(render(lang, key), justify="right")
    table.add_column("")
    for plan in compare_layouts(chosen):
        ratio = plan.kv_tokens / plan.max_model_len
        table.add_row(short_layout_name(plan), gib(plan.weights_bytes_per_gpu), f"{plan.kv_tokens:,}",
                      f"{plan.requests_per_replica} ({ratio:.2f}x)", str(plan.full_length_requests),
                      render(lang, "plan_chosen_mark")
                      if plan.tensor_parallel == chosen.tensor_parallel else "")
    return table


def layout_name(plan: Plan, lang: str) -> str:
    if plan.gpus == 1:
        return render(lang, "plan_layout_one_gpu")
    if plan.tensor_parallel == 1:
        return render(lang, "plan_layout_dp", dp=plan.data_parallel)
    if plan.data_parallel == 1:
        return render(lang, "plan_layout_tp", tp=plan.tensor_parallel)
    return render(lang, "plan_layout_tp_dp", tp=plan.tensor_parallel, dp=plan.data_parallel)


def short_layout_name(plan: Plan) -> str:
    """vLLM's abbreviations, the same in every language: "DP 2", "TP 2", "TP 2 × DP 4"."""
    if plan.tensor_parallel == 1:
        return f"DP {plan.data_parallel}"
    if plan.data_parallel == 1:
        return f"TP {plan.tensor_parallel}"
    return f"TP {plan.tensor_parallel} × DP {plan.data_parallel}"


def requests(plan: Plan, lang: str) -> str:
    # vLLM logs the same ratio as "Maximum concurrency for N tokens per request: R x".
    ratio = plan.kv_tokens / plan.max_model_len
    if plan.data_parallel == 1:
        return f"{plan.full_length_requests} ({ratio:.2f}x)"
    return render(lang, "plan_requests_per_replica", requests=plan.full_length_requests,
                  per_replica=plan.requests_per_replica, ratio=ratio)


def gib(n: float) -> str:
    return f"{n / GIB:.2f} GiB"
