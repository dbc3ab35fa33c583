"""The window in everyday use (issue 9): continuous rendering across tabs, typed Julia c values, preset
labels, a remembered scene file, per-backend settings, Stop in the simulator, controls that cannot act,
charts and layout. pytest-qt, offscreen; QSettings in a temp dir; no timing asserts."""

from __future__ import annotations

import csv

import numpy as np
import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtCore import Qt

from tests.test_gui import WAIT, make_window, preset, settings_dir, wait_frame  # noqa: F401


def frames_of(w, variant: str) -> int:
    return sum(r.variant == variant for r in w.log.rows)


# ---------------------------------------------------------------------------------------------- rendering
def test_continuous_rendering_follows_the_visible_tab(qtbot, make_window, cpu_backend):
    preset(**{"render/size_spheres": "64x64", "render/size_julia": "48x40"})
    w = make_window(cpu_backend)
    wait_frame(qtbot, w)
    w.continuous_action.setChecked(True)
    start = frames_of(w, "spheres-cpu-tiles")
    qtbot.waitUntil(lambda: frames_of(w, "spheres-cpu-tiles") >= start + 3, timeout=WAIT)
    w.view.select("julia")  # a click on the Julia tab
    julia = frames_of(w, "julia-cpu-simd")
    qtbot.waitUntil(lambda: frames_of(w, "julia-cpu-simd") >= julia + 3, timeout=WAIT)  # the loop goes on there
    assert w.status["size"].text() == "48x40"  # the status line describes the visible tab
    assert w.continuous_action.isChecked()
    w.view.select("spheres")
    spheres = frames_of(w, "spheres-cpu-tiles")
    qtbot.waitUntil(lambda: frames_of(w, "spheres-cpu-tiles") >= spheres + 3, timeout=WAIT)
    assert w.status["size"].text() == "64x64"
    w.continuous_action.setChecked(False)


def test_fps_is_shown_below_one_frame_per_second_and_about_names_the_running_qt():
    from PyQt6.QtCore import qVersion

    from raytracer_app.gui.common.dialogs import about_text
    from raytracer_app.gui.shell.timing_log import FpsMeter

    meter = FpsMeter(window=1.0)
    for t in (0.0, 2.5, 5.0):  # a frame every 2.5 s
        meter.tick(t)
    assert meter.fps() == pytest.approx(1 / 2.5)
    assert f"<td>{qVersion()}</td>" in about_text()


# ---------------------------------------------------------------------------------------------- Julia c boxes
def _type(qtbot, box, text: str, enter: bool = True) -> None:
    line = box.spin.lineEdit()
    box.spin.setFocus()
    line.selectAll()
    qtbot.keyClicks(line, text)
    if enter:
        qtbot.keyClick(line, Qt.Key.Key_Return)


def test_typed_c_values_keep_sign_and_five_decimals(qtbot, make_window, cpu_backend):
    preset(**{"render/size_julia": "32x32", "view/tab": "julia"})
    w = make_window(cpu_backend)
    wait_frame(qtbot, w, "julia")
    c = w.controls
    _type(qtbot, c.c_re, "-0", enter=False)
    assert c.c_re.spin.lineEdit().text().startswith("-0")  # not reformatted while typing
    _type(qtbot, c.c_re, "-0.7")
    assert w.model.julia.c.real == pytest.approx(-0.7)
    assert c.c_re.slider.value() == -700  # the slider follows the box
    _type(qtbot, c.c_im, "0.27015")
    assert w.model.julia.c.imag == pytest.approx(0.27015, abs=1e-12)
    assert c.c_im.slider.value() == 270
    _type(qtbot, c.c_im, "-1.23456")
    assert w.model.julia.c == pytest.approx(complex(-0.7, -1.23456))
    assert c.c_im.value() == pytest.approx(-1.23456)
    qtbot.waitUntil(lambda: w.last["julia"][1].params.c == complex(-0.7, -1.23456), timeout=WAIT)  # rendered


