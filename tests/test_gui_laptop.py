"""The window on a laptop (issue 20): every tool fits a 1366x768 screen with its frame, layouts are kept per
screen size, the wheel never changes a setting by accident, typed values are kept, and the readouts say
what applies. pytest-qt, offscreen (the screen's available geometry is stood in by monkeypatching
layout.available_geometry); QSettings in a temp dir; no timing asserts."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtCore import QRect

from raytracer_app.gui.shell import layout
from tests.test_gui import WAIT, make_window, preset, settings_dir, wait_frame  # noqa: F401

LAPTOP, WIDE = (1366, 768), (1920, 1080)


@pytest.fixture
def screen(monkeypatch):
    """``screen(w, h)`` makes the screen's available geometry w x h for windows opened afterwards."""
    def set_screen(w, h):
        monkeypatch.setattr(layout, "available_geometry", lambda window: QRect(0, 0, w, h))

    return set_screen


def settle(qtbot, w):
    """Wait until the window has been fitted with its real frame (check_fit runs after show)."""
    qtbot.waitUntil(lambda: not w.property("fitted_by_guess"), timeout=WAIT)
    qtbot.wait(50)


def lines_shown(view) -> float:
    return view.viewport().height() / view.fontMetrics().lineSpacing()


# ---------------------------------------------------------------------------------------------- layout
def test_every_tool_fits_1366x768_with_the_inspector_open(qtbot, make_window, cpu_backend, screen):
    screen(*LAPTOP)
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    settle(qtbot, w)
    available = QRect(0, 0, *LAPTOP)
    assert available.contains(w.frameGeometry())
    assert w.frameGeometry().width() == LAPTOP[0] and w.frameGeometry().height() == LAPTOP[1]  # the whole screen
    assert w.workspaces.current().name == "Render"
    assert w.view.isVisible() and w.controls_dock.isVisible()
    w.inspector_dock.toggleViewAction().trigger()  # View > Inspector
    qtbot.waitUntil(lambda: w.inspector is not None and w.inspector_dock.isVisible(), timeout=WAIT)
    qtbot.wait(50)
    assert w.workspaces.current().name == "Inspector"
    assert w.minimumSizeHint().height() <= LAPTOP[1] and w.minimumSize().height() <= LAPTOP[1]
    assert available.contains(w.frameGeometry())  # opening a tool never grows the window
    status = w.statusBar()
    assert status.isVisible() and status.geometry().bottom() < w.height()
    panel = w.inspector.panel
    for view in (panel.source_view, panel.ptx_view, panel.sass_view):
        assert lines_shown(view) >= 15
    w.workspaces.select("Benchmarks")
    for dock in w.bench_docks:
        dock.raise_()
        qtbot.wait(20)
        chart = layout.contents(dock).chart
        assert chart.isVisible() and chart.height() >= 250, dock.windowTitle()
    assert available.contains(w.frameGeometry())
    w.reset_layout()  # View > Reset Layout: back to a fitting window, the Render workspace
    qtbot.wait(50)
    assert available.contains(w.frameGeometry()) and w.workspaces.current().name == "Render"
    assert not w.inspector_dock.isVisible()


def test_a_layout_saved_on_a_wide_screen_is_not_applied_on_a_laptop(qtbot, make_window, cpu_backend, screen):
    screen(*WIDE)
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    settle(qtbot, w)
    # a size the offscreen platform's own 800x800 screen lets restoreGeometry keep
    w.resize(780, 700)
    w.save_settings()
    screen(*LAPTOP)
    small = make_window(cpu_backend)
    settle(qtbot, small)
    assert QRect(0, 0, *LAPTOP).contains(small.frameGeometry())
    assert (small.width(), small.height()) != (780, 700)  # not applied
    assert small.frameGeometry().height() == LAPTOP[1]
    screen(*WIDE)  # back on the wide screen its own layout comes back
    again = make_window(cpu_backend)
    qtbot.wait(50)
    assert again.height() == 700  # (its width: at least the docks' minimum)


def test_a_saved_layout_that_does_not_fit_is_rejected(qtbot, make_window, cpu_backend, screen):
    screen(*LAPTOP)
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    settle(qtbot, w)
    w.resize(1366, 1000)  # taller than the screen (as a dock's minimum size once made it)
    w.save_settings()
    again = make_window(cpu_backend)
    settle(qtbot, again)
    assert QRect(0, 0, *LAPTOP).contains(again.frameGeometry())


