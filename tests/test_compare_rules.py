"""The verdict rules of kernels.harness.compare, against independent computations: the Mann-Whitney U test
by hand, by exact enumeration and by scipy's values; quantiles by numpy; and the false-verdict and
detection rates on seeded synthetic samples (the targets of issue 25)."""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest

from kernels.harness import compare
from kernels.harness.compare import FASTER, SAME, SLOWER, UNSURE, mann_whitney_p, mann_whitney_u, verdict


def u_by_pairs(a, b) -> float:
    """U of a from its definition: pairs with x > y, ties counting one half."""
    return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)


def exact_null(a, b):
    """Every split of the pooled values into groups of len(a) and len(b): the permutation distribution of U."""
    pooled = list(a) + list(b)
    us = []
    for chosen in itertools.combinations(range(len(pooled)), len(a)):
        rest = set(range(len(pooled))) - set(chosen)
        us.append(u_by_pairs([pooled[i] for i in chosen], [pooled[i] for i in rest]))
    return us


def test_u_counts_pairs_as_defined():
    a, b = [3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0]
    assert mann_whitney_u(a, b)[0] == u_by_pairs(a, b) == 3.5  # by hand: 3 > 2, 4 > 2, 5 > 2, and 5 = 5 counts 1/2


def test_disjoint_samples_by_hand():
    # U = 0, mean 9*9/2 = 40.5, variance 81*19/12 = 128.25, z = (40.5 - 0.5) / sqrt(128.25) = 3.5321
    a, b = list(range(1, 10)), list(range(10, 19))
    u, mean, var = mann_whitney_u(a, b)
    assert (u, mean, var) == (0.0, 40.5, 128.25)
    assert mann_whitney_p(a, b) == pytest.approx(math.erfc(40 / math.sqrt(128.25) / math.sqrt(2)), rel=1e-12)
    assert mann_whitney_p(a, b) == pytest.approx(0.000412, abs=1e-6)


@pytest.mark.parametrize("a, b", [([1, 2, 2, 3], [2, 3, 3, 5, 5]), ([1.0, 1.0, 2.0], [1.0, 2.0, 2.0, 2.0]),
                                  ([4, 1, 3], [2, 6, 5, 7])])
def test_mean_and_tie_corrected_variance_equal_the_exact_permutation_distribution(a, b):
    us = exact_null(a, b)
    _, mean, var = mann_whitney_u(a, b)
    assert mean == pytest.approx(statistics.fmean(us), rel=1e-12)
    assert var == pytest.approx(statistics.pvariance(us), rel=1e-12)


@pytest.mark.parametrize("a, b", [
    ([0.50, 0.52, 0.49, 0.51, 0.53, 0.50, 0.48, 0.55, 0.51], [0.51, 0.53, 0.52, 0.54, 0.50, 0.56, 0.52, 0.53, 0.55]),
    ([1, 2, 2, 3, 3, 3, 4, 5, 5], [2, 3, 4, 4, 5, 5, 6, 6, 7]),
    ([5, 7, 9, 11, 13, 15, 17, 19, 21], [6, 8, 10, 12, 14, 16, 18, 20, 22]),
])
def test_normal_approximation_is_close_to_the_exact_two_sided_p(a, b):
    us = exact_null(a, b)
    mean = statistics.fmean(us)
    observed = abs(u_by_pairs(a, b) - mean)
    exact = sum(abs(u - mean) >= observed - 1e-9 for u in us) / len(us)
    assert mann_whitney_p(a, b) == pytest.approx(exact, abs=0.01)


# scipy.stats.mannwhitneyu(a, b, alternative='two-sided', method='asymptotic', use_continuity=True), run on the
# H100 machine where scipy is installed (2026-11-23): (U, p)
SCIPY = [
    ((range(1, 10), range(10, 19)), (0.0, 0.00041229480206169127)),
    (([1, 3, 5, 7, 9, 11, 13, 15, 17], [2, 4, 6, 8, 10, 12, 14, 16, 18]), (36.0, 0.7239320396139757)),
    (([1, 2, 2, 3, 3, 3, 4, 5, 5], [2, 3, 4, 4, 5, 5, 6, 6, 7]), (18.5, 0.05390997255866893)),
    (([1, 1, 1, 2, 2, 3, 3, 3, 3, 4], [1, 2, 3, 3, 4, 4, 4, 5, 5]), (22.0, 0.05909866851003077)),
]


