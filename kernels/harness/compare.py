"""Comparing two benchmark results (`raytracer-app compare`, the GUI's baseline): rows are matched by
(target, variant, op, dtype, n, block, grid) and each pair gets a verdict decided from the raw samples.

The verdict rules are pure functions of two lists of per-repeat times (:func:`verdict`):

- SLOWER / FASTER: the intervals [low, q3] of the two sides lie apart by at least ``gap`` (1%) of the
  base's value, where low is the fastest repeat once one in twenty is set aside (a robust minimum: one
  outlier moves nothing); where both sides have at least 9 samples, a two-sided Mann-Whitney U test also
  gives p < ``alpha`` (0.05); and neither side is too disturbed to judge: its median at most ``judgeable``
  (3%) above its low, or, for a difference far beyond that noise, the intervals apart by at least
  ``beyond_noise`` (3) times it, up to ``disturbed_max`` (15%: a run whose median lies further above its
  low ran at two speeds and is never judged). Timings are skewed to the right (a repeat is slowed down,
  never sped up, by what else runs), so the fast repeats and the third quartile bound a run better than
  mean and deviation.
- SAME: the medians within ``same`` (0.5%) of each other and both sides quiet: an interquartile range of
  at most ``quiet`` (1%) of the median.
- UNSURE: anything else; the samples cannot tell.

Identical runs differ by more than their own samples show (another process, another allocation, the
machine's load): this run-to-run drift is what :func:`timing_verdict` accounts for. Where both sides ran
in several processes (``bench --processes``) it is measured: :func:`process_verdict` judges the processes'
medians. With one process a side it is not, and a difference within what runs of one process drift apart
(``drift_wall``, 20%, for wall-timed rows; ``drift_events``, 5%, for CUDA events) is UNSURE, said so in
the reason. docs/results.md gives the rates measured for these thresholds.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import numpy as np

from kernels.harness.rows import FAILED, axes_text

FASTER, SLOWER, SAME, UNSURE = "FASTER", "SLOWER", "SAME", "UNSURE"
VERDICTS = (FASTER, SLOWER, SAME, UNSURE)


@dataclass(frozen=True)
class Rules:
    gap: float = 0.01  # the [low, q3] intervals apart by this fraction of the base's value
    judgeable: float = 0.03  # a side's median at most this fraction above its low: judged at the gap
    beyond_noise: float = 3.0  # ... more: judged when the intervals lie apart by this many times that noise
    disturbed_max: float = 0.15  # ... more than this: a run at two speeds, never judged
    outliers: int = 20  # one sample in this many may lie below a run's low (a robust minimum)
    drift_wall: float = 0.20  # one process a side: wall-timed runs of one command drift apart this much
    drift_events: float = 0.05  # ... CUDA-event-timed runs (a GPU's state from one process to the next)
    same: float = 0.005  # medians within this fraction: SAME (when both sides are quiet)
    quiet: float = 0.01  # a side is quiet when its interquartile range is at most this fraction of its median
    alpha: float = 0.05  # FASTER / SLOWER also need the Mann-Whitney p-value below this, where there is one
    min_test: int = 9  # samples each side needs for the Mann-Whitney test
    min_processes: int = 5  # processes each side needs to be judged by its processes' medians


RULES = Rules()


@dataclass(frozen=True)
class Verdict:
    name: str  # FASTER, SLOWER, SAME or UNSURE: NEW against BASE
    delta_pct: float | None  # (new median / base median - 1) x 100: positive is slower
    p_value: float | None  # two-sided Mann-Whitney U, None with fewer than min_test samples a side
    reason: str


def quantile(sorted_values, q: float) -> float:
    """The q-quantile by linear interpolation between order statistics (numpy's default method)."""
    xs = sorted_values
    pos = (len(xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _sorted(samples) -> list[float]:
    """The samples in order (numpy's sort, then a list: a row of 10,000 samples in well under a ms)."""
    return np.sort(np.asarray(samples, np.float64)).tolist()


def _median(xs) -> float:
    """statistics.median of an already sorted list, without sorting it again."""
    half = len(xs) // 2
    return xs[half] if len(xs) % 2 else (xs[half - 1] + xs[half]) / 2


def spread(samples) -> float | None:
    """The interquartile range over the median (None for a median of 0)."""
    return _spread(sorted(samples))


def _spread(xs) -> float | None:
    median = _median(xs)
    return (quantile(xs, 0.75) - quantile(xs, 0.25)) / median if median > 0 else None


def low(sorted_values, rules: Rules | None = None) -> float:
    """The fastest repeat once one in ``rules.outliers`` (20) is set aside: the minimum of fewer than 20
    samples, the second fastest of 20 to 39. A robust lower bound: one stray repeat moves nothing."""
    return sorted_values[len(sorted_values) // (rules or RULES).outliers]


def _lower_spread(xs, rules: Rules | None = None) -> float | None:
    """How far the median of the sorted ``xs`` lies above their low (:func:`low`), as a fraction of the median
    (None for 0)."""
    median = _median(xs)
    return (median - low(xs, rules)) / median if median > 0 else None


def mann_whitney_u(a, b) -> tuple[float, float, float]:
    """(U of ``a``, its mean and its variance under the null hypothesis, corrected for ties).

    U counts the pairs (x in a, y in b) with x > y, a tie counting one half; ranks are midranks (in numpy:
    a row of 10,000 samples a side takes milliseconds; midranks and their sums are halves, exact in float64)."""
    n1, n2 = len(a), len(b)
    n = n1 + n2
    pooled = np.concatenate([np.asarray(a, np.float64), np.asarray(b, np.float64)])
    order = np.argsort(pooled, kind="stable")
    values = pooled[order]
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])  # each group of equal values
    counts = np.diff(np.r_[starts, n])
    midranks = starts + (counts + 1) / 2  # ranks start+1 .. start+count
    ranks = np.empty(n)
    ranks[order] = np.repeat(midranks, counts)
    rank_sum_a = float(ranks[:n1].sum())
    tie_term = float((counts.astype(np.float64) ** 3 - counts).sum())
    u = rank_sum_a - n1 * (n1 + 1) / 2
    mean = n1 * n2 / 2
    var = n1 * n2 / 12 * ((n + 1) - (tie_term / (n * (n - 1)) if n > 1 else 0))
    return u, mean, var


def mann_whitney_p(a, b) -> float:
    """Two-sided p-value of the Mann-Whitney U test by the normal approximation with a continuity
    correction of 1/2 and the tie-corrected variance (1.0 when every value is tied)."""
    u, mean, var = mann_whitney_u(a, b)
    if var <= 0:
        return 1.0
    z = max(abs(u - mean) - 0.5, 0.0) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def verdict(base, new, rules: Rules = RULES, drift: float = 0.0, drift_why: str = "") -> Verdict:
    """NEW's samples against BASE's (per-repeat times, any unit, both non-empty). ``drift``: how far apart
    runs of the same command can lie (a fraction; 0 when the samples alone decide): a difference within
    it is UNSURE, for the reason ``drift_why``."""
    b, n = _sorted(base), _sorted(new)  # once: every statistic below reads the sorted lists
    mb, mn = _median(b), _median(n)
    p = mann_whitney_p(b, n) if min(len(b), len(n)) >= rules.min_test else None
    if mb <= 0 or mn <= 0:
        return Verdict(UNSURE, None, p, "a median of 0")
    delta = (mn / mb - 1) * 100
    significant = p is None or p < rules.alpha
    b_lo, b_hi, n_lo, n_hi = low(b, rules), quantile(b, 0.75), low(n, rules), quantile(n, 0.75)
    noise = [_spread(x) for x in (b, n)]
    noisiest = max(x or 0.0 for x in noise)
    disturbed = max(_lower_spread(x, rules) or 0.0 for x in (b, n))
    p_text = "" if p is None else f", p={p:.2g}"
    for name, apart, ratio in ((SLOWER, n_lo / b_hi - 1, n_lo / b_hi - 1), (FASTER, 1 - n_hi / b_lo, b_lo / n_hi - 1)):
        if apart >= rules.gap:
            why = f"[low, q3] apart by {100 * apart:.1f}%"
            if not significant:
                return Verdict(UNSURE, delta, p, f"{why} but p={p:.2g} >= {rules.alpha:g}")
            noisy = f"a median {100 * disturbed:.1f}% above its fast repeats"
            if disturbed > rules.disturbed_max:
                return Verdict(UNSURE, delta, p, f"{why} but too disturbed to judge ({noisy} > "
                                                 f"{100 * rules.disturbed_max:g}%: it ran at two speeds)")
            if disturbed > rules.judgeable and ratio < rules.beyond_noise * disturbed:
                return Verdict(UNSURE, delta, p, f"{why} but too noisy to judge ({noisy} > "
                                                 f"{100 * rules.judgeable:g}%, and the gap under "
                                                 f"{rules.beyond_noise:g} times that)")
            if ratio < drift:
                return Verdict(UNSURE, delta, p, f"{why}{p_text}, but {drift_why}")
            return Verdict(name, delta, p, why + p_text + (f"; {drift_why.split(':')[0]}: beyond its "
                                                           f"{100 * drift:g}%" if drift else ""))
    if abs(mn / mb - 1) <= rules.same:
        if noisiest <= rules.quiet and None not in noise:
            return Verdict(SAME, delta, p, f"medians within {100 * rules.same:g}%, both quiet")
        return Verdict(UNSURE, delta, p, f"medians within {100 * rules.same:g}% but a side is noisy "
                                         f"(IQR {100 * noisiest:.1f}% of its median)")
    return Verdict(UNSURE, delta, p, "the [low, q3] intervals overlap" + p_text)


def process_verdict(base_runs, new_runs, rules: Rules = RULES) -> Verdict:
    """NEW against BASE where each side's samples come from several processes (lists of per-process samples,
    at least ``rules.min_processes`` each): judged by the processes' medians, since the state of a process
    moves a short kernel's median more than the samples of one process vary.

    - SLOWER / FASTER: the joined medians differ by at least ``gap`` and a two-sided Mann-Whitney U test
      on the processes' medians gives p < ``alpha``;
    - SAME: the joined medians within ``same`` and both sides' process medians quiet (their interquartile
      range at most ``quiet`` of their median);
    - UNSURE: anything else."""
    b_meds = [statistics.median(x) for x in base_runs]
    n_meds = [statistics.median(x) for x in new_runs]
    mb = statistics.median([x for run in base_runs for x in run])
    mn = statistics.median([x for run in new_runs for x in run])
    p = mann_whitney_p(b_meds, n_meds)
    if mb <= 0 or mn <= 0:
        return Verdict(UNSURE, None, p, "a median of 0")
    delta = (mn / mb - 1) * 100
    who = f"the medians of {len(b_meds)} and {len(n_meds)} processes (their drift measured)"
    if abs(delta) >= 100 * rules.gap:
        name = SLOWER if delta > 0 else FASTER
        if p < rules.alpha:
            return Verdict(name, delta, p, f"{who}: {abs(delta):.1f}% apart, p={p:.2g}")
        return Verdict(UNSURE, delta, p, f"{who}: {abs(delta):.1f}% apart but p={p:.2g} >= {rules.alpha:g}")
    noise = [spread(x) for x in (b_meds, n_meds)]
    if abs(delta) <= 100 * rules.same:
        if None not in noise and max(noise) <= rules.quiet:
            return Verdict(SAME, delta, p, f"medians within {100 * rules.same:g}%, {who} quiet")
        return Verdict(UNSURE, delta, p, f"medians within {100 * rules.same:g}% but {who} spread "
                                         f"(IQR {100 * max(x or 0.0 for x in noise):.1f}% of their median)")
    return Verdict(UNSURE, delta, p, f"{who}: {abs(delta):.2f}% apart, under the {100 * rules.gap:g}% gap, p={p:.2g}")


def one_process_drift(base, new, rules: Rules = RULES) -> tuple[float, str]:
    """(how far runs may drift apart from one process to the next, why) for two Timings judged by their
    samples: with fewer than ``rules.min_processes`` processes a side that drift is not measured, so a
    difference within what identical runs showed (docs/results.md) cannot be told from it. CUDA events'
    allowance where both sides used them, else the wall-timed one."""
    events = base.method == new.method == "cuda-events"
    drift, what = (rules.drift_events, "CUDA-event") if events else (rules.drift_wall, "wall-timed")
    most = max(len(base.by_process()), len(new.by_process()))
    who = "one process a side" if most == 1 else f"at most {most} processes a side"
    return drift, (f"{who}: within the {100 * drift:g}% that {what} runs drift apart from one process to the "
                   f"next (not measured; bench --processes {rules.min_processes} or more measures it)")


def timing_verdict(base, new, rules: Rules = RULES) -> Verdict:
    """NEW's Timing against BASE's: by the processes' medians where both sides ran in at least
    ``rules.min_processes`` processes (bench --processes: the drift between runs measured), else by the
    samples (:func:`verdict`) with the drift of one process allowed for (:func:`one_process_drift`)."""
    b_runs, n_runs = base.by_process(), new.by_process()
    if min(len(b_runs), len(n_runs)) >= rules.min_processes:
        return process_verdict(b_runs, n_runs, rules)
    return verdict(base.samples_ms, new.samples_ms, rules, *one_process_drift(base, new, rules))


# --- matching two results -------------------------------------------------------------------------------------

KEY_FIELDS = ("target", "variant", "op", "dtype", "n", "block", "grid")


def row_key(target: str, row) -> tuple:
    """What identifies a row across runs: target, variant, problem (with its swept values) and launch
    (block and grid)."""
    return (target, row.variant, row.op, row.dtype, int(row.n), str(row.block), str(row.grid),
            axes_text(getattr(row, "axes", None)))


def key_text(key: tuple) -> str:
    target, variant, op, dtype, n, block, grid, axes = key
    launch = ", ".join(x for x in (f"block {block}" if block else "", f"grid {grid}" if grid else "") if x)
    return f"{target} {variant} {op} {dtype} n={n}" + (f" {axes}" if axes else "") + (f" ({launch})" if launch else "")


@dataclass
class Pair:
    key: tuple
    base: object  # Row
    new: object
    verdict: Verdict


@dataclass
class Comparison:
    base: object  # results.Result
    new: object
    pairs: list = field(default_factory=list)
    only_base: list = field(default_factory=list)  # keys
    only_new: list = field(default_factory=list)
    not_compared: list = field(default_factory=list)  # (key, why)

    @property
    def cross_device(self) -> bool:
        return (self.base.device.get("name"), self.base.device.get("backend")) != \
               (self.new.device.get("name"), self.new.device.get("backend"))

    def counts(self) -> dict:
        return {v: sum(p.verdict.name == v for p in self.pairs) for v in VERDICTS}


def _keyed(result) -> dict:
    """Rows by key; a key seen again (the same size twice in a sweep) gets its occurrence number."""
    out, seen = {}, {}
    for row in result.rows:
        key = row_key(result.target, row)
        seen[key] = seen.get(key, 0) + 1
        out[key if seen[key] == 1 else (*key, seen[key])] = row
    return out


def untimed_why(row, side: str) -> str | None:
    """Why a row cannot be compared: no samples (skipped, an error), or a result that failed verification."""
    if row.timing is None:
        return f"not timed in {side} ({row.verified}{': ' + row.note if row.note else ''})"
    if row.verified == FAILED:
        return f"FAILED verification in {side}"
    return None


def compare(base, new, rules: Rules = RULES) -> Comparison:
    """Match NEW's rows to BASE's and judge each timed pair (results.Result in, Comparison out)."""
    b, n = _keyed(base), _keyed(new)
    out = Comparison(base, new)
    out.only_base = [k for k in b if k not in n]
    out.only_new = [k for k in n if k not in b]
    for key in (k for k in b if k in n):
        why = untimed_why(b[key], "BASE") or untimed_why(n[key], "NEW")
        if why:
            out.not_compared.append((key, why))
            continue
        v = timing_verdict(b[key].timing, n[key].timing, rules)
        out.pairs.append(Pair(key, b[key], n[key], v))
    return out
