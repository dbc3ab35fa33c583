"""Lesson result files (`lesson --json`) and the reference results a lesson shows without a GPU: a run written
and read back keeps every step's figures; a synthetic H100 reference in a temporary folder (never assets/)
shows as columns labelled with its device and date on the cpu backend, with its step speedups cited; a
lesson on a GPU shows none; every shipped lesson reference loads and matches its lesson's steps."""

import csv
import json

import pytest

from kernels.errors import InputError
from kernels.harness.rows import PASSED, Row
from kernels.lessons import catalog, references, report_refs, results
from kernels.lessons import run as lesson_run
from kernels.lessons.reduction_ladder import REDUCTION
from raytracer_app.cli import main
from tests.test_lessons import FakeGPU, counted_run, fake_run

H100 = "NVIDIA H100 80GB HBM3"


class FakeH100(FakeGPU):
    label, device_name = "cuda:0 (H100)", H100


def reference_file(monkeypatch, folder, device=H100, counters=False):
    """A reference of the reduction lesson made from given times (tests.test_lessons.TIMES), as the script
    would write it, in ``folder``; returns its path and the run it was made from."""
    if counters:
        run, _ = counted_run(monkeypatch)
    else:
        run, _ = fake_run(monkeypatch)
    run.device = device
    run.device_info = {"name": device, "backend": "cuda", "sms": 132, "spec_gbps": 3350.0,
                       "copy_peak_gbps": 20.0, "copy_peak_how": "test copy"}
    path = folder / references.file_name(device, "reduction")
    results.write(path, run, "--json", command=["raytracer-app", "lesson", "reduction", "--json", path.name])
    return path, run


def test_json_round_trip_keeps_every_steps_figures(monkeypatch, tmp_path):
    path, run = reference_file(monkeypatch, tmp_path, counters=True)
    assert path.name == "nvidia-h100-80gb-hbm3-lesson-reduction.json"
    doc = json.loads(path.read_text())
    assert doc["schema"] == "raytracer-app/lesson-result" and doc["version"] == 1
    assert doc["device"]["sms"] == 132 and doc["sizes"] == [2**22] and doc["command"][1] == "lesson"
    back = results.read(path, "--json")
    assert back.device == H100 and back.measured and back.lesson is REDUCTION and back.peak.gbps == 20.0
    assert len(back.results) == len(run.results) == 9
    for a, b in zip(run.results, back.results):
        assert (b.index, b.n, b.verified, b.verdict, b.facts) == (a.index, a.n, a.verified, a.verdict, a.facts)
        assert b.time_ms == pytest.approx(a.time_ms) and b.gbps == pytest.approx(a.gbps)
        assert b.step_speedup == a.step_speedup and b.cumulative == a.cumulative and b.pct_of_copy == a.pct_of_copy
        assert (b.counters is None) == (a.counters is None)
        if a.counters is not None:
            assert b.counters.dram_pct == pytest.approx(a.counters.dram_pct)
    assert back.results[1].step_speedup == 2.0  # 8 ms -> 4 ms


def test_a_file_of_other_steps_or_another_schema_is_refused(monkeypatch, tmp_path):
    path, _ = reference_file(monkeypatch, tmp_path)
    doc = json.loads(path.read_text())
    doc["steps"][1]["variant"] = "sequential"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="another version of it"):
        results.read(path, "reference")
    path.write_text(json.dumps({"schema": "raytracer-app/bench-result", "version": 1}))
    with pytest.raises(InputError, match="not a raytracer-app lesson result file"):
        results.read(path, "reference")
    found, refused = references.load(REDUCTION, tmp_path)
    assert found == [] and len(refused) == 1


def _sim_steps(monkeypatch):
    """The cpu backend's simulator verification replaced by passing, untimed rows (fast)."""
    def run_step(algorithm, lesson, step, n, backend, repeats, peak, simulator, stop):
        return Row(step.variant, "sum", "int32", n, "cpu", "cpu", verified=PASSED)

    monkeypatch.setattr(lesson_run, "_run_step", run_step)
    monkeypatch.setattr(lesson_run.evidence, "collect", lambda *a, **kw: ({}, ""))


