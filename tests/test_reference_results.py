"""Shipped GPU reference results (issue 20): the loader, the panels' and the sphere count curve's dashed
ghosts labelled with the device, the app without any shipped files, and the script that makes them. The
files here are the hand-made fixture under tests/data/reference-results/ (not measurements)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from kernels.errors import InputError
from raytracer_app.gui.common import reference_results
from tests.test_gui import WAIT, make_window, settings_dir, wait_frame  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "reference-results"


@pytest.fixture
def shipped(monkeypatch):
    monkeypatch.setattr(reference_results, "REFERENCE_DIR", FIXTURE)
    return FIXTURE


def test_listing_names_each_device_from_its_file_and_reads_nothing():
    found = reference_results.listed("reduction", FIXTURE)
    assert [label for label, _ in found] == ["H100", "H200"]
    assert [label for label, _ in reference_results.listed("spheres", FIXTURE)] == ["H100"]
    assert reference_results.listed("hashtable", FIXTURE) == []
    assert reference_results.listed("reduction", FIXTURE / "missing") == []
    assert "no reference results shipped for hashtable" in reference_results.none_text("hashtable")
    assert reference_results.file_name("NVIDIA H100 80GB HBM3", "reduction") == "nvidia-h100-80gb-hbm3-reduction.json"


def test_loading_validates_the_file_and_its_target(tmp_path):
    ref = reference_results.load(FIXTURE / "nvidia-h200-reduction.json", "reduction")
    assert ref.label == "H200" and ref.result.device["name"] == "NVIDIA H200"
    assert "H200 reference: NVIDIA H200, 2026-11-24, 4 row(s) (raytracer-app bench reduction" in ref.describe()
    with pytest.raises(InputError, match="hold reduction rows, not histogram"):
        reference_results.load(FIXTURE / "nvidia-h200-reduction.json", "histogram")
    bad = tmp_path / "nvidia-h100-reduction.json"
    bad.write_text('{"schema": "raytracer-app/bench-result", "version": 1}')
    with pytest.raises(InputError, match="lacks the header"):
        reference_results.load(bad, "reduction")
    curve = reference_results.curve_points(reference_results.load(FIXTURE / "nvidia-h100-80gb-hbm3-spheres.json",
                                                                  "spheres"))
    assert sorted(curve) == ["constant", "global"] and [n for n, _ in curve["global"]] == [20, 1000, 2340]


def test_a_panel_shows_a_device_reference_as_labelled_ghost_bars(qtbot, make_window, cpu_backend, shipped):
    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    picker = panel.reference
    assert picker.isEnabled()
    assert [picker.itemText(i) for i in range(picker.count())] == [
        "no GPU reference", "show H100 reference", "show H200 reference"]
    said = []
    panel.message.connect(said.append)
    picker.setCurrentText("show H100 reference")
    chart = panel.chart
    assert chart.reference_points == 3  # the timed rows; the skipped numpy row has no time
    ticks = chart.getPlotItem().getAxis("bottom").categories  # (drawn fitted to the bars: chart.bar_label)
    assert ticks == ["warp-shuffle (H100)", "best (H100)", "cub-reduce (H100)"]  # labelled with the device
    assert any("H100 reference" in label.text for _, label in chart.legend.items)
    assert "H100 reference: NVIDIA H100 80GB HBM3" in said[-1]
    picker.setCurrentText("no GPU reference")
    assert chart.reference_points == 0 and chart.bar_count() == 0


def test_reference_points_in_an_n_sweep_and_beside_own_bars(qtbot):
    from kernels.harness.rows import Row
    from kernels.timing import Timing
    from raytracer_app.gui.common.charts import BenchChart

    ref = reference_results.load(FIXTURE / "nvidia-h100-80gb-hbm3-reduction.json", "reduction")
    chart = BenchChart()
    qtbot.addWidget(chart)
    chart.set_reference(ref.result.rows, "H100 reference")
    chart.add(Row("numpy", "sum", "int32", 1 << 20, "cpu", "test", timing=Timing((1.0, 1.1), "wall"),
                        gbps=4.2, verified="yes"))
    ticks = chart.getPlotItem().getAxis("bottom").categories  # (drawn fitted to the bars: chart.bar_label)
    assert ticks == ["numpy", "warp-shuffle (H100)", "best (H100)", "cub-reduce (H100)"] and chart.bar_count() == 1
    chart.reset("n", "GB/s")
    assert chart.reference_points == 3  # at N = 16M, one per variant


def test_panels_without_shipped_results_say_so(qtbot, make_window, cpu_backend, shipped):
    w = make_window(cpu_backend)
    picker = w.panels["Histogram"].reference
    assert not picker.isEnabled() and "no reference results shipped for histogram" in picker.toolTip()


def test_the_app_without_any_reference_folder(qtbot, make_window, cpu_backend, monkeypatch, tmp_path):
    monkeypatch.setattr(reference_results, "REFERENCE_DIR", tmp_path / "none")
    w = make_window(cpu_backend)
    for panel in w.panels.values():
        assert not panel.reference.isEnabled() and "no reference results shipped" in panel.reference.toolTip()


def test_a_damaged_shipped_file_is_said_and_nothing_drawn(qtbot, make_window, cpu_backend, monkeypatch, tmp_path):
    shutil.copy(FIXTURE / "nvidia-h200-reduction.json", tmp_path / "nvidia-h200-reduction.json")
    (tmp_path / "nvidia-h100-reduction.json").write_text("{not json")
    monkeypatch.setattr(reference_results, "REFERENCE_DIR", tmp_path)
    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    said = []
    panel.message.connect(said.append)
    panel.reference.setCurrentText("show H100 reference")
    assert "cannot show the reference" in said[-1] and panel.reference.currentIndex() == 0
    assert panel.chart.reference_points == 0


def test_the_count_curve_shows_the_reference_curve(qtbot, make_window, cpu_backend, shipped, monkeypatch):
    from raytracer_app.gui.render import count_curve

    monkeypatch.setattr(count_curve, "CPU_COUNTS", (20, 40))
    w = make_window(cpu_backend)
    wait_frame(qtbot, w)
    dialog = w.sphere_count_curve()
    with qtbot.waitSignal(dialog.finished_run, timeout=WAIT):
        pass
    dialog.reference.setCurrentText("show H100 reference")
    labels = {label.text for _, label in dialog.legend.items}
    assert {"global (H100)", "constant (H100)", "cpu", "cpu-tiles"} <= labels
    xs, ys = dialog.reference_items[0].getOriginalDataset()
    assert list(xs) == [20, 1000, 2340] and all(y > 0 for y in ys)
    dialog.reference.setCurrentText("no GPU reference")
    assert dialog.reference_items == [] and {label.text for _, label in dialog.legend.items} == {"cpu", "cpu-tiles"}
    dialog.close()


def test_the_script_is_registered_and_plans_the_runs(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    from registry import SCRIPTS

    import reference_results as script

    assert any(s.file == "reference_results.py" for s in SCRIPTS)
    plan = script.plan("cuda", 20)
    targets = [cmd[cmd.index("bench") + 1] for cmd in plan]
    assert targets == ["reduction", "histogram", "hashtable", "spheres"]
    raytrace = plan[-1]
    assert raytrace[raytrace.index("--sizes") + 1] == "20,100,1000,2340,10000,100000,1000000"
    assert all("--json" in cmd and "--backend" in cmd for cmd in plan)
    assert script.plan("cuda", None)[-1][-3:] == ["--repeats", "5", "--json"]  # the window's curve's repeats
    assert "--repeats" not in script.plan("cuda", None)[0]  # the others: bench's own default


@pytest.mark.parametrize("target", ["reduction", "histogram", "hashtable", "spheres"])
def test_the_shipped_files_load_and_name_an_h100_and_an_h200(target):
    # the real files under assets/reference-results/, made on the GPU machines (not the fixture)
    found = reference_results.listed(target)
    assert [label for label, _ in found] == ["H100", "H200"]
    for label, path in found:
        ref = reference_results.load(path, target)
        assert label in ref.result.device["name"] and ref.result.rows


def test_the_shipped_references_are_found_where_the_app_ships_them():
    """The panels' reference choice lists the files in assets/reference-results/ (a wrong folder left every
    panel with 'no GPU reference' and no error)."""
    assert reference_results.REFERENCE_DIR.is_dir()
    assert [label for label, _ in reference_results.listed("reduction")] == ["H100", "H200"]
