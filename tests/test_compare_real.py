"""`compare` on real result files of identical runs kept in tests/data (README there says how each was made):
at most 5% of the matched rows may be called FASTER or SLOWER (issue 25); docs/results.md has the rates on 20
runs of each."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from kernels.harness.compare import FASTER, SAME, SLOWER, UNSURE, VERDICTS, compare
from kernels.harness.results_read import read_result

DATA = Path(__file__).resolve().parent / "data"
CPU_RUNS = sorted(DATA.glob("reduction-cpu-*.json"))  # bench reduction --backend cpu ... --json, this repo
GPU_RUNS = sorted(DATA.glob("reduction-h100-*.json"))  # the same benchmark on an H100 (cuda backend)


def test_real_files_are_small_and_read():
    assert len(CPU_RUNS) >= 2 and len(GPU_RUNS) >= 2
    for path in CPU_RUNS + GPU_RUNS:
        assert path.stat().st_size < 20_000
        r = read_result(path, "test")
        assert r.rows and all(len(row.timing.samples_ms) == 20 for row in r.rows if row.timing)


@pytest.mark.parametrize("runs", [CPU_RUNS, GPU_RUNS], ids=["cpu", "h100"])
def test_identical_real_runs_are_rarely_faster_or_slower(runs):
    names = []
    for a, b in itertools.permutations(runs, 2):
        c = compare(read_result(a, "BASE"), read_result(b, "NEW"))
        assert not c.only_base and not c.only_new
        names += [p.verdict.name for p in c.pairs]
    assert len(names) >= 4 and set(names) <= set(VERDICTS)
    assert sum(v in (FASTER, SLOWER) for v in names) / len(names) <= 0.05, names


def test_a_real_run_against_itself_is_never_faster_or_slower_and_ten_percent_more_is_never_faster():
    for path in CPU_RUNS + GPU_RUNS:
        r = read_result(path, "test")
        same = compare(r, r)
        assert {p.verdict.name for p in same.pairs} <= {SAME, UNSURE}
        assert all(p.verdict.delta_pct == 0 for p in same.pairs)
        slower = read_result(path, "test")
        for row in slower.rows:
            row.timing = type(row.timing)(tuple(t * 1.10 for t in row.timing.samples_ms), row.timing.method)
        assert FASTER not in {p.verdict.name for p in compare(r, slower).pairs}
