"""A benchmark panel against a saved result (issue 25): Load baseline… with a file the CLI wrote on the CPU
backend, a run, the ghost series and the Δ% / verdict columns; every run saved under the cache folder;
Export JSON…; refused files. pytest-qt, offscreen; QSettings in a temp dir; no timing asserts."""

from __future__ import annotations

import json
import statistics

import pytest

pytest.importorskip("pytestqt")

from kernels.harness.compare import VERDICTS
from kernels.io.cache import cache_root
from raytracer_app.cli import main
from raytracer_app.gui.benchmarks.panel import TABLE_COLUMNS
from tests.test_gui import WAIT, make_window, settings_dir  # noqa: F401

N, REPEATS = 4096, 12  # 12 repeats a side: enough for the Mann-Whitney test


def cli_baseline(tmp_path, capsys, target="reduction", variants="numpy,cpu-parallel"):
    path = tmp_path / f"{target}-base.json"
    code = main(["bench", target, "--backend", "cpu", "--n", str(N), "--variants", variants, "--repeats",
                 str(REPEATS), "--json", str(path)])
    assert code == 0, capsys.readouterr().err
    return path


def run_panel(qtbot, panel):
    panel.show_peak.setChecked(False)
    panel.n.setValue(N)
    panel.repeats.setValue(REPEATS)
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.run_button.isEnabled(), timeout=WAIT)


def cell(panel, r: int, column: str) -> str:
    return panel.table.item(r, TABLE_COLUMNS.index(column)).text()


def test_a_cli_baseline_draws_a_ghost_and_fills_delta_and_verdict(qtbot, make_window, cpu_backend, tmp_path, capsys):
    base_path = cli_baseline(tmp_path, capsys)
    doc = json.loads(base_path.read_text())
    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    assert panel.load_baseline(base_path)
    label = f"{doc['device']['name']} @ {(doc['commit'] or 'no commit')[:8]}" + ("+" if doc.get("dirty") else "")
    assert label in panel.status.text()
    run_panel(qtbot, panel)
    names = panel.selected_variants()
    assert sorted(names) == ["cpu-parallel", "numpy"] and panel.table.rowCount() == 2
    # the ghost: one dashed bar per variant, named by the baseline's device and commit in the legend
    assert panel.chart.ghost_count() == 2 and panel.chart.ghost_label == label
    legend = [item[1].text for item in panel.chart.legend.items]
    assert any(label in text for text in legend), legend
    base_median = {r["variant"]: statistics.median(r["samples_ms"]) for r in doc["rows"]}
    for r, (row, _) in enumerate(panel.rows):
        expected = (statistics.median(row.timing.samples_ms) / base_median[row.variant] - 1) * 100
        assert float(cell(panel, r, "Δ%")) == pytest.approx(expected, abs=0.006)
        assert cell(panel, r, "verdict") in VERDICTS
        assert "against" in panel.table.item(r, TABLE_COLUMNS.index("verdict")).toolTip()
    # the run was saved under the cache folder, and Export JSON writes the same rows with their samples
    saved = sorted((cache_root() / "results").glob("*-reduction.json"))
    from raytracer_app.gui.benchmarks.panel_results import home_short

    assert saved and f"saved as {home_short(saved[-1])}" in panel.status.text()  # the folder named, not the name alone
    out = tmp_path / "export.json"
    assert panel.export_json(out)
    exported = json.loads(out.read_text())
    assert exported["schema"] == "raytracer-app/bench-result" and exported["command"] is None
    assert [r["variant"] for r in exported["rows"]] == [row.variant for row, _ in panel.rows]
    assert all(len(r["samples_ms"]) == REPEATS for r in exported["rows"])
    assert json.loads(saved[-1].read_text())["rows"] == exported["rows"]
    # the exported run loads back as a baseline of its own: every row SAME or UNSURE against itself
    assert panel.load_baseline(out)
    assert {cell(panel, r, "Δ%") for r in range(2)} == {"+0.00"}
    assert {cell(panel, r, "verdict") for r in range(2)} <= {"SAME", "UNSURE"}


def test_a_baseline_of_another_target_or_a_bad_file_is_refused(qtbot, make_window, cpu_backend, tmp_path, capsys):
    hist = cli_baseline(tmp_path, capsys, "histogram", "cpu-numpy")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "raytracer-app/bench-result", "version": 9}')
    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    assert not panel.load_baseline(hist)
    assert "holds histogram rows" in panel.status.text()
    assert not panel.load_baseline(bad)
    assert "version 9" in panel.status.text()
    assert panel.results.baseline is None
    assert not panel.export_json(tmp_path / "nothing.json")  # no run yet
    assert "Run first" in panel.status.text()


def test_a_panel_run_in_rounds_saves_its_joined_samples(qtbot, make_window, cpu_backend):
    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    panel.set_variants({"numpy", "cpu-parallel"})
    panel.repeats.setValue(2)
    panel.rounds.setValue(3)  # more rounds than repeats: refused with the window's own words, nothing runs
    assert not panel.run()
    assert "Rounds 3 is more than Repeats 2" in panel.status.text()
    panel.rounds.setValue(4)
    run_panel(qtbot, panel)  # 12 repeats in 4 rounds of 3
    assert panel.job.rounds == 4
    assert "8 step(s)" in panel._running_text and panel.progress.maximum() == 8  # 2 rows x 4 rounds
    assert [len(row.timing.samples_ms) for row, _ in panel.rows] == [REPEATS, REPEATS]
    saved = json.loads(sorted((cache_root() / "results").glob("*-reduction.json"))[-1].read_text())
    assert saved["request"]["rounds"] == 4 and all(len(r["samples_ms"]) == REPEATS for r in saved["rows"])


def test_load_baseline_opens_where_runs_are_saved_and_the_choices_are_remembered(qtbot, make_window, cpu_backend,
                                                                                 tmp_path, capsys, monkeypatch):
    from PyQt6.QtWidgets import QFileDialog

    from raytracer_app.gui.common import reference_results
    from tests.test_reference_results import FIXTURE

    monkeypatch.setattr(reference_results, "REFERENCE_DIR", FIXTURE)
    base_path = cli_baseline(tmp_path, capsys)
    asked = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda parent, title, start, filters: (asked.append(start), (str(base_path), ""))[1]))
    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    assert panel.load_baseline()
    assert asked == [str(cache_root() / "results")]  # not the last export folder
    panel.reference.setCurrentText("show H100 reference")
    w.save_settings()
    again = make_window(cpu_backend)
    panel = again.panels["Reduction"]
    again.workspaces.select("Benchmarks")  # read when the panel is first shown
    qtbot.waitUntil(lambda: panel.results.baseline is not None, timeout=WAIT)
    assert panel.results.baseline_path == str(base_path)
    assert panel.reference.currentText() == "show H100 reference" and panel.table.rowCount() > 0
    base_path.unlink()  # gone by the next start: said, nothing else
    again.save_settings()
    third = make_window(cpu_backend)
    third.workspaces.select("Benchmarks")
    panel = third.panels["Reduction"]
    qtbot.waitUntil(lambda: "gone" in panel.status.text(), timeout=WAIT)
    assert panel.results.baseline is None and panel.reference.currentText() == "show H100 reference"
