"""Lessons (kernels.lessons, `raytracer-app lesson`): the catalog names real variants and carries the paper's
table as printed; the figures and verdicts are computed right from given times (checked by hand arithmetic
here); without a GPU the CLI verifies every step in the simulator, shows the paper's column and no timing,
and writes CSV and Markdown through the writer; bad options exit 2 with one line."""

import csv
import re

import pytest

from kernels import backend as backends
from kernels.harness import bench
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
    assert [(l.block, l.grid) for l in launches[:6]] == [(128, 32768)] * 3 + [(128, 16384)] * 3
    assert (launches[6].block, launches[6].grid) == (128, None)  # kernel 7: the variant's fixed grid
    assert launches[7].is_default and launches[8].is_default


def test_unknown_lesson_is_an_input_error():
    from kernels.errors import InputError

    with pytest.raises(InputError, match="unknown lesson 'nope'; known: reduction, constant-memory, atomics"):
        catalog.by_name("nope")


# --- figures and verdicts from given times (a fake GPU) --------------------------------------------------------


class FakeGPU:
    is_gpu, runs_cuda_kernels, is_simulator, is_host = True, True, False, False
    label, device_name, kind = "cuda:0 (test GPU)", "test GPU", "cuda"

    @property
    def caps(self):
        return backends.Backend("cpu").caps


TIMES = [8.0, 4.0, 2.0, 1.0, 0.95, 0.5, 0.5, 0.25, 0.2]  # ms per step


def fake_run(monkeypatch, times=TIMES, facts=None):
    calls = []

    def run_step(algorithm, lesson, step, n, backend, repeats, peak, simulator, stop):
        i = len(calls)
        calls.append((step.variant, n, step.launch(n)))
        row = bench.Row(step.variant, "sum", "int32", n, "cuda", "test GPU", verified=bench.PASSED)
        row.timing = Timing((times[i % len(times)],) * 3, "cuda-events")
        row.gbps = 4 * n / (times[i % len(times)] * 1e-3) / 1e9
        return row

    monkeypatch.setattr(lesson_run, "_run_step", run_step)
    monkeypatch.setattr(lesson_run.bench, "copy_peak", lambda backend: bench.Peak(20.0, "test copy"))
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
def test_cli_lesson_on_the_cpu_backend_verifies_every_step_and_shows_the_paper(tmp_path, capsys):
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
])
def test_cli_bad_options_exit_2_with_one_line(argv, message, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("raytracer-app: error: ") and err.count("\n") == 1 and message in err, err


def test_a_lesson_without_published_figures_has_no_paper_columns(monkeypatch):
    from kernels.lessons.constant_memory import CONSTANT_MEMORY

    monkeypatch.setattr(lesson_run, "_run_step", lambda *args: bench.Row("x", "uniform", "", 20, "cuda", "test GPU",
                                                                         verified=bench.PASSED))
    monkeypatch.setattr(lesson_run.bench, "copy_peak", lambda backend: bench.Peak(None, "not measured"))
    monkeypatch.setattr(lesson_run.evidence, "collect", lambda *args, **kw: ({}, ""))
    run = lesson_run.run_lesson(CONSTANT_MEMORY, FakeGPU(), sizes=[20], arch="sm_90")
    text, md = report.text(run), report.markdown(run)
    assert "paper" not in text and "paper" not in md and "source: Jason Sanders" in text
    assert len(run.results) == 6 and all(r.step_speedup is None for r in run.results)  # no timing: no speedup


def test_outcomes_a_learner_guesses(monkeypatch):
    run, _ = fake_run(monkeypatch, times=[8.0, 4.0, 4.1, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0])
    got = [lesson_run.outcome(r) for r in run.at(2**22)[:4]]
    assert got == [None, ("faster", "this GPU"), ("about the same", "this GPU"), ("slower", "this GPU")]
