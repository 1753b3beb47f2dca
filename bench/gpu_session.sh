#!/usr/bin/env bash
# One H200 benchmark session on the lent 2-GPU host, in the device tool's calls (each < 10 min,
# host kept only while calls follow each other):
#   bash bench/gpu_session.sh receive          # each of the 8 wheel folders, + model and app wheels
#   bash bench/gpu_session.sh install-and-start # vLLM 0.26.0 into /tmp/site, both lanes started
#   bash bench/gpu_session.sh install            # only the install (then e.g. tp2)
#   bash bench/gpu_session.sh wait SECONDS      # until the lanes finish or SECONDS pass; results to $OUT
#   bash bench/gpu_session.sh tp2 SCENARIOS [S] # the TP 2 server on both GPUs (e.g. long1m), wait S s
#   bash bench/gpu_session.sh tp2-then-steps [S] # TP 2 long prompts, then STEPS0/STEPS1, one driver
# Issue 14's revisit + fp8 run on one H200 (bench/revisit.py), all through `glm1m serve`:
#   bash bench/gpu_session.sh receive-first    # c01 + the model folder + .gpu/repo (a clean copy
#                                              # of HEAD, so helpers' unfinished edits stay here)
#   bash bench/gpu_session.sh receive-one K    # wheel folder c0K (2..7)
#   bash bench/gpu_session.sh revisit-start K S # the last folder, install, the driver; wait S s
#   bash bench/gpu_session.sh revisit-wait S   # until it ends or S s pass; results to $OUT
# Issue 27's run: the same with P = qr (phase r rehearsed at a quarter of its size first, from
# .gpu/docs/quarter); the wheels packed in 7 folders (CHUNK_MIB=56), so r1m-start 7. Keep S of
# r1m-start under 480: the receive and install take ~100 s of the call's 600 (2026-12-01: S 560 ran
# the call out; the driver, under setsid, went on). .gpu/repo may be built from HEAD plus the
# files under test:
#   git archive HEAD | tar -x -C .gpu/repo && cp FILES .gpu/repo/...   (git state untouched)
# Issue 14's second run (bench/revisit_1m.py: the 1M revisit + the app, the file tier, the tier's cost):
#   bash bench/gpu_session.sh receive-first    # as above, + .gpu/docs (A.txt, B.txt) and .whl (app wheels)
#   bash bench/gpu_session.sh receive-one K    # 2..7
#   bash bench/gpu_session.sh r1m-start K S [P] # the last folder, install, the driver (phases P,
#                                              # default r); wait S s. Every other command a call
#                                              # runs must see the exports at the top of this file.
#   bash bench/gpu_session.sh r1m-wait S       # until it ends or S s pass; results to $OUT
# Issue 39's run (bench/prefill_levers.py: the attention kernel per KV dtype and page size, then one
# server per lever that wins, the winner at 989,011 tokens), wheels packed in 7 folders (CHUNK_MIB=56):
#   bash bench/gpu_session.sh lv-receive K     # K = 1 (+ .gpu/full-size-model) .. 6
#   bash bench/gpu_session.sh lv-start 7 S [--flashinfer]  # the last folder, install, driver; wait S s
#   bash bench/gpu_session.sh lv-wait S        # until it ends or S s pass; results to $OUT/lv.tgz
#   bash bench/gpu_session.sh lv-stop          # end the driver and its server early
# Issues 36 and 37 (bench/batch_gpu.py: the grid and a document's translation), 7 folders (CHUNK_MIB=56):
#   bash bench/gpu_session.sh bg-receive K     # K = 1 (+ model, .gpu/docs, .whl, .gpu/repo) .. 6
#   bash bench/gpu_session.sh bg-start 7 S     # the last folder, install, the driver; wait S s
#   bash bench/gpu_session.sh bg-wait S        # until it ends or S s pass; results to $OUT/bg.tgz
# Issue 37's windows (bench/batch_gpu.py phase w), 7 folders (CHUNK_MIB=56) and glm1m's wheels in two:
#   bash bench/gpu_session.sh w-receive K      # K = 1 (+ model, docs, repo, app1), app2, 2 .. 6
#   bash bench/gpu_session.sh w-start 7 S      # the last folder, install, the driver; wait S s
#   bash bench/gpu_session.sh bg-wait S        # until it ends or S s pass; results to $OUT/bg.tgz
# Lanes run under setsid so they outlive one call; results collect in /root/res.
set -uo pipefail
RES=/root/res
export PYTHONPATH=/tmp/site:/root/repo VLLM_USE_FLASHINFER_SAMPLER=0 HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
# NVLink multicast stays off on the shared host (device README).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export GLM1M_BENCH_MODEL=/root/full-size-model GLM1M_VLLM_PYTHON=python3

