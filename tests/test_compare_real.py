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
PROCESS_RUNS = sorted(DATA.glob("processes-h100-*.json"))  # ... with --processes 10: judged by process medians


def scaled(result, factor: float):
    """``result`` with every sample multiplied by ``factor`` (a slowdown made by hand), its split kept."""
    for row in result.rows:
        if row.timing is not None:
            t = row.timing
            row.timing = type(t)(tuple(x * factor for x in t.samples_ms), t.method, t.processes)
    return result


def verdict_names(runs, factor: float = 1.0) -> list[str]:
    names = []
    for a, b in itertools.permutations(runs, 2):
        c = compare(read_result(a, "BASE"), scaled(read_result(b, "NEW"), factor))
        assert not c.only_base and not c.only_new
        names += [p.verdict.name for p in c.pairs]
    return names


def test_real_files_are_small_and_read():
    assert len(CPU_RUNS) >= 2 and len(GPU_RUNS) >= 2 and len(PROCESS_RUNS) >= 4
    for path in CPU_RUNS + GPU_RUNS + PROCESS_RUNS:
        assert path.stat().st_size < 20_000
        r = read_result(path, "test")
        assert r.rows and all(len(row.timing.samples_ms) == 20 for row in r.rows if row.timing)


@pytest.mark.parametrize("runs", [CPU_RUNS, GPU_RUNS, PROCESS_RUNS], ids=["cpu", "h100", "h100-processes"])
def test_identical_real_runs_are_rarely_faster_or_slower(runs):
    names = verdict_names(runs)
    assert len(names) >= 4 and set(names) <= set(VERDICTS)
    assert sum(v in (FASTER, SLOWER) for v in names) / len(names) <= 0.05, names


def test_real_runs_in_processes_find_3_percent_slowdowns():
    # 4 runs of 10 processes each, 12 ordered pairs of 8 rows; docs/results.md has the rates over 20 runs
    names = verdict_names(PROCESS_RUNS, 1.03)
    assert len(names) == 96 and names.count(SLOWER) / len(names) >= 0.9 and FASTER not in names
    assert set(verdict_names(PROCESS_RUNS, 1.10)) == {SLOWER}


def test_a_real_run_against_itself_is_never_faster_or_slower_and_ten_percent_more_is_never_faster():
    for path in CPU_RUNS + GPU_RUNS + PROCESS_RUNS:
        r = read_result(path, "test")
        same = compare(r, r)
        assert {p.verdict.name for p in same.pairs} <= {SAME, UNSURE}
        assert all(p.verdict.delta_pct == 0 for p in same.pairs)
        assert FASTER not in {p.verdict.name for p in compare(r, scaled(read_result(path, "test"), 1.10)).pairs}
