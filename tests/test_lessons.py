"""Lessons (kernels.lessons, `raytracer-app lesson`): the catalog names real variants and carries the paper's
table as printed; the figures and verdicts are computed right from given times (checked by hand arithmetic
here); without a GPU the CLI verifies every step in the simulator, shows the paper's column and no timing,
and writes CSV and Markdown through the writer; bad options exit 2 with one line."""

import csv
import re

import pytest

from kernels import backend as backends
from kernels.harness.rows import PASSED, Row
from kernels.harness.peak import Peak
from kernels.lessons import catalog, evidence, report
from kernels.lessons import run as lesson_run
from kernels.lessons.reduction_ladder import REDUCTION
from kernels.registry import by_name
from kernels.timing import Timing
from raytracer_app.cli import main

# Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), G80, 2^22 ints: (ms, GB/s)
HARRIS_TABLE = [(8.054, 2.083), (3.456, 4.854), (1.722, 9.741), (0.965, 17.377), (0.536, 31.289), (0.381, 43.996),
                (0.268, 62.671)]


@pytest.mark.parametrize("lesson", catalog.LESSONS, ids=lambda lesson: lesson.name)
def test_every_step_names_a_variant_of_its_target(lesson):
    variants = {v.name: v for v in by_name(lesson.target).variants}
    for step in lesson.steps:
        assert variants[step.variant].kind == "gpu", step.variant
        assert step.title and step.idea
        assert step.baseline is None or 0 <= step.baseline < len(lesson.steps)
    assert set(lesson.evidence) <= set(evidence.FACTS)


def test_the_reduction_ladder_is_the_papers_then_ours():
    assert [s.variant for s in REDUCTION.steps] == [
        "interleaved-divergent", "interleaved-strided", "sequential", "first-add-load", "unroll-last-warp",
        "complete-unroll", "multiple-elements", "warp-shuffle", "best"]
    assert REDUCTION.sizes == (2**22, 2**26)
    printed = [(s.published.time_ms, s.published.gbps) for s in REDUCTION.steps[:7]]
    assert printed == HARRIS_TABLE
    for before, step in zip(REDUCTION.steps, REDUCTION.steps[1:7]):  # the printed speedups follow from the times, within their rounding
        assert step.published.step == pytest.approx(before.published.time_ms / step.published.time_ms, rel=0.005)
        assert step.published.cumulative == pytest.approx(8.054 / step.published.time_ms, rel=0.005)
    # 2^22 ints in the printed time give the printed bandwidth
    assert 4 * 2**22 / (8.054e-3) / 1e9 == pytest.approx(2.083, abs=0.001)


def test_paper_launches():
    n = 2**22
    launches = [s.launch(n) for s in REDUCTION.steps]
    assert [(x.block, x.grid) for x in launches[:6]] == [(128, 32768)] * 3 + [(128, 16384)] * 3
    assert (launches[6].block, launches[6].grid) == (128, None)  # kernel 7: the variant's fixed grid
    assert launches[7].is_default and launches[8].is_default


def test_unknown_lesson_is_an_input_error():
    from kernels.errors import InputError

    with pytest.raises(InputError, match="unknown lesson 'nope'; known: reduction, constant-memory, atomics, hash-tables"):
        catalog.by_name("nope")


# --- figures and verdicts from given times (a fake GPU) --------------------------------------------------------


class FakeGPU:
    is_gpu, runs_cuda_kernels, is_simulator, is_host = True, True, False, False
    label, device_name, kind, device = "cuda:0 (test GPU)", "test GPU", "cuda", 0

    @property
    def caps(self):
        return backends.Backend("cpu").caps

    @property
    def limits(self):
        from kernels.backend.devices import DeviceLimits

        return DeviceLimits(name="test GPU", sm_count=132)

    def free_device_bytes(self):
        return None

    def skip_reason(self, variant_kind):
        return None


TIMES = [8.0, 4.0, 2.0, 1.0, 0.95, 0.5, 0.5, 0.25, 0.2]  # ms per step


