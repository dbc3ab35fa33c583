"""bench --processes: a run spread over fresh processes (kernels/harness/processes.py,
kernels/service/bench_processes.py), its result file (sample_processes) and compare's rule on the processes' medians
(compare.process_verdict), checked against numpy and hand-computed values."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest

from kernels.errors import InputError
from kernels.harness import compare
from kernels.harness.rows import PASSED, Row, SKIPPED
from kernels.harness.table import table_line
from kernels.harness.compare import FASTER, SAME, SLOWER, UNSURE
from kernels.harness.processes import check_processes, merge_processes
from kernels.harness.results import make_result, to_json
from kernels.harness.results_read import read_result
from kernels.timing import Timing
from raytracer_app.cli import main

# --- splitting and joining ------------------------------------------------------------------------------------


def test_repeats_are_split_evenly_and_bad_counts_refused():
    assert check_processes(10, 20) == [2] * 10
    assert check_processes(3, 10) == [4, 3, 3]
    assert check_processes(3, 10, rounds=3) == [4, 3, 3]
    for processes, repeats, rounds, words in ((0, 10, 1, "from 1 to"), (True, 10, 1, "from 1 to"),
                                              (11, 10, 1, "more than --repeats 10"),
                                              (3, 10, 4, "--rounds 4 is more than the 3 repeats")):
        with pytest.raises(InputError, match=words):
            check_processes(processes, repeats, rounds)


def row(variant, samples, verified=PASSED, gbps=None, note=""):
    t = Timing(tuple(samples), "cuda-events")
    return Row(variant=variant, op="sum", dtype="int32", n=1000, backend="cuda", device="GPU", repeats=len(samples),
                     timing=t if verified == PASSED else None, verified=verified, note=note,
                     gbps=gbps, rate=gbps, pct_of_spec=gbps)


def test_rows_are_joined_process_by_process_with_rates_from_the_joined_median():
    runs = [[row("a", [2.0, 4.0], gbps=1.0 / 3.0, note="x"), row("b", [1.0, 1.0])],
            [row("a", [5.0, 6.0], gbps=1.0 / 5.5, note="x"), row("b", [1.0], SKIPPED)]]
    a, b = merge_processes(runs, peak_gbps=1.0)
    assert a.timing.samples_ms == (2.0, 4.0, 5.0, 6.0) and a.timing.processes == (2, 2) and a.repeats == 4
    assert a.timing.by_process() == [(2.0, 4.0), (5.0, 6.0)]
    # GB/s is bytes over the median: the first process's 1/3 GB/s at 3 ms becomes 1/4.5 at the joined 4.5 ms
    assert a.gbps == pytest.approx(1 / 4.5) and a.rate == pytest.approx(1 / 4.5)
    assert a.pct_of_peak == pytest.approx(100 / 4.5) and a.note == "x"
    assert b.verified == SKIPPED and b.timing is None  # a process that skipped it decides the row


def test_clocks_read_back_span_the_first_process_to_the_last_and_print():
    from kernels.counters.clocks import Clocks, Snapshot

    def clocked(sm_before, sm_after, reasons):
        r = row("a", [1.0, 1.0], gbps=1.0)
        r.clocks = {"before": {"sm_mhz": sm_before, "memory_mhz": 2619, "power_w": 100.0, "reasons": 0},
                    "after": {"sm_mhz": sm_after, "memory_mhz": 2619, "power_w": 300.0, "reasons": reasons}}
        return r  # as a child's result file gives it back

    (a,) = merge_processes([[clocked(1980, 1970, 0)], [clocked(1965, 1755, 0x4)]])
    assert a.clocks == Clocks(Snapshot(1980, 2619, 100.0, 0), Snapshot(1755, 2619, 300.0, 0x4))
    assert "THROTTLED: power cap" in table_line(a)
    cells = a.as_dict()
    assert cells["sm_clock_mhz"] == 1980 and cells["sm_clock_mhz_after"] == 1755 and cells["throttled"] == "yes"


def test_processes_that_ran_other_rows_are_refused():
    with pytest.raises(InputError, match="process 2 ran other rows"):
        merge_processes([[row("a", [1.0])], [row("b", [1.0])]])
    with pytest.raises(ValueError):
        Timing((1.0, 2.0), "wall", (1, 2))  # the split must add up to the samples


def test_the_split_survives_the_result_file(tmp_path):
    merged = merge_processes([[row("a", [1.0, 1.1])], [row("a", [1.2])], [row("a", [1.3, 1.4])]])

    path = tmp_path / "r.json"
    path.write_text(to_json(make_result(_request(), merged, None, ["raytracer-app"])))
    back = read_result(str(path), "FILE").rows[0].timing
    assert back.processes == (2, 1, 2) and back.samples_ms == (1.0, 1.1, 1.2, 1.3, 1.4)
    doc = json.loads(path.read_text())
    assert doc["rows"][0]["sample_processes"] == [2, 1, 2]
    one = merge_processes([[row("a", [1.0])]])  # one process: no split written, none read back
    path.write_text(to_json(make_result(_request(), one, None)))
    assert json.loads(path.read_text())["rows"][0]["sample_processes"] is None
    assert read_result(str(path), "FILE").rows[0].timing.processes == ()


@pytest.mark.parametrize("value, words", [([2, 2], "adds up to 4, but samples_ms has 5"), ([5, 0], "whole numbers"),
                                          ("5", "whole numbers"), ([], "whole numbers"), ([2.5, 2.5], "whole numbers")])
def test_a_bad_split_in_a_file_is_one_line(tmp_path, value, words):

    rows = merge_processes([[row("a", [1.0, 1.1, 1.2])], [row("a", [1.3, 1.4])]])
    doc = json.loads(to_json(make_result(_request(), rows, None)))
    doc["rows"][0]["sample_processes"] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=words) as info:
        read_result(str(path), "BASE")
    assert "\n" not in str(info.value) and "rows[0].sample_processes" in str(info.value)


# --- the children: each runs the request with its share --------------------------------------------------------


def _request(**changes):
    from kernels.backend import Backend
    from kernels.service.bench_request import BenchRequest

    fields = dict(sizes=(5000,), variants="numpy", repeats=5, processes=2)
    return BenchRequest("reduction", Backend("cpu"), **{**fields, **changes})


def test_children_get_the_request_with_their_share(monkeypatch):
    from kernels.service import bench_processes

    seen = []

    def fake_child(command, env, should_stop, *deadline):  # read the request the child was given; write no result
        with open(command[-2], encoding="utf-8") as f:
            seen.append(json.load(f))
        return 2, "raytracer-app: error: stop here\n"

    monkeypatch.setattr(bench_processes, "_run_child", fake_child)
    with pytest.raises(InputError):
        bench_processes.run_in_processes(_request(repeats=7, processes=3, rounds=2), lambda *a: None, lambda: False)
    (first,) = seen
    assert first["repeats"] == 3 and first["processes"] == 1 and first["rounds"] == 2 and first["peak"] is True
    assert first["variants"] == ["numpy"] and first["sizes"] == [5000] and first["backend"]["kind"] == "cpu"


@pytest.mark.parametrize("code, stderr, error", [(2, "raytracer-app: error: --variant-file x: no NAME\n", InputError),
                                                 (1, "", RuntimeError), (-9, "", RuntimeError)])
def test_a_child_that_fails_is_one_line_with_its_reason(monkeypatch, code, stderr, error):
    from kernels.service import bench_processes

    monkeypatch.setattr(bench_processes, "_run_child", lambda command, env, stop, *deadline: (code, stderr))
    with pytest.raises(error, match=f"process 1 of 2 exited with {code}") as info:
        bench_processes.run_in_processes(_request(), lambda *a: None, lambda: False)
    if stderr:
        assert str(info.value).endswith("error: --variant-file x: no NAME")


@pytest.mark.slow  # new interpreters
def test_bench_in_processes_writes_one_file_with_every_process(tmp_path, capsys):
    out = tmp_path / "run.json"
    code = main(["bench", "reduction", "--backend", "cpu", "--n", "5000", "--variants", "numpy", "--repeats", "5",
                 "--processes", "2", "--json", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "process 1/2: 1 rows, 3 repeats each" in captured.err and "process 2/2" in captured.err
    (r,) = read_result(str(out), "FILE").rows
    assert r.timing.processes == (3, 2) and r.ok and int(r.result) == sum_of_seeded_input(5000)
    doc = json.loads(out.read_text())
    assert doc["request"]["processes"] == 2 and doc["command"][-2:] == ["--json", str(out)]


def sum_of_seeded_input(n):
    from kernels.reduction.problem import make_problem

    return int(np.sum(make_problem("sum", "int32", n).a, dtype=np.int64))


@pytest.mark.parametrize("extra, words", [
    (["--processes", "0"], "--processes 0 must be at least 1"),
    (["--processes", "6"], "--processes 6 is more than --repeats 5"),
    (["--processes", "2", "--rounds", "3"], "--rounds 3 is more than the 2 repeats"),
    (["--processes", "2", "--tolerance", "0.01"], "without --tolerance"),
    (["--processes", "2", "--whole-call", "--variants", "best"], "without --whole-call"),
])
def test_bad_process_options_are_one_line_and_exit_2(tmp_path, capsys, extra, words):
    code = main(["bench", "reduction", "--backend", "cpu", "--n", "5000", "--variants", "numpy", "--repeats", "5",
                 *extra])
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.count("\n") == 1, err


# --- compare by the processes' medians ------------------------------------------------------------------------


def process_run(rng, factor=1.0, processes=10, each=2, state=0.013, sigma=0.003):
    """A short GPU row as the H100 gives it (docs/results.md): each process in its own state (its median
    moved by 1 + N(0, 1.3%)), lognormal repeats of sigma 0.3% within it, times in steps of 32 ns on a
    4.5 us kernel (CUDA events' resolution)."""
    samples = []
    for _ in range(processes):
        level = 0.0045 * (1 + rng.normal(0, state))
        samples += list(np.round(level * rng.lognormal(0, sigma, each) / 32e-6) * 32e-6 * factor)
    return Timing(tuple(samples), "cuda-events", (each,) * processes)


def process_verdicts(factor, rows=300, seed=11, **kw):
    rng = np.random.default_rng(seed)
    return [compare.timing_verdict(process_run(rng, **kw), process_run(rng, factor, **kw)).name for _ in range(rows)]


def test_processes_identical_runs_are_rarely_faster_or_slower():
    names = process_verdicts(1.0)
    assert sum(v in (FASTER, SLOWER) for v in names) / len(names) <= 0.05


def test_processes_a_3_percent_slowdown_is_slower_in_95_percent_and_10_percent_always():
    names = process_verdicts(1.03)
    assert names.count(SLOWER) / len(names) >= 0.95 and FASTER not in names
    assert set(process_verdicts(1.10)) == {SLOWER}
    assert set(process_verdicts(1 / 1.10)) == {FASTER}


def test_one_process_a_side_cannot_see_the_state_and_so_misses_slowdowns():
    # the same rows in one process of 20 repeats: the sample rule sees no spread of states, so it must keep
    # its gap wide and finds a 3% slowdown far less often (why --processes exists)
    names = process_verdicts(1.03, processes=1, each=20)
    assert names.count(SLOWER) / len(names) < 0.8


def test_process_medians_decide_by_hand():
    base = Timing((1.000, 1.002, 1.004, 1.006, 1.002, 1.004, 0.999, 1.001, 1.003, 1.005), "wall", (2,) * 5)
    slower = Timing(tuple(x * 1.05 for x in base.samples_ms), "wall", (2,) * 5)
    # process medians 1.001, 1.005, 1.003, 1.000, 1.004 against each x 1.05: every new one above every old one;
    # their IQR (1.001 to 1.004) is 0.3% of their median, quiet enough for SAME against themselves
    v = compare.timing_verdict(base, slower)
    b_meds = [statistics.median(base.samples_ms[i:i + 2]) for i in range(0, 10, 2)]
    assert b_meds == pytest.approx([1.001, 1.005, 1.003, 1.000, 1.004])
    assert v.name == SLOWER and v.delta_pct == pytest.approx(5.0) and "5 and 5 processes" in v.reason
    assert v.p_value == pytest.approx(compare.mann_whitney_p(b_meds, [m * 1.05 for m in b_meds]))
    assert compare.timing_verdict(base, base).name == SAME
    few = Timing(base.samples_ms, "wall", (5, 5))  # two processes: judged by the samples
    assert "the medians of" not in compare.timing_verdict(few, Timing(slower.samples_ms, "wall", (5, 5))).reason


def test_spread_process_medians_with_equal_centres_are_unsure():
    base = Timing((1.0, 1.0, 1.1, 1.1, 0.9, 0.9, 1.05, 1.05, 0.95, 0.95), "wall", (2,) * 5)
    v = compare.timing_verdict(base, base)
    assert v.name == UNSURE and "spread" in v.reason


@pytest.mark.slow
def test_a_child_that_stalls_at_start_is_ended_by_the_deadline(tmp_path, monkeypatch):
    """A child that never reads its request (here a sitecustomize.py that sleeps, as the audit's case) is ended
    once the start-up deadline passes: one line, a failure while running (exit 1), not a hang."""
    import os
    import time

    from kernels.service import bench_processes

    stall = tmp_path / "site"
    stall.mkdir()
    (stall / "sitecustomize.py").write_text("import time\ntime.sleep(60)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(stall), os.environ.get("PYTHONPATH")])))
    monkeypatch.setattr(bench_processes, "START_DEADLINE_S", 1.5)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"process 1 of 2 did not start within 1\.5 s"):
        bench_processes.run_in_processes(_request(), lambda *a: None, lambda: False)
    assert time.monotonic() - t0 < 15