def test_cli_without_gpu_shows_the_labelled_reference_columns(monkeypatch, tmp_path, capsys):
    folder = tmp_path / "refs"
    folder.mkdir()
    reference_file(monkeypatch, folder, counters=True)
    reference_file(monkeypatch, folder, device="NVIDIA H200")
    _sim_steps(monkeypatch)
    monkeypatch.setenv(references.ENV, str(folder))
    out_csv, out_md, out_json = tmp_path / "l.csv", tmp_path / "l.md", tmp_path / "l.json"
    code = main(["lesson", "reduction", "--backend", "cpu", "--csv", str(out_csv), "--markdown", str(out_md),
                 "--json", str(out_json)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = captured.out
    today = results.read(out_json, "--json").date[:10]
    assert f"H100 columns: reference, measured on {H100} on {today} (not this machine)" in out
    assert "H200 columns: reference, measured on NVIDIA H200" in out
    assert "H100 ms" in out and "H100 cum x" in out and "H200 step x" in out
    assert "n = 4,194,304: H100, H200 columns are references (not this machine)" in out
    assert "this GPU ms" not in out  # nothing of this machine is shown as measured
    assert "-> references (not this machine): on an H100: 2.00x, on an H200: 2.00x" in out
    assert "H100 reference, measured: DRAM" in out  # the reference's counters, labelled
    step2 = next(line for line in out.splitlines() if line.startswith("2 interleaved addressing, strided"))
    assert "4.0000" in step2 and "2.00" in step2  # the H100's 4 ms and 2x, beside the paper's 3.456
    rows = list(csv.DictReader(out_csv.open()))
    mine = [r for r in rows if r["source"] == "this machine"]
    theirs = [r for r in rows if r["source"].startswith(f"reference, measured on {H100}")]
    assert len(mine) == 9 and all(r["median_ms"] == "" and r["measured"] == "no" for r in mine)
    assert len(theirs) == 9 and theirs[0]["median_ms"] == "8.000000" and theirs[0]["measured"] == "reference"
    md = out_md.read_text()
    assert f"- H100 columns: reference, measured on {H100}" in md and "| H100 ms |" in md
    written = results.read(out_json, "--json")
    assert not written.measured and all(r.time_ms is None for r in written.results)


def test_cli_without_references_says_none_are_shipped(monkeypatch, tmp_path, capsys):
    _sim_steps(monkeypatch)
    monkeypatch.setenv(references.ENV, str(tmp_path / "none"))
    assert main(["lesson", "reduction", "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "no reference results shipped for lesson reduction" in out and "H100" not in out


def test_a_gpu_run_keeps_its_own_measured_columns(monkeypatch, tmp_path):
    reference_file(monkeypatch, tmp_path)
    found, _ = references.load(REDUCTION, tmp_path)
    run, _ = fake_run(monkeypatch)
    assert found and report_refs.text(run, found) == report_refs.text(run) and "H100 ms" not in report_refs.text(run)


def test_bench_references_do_not_list_lesson_references(monkeypatch, tmp_path):
    from raytracer_app.gui.common import reference_results

    reference_file(monkeypatch, tmp_path)
    assert reference_results.listed("reduction", tmp_path) == []
    assert [p.name for p in references.listed("reduction", tmp_path)] == ["nvidia-h100-80gb-hbm3-lesson-reduction.json"]


@pytest.mark.parametrize("lesson", catalog.LESSONS, ids=lambda lesson: lesson.name)
def test_every_shipped_lesson_reference_loads_and_matches_its_steps(lesson):
    for path in references.listed(lesson.name, references.REFERENCE_DIR):
        run = results.read(path, "shipped reference")  # refuses steps that are not the lesson's
        assert run.lesson is lesson and run.measured, path.name
        assert {r.index for r in run.results} == set(range(len(lesson.steps))), path.name
        assert references.short_device(run.device) in ("H100", "H200"), path.name


def test_the_script_plans_the_lesson_references(tmp_path):
    import sys

    from tests.test_reference_results import ROOT

    sys.path.insert(0, str(ROOT / "scripts"))
    import reference_results as script

    plan = script.lesson_plan("cuda", None, ["reduction", "atomics"], counters=True)
    assert plan == [["raytracer-app", "lesson", "reduction", "--backend", "cuda", "--counters", "--json"],
                    ["raytracer-app", "lesson", "atomics", "--backend", "cuda", "--counters", "--json"]]
    assert script.lesson_plan("cuda", 5, ["reduction"], counters=False)[0][-3:] == ["--repeats", "5", "--json"]
    with pytest.raises(SystemExit):
        script.main(["--out", str(tmp_path / "out"), "--lessons", "nope"])
