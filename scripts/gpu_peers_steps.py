"""The benchmark steps of scripts/gpu_peers.sh, a group per process so that numba, CuPy, torch and Triton
load and compile once per group instead of once per command. Usage: python3 scripts/gpu_peers_steps.py
GROUP CSV_DIR, GROUP one of: reduction, whole-call, histogram."""

from __future__ import annotations

import sys
import time

SIZES = "1048576,16777216,100000000,268435456"
MEASURE = ["--repeats", "20", "--tolerance", "0.02", "--max-repeats", "100", "--max-seconds", "1"]
PEERS_SUM = "cub-reduce,triton-sum,torch-sum,cupy-sum,cupy-sum-cub,cuda-reduce"


def _groups(csv: str) -> dict[str, list[list[str]]]:
    reduction = [
        # the four sizes: best (retuned here), our warp-shuffle and every peer, hot and cold
        ["bench", "reduction", "--op", "sum", "--dtype", "int32", "--sizes", SIZES, "--retune", "--cold",
         "--variants", f"warp-shuffle,best,{PEERS_SUM}", *MEASURE, "--csv", f"{csv}/sum-int32.csv"],
    ]
    for op, dtype in (("sum", "float32"), ("sumsq", "int32"), ("sumsq", "float32"), ("dot", "int32"),
                      ("dot", "float32")):
        reduction.append(["bench", "reduction", "--op", op, "--dtype", dtype, "--sizes", "1048576,16777216,100000000",
                          "--variants", "warp-shuffle,two-kernel,last-block,best,cub-reduce,triton-sum,torch-sum,"
                          "cupy-sum,cupy-dot", *MEASURE, "--csv", f"{csv}/{op}-{dtype}.csv"])
    whole = [["bench", "reduction", "--op", "sum", "--dtype", dtype, "--n", "1048576", "--whole-call",
              "--repeats", "300", "--csv", f"{csv}/whole-call-{dtype}.csv"] for dtype in ("int32", "float32")]
    histogram = [["bench", "histogram", "--n", "104857600", "--pattern", pattern, "--cold",
                  "--variants", "shared-atomics,best,cub-histogram,torch-bincount,cupy-histogram", *MEASURE,
                  "--csv", f"{csv}/histogram-{pattern}.csv"]
                 for pattern in ("uniform", "entropy-0.811", "entropy-0.544", "entropy-0.337", "entropy-0.201",
                                 "entropy-0.000", "low-entropy")]
    histogram.append(["bench", "hashtable", "--repeats", "10", "--csv", f"{csv}/hashtable.csv"])
    return {"reduction": reduction, "whole-call": whole, "histogram": histogram}


def main(argv: list[str]) -> int:
    from raytracer_app.cli import main as app

    group, csv = argv
    worst = 0
    for step in _groups(csv)[group]:
        args = [*step, "--backend", "cuda"]
        print(f"=== raytracer-app {' '.join(args)}", flush=True)
        t0 = time.perf_counter()
        try:
            code = app(args)
        except SystemExit as exc:  # argparse errors exit through SystemExit
            code = exc.code if isinstance(exc.code, int) else 2
        print(f"=== exit {code} after {time.perf_counter() - t0:.1f} s", flush=True)
        worst = max(worst, code or 0)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