@pytest.mark.slow
@pytest.mark.parametrize("value", ["text", ["a", "list"], 7, b"\x00\x01 not a saved geometry"])
def test_a_damaged_saved_layout_gives_the_default(qtbot, make_window, cpu_backend, screen, value):
    from raytracer_app.gui.common.settings import Keys

    screen(*LAPTOP)
    preset(**{"render/size_spheres": "16x16", Keys.LAYOUT.format("1366x768", "geometry"): value,
              Keys.LAYOUT.format("1366x768", "state"): value, Keys.LAYOUT.format("1366x768", "version"): "maybe",
              Keys.LAYOUT.format("1366x768", "workspace"): value})
    w = make_window(cpu_backend)
    settle(qtbot, w)
    assert QRect(0, 0, *LAPTOP).contains(w.frameGeometry()) and w.workspaces.current().name == "Render"


def test_a_workspace_is_one_call(qtbot, make_window, cpu_backend, screen):
    from PyQt6.QtWidgets import QDockWidget, QLabel

    screen(*LAPTOP)
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    dock = QDockWidget("Notes", w)
    dock.setObjectName("dock-Notes")
    dock.setWidget(QLabel("a note"))
    w.addDockWidget(layout.Qt.DockWidgetArea.RightDockWidgetArea, dock)
    w.workspaces.add("Notes", [dock])
    w.workspaces.select("Notes")
    assert dock.isVisible() and not w.view.isVisible() and not w.controls_dock.isVisible()
    w.workspaces.select("Render")
    assert not dock.isVisible() and w.view.isVisible()


# ---------------------------------------------------------------------------------------------- by accident
def _wheel(widget, steps: int = -1) -> None:
    from PyQt6.QtCore import QPoint, QPointF, Qt
    from PyQt6.QtGui import QWheelEvent
    from PyQt6.QtWidgets import QApplication

    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre)), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_past_unfocused_inputs(qtbot, make_window, cpu_backend, screen):
    screen(*LAPTOP)
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    w.workspaces.select("Benchmarks")
    panel = w.panels["Reduction"]
    panel.settings_area.setFixedHeight(150)  # the settings scroll (a window lower than the list)
    qtbot.wait(50)
    op, repeats = panel.options["op"], panel.repeats
    bar = panel.settings_area.verticalScrollBar()
    assert bar.maximum() > 0
    before = (op.currentIndex(), repeats.value(), w.controls.c_re.slider.value(), bar.value())
    for widget in (op, repeats, repeats.lineEdit(), w.controls.c_re.slider):
        assert not widget.hasFocus()
        _wheel(widget)
    assert (op.currentIndex(), repeats.value(), w.controls.c_re.slider.value()) == before[:3]
    assert bar.value() > before[3]  # the area scrolled instead
    assert op.focusPolicy() == repeats.focusPolicy() == layout.Qt.FocusPolicy.StrongFocus
    # a box the user has clicked (focused) still takes the wheel
    w.activateWindow()
    qtbot.waitUntil(lambda: w.isActiveWindow(), timeout=WAIT)
    repeats.setFocus()
    qtbot.waitUntil(repeats.hasFocus, timeout=WAIT)
    _wheel(repeats, steps=1)
    assert repeats.value() == before[1] + 1


def _type(qtbot, box, text: str) -> None:
    line = box.spin.lineEdit()
    box.spin.setFocus()
    qtbot.waitUntil(box.spin.hasFocus, timeout=WAIT)
    line.selectAll()
    qtbot.keyClicks(line, text)


def test_typed_values_are_kept_on_focus_loss_and_tab_change(qtbot, make_window, cpu_backend):
    preset(**{"render/size_julia": "32x32", "render/size_spheres": "32x32", "view/tab": "julia"})
    w = make_window(cpu_backend)
    wait_frame(qtbot, w, "julia")
    w.activateWindow()
    qtbot.waitUntil(lambda: w.isActiveWindow(), timeout=WAIT)
    c = w.controls
    _type(qtbot, c.c_re, "-0.61")  # no Enter
    c.iterations.setFocus()  # the focus moves on (a click elsewhere)
    qtbot.waitUntil(lambda: w.model.julia.c.real == pytest.approx(-0.61), timeout=WAIT)
    _type(qtbot, c.c_im, "0.42")  # no Enter, then the other tab is clicked (a tab bar takes no focus)
    w.view.select("spheres")
    assert w.model.julia.c.imag == pytest.approx(0.42) and w.model.tab == "spheres"
    w.view.select("julia")
    assert c.c_im.value() == pytest.approx(0.42)
    _type(qtbot, c.c_re, "-0.5")  # and a workspace change
    w.workspaces.select("Benchmarks")
    assert w.model.julia.c.real == pytest.approx(-0.5)