# ---------------------------------------------------------------------------------------------- labels, scene file
def test_preset_labels_say_custom_once_a_value_differs(qtbot, make_window, cpu_backend):
    from kernels.spheres.scene import presets

    from raytracer_app.gui.render.controls import CUSTOM
    from raytracer_app.gui.render.models import JULIA_PRESETS

    preset(**{"render/size_spheres": "32x32", "render/size_julia": "32x32"})
    w = make_window(cpu_backend)
    c = w.controls
    rabbit = next(name for name in JULIA_PRESETS if "rabbit" in name)
    w.model.apply_julia_preset(rabbit)
    assert c.julia_presets.currentText() == rabbit
    c.c_re.setValue(-0.2)
    c.c_re.valueChanged.emit(-0.2)  # what moving the slider does
    assert c.julia_presets.currentText() == CUSTOM
    # a scene preset opened as a file shows its name; another count is a random scene: custom
    name, path = list(presets().items())[-1]
    assert c.presets.currentText() == CUSTOM  # a random scene
    assert c.open_scene(path)
    assert c.presets.currentText() == name and str(path) in c.scene_label.text()
    first, first_path = next(iter(presets().items()))
    assert c.open_scene(first_path) and c.presets.currentText() == first
    w.model.set_sphere_count(5)
    assert c.presets.currentText() == CUSTOM


def test_scene_file_is_remembered_across_restarts_or_the_user_is_told(qtbot, make_window, cpu_backend, tmp_path):
    from kernels.spheres.scene import generate_scene, save_scene

    preset(**{"render/size_spheres": "32x32"})
    path = tmp_path / "mine.json"
    save_scene(generate_scene(7, 3), path)
    w = make_window(cpu_backend)
    assert w.controls.open_scene(str(path))
    w.close()
    qtbot.waitUntil(lambda: w.render_thread.isFinished(), timeout=WAIT)
    w2 = make_window(cpu_backend)
    assert w2.model.scene_path == str(path) and not w2.model.scene_is_random
    np.testing.assert_allclose(w2.model.scene.spheres, generate_scene(7, 3).spheres, rtol=1e-6)
    w2.close()
    qtbot.waitUntil(lambda: w2.render_thread.isFinished(), timeout=WAIT)
    path.unlink()
    w3 = make_window(cpu_backend)
    assert w3.model.scene_is_random
    assert "could not be reloaded" in w3.statusBar().currentMessage() and "mine.json" in w3.statusBar().currentMessage()


# ---------------------------------------------------------------------------------------------- per backend
def test_settings_are_kept_per_backend(qtbot, make_window, cpu_backend, cuda_backend):
    from raytracer_app.gui.common.sim_limits import SIM_DEFAULT_SIDE, SIM_DEFAULT_SPHERES, SIM_MAX_SPHERES, sim_default_n, sim_max_n

    if not cuda_backend.is_simulator:
        pytest.skip("this session runs real CUDA, not the simulator")
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    w.controls.count.spin.setValue(2000)
    w.panels["Reduction"].n.setValue(100_000_000)
    w.close()
    qtbot.waitUntil(lambda: w.render_thread.isFinished(), timeout=WAIT)
    sim = make_window(cuda_backend)
    assert sim.model.scene.count == SIM_DEFAULT_SPHERES <= SIM_MAX_SPHERES
    assert sim.controls.count.maximum() == SIM_MAX_SPHERES  # the typed box; the slider is logarithmic
    assert sim.model.sizes["spheres"] == (SIM_DEFAULT_SIDE, SIM_DEFAULT_SIDE)
    reduction = sim.panels["Reduction"]
    assert reduction.n.value() == sim_default_n(reduction.spec) and reduction.n.maximum() == sim_max_n(reduction.spec)
    assert reduction.sim_note.isVisibleTo(reduction)  # timings marked as meaningless for a GPU
    sim.close()
    qtbot.waitUntil(lambda: sim.render_thread.isFinished(), timeout=WAIT)
    back = make_window(cpu_backend)
    assert back.model.scene.count == 2000 and back.panels["Reduction"].n.value() == 100_000_000
    # the same when the backend is switched inside the window
    back.controls._backend_chosen("sim")
    assert back.model.scene.count <= SIM_MAX_SPHERES and back.panels["Reduction"].n.value() == sim_default_n(reduction.spec)
    back.controls._backend_chosen("cpu")
    assert back.model.scene.count == 2000 and back.panels["Reduction"].n.value() == 100_000_000