LANE0="glm1m:seed002,sweep,saturation,long28k,long128k,followup,translate,long512k,long1m"
LANE1="seed:seed002,saturation defaults:seed002,saturation hf glm1m-plan:seed002,saturation
       glm1m-fp8kv:seed002,saturation glm1m-fp8:seed002,saturation"
# Issue 7's second round: where the step time goes (profiled servers), and each serving flag alone.
STEPS0="glm1m+profiler:saturation,steps-seed002,steps-saturation glm1m-plan+stream:saturation
        glm1m-plan+batched:saturation"
STEPS1="glm1m-plan+profiler:saturation,steps-saturation glm1m-plan+apiservers:saturation"

# Traces stay on the host (tens of MB); their summaries are in the PROFILE.json files.
pack() { tar czf "$OUT/res.tgz" --exclude='*.pt.trace.json*' -C /root res 2>/dev/null
         tail -3 $RES/lane*.out 2>/dev/null; }

lane() {  # lane NAME GPUS PORT STEPS...
  local name=$1 gpus=$2 port=$3; shift 3
  (cd /root/repo && setsid python3 -m bench.gpu lane --gpus "$gpus" --port "$port" --out $RES "$@" \
     > "$RES/$name.out" 2>&1 & echo $! > "$RES/$name.pid")
}

# The bracket keeps pgrep from matching the shell that runs this very command line.
running() { pgrep -f "m bench[.]gpu lane|gpu_session[.]sh sequence" > /dev/null; }

