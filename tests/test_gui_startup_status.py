"""Honest start-up (issue 35): while the first kernel frame compiles, the status line says so, with the time so
far and "first run only" when numba's cache does not hold the kernel; on the CPU the first frames take the
twin that compiles quickest while the default one compiles in a child process; a message shown for a while
covers the busy text instead of being drawn over by it. pytest-qt, offscreen; no timing asserts."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from tests.test_gui import WAIT, make_window, preset, settings_dir, wait_frame  # noqa: F401


def test_the_first_frame_says_it_compiles_and_takes_the_quick_twin(qtbot, make_window, cpu_backend, monkeypatch):
    import raytracer_app.gui.render.worker as worker_module

    cached = {"value": False}
    monkeypatch.setattr(worker_module, "twin_cached", lambda kind, twin: cached["value"])
    warmed = []
    monkeypatch.setattr(worker_module.RenderWorker, "_warm_the_rest", lambda self, first: warmed.append(first))
    preset(**{"render/size_spheres": "32x32", "render/size_julia": "32x32"})
    w = make_window(cpu_backend)
    frame = wait_frame(qtbot, w)
    # the window's first kernel frame: the serial row twin (the tiled one compiles in the background, from then on)
    assert frame.meta.get("twin") == "rows-serial" and warmed == ["spheres"]
    assert w.worker.loading(w.model.request()) == ""  # drawn once: later frames are renders again
    # a tab not drawn yet: what its first frame waits for, said as such (asked of the model without switching
    # to the tab, which would draw it at once where numba's cache is warm)
    w.model.tab = "julia"
    julia = w.model.request()
    w.model.tab = "spheres"
    assert w.worker.loading(julia).startswith("compiling the julia CPU kernel (first run only")
    w._work_started(julia)
    assert w.work[0].startswith("compiling the julia CPU kernel (first run only")
    cached["value"] = True  # numba's cache holds it: loading, and no "first run only"
    assert w.worker.loading(julia) == "loading the julia CPU kernel from numba's cache"
    w.work = None


def test_the_busy_label_shows_the_time_so_far_and_a_message_covers_it(qtbot, make_window, cpu_backend):
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    wait_frame(qtbot, w)
    import time

    w.work = ("compiling the spheres CPU kernel (first run only: numba's cache does not hold it yet)",
              time.perf_counter() - 3.2)
    w._show_busy()
    assert w.busy_label.text().startswith("compiling the spheres CPU kernel (first run only")
    assert w.busy_label.text().endswith(" s") and "3." in w.busy_label.text()
    bar = w.statusBar()
    assert w.busy_label.isVisibleTo(w) and w.cancel_button.isVisibleTo(w)
    bar.showMessage("no CUDA GPU found; using the CPU backend", 5000)
    w._show_busy()  # the busy timer's tick: it no longer draws the busy text over the message
    # one message at a time, in one label: the message replaces the busy text (and its Cancel) for its time
    assert bar.shown() == w.busy_label.text() == "no CUDA GPU found; using the CPU backend"
    assert not w.cancel_button.isVisibleTo(w)
    bar.clearMessage()
    assert w.busy_label.text().startswith("compiling the spheres CPU kernel") and w.cancel_button.isVisibleTo(w)
    w.work = None
    w._show_busy()


def test_a_long_message_is_elided_in_the_middle_with_the_whole_text_as_tooltip(qtbot, make_window, cpu_backend):
    """Issue 50 item 16: at 1366 the saved run's path was cut mid-word."""
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    wait_frame(qtbot, w)
    path = "/home/someone/.cache/raytracer-app/results/" + "a-very-long-folder-name/" * 8 + "20261123T221200Z-01-reduction.json"
    w.statusBar().showMessage(f"saved the run to {path}", 5000)
    w.busy_label.resize(300, 20)
    shown = w.busy_label.text_shown()
    assert "…" in shown and shown.startswith("saved the run to") and shown.endswith("reduction.json")
    assert w.busy_label.toolTip() == f"saved the run to {path}"
    assert w.busy_label.fontMetrics().horizontalAdvance(shown) <= 300


def test_a_long_figure_in_the_status_line_never_widens_the_window(qtbot, make_window, cpu_backend):
    """On a GPU the kernel-time text ('..., shipped sm_90 image') widened a window sized for a 1024 px view to
    1700 px while frames were counted: the figures are elided instead, whole in their tooltip with its tip."""
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    wait_frame(qtbot, w)
    w.resize(900, 700)
    qtbot.wait(20)
    width = w.width()
    long_text = "kernel 0.034 ms (cuda-events, shipped sm_90 image, " + "a long explanation " * 20 + ")"
    w.status["kernel"].setText(long_text)
    w.status["kernel"].setToolTip("what the kernel time is")
    qtbot.wait(20)
    assert w.width() == width
    label = w.status["kernel"]
    assert label.text() == long_text and label.text_shown() != long_text
    assert long_text in label.toolTip() and "what the kernel time is" in label.toolTip()