def test_stop_ends_a_long_simulated_kernel(qtbot, make_window, cuda_backend):
    """A render of 64 spheres at 128x128 runs for tens of seconds in the simulator, inside one kernel;
    Cancel ends its child process, and the frame never arrives. The same for a benchmark Run's Stop."""
    if not cuda_backend.is_simulator:
        pytest.skip("this session runs real CUDA, not the simulator")
    preset("sim", **{"render/size_spheres": "128x128", "spheres/count": 64})
    w = make_window(cuda_backend)
    qtbot.waitUntil(lambda: w.cancel_button.isVisible() and w.worker.sim.running(), timeout=WAIT)
    assert "rendering spheres 128x128 on sim" in w.busy_label.text() and " s" in w.busy_label.text()
    process = w.worker.sim._proc
    with qtbot.waitSignal(w.worker.cancelled, timeout=WAIT):
        w.cancel_button.click()
    assert not process.is_alive()
    assert "spheres" not in w.last or w.last["spheres"][0].preview  # the fast start's preview, no kernel frame
    assert not w.cancel_button.isVisible() or w.work is None
    # a benchmark run: Stop ends the child that runs it
    panel = w.panels["Reduction"]
    panel.set_variants({"sequential"})
    panel.n.setValue(panel.n.maximum())
    assert panel.run()
    qtbot.waitUntil(lambda: panel.worker.sim.running(), timeout=WAIT)
    process = panel.worker.sim._proc
    with qtbot.waitSignal(panel.runFinished, timeout=WAIT) as finished:
        panel.stop()
    assert finished.args == [True] and not process.is_alive()


@pytest.mark.slow
def test_simulator_rows_appear_as_they_finish_and_stop_keeps_them(qtbot, make_window, cuda_backend):
    """Issue 35: a simulator run showed nothing until it ended, and Stop threw the finished rows away. Each
    row now reaches the table and the chart as it finishes, and Stop keeps them (saved, marked partial)."""
    import json

    if not cuda_backend.is_simulator:
        pytest.skip("this session runs real CUDA, not the simulator")
    preset("sim", **{"render/size_spheres": "8x8", "spheres/count": 2})
    w = make_window(cuda_backend)
    panel = w.panels["Reduction"]
    panel.set_variants({"sequential", "interleaved-strided", "first-add-load"})
    panel.show_peak.setChecked(False)
    panel.sweep.setCurrentText("sweep N")  # 1024, then 4096: six rows
    panel.n.setValue(4096)
    panel.repeats.setValue(1)
    assert panel.run()
    qtbot.waitUntil(lambda: len(panel.rows) >= 1, timeout=WAIT)
    assert panel.busy() and panel.table.rowCount() == len(panel.rows)  # shown while the run goes on
    assert panel.chart.line_count() >= 1
    with qtbot.waitSignal(panel.runFinished, timeout=WAIT) as finished:
        panel.stop()
    kept = len(panel.rows)
    assert finished.args == [True] and 1 <= kept < 6
    assert panel.table.measured_count() == kept and f"stopped after {kept} row(s), kept" in panel.status.text()
    saved = json.loads(panel.results.last_path.read_text())
    assert saved["partial"] is True and len(saved["rows"]) == kept


def test_restart_switches_the_simulator_and_saves_the_choice(qtbot, make_window, cpu_backend):
    from kernels.backend import simulator_active

    from raytracer_app.gui.common.settings import Keys, make_settings

    w = make_window(cpu_backend)
    want = "auto" if simulator_active() else "sim"
    assert ("without" in w.restart_action.text()) == simulator_active()
    w.restart_switching_simulator()
    qtbot.waitUntil(lambda: w.render_thread.isFinished(), timeout=WAIT)
    assert w.restart_argv[-2:] == ["--backend", want] and "raytracer_app" in w.restart_argv
    assert make_settings().value(Keys.BACKEND) == want