@pytest.mark.parametrize("samples, expected", SCIPY)
def test_matches_scipy(samples, expected):
    a, b = (list(x) for x in samples)
    assert mann_whitney_u(a, b)[0] == expected[0]
    assert mann_whitney_p(a, b) == pytest.approx(expected[1], rel=1e-9)


def test_all_tied_is_p_one_and_quantiles_are_numpys():
    assert mann_whitney_p([2.0] * 9, [2.0] * 9) == 1.0
    xs = sorted(np.random.default_rng(3).lognormal(0, 0.1, 17))
    for q in (0.0, 0.25, 0.5, 0.75, 1.0):
        assert compare.quantile(xs, q) == pytest.approx(float(np.percentile(xs, 100 * q)), rel=1e-12)


# --- the verdicts ---------------------------------------------------------------------------------------------


def synthetic_run(rng, n=20, sigma=0.004, shift=0.002, outliers=0.05):
    """A realistic row: lognormal repeats (sigma 0.4%, as the H100's 16M-element rows: an IQR of 0.5-1% of
    the median), 5% of them slowed by 5-50% (a preempted repeat), the whole run scaled by 1 + N(0, 0.2%)
    (another process, another allocation)."""
    x = rng.lognormal(0.0, sigma, n) * (1.0 + rng.normal(0.0, shift))
    slow = rng.random(n) < outliers
    x[slow] *= 1.0 + rng.uniform(0.05, 0.5, slow.sum())
    return list(x)


def verdicts(factor: float, rows: int = 300, seed: int = 7) -> list[str]:
    rng = np.random.default_rng(seed)
    return [verdict(synthetic_run(rng), [t * factor for t in synthetic_run(rng)]).name for _ in range(rows)]


def test_identical_runs_are_rarely_faster_or_slower():
    names = verdicts(1.0)
    assert sum(v in (FASTER, SLOWER) for v in names) / len(names) <= 0.05
    assert names.count(SAME) > len(names) / 2  # quiet rows with the same centre are called SAME


def test_a_3_percent_slowdown_is_slower_in_95_percent_of_rows():
    names = verdicts(1.03)
    assert names.count(SLOWER) / len(names) >= 0.95
    assert FASTER not in names


def test_a_10_percent_slowdown_is_slower_in_every_row_and_a_speedup_faster():
    assert set(verdicts(1.10)) == {SLOWER}
    assert set(verdicts(1 / 1.10)) == {FASTER}


def test_fewer_than_9_samples_decide_without_p():
    base, new = [1.00, 1.01, 1.00, 1.02, 1.01], [1.10, 1.11, 1.10, 1.12, 1.11]
    v = verdict(base, new)
    assert v.name == SLOWER and v.p_value is None and v.delta_pct == pytest.approx(9.90099, rel=1e-4)


def test_apart_but_not_significant_is_unsure():
    # 9 samples a side: BASE's q3 (its 7th value) 1.006, NEW's fastest 1.02, so [min, q3] are 1.4% apart; but
    # BASE's two slowest repeats lie above all of NEW: U = 7 x 9 = 63 of 81, z = (63 - 40.5 - 0.5) / sqrt(128.25)
    # = 1.943, p = 0.052 by hand
    base = [1.000, 1.001, 1.002, 1.003, 1.004, 1.005, 1.006, 2.0, 2.1]
    new = [1.02 + 0.001 * i for i in range(9)]
    assert mann_whitney_p(base, new) == pytest.approx(math.erfc(22 / math.sqrt(128.25) / math.sqrt(2)), rel=1e-12)
    v = verdict(base, new)
    assert v.name == UNSURE and "p=0.052" in v.reason
    short = verdict(base[:8], new[:8])  # fewer than 9 a side: no test, the intervals alone decide
    assert short.name == SLOWER and short.p_value is None


def test_a_disturbed_run_is_too_noisy_to_judge():
    base = [1.0 + 0.001 * i for i in range(20)]
    new = [1.05 + 0.004 * i for i in range(20)]  # median 5% up, but 3.6% above its own fastest repeat
    v = verdict(base, new)
    assert v.name == UNSURE and "too noisy" in v.reason


def test_noisy_equal_centres_are_unsure_not_same():
    rng = np.random.default_rng(1)
    base = list(rng.lognormal(0, 0.03, 20))
    v = verdict(base, base)
    assert v.name == UNSURE and v.delta_pct == 0.0
