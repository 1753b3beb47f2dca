"""Which NVIDIA GPUs this machine has, from nvidia-smi (absent or failing means none)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_mib: int


def detect_gpus() -> list[Gpu]:
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return []
    return [parse_gpu_line(line) for line in out.splitlines() if line.strip()]


def parse_gpu_line(line: str) -> Gpu:
    name, memory = (part.strip() for part in line.rsplit(",", 1))
    return Gpu(name=name, memory_mib=int(float(memory)))
