#!/usr/bin/env bash
# One batch of GPU work for the device machine: GPU tests, then benchmarks, logs and CSVs under $OUT.
# Usage (on the GPU machine, with the app and its dependencies importable, e.g. PYTHONPATH=$PWD):
#   bash scripts/gpu-session.sh STAGE...   stages: info tests-render tests-all tests-gpu constant-proof inspect
#   bench-render bench-curve julia-precision bench-kernels bench-best tune-best gui-fps first-frame
#   compare-runs (two identical reduction runs as result files, compared) compare-20 (20 of them, rated;
#   ROUNDS=R: each alternated with a run in R interleaved rounds)
#   compare-processes (20 runs with --processes, rated; FIRST/LAST/BUDGET split them over several calls)
#   cpu-twins user-variant lessons pack
#   render-best (issue 52: spheres-binned against spheres-sorted at 100,000 and 1,000,000 spheres, julia-2d against
#   julia-grouped at 1024x1024 and 4096x4096 in float32 and float64, their GPU tests, counters and ncu limiters)
#   memory-seam (issue 34: the memory seam before, main at 0dbf0d9 exported to .base/, and after, with numba's
#   arrays and with cuda.core's; result files and `compare`s in $OUT/memory-seam.tgz, verdicts in
#   $OUT/memory-seam.log; PARTS="raytrace reduction whole-call" for some of them, CONTROL=1 also runs the
#   before column a second time to show the noise floor)
#   memory-seam-tests (the tests of the code the seam changed, once per implementation, IMPLS="numba cuda-core")
#   counters (bench reduction / histogram --counters with CSVs and wall times, ncu by hand on one variant
#   beside the app's figures, the recorded metric sets; where ncu cannot read counters, the one-line error)
#   reference-results (the result files the app ships, under $OUT/reference-results/: copy them into
#   assets/reference-results/)
#   lesson-references (the lessons' reference files, DEVICE-lesson-NAME.json with counters where ncu reads them,
#   LESSONS=a,b for some of them only,
#   under $OUT/reference-results/: copy them into assets/reference-results/)
#   hashmap (the hash tables of issue 38: hashmap-tests, hashmap-sanitizer and hashmap-bench in turn; each
#   also a stage of its own) and hashmap-tune (best's knobs); hashmap-bench and hashmap-tune take
#   N (keys, default 2^26), OPS and LOADS (comma lists), REPEATS; cuco-static-map runs where
#   RAYTRACER_CUCO_DIR names a cuCollections source folder, bght-bcht where RAYTRACER_BGHT_DIR names a BGHT one
#   (carry them: their include/ folders are enough)
#   hash-peers (both shims and the harnesses scripts/cuco_bench.cu and bght_bench.cu built with nvcc and run:
#   cuCollections' and BGHT's own benchmarks beside the app's workload at LOADS, $OUT/hash-peers.log;
#   RAYTRACER_CUCO_DIR and RAYTRACER_BGHT_DIR default to .gpu/cuco and .gpu/bght where those exist, here and in
#   hashmap-bench);
#   hashmap-bench takes VARIANTS (a comma list, default all), e.g. best,cuco-static-map,bght-bcht
#   hashmap-candidates (issue 52: every candidate layout of best's table timed, DESIGNS= for some) and
#   hashmap-twice (best's tuning twice from an empty cache: the two choices and their margins)
#   access-measured (access --measured for every reduction, histogram, hashtable and spheres GPU variant the
#   simulator runs, TARGETS=... for some targets only: JSON files in $OUT/access.tgz, the predicted-vs-measured
#   table in $OUT/access-table.md for docs/measurements.md)
#   lines (issue 37: figures per Python line; PARTS="tests inspect panel pcs timing" for some of them): the tests
#   of the per-line code, `inspect reduction interleaved-strided|best --lines --measured` (JSON in $OUT/lines/),
#   the whole reduction panel per line in one ncu run with its wall time (its JSON is this device's per-line
#   reference: $OUT/reference-results/DEVICE-lines-reduction.json, copy it into assets/reference-results/),
#   a small real per-PC table for tests/data/lines/ ($OUT/lines/best-pcs-DEVICE.json), and the line-information
#   timing check (bench with and without it, result files compared: $OUT/lines/lineinfo-*.json); PARTS=gui (not
#   in the default list): the window's figures per line, tests/test_gui_lines.py with its GPU test (needs .gpu)
#   compilers (issue 51: scripts/compiler_overheads.py, then bench reduction, histogram, hashtable and spheres
#   GPU variants with --compiler numba-cuda,numba-cuda-mlir, and inspect --compiler-compare of reduction best and
#   histogram best / global-atomics; numba-cuda-mlir from the carried .mlir/mlir.tar.xz; logs $OUT/compilers*.log)
#   ceilings (issue 52: every ceiling measured on this GPU, printed with how, then bench hashtable / spheres / julia /
#   mandelbrot with % of ceiling and the renderers' rays, tests and iterations per second; N keys, default 2^26;
#   PARTS="measure hashtable spheres julia mandelbrot" for some of them, OPS for the hash table's ops)
#   cluster-bench (issue 47: scripts/cluster_bench.py on every GPU of the host, figures in $OUT/cluster/)
#   cluster-counters (issue 47 item 4: bench reduction --counters here and on a cluster of every GPU of the host,
#   each with its wall time, then the reduction lesson's steps and counters there; logs and JSON $OUT/cluster-counters*)
#   ceilings-spread (the ceilings of a --processes run and of a --cluster run on every GPU of the host: their
#   ceiling lines name who measured each figure; logs and result files $OUT/ceilings-spread*)
#   (PYTEST_ARGS adds pytest options to tests-all / tests-gpu; pack tars
#   the CSVs into csv.tgz, since only 8 files come back from the device machine)
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
app() { python3 -m raytracer_app "$@"; }
for stage in "$@"; do
  echo "=== $stage" | tee -a "$OUT/session.log"
  case $stage in
    info)
      nvidia-smi -L 2>&1 | tee -a "$OUT/session.log"
      app devices 2>&1 | tee -a "$OUT/session.log" ;;
    tests-render)
      python3 -m pytest -q -rs tests/test_spheres.py tests/test_julia.py tests/test_cli_render.py 2>&1 | tee "$OUT/tests-render.log" | tail -25 ;;
    tests-all)
      timeout 420 python3 -m pytest -q -rs -p no:cacheprovider ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/tests-all.log" | tail -40 ;;
    constant-proof)
      python3 scripts/constant_proof.py 2>&1 | tee -a "$OUT/session.log" ;;
    tests-gpu)
      timeout 540 python3 -m pytest -q -rs -p no:cacheprovider -m gpu ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/tests-gpu.log" | tail -40 ;;
    inspect)
      for t in reduction histogram hashtable spheres julia; do app inspect $t --all 2>&1 | tee -a "$OUT/inspect.log"; done
      app inspect reduction interleaved-divergent --compare sequential 2>&1 | tee -a "$OUT/inspect.log" ;;
    bench-curve)
      timeout 300 python3 -m raytracer_app bench spheres --backend cuda --sizes 20,200,2000,20000,100000 --repeats 10 \
        --variants spheres-global,spheres-constant,spheres-shared,spheres-binned --csv "$OUT/curve.csv" 2>&1 | tee "$OUT/bench-curve.log"
      timeout 200 python3 -m raytracer_app bench spheres --backend cuda --n 1000000 --repeats 5 \
        --variants spheres-shared,spheres-binned --csv "$OUT/curve-1m.csv" 2>&1 | tee -a "$OUT/bench-curve.log"
      for n in 100000 1000000; do
        app render spheres --backend cuda --memory binned --spheres $n --repeats 30 --out /tmp/binned-$n.png 2>&1 | tee -a "$OUT/bench-curve.log"
      done ;;
    julia-precision)
      app bench julia --backend cuda --variants julia-2d,julia-2d-float64 --repeats 20 2>&1 | tee "$OUT/julia-precision.log"
      for p in float32 float64; do
        app render julia --backend cuda --c=-0.123,0.745 --center=0.356116344877184,0.0 --zoom 1e10 --iterations 1000 \
          --precision $p --repeats 20 --out "$OUT/julia-zoom-$p.png" 2>&1 | tee -a "$OUT/julia-precision.log"
      done ;;
    bench-render)
      app bench spheres --sizes 20,200,2000 --block 16x16,32x8,32x32 --repeats 20 --csv "$OUT/spheres.csv" 2>&1 | tee "$OUT/bench-spheres.log"
      app bench spheres --pattern staggered --sizes 20,200,2000 --block 16x16,32x32 --repeats 20 --csv "$OUT/spheres-staggered.csv" 2>&1 | tee "$OUT/bench-spheres-staggered.log"
      app bench julia --block 16x16,32x8 --repeats 20 --csv "$OUT/julia.csv" 2>&1 | tee "$OUT/bench-julia.log" ;;
    bench-kernels)
      app bench reduction --op sum --dtype int32 --n 100000000 --repeats 20 --csv "$OUT/reduction.csv" 2>&1 | tee "$OUT/bench-reduction.log"
      app bench histogram --n 104857600 --repeats 20 --csv "$OUT/histogram.csv" 2>&1 | tee "$OUT/bench-histogram.log"
      app bench hashtable --n 26214400 --repeats 5 --csv "$OUT/hashtable.csv" 2>&1 | tee "$OUT/bench-hashtable.log"
      app bench hashtable --n 1048576 --repeats 10 2>&1 | tee -a "$OUT/bench-hashtable.log" ;;
    bench-best)
      for n in 268435456 100000000 16777216; do
        app bench reduction --op sum --dtype int32 --n $n --repeats 20 --csv "$OUT/best-sum-$n.csv" 2>&1 | tee -a "$OUT/bench-best.log"
      done
      for op in sumsq dot; do
        app bench reduction --op $op --dtype float32 --n 100000000 --repeats 20 --csv "$OUT/best-$op.csv" 2>&1 | tee -a "$OUT/bench-best.log"
      done
      app bench histogram --pattern low-entropy --n 104857600 --repeats 20 --csv "$OUT/histogram-low.csv" 2>&1 | tee -a "$OUT/bench-best.log" ;;
    tune-best)
      for items in 4 8 16 32; do
        app bench reduction --op dot --dtype float32 --n 100000000 --variants best --block 256,512 --items-per-thread $items --repeats 20 2>&1 | grep -E "^best" | sed "s/^/dot items=$items /" | tee -a "$OUT/tune-best.log"
        app bench reduction --op sum --dtype int32 --n 16777216 --variants best --block 256,512 --items-per-thread $items --repeats 20 2>&1 | grep -E "^best" | sed "s/^/sum16M items=$items /" | tee -a "$OUT/tune-best.log"
      done ;;
    gui-fps)
      # ROUNDS alternations of the bare loop (numba's launch, then packed as the window's) and the window per
      # memory: single 3 s counts vary by about 10%
      for round in $(seq ${ROUNDS:-1}); do
        for memory in global constant shared; do
          python3 scripts/bare_loop.py --backend cuda --memory $memory --seconds 3 2>&1 | grep -v propagateSizeHints | tee -a "$OUT/gui-fps.log"
          python3 scripts/bare_loop.py --backend cuda --memory $memory --seconds 3 --packed 2>&1 | grep -v propagateSizeHints | tee -a "$OUT/gui-fps.log"
          python3 scripts/gui_fps.py --backend cuda --memory $memory --seconds 3 2>&1 | grep -v propagateSizeHints | tee -a "$OUT/gui-fps.log"
        done
      done ;;
    first-frame)
      # a pip install writes bytecode; an unpacked bundle has none and some machines set
      # PYTHONDONTWRITEBYTECODE, so compile it once, or every start would compile numpy, Qt and pyqtgraph
      python3 -m compileall -q -j 0 ${BUNDLE_SITE:-/tmp/site} kernels raytracer_app > /dev/null
      fps() { NUMBA_CACHE_DIR=$cache RAYTRACER_CACHE_DIR=$cache/app python3 scripts/gui_fps.py --seconds 0.5 "$@" 2>&1 | grep "first frame"; }
      for fast in 1 0; do
        for backend in cuda cpu; do
          for memory in constant global; do
            cache=$(mktemp -d)  # cold: an empty numba cache; then warm: what the cold start left
            RAYTRACER_FAST_START=$fast fps --backend $backend --memory $memory | sed "s/^/fast=$fast cold: /" | tee -a "$OUT/first-frame.log"
            for i in 1 2; do
              RAYTRACER_FAST_START=$fast fps --backend $backend --memory $memory | sed "s/^/fast=$fast warm: /" | tee -a "$OUT/first-frame.log"
            done
            rm -rf "$cache"
            [ $backend = cpu ] && break  # the CPU twin has no memories
          done
        done
      done ;;
    compare-runs)
      for run in 1 2; do
        app bench reduction --backend cuda --n 16777216 --repeats 20 --json "$OUT/reduction-$run.json" > "$OUT/compare-run-$run.log" 2>&1
      done
      app compare "$OUT/reduction-1.json" "$OUT/reduction-2.json" 2>&1 | tee "$OUT/compare.log" ;;
    compare-20)
      # 20 identical runs (separate processes) for the verdict's error rates: scripts/compare_rates.py.
      # ROUNDS=R (e.g. 20) also makes, alternately with each plain run, a run with --rounds R
      mkdir -p /tmp/runs
      for run in $(seq -w 1 20); do
        app bench reduction --backend cuda --sizes 1048576,16777216 --variants best,sequential,warp-shuffle,two-kernel \
          --repeats 20 --json "/tmp/runs/run-$run.json" > /dev/null 2>> "$OUT/compare-20.log"
        if [ "${ROUNDS:-1}" -gt 1 ]; then
          app bench reduction --backend cuda --sizes 1048576,16777216 --variants best,sequential,warp-shuffle,two-kernel \
            --repeats 20 --rounds "$ROUNDS" --json "/tmp/runs/rounds-$run.json" > /dev/null 2>> "$OUT/compare-20.log"
        fi
      done
      python3 scripts/compare_rates.py --rows 50 /tmp/runs/run-*.json 2>&1 | tee -a "$OUT/compare-20.log"
      if [ "${ROUNDS:-1}" -gt 1 ]; then
        python3 scripts/compare_rates.py --rows 50 /tmp/runs/rounds-*.json 2>&1 | tee -a "$OUT/compare-20.log"
      fi
      tar -czf "$OUT/runs-20.tgz" -C /tmp runs ;;
    compare-processes)
      # runs FIRST..LAST (default 1..20) of `bench --processes ${PROCESSES:-10} --rounds ${ROUNDS:-2}`, one after
      # another until BUDGET seconds (default 540) have passed; all runs made so far are rated and packed
      mkdir -p /tmp/proc-runs
      start=$SECONDS
      for run in $(seq -w "${FIRST:-1}" "${LAST:-20}"); do
        [ $((SECONDS - start)) -lt "${BUDGET:-540}" ] || { echo "budget spent before run $run" | tee -a "$OUT/compare-processes.log"; break; }
        t0=$SECONDS
        app bench reduction --backend cuda --sizes 1048576,16777216 --variants best,sequential,warp-shuffle,two-kernel \
          --repeats 20 --processes "${PROCESSES:-10}" --rounds "${ROUNDS:-2}" --json "/tmp/proc-runs/proc-$run.json" \
          > /dev/null 2>> "$OUT/compare-processes.log"
        echo "run $run: exit $?, $((SECONDS - t0)) s" | tee -a "$OUT/compare-processes.log"
      done
      python3 scripts/compare_rates.py --rows 50 /tmp/proc-runs/proc-*.json 2>&1 | tee -a "$OUT/compare-processes.log"
      tar -czf "$OUT/proc-runs.tgz" -C /tmp proc-runs ;;
    cpu-twins)
      app bench julia --backend cpu --variants julia-cpu,julia-cpu-simd,julia-cpu-float64,julia-cpu-simd-float64 --repeats 20 2>&1 | tee "$OUT/cpu-twins.log"
      app bench spheres --backend cpu --sizes 20,2000 --variants spheres-cpu,spheres-cpu-tiles --repeats 20 2>&1 | tee -a "$OUT/cpu-twins.log"
      app bench spheres --backend cpu --sizes 1000000 --variants spheres-cpu,spheres-cpu-tiles --repeats 3 2>&1 | tee -a "$OUT/cpu-twins.log"
      for p in uniform low-entropy; do
        app bench histogram --backend cpu --n 268435456 --pattern $p --repeats 10 2>&1 | tee -a "$OUT/cpu-twins.log"
      done ;;
    reference-results)
      mkdir -p "$OUT/reference-results"
      python3 scripts/reference_results.py --backend cuda --out "$OUT/reference-results" 2>&1 | tee "$OUT/reference-results.log" ;;
    lesson-references)
      mkdir -p "$OUT/reference-results"
      python3 scripts/reference_results.py --backend cuda --lessons "${LESSONS:-all}" --counters --out "$OUT/reference-results" \
        2>&1 | tee "$OUT/lesson-references.log" ;;
    user-variant)
      # your own variant: the best template beside the built-in best in one command (default launch: best tunes,
      # the template runs its LAUNCH; then both at 256 x 8; compare the noise columns), and the editor's Run ->
      # row time at 2^24 with its phases (child warmed as when the editor is shown, then cold), and in the
      # simulator at its size
      tpl=$(mktemp -d)/best_template.py
      app variant new reduction --from best "$tpl" 2>&1 | tee "$OUT/user-variant.log"
      TIMEFORMAT="bench wall time (start, child, compile, both rows): %R s"
      { time app bench reduction --backend cuda --n 16777216 --variant-file "$tpl" --variants best,my-best \
          --repeats 20 --csv "$OUT/user-variant.csv" ; } 2>&1 | tee -a "$OUT/user-variant.log"
      app bench reduction --backend cuda --n 16777216 --variant-file "$tpl" --variants best,my-best --repeats 20 \
        --block 256 --items-per-thread 8 2>&1 | tee -a "$OUT/user-variant.log"
      QT_QPA_PLATFORM=offscreen python3 scripts/variant_run_time.py --backend cuda --n 16777216 --repeats 20 --runs 3 \
        2>&1 | tee -a "$OUT/user-variant.log"
      QT_QPA_PLATFORM=offscreen python3 scripts/variant_run_time.py --backend cuda --n 16777216 --repeats 20 --cold \
        2>&1 | tee -a "$OUT/user-variant.log"
      QT_QPA_PLATFORM=offscreen python3 scripts/variant_run_time.py --backend sim --runs 2 \
        2>&1 | tee -a "$OUT/user-variant.log" ;;
    lessons)
      # the lesson tables, timed on this GPU, with the static evidence for its own architecture (the inspect
      # extra); the reduction at both of its sizes, 2^22 and 2^26 ints
      timeout 500 python3 -m raytracer_app lesson reduction --backend cuda --markdown "$OUT/lesson-reduction.md" \
        --csv "$OUT/lesson-reduction.csv" 2>&1 | tee "$OUT/lesson-reduction.log"
      timeout 300 python3 -m raytracer_app lesson constant-memory --backend cuda --markdown "$OUT/lesson-constant-memory.md" \
        --csv "$OUT/lesson-constant-memory.csv" 2>&1 | tee "$OUT/lesson-constant-memory.log"
      timeout 300 python3 -m raytracer_app lesson atomics --backend cuda --markdown "$OUT/lesson-atomics.md" \
        --csv "$OUT/lesson-atomics.csv" 2>&1 | tee "$OUT/lesson-atomics.log"
      # once more with every step's measured counters (ncu, as bench --counters reads them) at the paper's 2^22
      # only; where ncu cannot read counters this prints the one-line refusal and exits 2
      s=$EPOCHREALTIME
      timeout 500 python3 -m raytracer_app lesson reduction --backend cuda --n 4194304 --counters \
        --markdown "$OUT/lesson-reduction-counters.md" --csv "$OUT/lesson-reduction-counters.csv" \
        2>&1 | tee "$OUT/lesson-reduction-counters.log"
      echo "lesson reduction --counters: exit ${PIPESTATUS[0]}, $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $s}") s wall" \
        | tee -a "$OUT/lesson-reduction-counters.log" ;;
    pack)
      (cd "$OUT" && tar -czf csv.tgz *.csv 2>/dev/null && rm -f *.csv) ;;
    hashmap)
      bash "$0" hashmap-tests hashmap-sanitizer hashmap-bench ;;
    hashmap-tests)
      # every op and variant at a few dozen keys against dicts (here on the GPU), then the gpu-marked runs: a
      # million keys per op and load with the peers, bucket widths and launches, best's tuning cache
      timeout 560 python3 -m pytest -q -rs -p no:cacheprovider tests/test_hashmap.py tests/test_hashtable.py \
        ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/hashmap-tests.log" | tail -30 ;;
    hashmap-sanitizer)
      # memcheck and racecheck over every new kernel (and the chained find) at 20,000 keys, load 0.9, half the
      # lookups absent; best at a fixed launch (no tuning sweep under the sanitizer); then a find holding 4
      # keys per group in flight and the widest bucket. Each run should end "ERROR SUMMARY: 0 errors" /
      # "RACECHECK SUMMARY: 0 hazards displayed" with every row verified "yes"
      sanitize() {
        compute-sanitizer --tool "$1" --report-api-errors no python3 -m raytracer_app bench hashtable --backend cuda \
          --n 20000 --load 0.9 --absent 0.5 --block 256 --repeats 1 "${@:2}" 2>&1 \
          | grep -E "SUMMARY|^(linear|bucketed|two-choice|best|gpu-)|rror" | sed "s/^/$1 ${*:2}: /" | tee -a "$OUT/hashmap-sanitizer.log"
      }
      for tool in memcheck racecheck; do
        for op in insert find erase insert-or-add; do
          sanitize $tool --op $op --variants linear-probing,bucketed,two-choice,best,gpu-locks,gpu-lockfree
        done
        sanitize $tool --op find --items-per-thread 4 --bucket 32 --variants linear-probing,two-choice
        sanitize $tool --op insert --bucket 4 --multiplicity 3 --variants bucketed,two-choice
      done ;;
    hashmap-bench)
      # every op at LOADS (default 0.5,0.8,0.9,0.95) with N keys (default 2^26) for every variant and peer: the
      # table of G ops/s, % of copy bandwidth for find, the goals; hashmap-OP.csv / .json in $OUT. All four ops
      # take longer than one command may: split them, e.g. OPS=insert,insert-or-add then OPS=find then OPS=erase
      [ -z "${RAYTRACER_CUCO_DIR:-}" ] && [ -d .gpu/cuco/include ] && export RAYTRACER_CUCO_DIR=$PWD/.gpu/cuco
      [ -z "${RAYTRACER_BGHT_DIR:-}" ] && [ -d .gpu/bght/include ] && export RAYTRACER_BGHT_DIR=$PWD/.gpu/bght
      timeout 590 python3 scripts/hashmap_bench.py --backend cuda --n "${N:-67108864}" ${VARIANTS:+--variants "$VARIANTS"} \
        --ops "${OPS:-insert,find,erase,insert-or-add}" --loads "${LOADS:-0.5,0.8,0.9,0.95}" --repeats "${REPEATS:-10}" \
        --out "$OUT" 2>&1 | tee -a "$OUT/hashmap-bench.log" ;;
    hash-peers)
      [ -z "${RAYTRACER_CUCO_DIR:-}" ] && [ -d .gpu/cuco/include ] && export RAYTRACER_CUCO_DIR=$PWD/.gpu/cuco
      [ -z "${RAYTRACER_BGHT_DIR:-}" ] && [ -d .gpu/bght/include ] && export RAYTRACER_BGHT_DIR=$PWD/.gpu/bght
      command -v nvcc >/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && export PATH=$PATH:/usr/local/cuda/bin; }
      { nvcc --version | tail -2; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader; } 2>&1 \
        | tee -a "$OUT/hash-peers.log"
      timeout 580 python3 scripts/peer_bench.py --n "${N:-67108864}" --loads "${LOADS:-0.5,0.8,0.9,0.95}" \
        --repeats "${REPEATS:-20}" 2>&1 | tee -a "$OUT/hash-peers.log" ;;
    hashmap-tune)
      # G ops/s of best's table (4 hashes, overflow flags) for each bucket width (4-32 slots), block (128-512)
      # and, for find, keys per group in flight (1, 2, 4), at LOADS (default 0.9,0.95): which knob to set in best
      timeout 590 python3 scripts/hashmap_bench.py --backend cuda --n "${N:-67108864}" --ops "${OPS:-find,insert}" \
        --loads "${LOADS:-0.9,0.95}" --tune --out "$OUT" 2>&1 | tee -a "$OUT/hashmap-tune.log" ;;
    hashmap-candidates)
      # issue 52: every candidate layout of best's table (best-bB: first bucket with room; rounds-bB-hH: inserts
      # in rounds by step; linear) by block and keys in flight, at N keys (default 2^26), LOADS (default
      # 0.8,0.9,0.95), insert and find of present and absent keys: G ops/s per candidate, the fastest per
      # (op, load), each design verified once per load; candidates.csv and hashmap-candidates.log in $OUT
      timeout 300 python3 scripts/hashmap_candidates.py --backend cuda --n "${N:-67108864}" \
        --loads "${LOADS:-0.8,0.9,0.95}" ${DESIGNS:+--designs "$DESIGNS"} --repeats "${REPEATS:-10}" --out "$OUT" \
        2>&1 | tee -a "$OUT/hashmap-candidates.log"
      # the same few at load 0.9 with the L2 fetching 32 bytes per miss (does a random read bring more?)
      mkdir -p "$OUT/l2-fetch-32"
      timeout 120 python3 scripts/hashmap_candidates.py --backend cuda --n "${N:-67108864}" --loads 0.9 \
        --designs best-b4,best-b8,rounds-b4-h4-f8,rounds-b8-h4-f8,linear --items 2 --blocks 128 --l2-fetch 32 \
        --out "$OUT/l2-fetch-32" 2>&1 | tee -a "$OUT/hashmap-candidates.log" ;;
    hashmap-twice)
      # issue 52: best's tuning twice, each process with an empty tuning cache of its own: the two runs' notes
      # ("tuned: bucket B slots, block K (tuned now; ahead by M%, noise X%[, a tie, chosen by preference])")
      # should name the same layout; hashmap-twice.log in $OUT
      for run in 1 2; do
        echo "--- run $run" | tee -a "$OUT/hashmap-twice.log"
        RAYTRACER_CACHE_DIR=$(mktemp -d) timeout 280 python3 -m raytracer_app bench hashtable --backend cuda \
          --variants best --n "${N:-67108864}" --op insert,find --load "${LOADS:-0.9,0.95}" --repeats 5 2>&1 \
          | tee -a "$OUT/hashmap-twice.log"
      done
      grep -o "tuned: [^;]*;[^)]*)" "$OUT/hashmap-twice.log" | tee -a "$OUT/hashmap-twice.log" ;;
    counters)
      { which ncu; ncu --version | tail -1; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv; } 2>&1 | tee -a "$OUT/counters.log"
      for t in reduction histogram; do
        s=$EPOCHREALTIME
        app bench $t --backend cuda --counters --repeats 10 --csv "$OUT/counters-$t.csv" 2>&1 | tee -a "$OUT/counters.log"
        echo "bench $t --counters: exit ${PIPESTATUS[0]}, $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $s}") s wall" | tee -a "$OUT/counters.log"
      done
      # the same metrics by hand for best's reduction kernel (skip the tuning sweep's and warm-up's launches)
      app bench reduction --backend cuda --variants best --repeats 3 >/dev/null 2>&1
      ncu --clock-control none -k regex:best --launch-skip 2 --launch-count 1 --metrics \
        dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,smsp__inst_executed.sum \
        python3 -m raytracer_app bench reduction --backend cuda --variants best --repeats 3 2>&1 | tee -a "$OUT/counters.log" | grep -E "dram__|sm__|lts__|smsp__|best_|ERR"
      python3 scripts/counters_record.py "$OUT" 2>&1 | tee -a "$OUT/counters.log" ;;
    memory-seam)
      # one tuning cache for every column, so that best runs at the same launch in each (rows match by launch)
      export RAYTRACER_CACHE_DIR=${RAYTRACER_CACHE_DIR:-$(mktemp -d)}
      ms=$(mktemp -d)/memory-seam && mkdir -p "$ms"
      log() { echo "$@" | tee -a "$OUT/memory-seam.log"; }
      columns="numba cuda-core"
      if [ -d .base/kernels ]; then columns="before $columns"; else log "no .base/ (main at 0dbf0d9): no before column"; fi
      # COLUMN NAME ARGS...: one `bench ARGS --json` as that column runs it, into $ms/COLUMN-NAME.json
      run_column() {
        local col=$1 name=$2; shift 2
        local s=$EPOCHREALTIME
        if [ "$col" = before ]; then  # from inside .base/, so that python -m finds its packages before ours
          (cd .base && PYTHONPATH=$PWD:${PYTHONPATH:-} timeout 280 python3 -m raytracer_app bench "$@" \
            --json "$ms/$col-$name.json" > "$ms/$col-$name.log" 2>&1)
        else
          RAYTRACER_MEMORY=$col timeout 280 python3 -m raytracer_app bench "$@" --json "$ms/$col-$name.json" \
            > "$ms/$col-$name.log" 2>&1
        fi
        log "$col $name: exit $?, $(awk "BEGIN{printf \"%.0f\", $EPOCHREALTIME - $s}") s"
      }
      for col in numba cuda-core; do
        RAYTRACER_MEMORY=$col python3 -c "from kernels import backend; backend.resolve('cuda').activate()