# ---------------------------------------------------------------------------------------------- readouts
def test_fps_is_shown_only_while_rendering_continuously(qtbot, make_window, cpu_backend):
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    wait_frame(qtbot, w)
    w.request_render(force=True)
    qtbot.waitUntil(lambda: len(w.log.rows) >= 2, timeout=WAIT)
    assert w.status["fps"].text() == "" and w.status["kernel"].text().startswith("kernel")
    w.continuous_action.setChecked(True)
    qtbot.waitUntil(lambda: w.status["fps"].text().endswith(" fps"), timeout=WAIT)
    w.continuous_action.setChecked(False)
    qtbot.waitUntil(lambda: w.worker.idle(), timeout=WAIT)
    w.request_render(force=True)
    qtbot.waitUntil(lambda: w.status["fps"].text() == "", timeout=WAIT)


def test_continuous_frames_are_timed_a_few_times_a_second_and_the_status_keeps_the_last_timing(
        qtbot, make_window, cpu_backend, monkeypatch):
    import dataclasses

    from kernels.timing import Timing
    from raytracer_app.png import frame_metadata

    import types

    import raytracer_app.gui.shell.main_window as main_window_module

    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    frame = wait_frame(qtbot, w)
    # the window's clock steps 10 ms at each reading: which frames are timed then follows from how many frames
    # came, not from how long this machine took to submit each (a loaded machine delays some submissions)
    clock = types.SimpleNamespace(now=0.0)

    def reading():
        clock.now += 0.01
        return clock.now

    monkeypatch.setattr(main_window_module, "time", types.SimpleNamespace(perf_counter=reading))
    w._timed_at = 0.0
    submitted = []
    submit = w.worker.submit
    monkeypatch.setattr(w.worker, "submit", lambda r: (submitted.append((r.timed, clock.now)), submit(r)))
    w.timed_every_s = 0.2
    w.continuous_action.setChecked(True)
    qtbot.waitUntil(lambda: len(submitted) >= 30 and submitted[-1][1] - submitted[0][1] > 0.5, timeout=WAIT)
    w.continuous_action.setChecked(False)
    qtbot.waitUntil(lambda: w.worker.idle(), timeout=WAIT)
    timed_at = [t for timed, t in submitted if timed]
    assert submitted[0][0] and len(timed_at) < len(submitted)  # the first is timed, most are not
    assert all(b - a >= 0.2 for a, b in zip(timed_at[1:], timed_at[2:]))
    assert len(timed_at) >= 2  # and again once timed_every_s has passed
    # an untimed frame (what a GPU returns for them) keeps the last timed kernel in the status line
    frame, request = w.last["spheres"]
    rows = len(w.log.rows)
    untimed = dataclasses.replace(frame, kernel=None, frame_ms=0.5, frame_timing=Timing((0.5,), "wall"))
    w.continuous_action.setChecked(True)  # the status line follows every frame at its rate
    w._status_at = 0.0
    w._frame_ready(untimed, request)
    w.continuous_action.setChecked(False)
    assert w.status["kernel"].text() == f"kernel {frame.kernel.median_ms:.2f} ms (wall)"
    assert w.status["frame"].text() == f"frame {0.5 + w.display_ms['spheres']:.1f} ms"  # this frame's own time
    assert len(w.log.rows) == rows  # no row without a kernel time
    assert "not timed" in frame_metadata(untimed)["raytracer:kernel_ms"]
    qtbot.waitUntil(lambda: w.worker.idle(), timeout=WAIT)


def test_launch_text_follows_what_applies(qtbot, make_window, cpu_backend, cuda_backend):
    preset(**{"render/size_spheres": "16x16", "render/size_julia": "16x16"})
    cpu = make_window(cpu_backend)
    c = cpu.controls
    assert "no thread blocks" in c.threads.text() and not c.threads.isEnabled() and not c.bx.slider.isEnabled()
    gpu = make_window(cuda_backend)
    c = gpu.controls
    gpu.model.set_block(16, 16)
    assert c.threads.text().startswith("16 x 16 = 256 threads") and c.bx.slider.isEnabled()
    gpu.model.set_tab("julia")
    gpu.model.set_launch("book")
    assert c.threads.text().startswith("1 x 1 = 1 thread per block") and not c.bx.slider.isEnabled()
    gpu.model.set_tab("spheres")  # the book's launch is Julia's only
    assert c.threads.text().startswith("16 x 16")


