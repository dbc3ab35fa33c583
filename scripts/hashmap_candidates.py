"""Every candidate layout of best's hash map timed at each load, for insert and find (present and absent keys):
best's table (inserts into the first bucket with room), bucketed-rounds (inserts in rounds by step) and linear
probing, by bucket width, hashes, first-step filter bits, block and (find) keys per group in flight; G ops/s per candidate and the
fastest per (op, load). Each design's table is verified at the last load (insert and find of present keys at
the first launch); the other timings are unchecked, as the tuning sweep's are. One process, so numba,
the problems and the device load once.

    python3 scripts/hashmap_candidates.py --backend cuda --n 67108864 --out OUT [--loads 0.8,0.9,0.95]
        [--designs best-b4,rounds-b8-h4-f8,...] [--blocks 128,256] [--items 2,4] [--repeats 10]

Writes candidates.csv in OUT (op, absent, load, design, block, items, ms, G ops/s, verified).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# today's best by bucket width; with first-step filters (bucketed-filter); in rounds (bucketed-rounds, and
# BGHT's shape: buckets of 16, 3 hashes); linear probing
DESIGNS = ("best-b4", "best-b8", "best-b16", "best-b4-f2", "best-b4-f4", "best-b4-f8", "best-b8-f4", "best-b8-f8",
           "best-b16-f8", "rounds-b4-h4-f8", "rounds-b8-h4-f8", "rounds-b16-h3-f8", "linear")
CASES = (("insert", 0.0), ("find", 0.0), ("find", 1.0))


def scheme_of(design: str):
    """The open_gpu.Scheme a design name means: best-bB[-fF], rounds-bB[-hH][-fF] (B slots per bucket, H
    hashes, F first-step flags per bucket: layout.py's filters), linear."""
    from kernels.hashtable.layout import BEST_CHOICES, BUCKET_WIDTHS, FILTER_BITS
    from kernels.hashtable.open_gpu import LINEAR, best_scheme, rounds_scheme

    parts = design.split("-")
    try:
        if parts == ["linear"]:
            return LINEAR
        kind, bucket = parts[0], int(parts[1].removeprefix("b"))
        knobs = {p[0]: int(p[1:]) for p in parts[2:] if p[:1] in ("h", "f")}
        hashes, bits = knobs.get("h", BEST_CHOICES), knobs.get("f", 1)
        if len(knobs) == len(parts) - 2 and bucket in BUCKET_WIDTHS and bits in FILTER_BITS and 1 <= hashes <= 8:
            if kind == "best" and "h" not in knobs:
                return best_scheme(bucket, bits)
            if kind == "rounds":
                return rounds_scheme(bucket, hashes, bits)
    except (IndexError, ValueError):
        pass
    raise ValueError(f"design {design!r}: expected best-bB[-fF], rounds-bB[-hH][-fF] (B in 4, 8, 16, 32; F in "
                     "1, 2, 4, 8) or linear")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cuda", choices=("cuda", "sim"))
    ap.add_argument("--n", type=int, default=1 << 26)
    ap.add_argument("--loads", default="0.8,0.9,0.95")
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--blocks", default="128,256")
    ap.add_argument("--items", default="2,4", help="a find's keys per group (thread) in flight")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--l2-fetch", type=int, choices=(32, 64, 128),
                    help="set the context's L2 fetch granularity (bytes) first: whether a random 32-byte read "
                         "brings more from memory than it asks for (the driver's default is printed)")
    args = ap.parse_args(argv)
    try:
        loads = [float(x) for x in args.loads.split(",")]
        blocks = [int(x) for x in args.blocks.split(",")]
        items = [int(x) for x in args.items.split(",")]
        names = args.designs.split(",")
        if args.n < 1 or args.repeats < 1 or not all(0 < x < 1 for x in loads) or not all(
                b > 0 and b % 32 == 0 for b in blocks) or not all(1 <= i <= 8 for i in items):
            raise ValueError("--n and --repeats >= 1, loads in (0, 1), blocks whole warps, items 1..8")
    except ValueError as exc:
        print(f"hashmap_candidates: {exc}", file=sys.stderr)
        return 2

    from kernels import backend as backends

    backends.prepare(args.backend)
    backend = backends.resolve(args.backend)
    from kernels import timing
    from kernels.hashtable import ALGORITHM
    from kernels.hashtable.open_gpu import run_scheme
    from kernels.launch import Launch

    try:
        designs = [(d, scheme_of(d)) for d in names]
    except ValueError as exc:
        print(f"hashmap_candidates: {exc}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    print(f"device: {backend.device_name}; n = {args.n:,}", flush=True)
    if backend.is_gpu:
        print(l2_fetch(args.l2_fetch), flush=True)
    failed = False
    fields = ("op", "absent", "load", "design", "block", "items", "ms", "gops", "verified")
    table = open(os.path.join(args.out, "candidates.csv"), "w", newline="")  # a row as soon as it is timed
    writer = csv.DictWriter(table, fieldnames=fields)
    writer.writeheader()
    for load in loads:
        for op, absent in CASES:
            options = ALGORITHM.options_for({"op": op, "load": load, "absent": absent}, backend)
            t0 = time.perf_counter()
            problem = ALGORITHM.make_problem(args.n, options, 0)
            what = f"{op}" + (f", {absent:.0%} absent" if op == "find" else "")
            print(f"\n=== {what}, load {load:g} (problem built in {time.perf_counter() - t0:.1f} s): G ops/s",
                  flush=True)
            fastest = None
            for design, scheme in designs:
                cells = []
                for item in (items if op == "find" else [1]):
                    for block in blocks:
                        # each design checked once, at the last load (the fullest table): a check at 2^26 keys takes
                        # seconds
                        verify = (load == loads[-1] and absent == 0.0 and item == (items if op == "find" else [1])[0]
                                  and block == blocks[0])
                        launch = Launch(block=block, items_per_thread=item if op == "find" else None)
                        try:
                            with timing.measurement(timing.Policy()):
                                out = run_scheme("best", scheme, problem, launch, backend, args.repeats, check=verify)
                        except Exception as exc:  # noqa: BLE001 - one candidate's failure is reported, not fatal
                            cells.append(f"i{item} b{block}: {type(exc).__name__}")
                            failed = True
                            continue
                        ms = out.timing.median_ms
                        rate = args.n / (ms * 1e-3) / 1e9
                        verdict = ""
                        if verify:
                            ok, why = problem.verify(out.result)
                            verdict = "verified" if ok else f"WRONG: {why}"
                            failed |= not ok
                        writer.writerow({"op": op, "absent": absent, "load": load, "design": design, "block": block,
                                         "items": item, "ms": f"{ms:.5f}", "gops": f"{rate:.3f}", "verified": verdict})
                        table.flush()
                        if fastest is None or rate > fastest[0]:
                            fastest = (rate, design, block, item)
                        cells.append(f"i{item} b{block}: {rate:6.2f}" + (f" ({verdict})" if verify else ""))
                print(f"{design:>14}  " + "  ".join(cells), flush=True)
            if fastest:
                print(f"fastest: {fastest[1]}, block {fastest[2]}, items {fastest[3]}: {fastest[0]:.2f} G ops/s",
                      flush=True)
            del problem
    table.close()
    return 1 if failed else 0


def l2_fetch(wanted: int | None) -> str:
    """The current context's L2 fetch granularity, set to ``wanted`` bytes first where given (a hint the
    driver may round); a sentence saying both."""
    from cuda.bindings.driver import CUlimit

    from kernels.backend import driver
    from kernels.backend.compiler import cuda

    cuda.current_context()  # numba's context is the current one: the limit is set on it
    limit = CUlimit.CU_LIMIT_MAX_L2_FETCH_GRANULARITY
    before = int(driver.call("cuCtxGetLimit", limit))
    if wanted is None:
        return f"L2 fetch granularity: {before} bytes (the driver's default)"
    driver.call("cuCtxSetLimit", limit, wanted)
    return f"L2 fetch granularity: {int(driver.call('cuCtxGetLimit', limit))} bytes (asked {wanted}, was {before})"


if __name__ == "__main__":
    sys.exit(main())