import numpy as np; from kernels.backend import memory; memory.pinned_empty(4, np.int32); print(memory.describe())" 2>&1 \
          | tail -3 | sed "s/^/$col: /" | tee -a "$OUT/memory-seam.log"
      done
      nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$OUT/memory-seam.log"
      python3 -c "import cuda.core; print('cuda.core', cuda.core.__version__)" 2>&1 | tail -1 | tee -a "$OUT/memory-seam.log"
      runs=$columns
      [ "${CONTROL:-0}" = 1 ] && [ -d .base/kernels ] && runs="$columns before2"
      for part in ${PARTS:-raytrace reduction whole-call}; do
        for col in $runs; do
          c=${col%2}; name=$part${col#$c}  # before2: the before column again, as before-NAME2.json
          case $part in
            raytrace) run_column $c $name raytrace --backend cuda --size 1024x1024 --repeats ${SEAM_REPEATS:-40} --processes ${SEAM_PROCESSES:-10} --rounds 2 \
                        --variants spheres-global,spheres-constant,spheres-shared,spheres-binned,spheres-frame-to-host ;;
            reduction) run_column $c $name reduction --backend cuda --variants best --sizes 1048576,268435456 \
                         --repeats ${SEAM_REPEATS:-40} --processes ${SEAM_PROCESSES:-10} --rounds 2 ;;
            whole-call) run_column $c $name reduction --backend cuda --whole-call --variants best,best-plain \
                          --sizes 1048576 --repeats 2000 ;;
          esac
        done
        for col in numba cuda-core; do
          [ -f "$ms/before-$part.json" ] && app compare "$ms/before-$part.json" "$ms/$col-$part.json" \
            --markdown "$ms/compare-$part-before-$col.md" 2>&1 | sed "s/^/[$part: $col against before] /" | tee -a "$OUT/memory-seam.log"
        done
        app compare "$ms/numba-$part.json" "$ms/cuda-core-$part.json" --markdown "$ms/compare-$part-numba-cuda-core.md" 2>&1 \
          | sed "s/^/[$part: cuda-core against numba] /" | tee -a "$OUT/memory-seam.log"
        [ -f "$ms/before-${part}2.json" ] && app compare "$ms/before-$part.json" "$ms/before-${part}2.json" 2>&1 \
          | sed "s/^/[$part: before against before (noise)] /" | tee -a "$OUT/memory-seam.log"
      done
      for f in "$ms"/*-whole-call*.log; do [ -f "$f" ] && { log "--- $(basename "$f")"; grep -A8 "breakdown" "$f" | tee -a "$OUT/memory-seam.log"; }; done
      tar -czf "$OUT/memory-seam.tgz" -C "$(dirname "$ms")" memory-seam ;;
    memory-seam-tests)
      # the tests of the code the memory seam changed (all of them, not only those marked gpu: on a GPU every
      # kernel test runs there; the library peers take our arrays), once per implementation
      for impl in ${IMPLS:-numba cuda-core}; do
        RAYTRACER_MEMORY=$impl timeout 290 python3 -m pytest -q -rs -p no:cacheprovider --maxfail=20 ${PYTEST_ARGS:-} \
          tests/test_memory_seam.py tests/test_packed_launch.py tests/test_spheres.py tests/test_reduction.py \
          tests/test_histogram.py tests/test_julia.py tests/test_peers.py tests/test_user_variants.py 2>&1 \
          | tee "$OUT/memory-seam-tests-$impl.log" | tail -25
      done ;;
    access-measured)
      # what each warp does to memory: the trace's prediction (CUDA simulator, in a child process) beside Nsight
      # Compute's figures for the same launch on this GPU, per GPU variant the simulator runs; 10-30 s a variant,
      # so split the targets over calls (TARGETS=reduction, then TARGETS="histogram hashtable spheres")
      mkdir -p /tmp/access
      for t in ${TARGETS:-reduction histogram hashtable spheres}; do
        case $t in
          reduction|histogram) size="--n 1048576" ;;
          hashtable) size="--n 262144" ;;
          spheres) size="--n 20 --size 1024x1024" ;;
          *) size="" ;;
        esac
        for v in $(python3 scripts/access_table.py --list $t | cut -d' ' -f2); do
          s=$EPOCHREALTIME
          timeout 240 python3 -m raytracer_app access $t $v $size --backend cuda --measured \
            --json "/tmp/access/$t-$v.json" > "/tmp/access/$t-$v.log" 2>&1
          echo "access $t $v $size --measured: exit $?, $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $s}") s" \
            | tee -a "$OUT/access-measured.log"
          grep -E "DIFFERS|error" "/tmp/access/$t-$v.log" | head -5 | sed "s/^/  /" | tee -a "$OUT/access-measured.log"
        done
      done
      python3 scripts/access_table.py /tmp/access/*.json 2>&1 | tee "$OUT/access-table.md" | tail -15
      tar -czf "$OUT/access.tgz" -C /tmp access ;;
    lines)
      mkdir -p "$OUT/lines" "$OUT/reference-results"
      log() { echo "$@" | tee -a "$OUT/lines.log"; }
      since() { awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $1}"; }
      { which ncu; ncu --version | tail -1; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } 2>&1 \
        | tee -a "$OUT/lines.log"
      device=$(python3 -c "from kernels import backend; from kernels.harness.results import device_slug
print(device_slug(backend.resolve('cuda').device_name))")
      for part in ${PARTS:-tests inspect panel pcs timing}; do
        s=$EPOCHREALTIME
        case $part in
          tests)
            timeout 400 python3 -m pytest -q -rs -p no:cacheprovider tests/test_lines_gpu.py tests/test_lines.py \
              tests/test_lines_static.py tests/test_lines_recorded.py ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/lines-tests.log" \
              | tail -15 ;;
          inspect)
            for v in interleaved-strided best; do
              timeout 240 python3 -m raytracer_app inspect reduction $v --lines --measured --top 10 \
                --json "$OUT/lines/$v.json" > "$OUT/lines/$v.log" 2>&1
              log "inspect reduction $v --lines --measured: exit $?"
              grep -v "^lines: " "$OUT/lines/$v.log" | tee -a "$OUT/lines.log"
              timeout 240 python3 -m raytracer_app inspect reduction $v --lines --measured --top 10 --n 268435456 \
                > "$OUT/lines/$v-2p28.log" 2>&1
              log "inspect reduction $v --lines --measured --n 268435456: exit $?"
              grep -v "^lines: " "$OUT/lines/$v-2p28.log" | tee -a "$OUT/lines.log"
            done ;;
          panel)
            # every reduction GPU variant, one ncu run; its JSON is this device's per-line reference
            timeout 540 python3 -m raytracer_app inspect reduction --all --lines --measured --top 5 \
              --json "$OUT/reference-results/$device-lines-reduction.json" > "$OUT/lines/panel.log" 2>&1
            log "inspect reduction --all --lines --measured: exit $?, $(since $s) s wall (compile included)"
            grep -E "measured per line in|note:|^kernel .* measured on" "$OUT/lines/panel.log" | tee -a "$OUT/lines.log" ;;
          gui)
            timeout 540 python3 -m pytest -q -rs -p no:cacheprovider tests/test_gui_lines.py ${PYTEST_ARGS:-} 2>&1 \
              | tee "$OUT/lines-gui.log" | tail -15 ;;
          pcs)
            timeout 240 python3 scripts/pc_table.py "$OUT/lines/best-pcs-$device.json" --variant best --n 1048576 2>&1 \
              | tee -a "$OUT/lines.log" ;;
          timing)
            # same process count and repeats with and without line information, alternated, compared
            timeout 540 python3 scripts/lineinfo_timing.py --out "$OUT/lines" --rounds 2 -- bench reduction --backend cuda \
              --variants best,interleaved-strided --sizes 1048576,268435456 --repeats 40 2>&1 | tee -a "$OUT/lines.log" ;;
        esac
        log "lines part $part: $(since $s) s"
      done ;;
    compilers)
      # issue 51: numba-cuda and numba-cuda-mlir side by side (docs/compilers.md). numba-cuda-mlir comes from the
      # carried wheel's package dirs (.mlir/mlir.tar.xz), unpacked once into the bundle's site (BUNDLE_SITE)
      site=${BUNDLE_SITE:-/tmp/site}
      if ! python3 -c "import numba_cuda_mlir" 2> /dev/null; then
        if [ ! -f .mlir/mlir.tar.xz ]; then
          echo "compilers: numba-cuda-mlir is not importable and .mlir/mlir.tar.xz was not carried" \
            | tee -a "$OUT/session.log"
          continue
        fi
        mkdir -p "$site" && tar -xJf .mlir/mlir.tar.xz -C "$site"
        case ":${PYTHONPATH:-}:" in *":$site:"*) ;; *) export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" ;; esac
      fi
      python3 -c "from importlib.metadata import version as v; print('numba-cuda', v('numba-cuda'), \
        'numba-cuda-mlir', v('numba-cuda-mlir'))" 2>&1 | tee "$OUT/compilers.log"
      # the gates "cold compile no slower, launch overhead no worse", each compiler in a fresh process, one run
      timeout 50 python3 scripts/compiler_overheads.py --json "$OUT/compilers-overheads.json" 2>&1 \
        | tee -a "$OUT/compilers.log"
      gpu_variants() { python3 -c "from kernels.registry import by_name
print(','.join(v.name for v in by_name('$1').variants if v.kind == 'gpu'))"; }
      # about 3 minutes in all (each bench compiles its kernels cold under both); a timeout names what overran
      sbs() {
        t=$1; limit=$2; shift 2
        timeout $limit python3 -m raytracer_app bench $t --backend cuda --variants "$(gpu_variants $t)" \
          --compiler numba-cuda,numba-cuda-mlir "$@" > "$OUT/compilers-$t.log" 2>&1
        echo "bench $t side by side: exit $? (FAILED rows and skips, then compare's verdicts)" \
          | tee -a "$OUT/compilers.log"
        grep -E "^== under|FAILED|numba-cuda-mlir (lacks|0\.6\.0 wrong code)|error" "$OUT/compilers-$t.log" \
          | cut -c1-300 | tee -a "$OUT/compilers.log"
        sed -n '/^== numba-cuda-mlir against/,$p' "$OUT/compilers-$t.log" | tee -a "$OUT/compilers.log"
      }
      sbs reduction 60 --n 100000000 --repeats 5
      sbs histogram 40 --n 104857600 --repeats 5
      sbs hashtable 50 --n 4194304 --repeats 3
      sbs spheres 50 --sizes 20,2000 --repeats 5
      for v in "reduction best" "histogram best" "histogram global-atomics"; do
        timeout 25 python3 -m raytracer_app inspect $v --compiler-compare 2>&1 | tee -a "$OUT/compilers-inspect.log" \
          | tail -4
      done ;;
    ceilings)
      # each ceiling alone (kernels/harness/ceilings.py), the sized ones over a 1 MiB table (L2-resident) and over
      # the hash table of N keys at load 0.9; then the benches, whose rows carry %ceil and print what it is against.
      # PARTS="measure hashtable spheres julia mandelbrot" (the default) or some of them: one call may not hold all
      for part in ${PARTS:-measure hashtable spheres julia mandelbrot}; do
        echo "--- ceilings $part" | tee -a "$OUT/session.log"
        case $part in
          measure)
            timeout 300 python3 - "${N:-67108864}" <<'PY' 2>&1 | tee "$OUT/ceilings.log"
import sys
from kernels.backend import Backend
from kernels.harness import ceilings
from kernels.hashtable.layout import capacity_for
from kernels.spheres import RAY_SPHERE
backend = Backend("cuda", 0)
backend.activate()
table = 8 * capacity_for(int(sys.argv[1]), 0.9)
for ceiling in (*ceilings.BUILT_IN, RAY_SPHERE):
    for size in ((1 << 20, table) if ceiling.sized else (0,)):
        print(ceilings.measure(ceiling, backend, size).text(), f"[table {size:,} bytes]" if size else "", flush=True)
PY
            ;;
          hashtable)
            timeout 590 python3 -m raytracer_app bench hashtable --backend cuda --n "${N:-67108864}" \
              --op "${OPS:-insert,find,erase}" --load 0.9 --variants linear-probing,bucketed,two-choice,best --repeats 10 \
              --csv "$OUT/ceilings-hashtable.csv" 2>&1 | tee "$OUT/ceilings-hashtable.log" ;;
          spheres)
            timeout 590 python3 -m raytracer_app bench spheres --backend cuda --sizes 20,2000,100000,1000000 \
              --size 1024x1024 --repeats 10 --csv "$OUT/ceilings-spheres.csv" 2>&1 | tee "$OUT/ceilings-spheres.log" ;;
          julia)
            for size in 1024x1024 4096x4096; do
              timeout 290 python3 -m raytracer_app bench julia --backend cuda --size $size --repeats 20 \
                --csv "$OUT/ceilings-julia-$size.csv" 2>&1 | tee -a "$OUT/ceilings-julia.log"
            done ;;
          mandelbrot)
            timeout 290 python3 -m raytracer_app bench mandelbrot --backend cuda --repeats 20 \
              --csv "$OUT/ceilings-mandelbrot.csv" 2>&1 | tee "$OUT/ceilings-mandelbrot.log" ;;
        esac
      done ;;
    render-best)
      # issue 52 item 5: the renderers' old and new variants, kernel-time medians, every row verified against the
      # CPU twin; the new variants' GPU tests; then what binds each kernel: the app's counters (bench --counters,
      # the guided-analysis sentences) and one ncu summary per kernel with the limiters. Logs in $OUT/render-best*.
      s=$EPOCHREALTIME
      timeout 120 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/test_spheres_sorted.py \
        tests/test_julia_grouped.py 2>&1 | tee "$OUT/render-best-tests.log" | tail -5
      timeout 200 python3 -m raytracer_app bench spheres --backend cuda --size 1024x1024 --sizes 100000,1000000 \
        --variants spheres-binned,spheres-sorted --repeats 30 --csv "$OUT/render-best-spheres.csv" 2>&1 | tee "$OUT/render-best.log"
      for size in 1024x1024 4096x4096; do
        timeout 150 python3 -m raytracer_app bench julia --backend cuda --size $size --block 16x16,8x8 --repeats 30 \
          --variants julia-2d,julia-grouped,julia-2d-float64,julia-grouped-float64 --csv "$OUT/render-best-julia-$size.csv" \
          2>&1 | tee -a "$OUT/render-best.log"
      done
      echo "render-best benches: $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $s}") s wall" | tee -a "$OUT/render-best.log"
      if which ncu >/dev/null 2>&1; then
        timeout 240 python3 -m raytracer_app bench spheres --backend cuda --size 1024x1024 --n 1000000 --counters \
          --variants spheres-binned,spheres-sorted --repeats 3 2>&1 | tee -a "$OUT/render-best-counters.log"
        timeout 200 python3 -m raytracer_app bench julia --backend cuda --size 4096x4096 --counters --repeats 3 \
          --variants julia-2d,julia-grouped,julia-2d-float64,julia-grouped-float64 2>&1 | tee -a "$OUT/render-best-counters.log"
        # one line of limiters per kernel (the median over its launches): SM, DRAM and L1/shared throughput % of
        # peak, achieved occupancy, duration
        limiters=sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
        limiters=$limiters,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
        limiters=$limiters,smsp__inst_executed.sum,gpu__time_duration.sum
        for what in "spheres --n 1000000 --variants spheres-binned,spheres-sorted" \
                    "julia --size 4096x4096 --variants julia-2d,julia-grouped,julia-2d-float64,julia-grouped-float64"; do
          timeout 240 ncu --clock-control none --target-processes all --csv --metrics $limiters \
            python3 -m raytracer_app bench $what --backend cuda --repeats 2 > "$OUT/render-best-ncu.csv.tmp" 2>&1
          python3 scripts/ncu_limiters.py "$OUT/render-best-ncu.csv.tmp" 2>&1 | tee -a "$OUT/render-best-ncu.log"
          cat "$OUT/render-best-ncu.csv.tmp" >> "$OUT/render-best-ncu.raw"; rm -f "$OUT/render-best-ncu.csv.tmp"
        done
      else
        echo "no ncu here: no counters" | tee -a "$OUT/render-best-ncu.log"
      fi
      echo "render-best: $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $s}") s wall" | tee -a "$OUT/render-best.log" ;;
    cluster-bench)
      # issue 47: the reduction sweep here, on one GPU worker and on all (cold and warm), row and Stop latency,
      # the remote frame rate; result files and cluster-bench.json in $OUT/cluster (needs the cluster extra)
      timeout 590 python3 scripts/cluster_bench.py --out "$OUT/cluster" 2>&1 | tee "$OUT/cluster-bench.log" ;;
    cluster-counters)
      # the counters batch (an ncu run per variant, size and launch) split by variant over this host's GPUs, the
      # same batch here on one GPU for its wall time, and a lesson's steps split over the GPUs (which ran each)
      log="$OUT/cluster-counters.log"
      s=$EPOCHREALTIME
      timeout 300 python3 -m raytracer_app bench reduction --backend cuda --counters --n $((1 << 24)) --repeats 5 \
        --json "$OUT/cluster-counters-here.json" 2>&1 | tee "$log"
      echo "counters here: $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $s}") s wall" | tee -a "$log"
      app cluster start --listen 127.0.0.1:8793 2>&1 | tee -a "$log"
      s=$EPOCHREALTIME
      timeout 300 python3 -m raytracer_app bench reduction --backend cuda --counters --n $((1 << 24)) --repeats 5 \
        --cluster 127.0.0.1:8793 --json "$OUT/cluster-counters.json" 2>&1 | tee -a "$log"
      echo "counters on the cluster: $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $s}") s wall" | tee -a "$log"
      s=$EPOCHREALTIME
      timeout 300 python3 -m raytracer_app lesson reduction --counters --cluster 127.0.0.1:8793 \
        --json "$OUT/cluster-counters-lesson.json" 2>&1 | tee -a "$log"
      echo "lesson on the cluster: $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $s}") s wall" | tee -a "$log"
      app cluster stop 2>&1 | tee -a "$log"
      grep -E '^counters|^steps run on|s wall$' "$log" ;;
    ceilings-spread)
      # a --processes run (process 1 measures) and a run on a cluster of this host's GPUs (each worker measures
      # for its rows): the same ceiling lines as a run in one process, each naming who measured it
      find=(bench hashtable --backend cuda --op find --variants best,bucketed --repeats 10)
      timeout 300 python3 -m raytracer_app "${find[@]}" --n $((1 << 24)) --processes 2 \
        --json "$OUT/ceilings-spread-processes.json" 2>&1 | tee "$OUT/ceilings-spread.log"
      app cluster start --listen 127.0.0.1:8792 2>&1 | tee -a "$OUT/ceilings-spread.log"
      timeout 300 python3 -m raytracer_app "${find[@]}" --sizes $((1 << 22)),$((1 << 24)) \
        --cluster 127.0.0.1:8792 --json "$OUT/ceilings-spread-cluster.json" 2>&1 | tee -a "$OUT/ceilings-spread.log"
      app cluster stop 2>&1 | tee -a "$OUT/ceilings-spread.log"
      grep '^ceiling ' "$OUT/ceilings-spread.log" ;;
    *) echo "unknown stage $stage" ;;
  esac
done
