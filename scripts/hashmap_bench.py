"""The hash tables' benchmark for issue 38 in one process (numba, CuPy, torch and cuCollections load once):
every op at several load factors for every chosen variant and peer (the chained tables, which have no load
factor, at the first load only), verified, with CSV and JSON per op under
--out (each row with its load and absent fraction), then a table of G ops/s per variant and load, the % of
the copy bandwidth a find reaches (GB/s counts its keys, answers and one 32-byte sector of the table per
key), and the issue's goals for best, beside cuco-static-map and bght-bcht where they ran.

--tune instead sweeps the knobs of best's table (bucket width, keys per group in flight for a find, block) at
each load, timing only (the bench mode verifies), and prints G ops/s for each.

    python3 scripts/hashmap_bench.py --backend cuda --n 67108864 --out OUT [--ops insert,find,erase,insert-or-add]
        [--loads 0.5,0.8,0.9,0.95] [--variants NAMES] [--repeats 10] [--tune]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

OPS = ("insert", "find", "erase", "insert-or-add")
OURS = ("gpu-locks", "gpu-lockfree", "linear-probing", "bucketed", "two-choice", "best", "bucketed-filter",
        "bucketed-rounds")
PEERS = ("torch-sorted-search", "cupy-sorted-search", "cuco-static-map", "bght-bcht")
LIBRARY_PEERS = ("cuco-static-map", "bght-bcht")  # the hash tables built with nvcc where their folders are named
# issue 38's goals on an H100, 2^26 keys: (op, load, absent, G ops/s)
GOALS = (("insert", 0.9, 0.0, 8.0), ("find", 0.9, 0.0, 16.0), ("find", 0.9, 1.0, 10.0),
         ("insert", 0.95, 0.0, 5.0), ("find", 0.95, 0.0, 10.0))
CHAIN = 16  # keys per chain of the chained tables in a find (the seed's 1024 buckets for inserts)
CHAINED = ("cpu", "gpu-locks", "gpu-lockfree", "gpu-counting-sort", "torch-sort-groupby", "cupy-sort-groupby")


def _list(text: str, kind=str) -> list:
    return [kind(x) for x in text.split(",") if x.strip()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cuda", choices=("cuda", "cpu", "sim"))
    ap.add_argument("--n", type=int, default=1 << 26, help="keys per batch (default 2^26)")
    ap.add_argument("--ops", default=",".join(OPS), help="ops, comma-separated (default all four)")
    ap.add_argument("--loads", default="0.5,0.8,0.9,0.95", help="load factors, comma-separated")
    ap.add_argument("--variants", default=",".join(OURS + PEERS), help="variants, comma-separated")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--out", required=True, help="folder for hashmap-OP.csv and hashmap-OP.json")
    ap.add_argument("--tune", action="store_true", help="sweep best's knobs instead (timing only)")
    args = ap.parse_args(argv)

    from kernels import backend as backends

    backends.prepare(args.backend)
    backend = backends.resolve(args.backend)
    from kernels.harness import bench
    from kernels.harness.rows import ERROR, FAILED
    from kernels.harness.peak import copy_peak
    from kernels.harness.table import table_header, table_line
    from kernels.hashtable import VARIANTS
    from kernels.service.bench_request import BenchRequest

    ops, loads = _list(args.ops), _list(args.loads, float)
    os.makedirs(args.out, exist_ok=True)
    print(f"device: {backend.device_name}; n = {args.n:,}", flush=True)
    if args.tune:
        return tune(backend, ops, loads, args.n)
    peak = copy_peak(backend)
    print(f"copy bandwidth: {peak.gbps or 0:.0f} GB/s ({peak.how})", flush=True)
    names = _list(args.variants)
    results = []  # (op, absent, load, row)
    for op in ops:
        rows_of_op = []
        for absent in ((0.0, 1.0) if op == "find" else (0.0,)):
            for load in loads:
                buckets = max(1024, args.n // CHAIN) if op == "find" else 1024
                # the chained and grouped tables have no load factor: timed once, at the first load
                chosen = [v for v in names if v not in CHAINED or load == loads[0]]
                request = BenchRequest("hashtable", backend, sizes=(args.n,), repeats=args.repeats,
                                       variants=tuple(chosen), options={"op": op, "load": load, "absent": absent,
                                                                        "buckets": buckets})
                t0 = time.perf_counter()
                [problem] = list(request.problems())
                print(f"\n=== {op}, load {load}, absent {absent:g}, buckets {buckets} "
                      f"(problem built in {time.perf_counter() - t0:.1f} s)", flush=True)
                print(table_header(), flush=True)
                rows = bench.run(request, request.selected(VARIANTS), [problem], peak=peak,
                                 on_row=lambda r: print(table_line(r), flush=True))
                rows_of_op += [(absent, load, r) for r in rows]
                del problem
        write(args.out, op, rows_of_op)
        results += [(op, absent, load, r) for absent, load, r in rows_of_op]
    summary(results, loads)
    return 1 if any(r.verified in (FAILED, ERROR) for *_, r in results) else 0


def write(folder: str, op: str, rows) -> None:
    """hashmap-OP.csv (the bench columns after load and absent) and hashmap-OP.json (the same rows with
    their samples), through the app's one output writer."""
    from kernels.harness.rows import CSV_COLUMNS
    from kernels.io.writer import write_output

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=("load", "absent", *CSV_COLUMNS), lineterminator="\n")
    w.writeheader()
    records = []
    for absent, load, r in rows:
        record = {"load": load, "absent": absent, **r.as_dict()}
        w.writerow(record)
        records.append({**record, "samples_ms": list(r.timing.samples_ms) if r.timing else None})
    write_output(os.path.join(folder, f"hashmap-{op}.csv"), buf.getvalue(), "--out")
    write_output(os.path.join(folder, f"hashmap-{op}.json"), json.dumps(records, indent=1, default=str) + "\n", "--out")


