#!/usr/bin/env bash
# Issue 12 on one GPU, in one go (about 5 minutes on an H100): the peers' GPU tests, then every benchmark the
# issue asks for, each bounded in time. Results under $OUT (few files, as the device machine returns few):
#   peers.log     everything printed (tables, summaries with win/loss, whole-call breakdown, tuning cache)
#   tests.log     the GPU-marked tests of tests/test_peers.py
#   csv.tgz       one CSV per benchmark
#   tuning.json   best's tuning cache as the sweeps left it
# Usage, from the project root on the GPU machine with the .gpu bundle carried:  bash scripts/gpu_peers.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/csv"
if [ -d .gpu ] && [ ! -d /tmp/site/numpy ]; then  # the bundle of ../shared/device.md, unpacked once
  mkdir -p /tmp/site /tmp/sys && tar -xJf .gpu/site.tar.xz -C /tmp/site
  for f in .gpu/debs/*.deb; do dpkg -x "$f" /tmp/sys; done
fi
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=/tmp/sys/usr/lib/x86_64-linux-gnu:/tmp/sys/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FONTCONFIG_PATH=/tmp/sys/etc/fonts QT_QPA_PLATFORM=offscreen PYTHONUNBUFFERED=1
export RAYTRACER_CACHE_DIR="$OUT"  # best's tuning cache lands in $OUT/tuning.json
LOG="$OUT/peers.log"
step() {  # step SECONDS NAME COMMAND...: one bounded command, its output appended to the log
  local limit=$1 name=$2; shift 2
  echo "=== $name: $*" | tee -a "$LOG"
  local t0=$SECONDS
  timeout "$limit" "$@" 2>&1 | tee -a "$LOG" | tail -n 4
  echo "=== $name: exit ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$LOG"
}
app() { python3 -m raytracer_app "$@"; }
MEASURE=(--repeats 20 --tolerance 0.02 --max-repeats 200 --max-seconds 2)
SIZES=1048576,16777216,100000000,268435456

step 20 info bash -c 'nvidia-smi -L; python3 -c "import torch, triton, cupy; print(\"torch\", torch.__version__, \"triton\", triton.__version__, \"cupy\", cupy.__version__)"; python3 -c "import cuda.compute, importlib.metadata as m; print(\"cuda-cccl\", m.version(\"cuda-cccl\"))"'
echo "=== tests" | tee -a "$LOG"
timeout 150 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/test_peers.py > "$OUT/tests.log" 2>&1
echo "=== tests: exit $? ($(tail -n 1 "$OUT/tests.log"))" | tee -a "$LOG"

# sum of int32 at the issue's four sizes: best (tuned now, --retune), our warp-shuffle and every peer, hot and cold
step 110 sum-int32 app bench reduction --backend cuda --op sum --dtype int32 --sizes $SIZES --retune --cold \
  --variants warp-shuffle,best,cub-reduce,triton-sum,torch-sum,cupy-sum,cupy-sum-cub,cuda-reduce "${MEASURE[@]}" \
  --csv "$OUT/csv/sum-int32.csv"
# best against our own fast variants and the peers, every other op and dtype (best tunes on first use)
for spec in sum:float32 sumsq:int32 sumsq:float32 dot:int32 dot:float32; do
  op=${spec%:*}; dtype=${spec#*:}
  step 60 "$op-$dtype" app bench reduction --backend cuda --op "$op" --dtype "$dtype" --sizes $SIZES \
    --variants warp-shuffle,two-kernel,last-block,best,cub-reduce,triton-sum,torch-sum,cupy-sum,cupy-dot \
    "${MEASURE[@]}" --csv "$OUT/csv/$op-$dtype.csv"
done
# the whole call at 2^20 (launch + result on the host), with best's breakdown
for dtype in int32 float32; do
  step 40 "whole-call-$dtype" app bench reduction --backend cuda --op sum --dtype "$dtype" --n 1048576 \
    --whole-call --repeats 300 --csv "$OUT/csv/whole-call-$dtype.csv"
done
# histogram of 100 MiB at CUB's entropy levels and 90% one value, hot and cold
for pattern in uniform entropy-0.811 entropy-0.544 entropy-0.337 entropy-0.201 entropy-0.000 low-entropy; do
  step 40 "histogram-$pattern" app bench histogram --backend cuda --n 104857600 --pattern "$pattern" --cold \
    --variants shared-atomics,best,cub-histogram,torch-bincount,cupy-histogram "${MEASURE[@]}" \
    --csv "$OUT/csv/histogram-$pattern.csv"
done
# hash table inserts per second (no library peer is wired in: see the closing report)
step 40 hashtable app bench hashtable --backend cuda --repeats 10 --csv "$OUT/csv/hashtable.csv"

echo "=== tuning cache ($OUT/tuning.json)" | tee -a "$LOG"
cat "$OUT/tuning.json" 2>&1 | tee -a "$LOG"
tar -czf "$OUT/csv.tgz" -C "$OUT" csv && rm -rf "$OUT/csv"
echo "=== done after $SECONDS s" | tee -a "$LOG"