case $1 in
  receive)
    mkdir -p /root/vb && for d in .gpu/c0*; do cp -r "$d" /root/vb/; done
    [ -d data/full-size-model ] && cp -r data/full-size-model /root/
    [ -d .whl ] && mkdir -p /root/appwhl && cp .whl/*.whl /root/appwhl/
    ls /root/vb ;;
  receive-first)
    mkdir -p /root/vb && cp -r .gpu/c01 /root/vb/ && cp -r .gpu/full-size-model /root/ \
      && rm -rf /root/repo && cp -r .gpu/repo /root/repo && ls /root/vb /root/repo
    if [ -d .gpu/docs ]; then rm -rf /root/docs && cp -r .gpu/docs /root/docs; fi
    if [ -d .whl ]; then mkdir -p /root/appwhl && cp .whl/*.whl /root/appwhl/; fi ;;
  receive-one)
    mkdir -p /root/vb && cp -r ".gpu/c0$2" /root/vb/ && ls /root/vb ;;
  revisit-start)
    bash "$0" receive-one "$2" && bash "$0" install || exit 1
    free -g > $RES/free.txt; cat $RES/free.txt
    (cd /root/repo && setsid python3 -m bench.revisit run --out $RES > $RES/revisit.out 2>&1 &)
    bash "$0" revisit-wait "${3:-420}" ;;
  revisit-wait)
    # By name, as running() does: on 2026-12-01 `kill -0` on the pid saved by the starting call
    # said "gone" in the next call while the driver ran on (and a second driver was started by hand
    # beside it), so the pid file is not used.
    end=$((SECONDS + $2))
    while pgrep -f "m bench[.]revisit run" > /dev/null && [ $SECONDS -lt $end ]; do sleep 3; done
    pgrep -f "m bench[.]revisit run" > /dev/null && echo "revisit still running" || echo "revisit done"
    tail -25 $RES/revisit.out
    tar czf "$OUT/revisit.tgz" --exclude='vllm-cache-*' --exclude='data-*' -C /root res ;;
  r1m-start)
    bash "$0" receive-one "$2" && bash "$0" install || exit 1
    free -g > $RES/free.txt; df -h /root > $RES/df.txt; cat $RES/free.txt
    # What `glm1m summarize` and `glm1m serve` import, before device minutes go to a server start.
    (cd /root/repo && python3 -c "import glm1m.cli.summarize, glm1m.cli.bar, glm1m.cli.waiting, \
glm1m.documents.answer, glm1m.documents.formats, glm1m.documents.split, glm1m.serving, glm1m.cli.serve; \
from glm1m.llm import STORE_NOTHING; print('one-shot body', STORE_NOTHING)") || exit 1
    rm -f /dev/shm/vllm_offload_*.mmap  # a tier region a force-killed vLLM left (nothing runs yet)
    (cd /root/repo && setsid python3 -m bench.revisit_1m run --out $RES --docs /root/docs --phases "${4:-r}" \
       > $RES/revisit_1m.out 2>&1 &)
    bash "$0" r1m-wait "${3:-420}" ;;
  r1m-wait)
    end=$((SECONDS + $2))
    # Anchored at the start of the command line: unanchored, the pattern also matched the device
    # call's own shell whose text named the driver, and waited out its whole limit (2026-12-01).
    while pgrep -f "^python3 -m bench[.]revisit_1m run" > /dev/null && [ $SECONDS -lt $end ]; do sleep 3; done
    pgrep -f "^python3 -m bench[.]revisit_1m run" > /dev/null && echo "revisit_1m still running" \
      || echo "revisit_1m done"
    free -g | head -2; tail -20 $RES/revisit_1m.out
    tar czf "$OUT/r1m.tgz" --exclude='vllm-cache-*' --exclude='data-*' --exclude='kvfs' -C /root res ;;
  lv-receive)  # issue 39: wheel folder c0K; K=1 brings the model folder too
    mkdir -p /root/vb && cp -r ".gpu/c0$2" /root/vb/ || exit 1
    if [ "$2" = 1 ]; then cp -r .gpu/full-size-model /root/; fi
    ls /root/vb ;;
  lv-start)  # K S [--flashinfer]: the last folder, install, bench/prefill_levers.py's driver; wait S s
    bash "$0" lv-receive "$2" && bash "$0" install || exit 1
    (cd /root/repo && setsid python3 -m bench.prefill_levers run --out $RES ${4:-} \
       > $RES/levers.out 2>&1 & echo $! > $RES/levers.pid)
    bash "$0" lv-wait "${3:-420}" ;;
  lv-wait)  # until the driver ends or S s pass; results to $OUT/lv.tgz
    end=$((SECONDS + $2))
    while pgrep -f "^python3 -m bench[.]prefill_levers run" > /dev/null && [ $SECONDS -lt $end ]; do
      sleep 3; done
    pgrep -f "^python3 -m bench[.]prefill_levers run" > /dev/null && echo "levers still running" \
      || echo "levers done"
    tail -12 $RES/levers.out
    tar czf "$OUT/lv.tgz" --exclude='vllm-cache-*' -C /root res ;;
  lv-then)  # STEPS S: after the running driver ends, the driver again on the servers in STEPS
    while pgrep -f "^python3 -m bench[.]prefill_levers run" > /dev/null; do sleep 3; done
    cp bench/prefill_levers.py /root/repo/bench/ && cp "$2" /root/res/ || exit 1
    (cd /root/repo && setsid python3 -m bench.prefill_levers run --out $RES --steps "/root/res/$(basename "$2")" \
       > "$RES/levers-$(basename "$2" .json).out" 2>&1 & echo $! > $RES/levers.pid)
    bash "$0" lv-wait "${3:-420}" ;;
  lv-stop)  # the driver and the server it started, by their ids (each leads its own session)
    for f in levers.pid server.pid; do [ -f $RES/$f ] && kill -- -"$(cat $RES/$f)" 2>/dev/null; done
    sleep 5; bash "$0" lv-wait 1 ;;
  bg-receive)  # issues 36/37: wheel folder c0K; K=1 brings the model folder, .gpu/docs, .whl, .gpu/repo
    mkdir -p /root/vb && cp -r ".gpu/c0$2" /root/vb/ || exit 1
    if [ "$2" = 1 ]; then
      cp -r .gpu/full-size-model /root/ && rm -rf /root/docs /root/repo && cp -r .gpu/docs /root/docs \
        && cp -r .gpu/repo /root/repo && mkdir -p /root/appwhl && cp .whl/*.whl /root/appwhl/ || exit 1
      python3 -c "import importlib.metadata as m
for p in ('pymupdf', 'openpyxl', 'pandas', 'rich', 'pydantic-settings', 'httpx', 'openai'):
    try: print(p, m.version(p))
    except m.PackageNotFoundError: print(p, 'MISSING')"
    fi
    ls /root/vb ;;
  w-receive)  # issue 37's windows run: K = 1 (c01, model, .gpu/docs, .gpu/repo, .gpu/app1) | app2 | 2..6
    # glm1m's own wheels travel in .gpu/app1 and .gpu/app2: pymupdf's 69 MB wheel in pieces
    # (NAME.part-aa ...), joined by install; the others whole.
    mkdir -p /root/vb /root/appparts /root/appwhl
    case "$2" in
      1) cp -r .gpu/c01 /root/vb/ && cp -r .gpu/full-size-model /root/ && rm -rf /root/docs /root/repo \
           && cp -r .gpu/docs /root/docs && cp -r .gpu/repo /root/repo && cp .gpu/app1/* /root/appparts/ || exit 1 ;;
      app2) cp .gpu/app2/*.part-* /root/appparts/ && cp .gpu/app2/*.whl /root/appwhl/ || exit 1 ;;
      *) cp -r ".gpu/c0$2" /root/vb/ || exit 1 ;;
    esac
    ls /root/vb /root/appparts | tr '\n' ' '; echo ;;
  w-start)  # K S: the last folder, install, bench/batch_gpu.py's phase w; wait S s
    bash "$0" w-receive "$2" && bash "$0" install || exit 1
    (cd /root/repo && setsid python3 -m bench.batch_gpu run --out $RES --docs /root/docs --phases w \
       > $RES/batch.out 2>&1 &)
    bash "$0" bg-wait "${3:-420}" ;;
  bg-start)  # K S [PHASES [--cascade]]: the last folder, install, bench/batch_gpu.py's driver; wait S s
    bash "$0" bg-receive "$2" && bash "$0" install || exit 1
    (cd /root/repo && setsid python3 -m bench.batch_gpu run --out $RES --docs /root/docs --phases "${4:-gt}" \
       ${5:-} > $RES/batch.out 2>&1 &)
    bash "$0" bg-wait "${3:-420}" ;;
  bg-wait)  # until the driver ends or S s pass; results to $OUT/bg.tgz
    end=$((SECONDS + $2))
    while pgrep -f "^python3 -m bench[.]batch_gpu run" > /dev/null && [ $SECONDS -lt $end ]; do sleep 3; done
    pgrep -f "^python3 -m bench[.]batch_gpu run" > /dev/null && echo "batch still running" || echo "batch done"
    tail -15 $RES/batch.out
    tar czf "$OUT/bg.tgz" --exclude='vllm-cache-*' --exclude='data-*' --exclude='grid-work' -C /root res ;;
  install-and-start)
    bash "$0" install && bash "$0" start "${2:-420}" ;;
  install)
    bash /root/vb/c01/install.sh > /root/install.log 2>&1 || { tail -20 /root/install.log; exit 1; }
    for first in /root/appparts/*.part-aa; do  # a wheel that travelled in pieces, joined
      [ -e "$first" ] && cat "${first%.part-aa}".part-* > "/root/appwhl/$(basename "${first%.part-aa}")"
    done
    if [ -d /root/appwhl ]; then
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
        /root/appwhl/*.whl || exit 1
    fi
    [ -d /root/repo ] || cp -r "$PWD" /root/repo  # receive-first may have brought a clean copy
    # This copy runs uninstalled (PYTHONPATH), and pyproject.toml maps server/ and chainlit_app/ to
    # glm1m.server and glm1m.chainlit_app for an install only: link them where Python looks.
    ln -sfn ../server /root/repo/glm1m/server && ln -sfn ../chainlit_app /root/repo/glm1m/chainlit_app
    mkdir -p $RES
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $RES/gpus.csv
    python3 -c "import vllm, torch, transformers; print(vllm.__version__, torch.__version__,
      transformers.__version__)" > $RES/versions.txt 2>&1
    cat $RES/versions.txt ;;
  start)
    lane lane0 0 8000 $LANE0
    lane lane1 1 8001 $LANE1
    bash "$0" wait "${2:-420}" ;;
  wait)
    end=$((SECONDS + $2))
    while running && [ $SECONDS -lt $end ]; do sleep 5; done
    running && echo "lanes still running" || echo "lanes done"
    pack ;;
  tp2)
    pkill -f "m bench[.]gpu lane" ; pkill -f "vllm[.]entrypoints" ; sleep 5
    lane lane2 0,1 8000 "glm1m-tp2:$2"
    bash "$0" wait "${3:-540}" ;;
  tp2-then-steps)  # one driver under setsid, so the GPUs never wait for the next device call
    (cd /root/repo && setsid bash bench/gpu_session.sh sequence > $RES/driver.out 2>&1 &)
    for _ in $(seq 20); do running && break; sleep 0.5; done  # until the driver shows up
    bash "$0" wait "${2:-540}" ;;
  sequence)
    python3 -m bench.gpu lane --gpus 0,1 --port 8000 --out $RES "glm1m-tp2:long128k,long1m" \
      > $RES/lane2.out 2>&1
    lane lane3 0 8000 $STEPS0
    lane lane4 1 8001 $STEPS1
    while pgrep -f "m bench[.]gpu lane" > /dev/null; do sleep 5; done ;;
esac