def test_the_limiter_is_named_only_below_full_occupancy():
    from types import SimpleNamespace

    from raytracer_app.gui.inspector.panel import occupancy_text

    full = SimpleNamespace(blocks_per_sm=8, warps_per_sm=64, max_warps_per_sm=64, percent=100.0, limiter="registers")
    half = SimpleNamespace(blocks_per_sm=4, warps_per_sm=32, max_warps_per_sm=64, percent=50.0, limiter="registers")
    assert "limited by" not in occupancy_text(256, full) and "full occupancy" in occupancy_text(256, full)
    assert "limited by registers" in occupancy_text(256, half)


@pytest.mark.slow
def test_simulator_times_are_marked_and_compare_memory_says_one_thing_at_a_time(qtbot, make_window, cuda_backend):
    if not cuda_backend.is_simulator:
        pytest.skip("a real GPU: its kernel times are real")
    preset("sim", **{"render/size_spheres": "8x8", "spheres/count": 2, "compare/repeats": 1})
    w = make_window(cuda_backend)
    wait_frame(qtbot, w)
    assert w.status["kernel"].text().startswith("simulated kernel")
    w.controls.compare_repeats.setValue(1)
    w.statusBar().showMessage("an older message")
    assert w.compare_memory()
    assert w.statusBar().currentMessage() == ""  # the busy label alone says what runs
    assert "comparing global and constant memory (1 renders each)" in w.busy_label.text()
    qtbot.waitUntil(lambda: w.compare_dialog is not None and w.compare_dialog.isVisible(), timeout=WAIT)
    assert "simulator" in w.statusBar().currentMessage()


def test_a_sweep_says_its_steps_and_time_left():
    from raytracer_app.gui.benchmarks.panel import eta_text

    assert eta_text(10.0, 0, 54) == "" and eta_text(10.0, 54, 54) == ""
    assert eta_text(10.0, 2, 54) == ", about 4 min left"
    assert eta_text(10.0, 5, 10) == ", about 10 s left"


def test_julia_says_when_float64_runs_out_of_precision(cpu_backend):
    from raytracer_app.gui.render.models import RenderModel

    model = RenderModel(cpu_backend)
    said = []
    model.message.connect(said.append)
    model.set_size((256, 256), "julia")
    model.set_julia(center=(-0.1, 0.65), zoom=1e12)
    assert model.julia.precision == "float64" and model.precision_note() == ""
    assert not any("past float64" in text for text in said)
    model.set_julia(zoom=1e15)
    assert "past float64's resolution" in model.precision_note()
    assert sum("past float64" in text for text in said) == 1
    model.set_julia(zoom=2e15)  # said once, not at every step
    assert sum("past float64" in text for text in said) == 1
    model.set_julia(zoom=1.0)
    model.set_precision_mode("float32")
    model.set_julia(zoom=1e6)
    assert "past float32's resolution" in model.precision_note()


def test_gpu_controls_on_the_cpu_lead_to_the_simulator(qtbot, make_window, cpu_backend):
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    c = w.controls
    assert c.sim_link.isVisibleTo(c) and "Restart with the CUDA Simulator" in c.sim_link.text()
    for widget in (c.mem_constant, c.compare, c.bx.slider, c.book_launch):
        assert not widget.isEnabled() and "Restart with the CUDA Simulator" in widget.toolTip()
    asked = []
    w.restart_switching_simulator = lambda: asked.append(True)
    c.sim_link.linkActivated.emit("restart")
    assert asked == [True]


def test_panel_tooltips_give_the_real_reason(qtbot, make_window, cpu_backend):
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    histogram = w.panels["Histogram"]
    histogram.set_variants({"cpu-numpy"})
    tip = histogram.block.toolTip()
    assert "cpu-numpy" in tip and "choose their own work split" in tip
    header = w.panels["Reduction"].table.horizontalHeaderItem(w.panels["Reduction"].columns.index("% copy BW"))
    assert "read-only kernel" in header.toolTip() and "reads and writes" in header.toolTip()


def test_closing_a_workspaces_last_tool_goes_back_to_render(qtbot, make_window, cpu_backend, screen):
    screen(*LAPTOP)
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    w.inspector_dock.toggleViewAction().trigger()  # View > Inspector: its workspace
    qtbot.waitUntil(lambda: w.workspaces.current().name == "Inspector" and w.inspector_dock.isVisible(), timeout=WAIT)
    w.inspector_dock.toggleViewAction().trigger()  # and closed again: not an empty window
    qtbot.waitUntil(lambda: w.workspaces.current().name == "Render", timeout=WAIT)
    assert w.view.isVisible() and w.controls_dock.isVisible()
