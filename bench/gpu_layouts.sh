#!/usr/bin/env bash
# Two-GPU layouts for GLM-4-9B-Chat-1M (full-size shapes, dummy weights) with vLLM's own load
# generator, run on the lent 2xH200 host after ../shared/gpu/install.sh:
#   bash bench/gpu_layouts.sh OUT_DIR LAYOUT [LAYOUT ...]     LAYOUT: one | dp2 | tp2 | two
# one: one GPU; dp2: --data-parallel-size 2 (one endpoint); tp2: --tensor-parallel-size 2;
# two: two independent one-GPU servers, each given half the load at once.
# Workloads (--ignore-eos): seed 002 = 100 concurrent, 32 in / 256 out, 500 requests;
# saturation = 512 concurrent, 512 in / 256 out, 2000 requests. The flags besides the layout are
# glm1m's H200 profile (`glm1m serve --gpus 2` prints them): --max-model-len 1048576
# --gpu-memory-utilization 0.92 --enable-prefix-caching.
set -euo pipefail
OUT="$1"; shift
mkdir -p "$OUT/logs"
export PYTHONPATH=/tmp/site VLLM_USE_FLASHINFER_SAMPLER=0 HF_HUB_OFFLINE=1
# NVLink multicast stays off on the shared host (device README).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
MODEL="${MODEL:-/root/full-size-model}"
VLLM=(python3 -m vllm.entrypoints.cli.main)
PROFILE=(--model "$MODEL" --served-model-name glm-4-9b-chat-1m --load-format dummy
         --max-model-len 1048576 --gpu-memory-utilization 0.92 --enable-prefix-caching)

serve() {  # serve NAME PORT GPUS [FLAGS...]: start in the background, wait until it answers
  local name=$1 port=$2 gpus=$3; shift 3
  CUDA_VISIBLE_DEVICES=$gpus setsid "${VLLM[@]}" serve "${PROFILE[@]}" --port "$port" "$@" \
    > "$OUT/logs/$name.log" 2>&1 &
  echo $! > "$OUT/logs/$name.pid"
  for _ in $(seq 400); do
    curl -sf "127.0.0.1:$port/health" >/dev/null && return 0
    kill -0 "$(cat "$OUT/logs/$name.pid")" 2>/dev/null || { tail -30 "$OUT/logs/$name.log"; return 1; }
    sleep 1
  done
  return 1
}

stop() { kill -- -"$(cat "$OUT/logs/$1.pid")" 2>/dev/null || true; sleep 5; }

bench() {  # bench NAME PORT CONCURRENCY PROMPTS IN OUT
  "${VLLM[@]}" bench serve --backend openai --base-url "http://127.0.0.1:$2" \
    --model glm-4-9b-chat-1m --tokenizer "$MODEL" --dataset-name random \
    --random-input-len "$5" --random-output-len "$6" --ignore-eos --num-prompts "$4" \
    --max-concurrency "$3" --seed 1 --disable-tqdm --save-result --result-dir "$OUT" \
    --result-filename "$1.json" > "$OUT/logs/$1.txt" 2>&1
}

workloads() {  # workloads LAYOUT PORT SHARE: SHARE=1 whole load, 2 half of it
  bench "$1-seed002" "$2" $((100 / $3)) $((500 / $3)) 32 256
  bench "$1-saturation" "$2" $((512 / $3)) $((2000 / $3)) 512 256
}

for layout in "$@"; do
  case $layout in
    one) serve one 8000 0 && workloads one 8000 1; stop one ;;
    dp2) serve dp2 8000 0,1 --data-parallel-size 2 && workloads dp2 8000 1; stop dp2 ;;
    tp2) serve tp2 8000 0,1 --tensor-parallel-size 2 && workloads tp2 8000 1; stop tp2 ;;
    two) serve twoA 8000 0 && serve twoB 8001 1 \
           && { workloads twoA 8000 2 & workloads twoB 8001 2; wait; }; stop twoA; stop twoB ;;
  esac
done
grep -h "GPU KV cache size\|Maximum concurrency for" "$OUT"/logs/*.log > "$OUT/kv.txt" || true
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
