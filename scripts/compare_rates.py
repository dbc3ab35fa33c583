"""How often `compare`'s verdict is wrong: identical runs called FASTER / SLOWER (false verdicts), and
slowdowns of 3% and 10% called SLOWER (detection), on synthetic samples and on real result files.

Files made with `bench --processes` are judged by the processes' medians, as `compare` does.
Synthetic: each row 20 samples, lognormal with the given sigma, 5% of them outliers slowed by 5-50%,
and (with --shift) each run as a whole scaled by 1 + N(0, shift), as separate processes are. Real files:
every ordered pair of runs of the same row (identical runs: the false-verdict rate), and the same pairs
with NEW's samples multiplied by 1.03 and 1.10 (detection). docs/results.md quotes its output.

    python scripts/compare_rates.py [--rows 400] [--sigmas 0.003,0.005,0.01] [--shift 0.003] [FILE.json ...]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from kernels.harness import compare
from kernels.harness.results_read import read_result
from kernels.timing import Timing

FACTORS = (1.0, 1.03, 1.10)


def synthetic_run(rng, n: int, sigma: float, shift: float = 0.0, outliers: float = 0.05) -> np.ndarray:
    x = rng.lognormal(0.0, sigma, n) * (1.0 + rng.normal(0.0, shift) if shift else 1.0)
    slow = rng.random(n) < outliers
    x[slow] *= 1.0 + rng.uniform(0.05, 0.5, slow.sum())
    return x


def scaled(timing: Timing, factor: float) -> Timing:
    return Timing(tuple(x * factor for x in timing.samples_ms), timing.method, timing.processes)


def rates(pairs, samples_only: bool = False) -> dict:
    """{factor: (share FASTER or SLOWER, share SLOWER)} over (base, new) pairs of Timings, judged as
    `compare` judges them (by the processes' medians where both files ran in several processes, else by the
    samples with one process's drift allowed for), or with ``samples_only`` by the samples' rule alone."""
    out = {}
    for factor in FACTORS:
        judge = (lambda a, b: compare.verdict(a.samples_ms, b.samples_ms)) if samples_only else compare.timing_verdict
        names = [judge(a, scaled(b, factor)).name for a, b in pairs]
        wrong = sum(v in (compare.FASTER, compare.SLOWER) for v in names) / len(names)
        out[factor] = (wrong, names.count(compare.SLOWER) / len(names))
    return out


def line(label: str, count: int, r: dict) -> str:
    return (f"{label:<34} {count:>6}  identical: {100 * r[1.0][0]:5.1f}% FASTER/SLOWER   "
            f"x1.03: {100 * r[1.03][1]:5.1f}% SLOWER   x1.10: {100 * r[1.10][1]:5.1f}% SLOWER")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=400, help="synthetic rows per noise level (default 400)")
    ap.add_argument("--sigmas", default="0.003,0.005,0.01,0.02", help="lognormal sigmas of the synthetic rows")
    ap.add_argument("--shift", type=float, default=0.003, help="run-to-run sigma of the synthetic runs (default 0.003)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("files", nargs="*", help="result files of identical runs (bench --json)")
    args = ap.parse_args(argv)
    rules = compare.RULES
    print(f"rules: gap {rules.gap:g}, judgeable (median - low) / median <= {rules.judgeable:g} (else apart by "
          f"{rules.beyond_noise:g}x that, up to {rules.disturbed_max:g}), same {rules.same:g}, quiet IQR <= "
          f"{rules.quiet:g}, alpha {rules.alpha:g} from {rules.min_test} samples; one process a side: drift "
          f"{rules.drift_wall:g} wall, {rules.drift_events:g} CUDA events; synthetic rows by the samples' rule alone")
    rng = np.random.default_rng(args.seed)
    for sigma in (float(s) for s in args.sigmas.split(",")):
        for shift in sorted({0.0, args.shift}):
            pairs = [(Timing(tuple(synthetic_run(rng, 20, sigma, shift)), "wall"),
                      Timing(tuple(synthetic_run(rng, 20, sigma, shift)), "wall")) for _ in range(args.rows)]
            print(line(f"synthetic sigma {sigma:g} shift {shift:g}", len(pairs), rates(pairs, samples_only=True)))
    by_row: dict = {}
    for path in args.files:
        result = read_result(path, "FILE")
        for row in result.rows:
            if row.timing is not None:
                key = (result.device.get("backend", "?"), row.variant, row.n)
                by_row.setdefault(key, []).append(row.timing)
    every = []
    for (backend, variant, n), runs in sorted(by_row.items()):
        pairs = list(itertools.permutations(runs, 2))
        if pairs:
            every += pairs
            print(line(f"{backend} {variant} n={n} ({len(runs)} runs)", len(pairs), rates(pairs)))
    if every:
        print(line("all rows of the files", len(every), rates(every)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