def fake_run(monkeypatch, times=TIMES, facts=None):
    calls = []

    def run_step(algorithm, lesson, step, n, backend, repeats, peak, simulator, stop):
        i = len(calls)
        calls.append((step.variant, n, step.launch(n)))
        row = Row(step.variant, "sum", "int32", n, "cuda", "test GPU", verified=PASSED)
        row.timing = Timing((times[i % len(times)],) * 3, "cuda-events")
        row.gbps = 4 * n / (times[i % len(times)] * 1e-3) / 1e9
        return row

    monkeypatch.setattr(lesson_run, "_run_step", run_step)
    monkeypatch.setattr(lesson_run, "copy_peak", lambda backend: Peak(20.0, "test copy"))
    given = facts or {}
    monkeypatch.setattr(lesson_run.evidence, "collect",
                        lambda target, wanted, arch, cache=None: ({k: given.get(k[0], {}) for k in wanted}, ""))
    return lesson_run.run_lesson(REDUCTION, FakeGPU(), sizes=[2**22], arch="sm_90"), calls


def test_speedups_and_copy_share_from_given_times(monkeypatch):
    run, calls = fake_run(monkeypatch)
    assert [c[0] for c in calls] == [s.variant for s in REDUCTION.steps]
    steps = run.at(2**22)
    assert all(r.measured for r in steps)
    assert [round(r.step_speedup, 4) if r.step_speedup else None for r in steps] == \
        [None, 2.0, 2.0, 2.0, round(1.0 / 0.95, 4), 1.9, 1.0, 2.0, 1.25]
    assert [round(r.cumulative, 4) for r in steps] == [1.0, 2.0, 4.0, 8.0, round(8 / 0.95, 4), 16.0, 16.0, 32.0, 40.0]
    gbps = 4 * 2**22 / 1e-3 / 1e9  # step 4: 1 ms
    assert steps[3].pct_of_copy == pytest.approx(100 * gbps / 20.0)


def test_verdicts_say_whether_a_step_pays_and_why(monkeypatch):
    facts = {"first-add-load": {"registers": 32, "barrier": 7}, "unroll-last-warp": {"registers": 40, "barrier": 2}}
    run, _ = fake_run(monkeypatch, facts=facts)
    v = [r.verdict for r in run.at(2**22)]
    assert v[0].startswith("the baseline")
    assert v[1].startswith("pays here: 2.00x over interleaved-divergent (the paper: 2.33x)")
    # step 5: 1.05x, and step 4 ran at 839% of a 20 GB/s copy: memory-bound, with the static difference
    assert v[4].startswith("no longer pays here: 1.05x over first-add-load (the paper: 1.80x); first-add-load "
                           "already moved data at")
    assert "registers 32 -> 40, barriers 7 -> 2" in v[4]
    assert v[6].startswith("no longer pays here: 1.00x")


def test_a_slower_step_costs(monkeypatch):
    run, _ = fake_run(monkeypatch, times=[1.0, 2.0] + [1.0] * 7)
    assert run.at(2**22)[1].verdict.startswith("costs here: 0.50x over interleaved-divergent")


def test_reports_from_a_measured_run(monkeypatch, tmp_path):
    run, _ = fake_run(monkeypatch)
    text = report.text(run)
    assert "this GPU ms" in text and "paper ms" in text and "8.054" in text
    rows = list(csv.DictReader(report.csv_text(run).splitlines()))
    assert len(rows) == 9 and rows[1]["step_speedup"] == "2.000" and rows[1]["published_step"] == "2.33"
    md = report.markdown(run)
    assert "- device: test GPU" in md and re.search(r"- date: \d{4}-\d\d-\d\d", md) and "numba-cuda" in md
    assert "| 2 interleaved addressing, strided index | yes | 4.0000 |" in md
    path = report.write(tmp_path / "r.md", md, "--markdown")
    assert path.read_text() == md


# --- without a GPU: the CLI on the cpu backend ------------------------------------------------------------------


