#!/usr/bin/env bash
# Issue 12 on one GPU, in one go (under 6 minutes on an H100: every step has a time limit): the peers' GPU tests, then every benchmark the
# issue asks for, each bounded in time. Results under $OUT (few files, as the device machine returns few):
#   peers.log     everything printed (tables, summaries with win/loss, whole-call breakdown, tuning cache)
#   tests.log     the GPU-marked tests of tests/test_peers.py
#   csv.tgz       one CSV per benchmark
#   tuning.json   best's tuning cache as the sweeps left it
# Usage, from the project root on the GPU machine with the .gpu bundle carried:  bash scripts/gpu_peers.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/csv"
if [ -d .gpu ] && [ ! -d /tmp/site/numpy ]; then  # the carried dependency bundle (.gpu), unpacked once
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
step 20 info bash -c 'nvidia-smi -L; python3 -c "import torch, triton, cupy; print(\"torch\", torch.__version__, \"triton\", triton.__version__, \"cupy\", cupy.__version__)"; python3 -c "import cuda.compute, importlib.metadata as m; print(\"cuda-cccl\", m.version(\"cuda-cccl\"))"'
echo "=== tests" | tee -a "$LOG"
timeout 100 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/test_peers.py > "$OUT/tests.log" 2>&1
echo "=== tests: exit $? ($(tail -n 1 "$OUT/tests.log"))" | tee -a "$LOG"
# one process per group (scripts/gpu_peers_steps.py lists the commands): libraries load and compile once
#   reduction: sum int32 at 2^20, 2^24, 1e8, 2^28 (best retuned, hot and cold) vs warp-shuffle and every peer;
#              sum float32, sumsq and dot (int32, float32) at 2^20, 2^24, 1e8 vs our fast variants and the peers
#   whole-call: launch + result on the host at 2^20 (int32, float32), best's breakdown
#   histogram: 100 MiB at CUB's entropy levels and 90% one value (hot and cold), then the hash table
step 190 reduction python3 scripts/gpu_peers_steps.py reduction "$OUT/csv"
step 45 whole-call python3 scripts/gpu_peers_steps.py whole-call "$OUT/csv"
step 90 histogram python3 scripts/gpu_peers_steps.py histogram "$OUT/csv"

echo "=== tuning cache ($OUT/tuning.json)" | tee -a "$LOG"
cat "$OUT/tuning.json" 2>&1 | tee -a "$LOG"
tar -czf "$OUT/csv.tgz" -C "$OUT" csv && rm -rf "$OUT/csv"
echo "=== done after $SECONDS s" | tee -a "$LOG"
