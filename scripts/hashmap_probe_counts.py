"""Buckets and 32-byte sectors best's table reads per insert and per find (present, absent), counted on the
CPU with the kernels' own probe functions (kernels/hashtable/probe_counts.py), for best (inserts one after
another into the first bucket with room) and bucketed-rounds (inserts in rounds by step), by bucket width,
hashes and load. Usage: python scripts/hashmap_probe_counts.py [--n 1048576] [--loads 0.8,0.9,0.95]
[--buckets 4,8,16] [--choices 2,3,4]."""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 20)
    parser.add_argument("--loads", default="0.8,0.9,0.95")
    parser.add_argument("--buckets", default="4,8,16")
    parser.add_argument("--choices", default="3,4")
    parser.add_argument("--filters", default="1,4,8", help="first-step flags per bucket (1, 2, 4, 8)")
    args = parser.parse_args(argv)
    try:
        loads = [float(x) for x in args.loads.split(",")]
        buckets = [int(x) for x in args.buckets.split(",")]
        choices = [int(x) for x in args.choices.split(",")]
        filters = [int(x) for x in args.filters.split(",")]
    except ValueError as exc:
        print(f"hashmap_probe_counts: {exc}", file=sys.stderr)
        return 2
    if args.n < 1 or not all(0 < x < 1 for x in loads) or not all(b in (4, 8, 16, 32) for b in buckets) \
            or not all(1 <= c <= 8 for c in choices) or not all(f in (1, 2, 4, 8) for f in filters):
        print("hashmap_probe_counts: --n >= 1, loads in (0, 1), buckets 4/8/16/32, choices 1..8, filters 1/2/4/8",
              file=sys.stderr)
        return 2
    from kernels.hashtable.layout import BEST_CHOICES
    from kernels.hashtable.probe_counts import count

    print(f"{args.n:,} keys; buckets read per op (sectors: x bucket / 4 slots), share of keys in their first bucket")
    print("| design | load | insert buckets | find present: buckets / sectors | absent: buckets / sectors | "
          "in first bucket |")
    print("|---|---|---|---|---|---|")
    designs = [("best", b, BEST_CHOICES, False, f) for b in buckets for f in filters]
    designs += [("rounds", b, c, True, f) for b in buckets for c in choices for f in filters]
    for load in loads:
        for name, bucket, hashes, rounds, bits in designs:
            c = count(args.n, bucket, hashes, load, rounds, bits)
            print(f"| {name} B{bucket} h{hashes} F{bits} | {load:g} | {c.insert:.3f} | {c.present:.3f} / "
                  f"{c.sectors(c.present):.2f} | {c.absent:.3f} / {c.sectors(c.absent):.2f} | {c.first_bucket:.1%} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