@pytest.mark.slow
def test_cli_lesson_on_the_cpu_backend_verifies_every_step_and_shows_the_paper(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAYTRACER_LESSON_REFERENCES", str(tmp_path / "none"))  # the shipped ones: elsewhere
    out_csv, out_md = tmp_path / "lesson.csv", tmp_path / "lesson.md"
    code = main(["lesson", "reduction", "--backend", "cpu", "--n", "512", "--csv", str(out_csv),
                 "--markdown", str(out_md)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = captured.out
    for step in REDUCTION.steps:
        assert step.title[:44] in out
    for ms, gbps in HARRIS_TABLE:
        assert f"{ms:.3f}" in out and f"{gbps:.3f}" in out
    assert "verified in the CUDA simulator; not timed" in out and "this GPU ms" not in out
    rows = list(csv.DictReader(out_csv.open()))
    assert [r["variant"] for r in rows] == [s.variant for s in REDUCTION.steps]
    assert all(r["measured"] == "no" and r["median_ms"] == "" for r in rows)
    assert [r["verified"] for r in rows] == ["yes"] * 7 + ["skipped"] * 2  # shuffles: not in the simulator
    md = out_md.read_text()
    assert "- device: " in md and "- date: " in md and "numba-cuda" in md and "(no GPU: not timed)" in md


@pytest.mark.parametrize("argv, message", [
    (["lesson", "nope"], "invalid choice: 'nope'"),
    (["lesson", "reduction", "--n", "0"], "--n 0 must be at least 1"),
    (["lesson", "reduction", "--backend", "cpu", "--n", "100000"], "out of range; allowed 1..65536 elements"),
    (["lesson", "reduction", "--backend", "cpu", "--arch", "sm_70"], "architecture 'sm_70' is not supported"),
    (["lesson", "atomics", "--block", "64"], "--block does not apply to `lesson`"),
    (["lesson", "reduction", "--backend", "cpu", "--csv", "x.out", "--markdown", "x.out"], "name the same file"),
    (["lesson", "reduction", "--backend", "cpu", "--json", "x.out", "--csv", "x.out"],
     "--csv and --json name the same file"),
])
def test_cli_bad_options_exit_2_with_one_line(argv, message, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("raytracer-app: error: ") and err.count("\n") == 1 and message in err, err


def test_a_lesson_without_published_figures_has_no_paper_columns(monkeypatch):
    from kernels.lessons.constant_memory import CONSTANT_MEMORY

    monkeypatch.setattr(lesson_run, "_run_step", lambda *args: Row("x", "uniform", "", 20, "cuda", "test GPU",
                                                                         verified=PASSED))
    monkeypatch.setattr(lesson_run, "copy_peak", lambda backend: Peak(None, "not measured"))
    monkeypatch.setattr(lesson_run.evidence, "collect", lambda *args, **kw: ({}, ""))
    run = lesson_run.run_lesson(CONSTANT_MEMORY, FakeGPU(), sizes=[20], arch="sm_90")
    text, md = report.text(run), report.markdown(run)
    assert "paper" not in text and "paper" not in md and "source: Jason Sanders" in text
    assert len(run.results) == 6 and all(r.step_speedup is None for r in run.results)  # no timing: no speedup


def test_outcomes_a_learner_guesses(monkeypatch):
    run, _ = fake_run(monkeypatch, times=[8.0, 4.0, 4.1, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0])
    got = [lesson_run.outcome(r) for r in run.at(2**22)[:4]]
    assert got == [None, ("faster", "this GPU"), ("about the same", "this GPU"), ("slower", "this GPU")]


# --- measured counters (--counters): recorded H100 sets and built records, never ncu --------------------------


def _recorded_reduction():
    import json
    from pathlib import Path

    from kernels.counters.measure import to_measured

    doc = json.loads((Path(__file__).parent / "data" / "counters" / "reduction-h100.json").read_text())
    return to_measured(doc["actions"], doc["variants"], {}, "none")


def _record(name, **values):
    from kernels.counters.metrics import KernelCounters, Measured

    return Measured((KernelCounters(name, {"duration_ns": 1e6, **values}, {"barrier": 2.0, "long_scoreboard": 1.0}),),
                    "none")


# the Harris variants the recorded set predates: figures shaped like the H100 measurements
BUILT = {
    "interleaved-strided": _record("interleaved_strided", bank_conflicts=16.4e6, shared_ld=3e6, shared_st=1e6,
                                   instructions=12e6, branch_efficiency_pct=100.0, dram_pct=20.0, occupancy_pct=90.0),
    "first-add-load": _record("first_add_load", bank_conflicts=0.0, shared_ld=2e6, shared_st=1e6, instructions=9e6,
                              branch_efficiency_pct=100.0, dram_pct=70.0, occupancy_pct=90.0),
    "unroll-last-warp": _record("unroll_last_warp", bank_conflicts=0.0, shared_ld=2e6, shared_st=1e6,
                                instructions=6e6, branch_efficiency_pct=100.0, dram_pct=72.0, occupancy_pct=90.0),
    "complete-unroll": _record("complete_unroll", bank_conflicts=0.0, shared_ld=2e6, shared_st=1e6,
                               instructions=5e6, branch_efficiency_pct=100.0, dram_pct=80.0, occupancy_pct=90.0),
    "multiple-elements": _record("multiple_elements", bank_conflicts=0.0, shared_ld=1e4, shared_st=1e4,
                                 instructions=3e6, branch_efficiency_pct=100.0, dram_pct=88.0, occupancy_pct=60.0),
}


def fake_counters(monkeypatch, got=None):
    """ncu replaced by the records above; returns the batches `measure` was asked for."""
    import kernels.counters.measure as ncu
    import kernels.counters.tool as tool

    records = {**_recorded_reduction(), **BUILT, **(got or {})}
    calls = []

    def measure(request, backend, clock_control="none", on_progress=None, should_stop=None, **kw):
        variants = request["variants"]
        calls.append((request["algorithm"], list(variants), request["sizes"][0], dict(request["launches"][0]),
                      clock_control))
        return {v: records.get(v, "no kernel was profiled for it") for v in variants}

    monkeypatch.setattr(tool, "why_not", lambda backend: "")
    monkeypatch.setattr(ncu, "measure", measure)
    return calls


def counted_run(monkeypatch, got=None):
    calls = fake_counters(monkeypatch, got)
    fake_run(monkeypatch)  # installs the fake timing and evidence
    return lesson_run.run_lesson(REDUCTION, FakeGPU(), sizes=[2**22], arch="sm_90", counters=True), calls


def test_counters_are_read_in_bench_counters_batches_one_per_launch(monkeypatch):
    run, calls = counted_run(monkeypatch)
    n = 2**22
    assert [c[1] for c in calls] == [["interleaved-divergent", "interleaved-strided", "sequential"],
                                     ["first-add-load", "unroll-last-warp", "complete-unroll"],
                                     ["multiple-elements"], ["warp-shuffle", "best"]]
    assert [c[3] for c in calls] == [{"block": 128, "grid": n // 128, "grid_sm": None, "items_per_thread": None},
                                     {"block": 128, "grid": n // 256, "grid_sm": None, "items_per_thread": None},
                                     {"block": 128, "grid": None, "grid_sm": None, "items_per_thread": None},
                                     {"block": None, "grid": None, "grid_sm": None, "items_per_thread": None}]
    assert all(c[0] == "reduction" and c[2] == n and c[4] == "none" for c in calls)
    assert all(r.counters is not None for r in run.results) and run.counters.startswith("Nsight Compute")


def test_measured_evidence_and_verdicts_cite_the_measured_change(monkeypatch):
    run, _ = counted_run(monkeypatch)
    steps = run.at(2**22)
    lines = report.explanation_lines(run, 2**22)
    # the recorded H100 interleaved-divergent: 0.43 conflicts per request (2063 over 4800), 17.73M instructions
    assert any("measured: DRAM 9.8% of peak, achieved occupancy 12.5%, bank conflicts per request 0.43, "
               "executed instructions 17.73M, branch efficiency 99.3%, top stall long_scoreboard" in ln for ln in lines)
    # 2 -> 3: conflicts per request 16.4M / 4M = 4.10, then none
    assert "measured: bank conflicts per request 4.10 -> 0.00" in steps[2].verdict
    assert steps[2].verdict.endswith("DRAM 20.0% -> 9.9% of peak")  # three changes cited; occupancy's left out
    assert steps[1].verdict.startswith("pays here: 2.00x over interleaved-divergent (the paper: 2.33x); measured: "
                                       "bank conflicts per request 0.43 -> 4.10, executed instructions 17.73M -> 12.00M")
    # 4 -> 5 (1.05x): the base read DRAM at 70% of its peak, and unrolling cut instructions 9M -> 6M
    assert steps[4].verdict == ("no longer pays here: 1.05x over first-add-load (the paper: 1.80x); first-add-load "
                                "already moved data at 70% of DRAM peak (measured), so memory, not this idea, sets "
                                "the time; measured: executed instructions 9.00M -> 6.00M")
    assert "static evidence" not in steps[4].verdict
    assert "measured counters read by Nsight Compute (ncu --clock-control none)" in report.text(run)


def test_branch_efficiency_rising_is_cited_and_no_change_falls_back_to_static(monkeypatch):
    from kernels.lessons import measured

    divergent = _record("a", branch_efficiency_pct=70.0, instructions=10e6, dram_pct=10.0)
    strided = _record("b", branch_efficiency_pct=100.0, instructions=10.5e6, dram_pct=12.0)
    assert measured.difference(strided, divergent) == "branch efficiency 70.0% -> 100.0%"
    same = _record("c", branch_efficiency_pct=100.0, instructions=6e6, dram_pct=72.0)
    facts = {"complete-unroll": {"registers": 30, "barrier": 2}, "unroll-last-warp": {"registers": 40, "barrier": 2}}
    calls = fake_counters(monkeypatch, {"complete-unroll": same, "unroll-last-warp": same})
    fake_run(monkeypatch, facts=facts)
    run = lesson_run.run_lesson(REDUCTION, FakeGPU(), sizes=[2**22], arch="sm_90", counters=True)
    assert calls and run.at(2**22)[5].verdict == ("pays here: 1.90x over unroll-last-warp (the paper: 1.41x); "
                                                  "static evidence: registers 40 -> 30")


def test_counters_csv_and_markdown_columns(monkeypatch):
    from kernels.lessons import measured

    run, _ = counted_run(monkeypatch, {"best": "no kernel was profiled for it"})
    rows = list(csv.DictReader(report.csv_text(run).splitlines()))
    assert all(c in rows[0] for c in measured.CSV_COLUMNS)
    assert rows[1]["bank_conflicts_per_request"] == "4.1" and rows[1]["instructions"] == "12000000"
    assert rows[1]["dram_pct"] == "20.0" and rows[1]["top_stall"] == "barrier" and rows[1]["clock_control"] == "none"
    assert rows[8]["dram_pct"] == "" and rows[8]["counters_note"] == "no kernel was profiled for it"
    md = report.markdown(run)
    assert "| DRAM % of peak | achieved occupancy % | bank conflicts / request |" in md
    assert "| 12000000 | 100.0 | barrier |" in md and "no counters: no kernel was profiled for it" in md
    plain, _ = fake_run(monkeypatch)
    plain_rows = list(csv.DictReader(report.csv_text(plain).splitlines()))
    assert all(r[c] == "" for r in plain_rows for c in measured.CSV_COLUMNS)
    assert "DRAM % of peak" not in report.markdown(plain) and "not shown" in report.text(plain)


def test_counters_without_gpu_or_ncu_are_refused_as_bench_refuses(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "reduction", "--backend", "cpu", "--counters"]) == 2
    bench_line = capsys.readouterr().err.strip().splitlines()[-1]
    assert main(["lesson", "reduction", "--backend", "cpu", "--counters", "--csv", "x.csv"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.strip() == bench_line and captured.out == ""
    assert bench_line.startswith("raytracer-app: error: counters cannot be read: needs a CUDA GPU")
    assert not (tmp_path / "x.csv").exists()
    from kernels.counters.tool import CannotMeasure

    with pytest.raises(CannotMeasure, match="counters cannot be read: needs a CUDA GPU"):  # the engine's API
        lesson_run.run_lesson(REDUCTION, backends.Backend("cpu"), sizes=[512], counters=True)