def test_run_gui_restarts_the_app_with_the_other_backend(qtbot, monkeypatch):
    import sys

    from PyQt6.QtCore import QTimer
    from PyQt6.QtWidgets import QApplication

    import raytracer_app.gui.shell.restart as restart
    from kernels.backend import simulator_active
    from raytracer_app.gui import run_gui
    from raytracer_app.gui.shell.main_window import MainWindow

    preset(**{"render/size_spheres": "32x32", "backend/name": "cpu"})
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # run_gui installs its own
    executed = []
    monkeypatch.setattr(restart, "exec_restart", executed.append)

    def restart_when_shown():
        for w in QApplication.topLevelWidgets():
            if isinstance(w, MainWindow) and w.isVisible():
                w.restart_action.trigger()
                return
        QTimer.singleShot(20, restart_when_shown)

    QTimer.singleShot(0, restart_when_shown)
    guard = QTimer()  # never hang the test run
    guard.setSingleShot(True)
    guard.timeout.connect(QApplication.quit)
    guard.start(WAIT)
    try:
        run_gui("cpu")
    finally:
        guard.stop()
    assert len(executed) == 1 and executed[0][-1] == ("auto" if simulator_active() else "sim")


def test_backend_option_alone_opens_the_gui(monkeypatch):
    import raytracer_app.gui
    from raytracer_app import cli

    calls = []
    monkeypatch.setattr(raytracer_app.gui, "run_gui", lambda backend, device: calls.append((backend, device)) or 0)
    assert cli.main(["--backend", "cpu"]) == 0
    assert calls == [("cpu", None)]


# ---------------------------------------------------------------------------------------------- controls, charts
def test_launch_controls_are_disabled_when_no_selected_variant_takes_them(qtbot, make_window, cpu_backend):
    w = make_window(cpu_backend)
    for panel in w.panels.values():
        panel.default_launch.setChecked(False)
        assert not panel.block.isEnabled() and not panel.grid_sm.isEnabled()
        assert "none of the selected variants" in panel.block.toolTip()
        block_item = panel.sweep.model().item(panel.sweep.findText("sweep block size"))
        assert not block_item.isEnabled() and "CPU variants" in block_item.toolTip()


def test_a_row_whose_input_fits_in_the_cache_says_so(qtbot, make_window, cpu_backend):
    from kernels.backend.devices import cpu_last_level_cache_bytes

    cache = cpu_last_level_cache_bytes()
    if not cache:
        pytest.skip("this machine's last-level cache size cannot be read from /sys")
    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    panel.set_variants({"numpy"})
    panel.n.setValue(4096)  # 16 KiB of int32: in any last-level cache
    panel.repeats.setValue(2)
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.run_button.isEnabled(), timeout=WAIT)
    column = panel.columns.index("% copy BW")
    cell = panel.table.item(0, column)
    assert panel.rows[0][0].cache_resident == "yes" and cell.text().endswith("(in cache)")
    assert "fits in the cache" in cell.toolTip()


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_hash_table_shows_operations_per_second(qtbot, make_window, cpu_backend, tmp_path):
    w = make_window(cpu_backend)
    panel = w.panels["Hash table"]
    columns = [panel.table.horizontalHeaderItem(i).text() for i in range(panel.table.columnCount())]
    assert "G ops/s" in columns and "GB/s" not in columns
    assert [panel.metric.itemText(i) for i in range(panel.metric.count())] == ["G ops/s", "ms"]
    panel.n.setValue(4096)
    panel.repeats.setValue(2)
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.run_button.isEnabled(), timeout=WAIT)
    row = panel.rows[0][0]
    rate = row.n / (row.timing.median_ms * 1e-3) / 1e9  # keys per second, from the row's own timing
    shown = float(panel.table.item(0, columns.index("G ops/s")).text())
    assert shown == pytest.approx(rate, rel=0.01, abs=0.01)
    axis = panel.chart.getPlotItem().getAxis("left")
    assert axis.labelText == "G ops/s" and "operations per second" in axis.toolTip()
    assert "x0.001" not in panel.chart.getPlotItem().getAxis("bottom").label.toPlainText()
    assert panel.export_csv(tmp_path / "h.csv")
    with open(tmp_path / "h.csv", newline="") as f:  # the CSV carries the rate in its own columns
        timed = [r for r in csv.DictReader(f) if r["median_ms"]]
    assert timed and all(r["rate_unit"] == "G ops/s" for r in timed)
    assert float(timed[0]["rate"]) == pytest.approx(rate, rel=0.01)