def summary(results, loads) -> None:
    """G ops/s per variant and load for each op (and absent fraction), % of copy bandwidth for find, goals."""
    groups: dict = {}
    for op, absent, load, r in results:
        groups.setdefault((op, absent), {}).setdefault(r.variant, {})[load] = r
    for (op, absent), by_variant in groups.items():
        title = op + (f", {absent:.0%} absent" if op in ("find", "erase") else "")
        print(f"\n{title}: G ops/s" + (" (% of copy bandwidth)" if op == "find" else ""))
        print(f"{'variant':<22}" + "".join(f"{'load ' + str(x):>18}" for x in loads))
        for name, by_load in by_variant.items():
            cells = []
            for load in loads:
                r = by_load.get(load)
                if r is None or not r.ok or r.rate is None:
                    cells.append(f"{(r.verified if r is not None else '-'):>18}")
                    continue
                share = f" ({r.pct_of_peak:.0f}%)" if op == "find" and r.pct_of_peak is not None else ""
                cells.append(f"{r.rate:>12.2f}{share:>6}")
            print(f"{name:<22}" + "".join(cells))
    print("\nissue 38's goals (H100, 2^26 keys), for best:")
    for op, load, absent, goal in GOALS:
        by_variant = groups.get((op, absent), {})
        best = by_variant.get("best", {}).get(load)
        if best is None or not best.ok or best.rate is None:
            print(f"  {op} load {load} absent {absent:g}: best not measured")
            continue
        line = f"  {op} load {load}" + (f" absent {absent:g}" if op == "find" else "") + \
            f": best {best.rate:.2f} G/s, goal {goal:g}: {'met' if best.rate >= goal else 'MISSED'}"
        for name in LIBRARY_PEERS:
            peer = by_variant.get(name, {}).get(load)
            if peer is not None and peer.ok and peer.rate:
                line += f"; {name} {peer.rate:.2f} G/s, best is {best.rate / peer.rate:.2f}x"
        print(line)
    # the library peers' own workload beside the row: their find rows' notes time the table's keys in insertion
    # order, as cuCollections' and BGHT's benchmarks look them up
    for name in LIBRARY_PEERS:
        for load in loads:
            r = groups.get(("find", 0.0), {}).get(name, {}).get(load)
            if r is not None and r.ok and r.rate and "insertion order" in (r.note or ""):
                print(f"  {name} find load {load}: {r.rate:.2f} G/s in the row's order; "
                      f"{r.note[r.note.index('its keys looked up'):]}")
    for (op, absent), by_variant in groups.items():
        for load in loads:
            best = by_variant.get("best", {}).get(load)
            for name in LIBRARY_PEERS:
                peer = by_variant.get(name, {}).get(load)
                if best and peer and best.ok and peer.ok and best.rate and peer.rate and best.rate < 0.97 * peer.rate:
                    print(f"  behind {name} by more than 3%: {op} absent {absent:g} load {load} "
                          f"({best.rate:.2f} vs {peer.rate:.2f} G/s)")


def tune(backend, ops, loads, n: int) -> int:
    """G ops/s of best's table for each bucket width, block and (find) keys per group in flight."""
    from kernels import timing
    from kernels.hashtable import ALGORITHM
    from kernels.hashtable.layout import BUCKET_WIDTHS
    from kernels.hashtable.open_gpu import best_scheme, run_scheme
    from kernels.launch import Launch

    for op in ops:
        for absent in ((0.0, 1.0) if op == "find" else (0.0,)):
            for load in loads:
                options = ALGORITHM.options_for({"op": op, "load": load, "absent": absent}, backend)
                problem = ALGORITHM.make_problem(n, options, 0)
                print(f"\n=== best's table, {op}, load {load}, absent {absent:g}: G ops/s", flush=True)
                for items in ((1, 2, 4) if op == "find" else (1,)):
                    for block in (128, 256, 512):
                        cells = []
                        for bucket in BUCKET_WIDTHS:
                            launch = Launch(block=block, items_per_thread=items)
                            with timing.measurement(timing.Policy()):
                                out = run_scheme("best", best_scheme(bucket), problem, launch, backend, 10, check=False)
                            cells.append(f"bucket {bucket:>2}: {n / (out.timing.median_ms * 1e-3) / 1e9:7.2f}")
                        print(f"items {items} block {block:>4}  " + "  ".join(cells), flush=True)
                del problem
    return 0


if __name__ == "__main__":
    sys.exit(main())