def test_chart_legend_log_axis_percent_header_and_title(qtbot, make_window, cpu_backend, tmp_path):
    import datetime

    from PyQt6.QtGui import QImage

    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    header = panel.table.horizontalHeaderItem(panel.columns.index("% copy BW"))
    assert "copy bandwidth" in header.toolTip() and "cache" in header.toolTip()
    panel.sweep.setCurrentText("sweep N")
    panel.n.setValue(16384)
    panel.repeats.setValue(2)
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.run_button.isEnabled(), timeout=WAIT)
    chart = panel.chart
    labels = [label.text for _, label in chart.legend.items]
    assert any("copy bandwidth" in t for t in labels) and set(panel.selected_variants()) <= set(labels)
    assert getattr(chart.peak_line, "label", None) is None  # no text drawn over the data
    ticks = chart.getPlotItem().getAxis("bottom")._tickLevels[0]
    assert [t for _, t in ticks] == ["1K", "4K", "16K"]  # one short label per swept N
    panel.log_y.setChecked(True)
    assert chart.getPlotItem().getAxis("left").logMode and "(log)" in chart.getPlotItem().getAxis("left").labelText
    title = chart.getPlotItem().titleLabel.text
    for part in ("Reduction", "op sum", "dtype int32", "N 1,024 to 16,384", "cpu", datetime.date.today().isoformat()):
        assert part in title
    assert panel.export_chart(tmp_path / "chart.png") and QImage(str(tmp_path / "chart.png")).height() > 0


def test_file_dialogs_start_in_the_last_folder(tmp_path):
    from raytracer_app.gui.common.file_dialogs import remember, start_in
    from raytracer_app.gui.common.settings import make_settings

    s = make_settings()
    assert start_in(s, "scene.json") == "scene.json"
    remember(s, str(tmp_path / "out.png"))
    assert start_in(s, "scene.json") == str(tmp_path / "scene.json")
    remember(s, "")  # a cancelled dialog changes nothing
    assert start_in(s) == str(tmp_path)


# ---------------------------------------------------------------------------------------------- layout
@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_default_layout_fits(qtbot, make_window, cpu_backend, size, monkeypatch):
    from PyQt6.QtCore import QRect

    from raytracer_app.gui.shell import layout

    monkeypatch.setattr(layout, "available_geometry", lambda window: QRect(0, 0, *size))
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    w.reset_layout()
    qtbot.wait(50)
    assert w.view.width() >= w.width() // 2
    # the Controls' contents fit their dock's width: nothing clipped, no sideways scrolling
    controls = w.controls
    assert controls.widget().minimumSizeHint().width() <= controls.viewport().width()
    panel = w.panels["Reduction"]
    panel.n.setValue(4096)
    panel.repeats.setValue(2)
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.run_button.isEnabled(), timeout=WAIT)
    w.workspaces.select("Benchmarks")  # the panels have their own workspace
    for dock in w.bench_docks:  # make the Reduction panel the visible tab
        if layout.contents(dock) is panel:
            dock.raise_()
    qtbot.wait(50)
    table = panel.table
    needed = sum(table.columnWidth(panel.columns.index(c)) for c in ("variant", "n", "median ms", "GB/s", "verified"))
    assert needed <= table.viewport().width()
    # View > Reset Layout brings back a hidden, floating dock
    w.bench_docks[1].setFloating(True)
    w.controls_dock.hide()
    w.reset_layout()
    assert not w.controls_dock.isHidden() and not w.bench_docks[1].isFloating()
    assert w.view.width() >= w.width() // 2



def test_a_row_skipped_for_lack_of_cuda_offers_the_simulator(qtbot, make_window, cpu_backend):
    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    panel.set_variants({"sequential", "numpy"})  # a GPU variant on the CPU backend: skipped
    panel.n.setValue(4096)
    panel.repeats.setValue(1)
    panel.show_peak.setChecked(False)
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.run_button.isEnabled(), timeout=WAIT)
    assert not panel.sim_offer.isHidden() and "sequential needs CUDA" in panel.sim_offer.text()
    asked = []
    w.restart_switching_simulator = lambda: asked.append(True)
    panel.sim_offer.linkActivated.emit("restart")
    assert asked == [True]
    panel.set_variants({"numpy"})  # nothing skipped: no offer
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.run_button.isEnabled(), timeout=WAIT)
    assert panel.sim_offer.isHidden()
