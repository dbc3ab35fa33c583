"""Issue 50 item 4 (and 7, 17): what must be visible is inside its viewport at 1366x768, 1920x1080 and
2560x1440, not only the window's size: the Access tool's 32 lanes and a source pane that takes the height
beyond them, a benchmark chart's key for numbered bars, and at least 8 rows of the results table with a
GPU reference shown. pytest-qt, offscreen (the screen stood in by layout.available_geometry)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtCore import QMargins, QRect

from raytracer_app.gui.shell import layout
from tests.test_gui import WAIT, make_window, preset, settings_dir, wait_frame  # noqa: F401

SIZES = [(1366, 768), (1920, 1080), (2560, 1440)]


TITLE_BAR = QMargins(4, 24, 4, 4)  # a window manager's frame (openbox's): offscreen windows have none
TRACED_SUMMARY = ("interleaved_strided: grid (32, 1, 1), block (128, 1, 1); the 8 traced blocks of 32 only; sectors / "
                  "request: 3.40; conflicts / request: 2.90; active lanes: 18.79")
TRACED_REQUEST = ("block (0, 0, 0), warp 0, iteration 1; shared ld, 8-byte lanes, 32 of 32 lanes; 4 wavefronts, the "
                  "fewest 2: 2 bank conflict(s)")


def opened(qtbot, make_window, cpu_backend, monkeypatch, size):
    monkeypatch.setattr(layout, "available_geometry", lambda window: QRect(0, 0, *size))
    monkeypatch.setattr(layout, "frame_margins", lambda window: TITLE_BAR)
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    qtbot.waitUntil(lambda: not w.property("fitted_by_guess"), timeout=WAIT)
    return w


def inside(widget, viewport) -> bool:
    """The widget's whole rectangle lies in ``viewport`` (a scroll area's viewport, or the window)."""
    top_left = widget.mapTo(viewport, widget.rect().topLeft())
    return viewport.rect().contains(QRect(top_left, widget.size()))


def rows_shown(table) -> float:
    return table.viewport().height() / table.verticalHeader().defaultSectionSize()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_tools_content_is_on_screen(qtbot, make_window, cpu_backend, monkeypatch, size):
    """One window per size (a window costs a second): each tool's parts that must be seen."""
    w = opened(qtbot, make_window, cpu_backend, monkeypatch, size)
    access_fits(qtbot, w, size)
    editor_and_lessons_fit(qtbot, w)
    panel_with_a_reference_fits(qtbot, w)


def access_fits(qtbot, w, size):
    """The Access tool's 32 lanes, and a source pane that takes the height beyond them."""
    from kernels.access.model import WARP
    from raytracer_app.gui.common.access_picture import MAX_ROW_PX

    view = w.ensure_access()
    w.workspaces.show_dock(w.access_dock)
    for pane in view.panes:  # a trace's texts, two lines each at 1366 px (the screenshot's)
        pane.summary.setText(TRACED_SUMMARY)
        pane.request_text.setText(TRACED_REQUEST)
    qtbot.wait(50)
    viewport = w.access_dock.widget().viewport()
    for pane in view.panes:
        assert inside(pane.picture, viewport), "every lane of the warp picture is on screen"
        assert pane.picture.height() - 8 >= WARP * 8  # 32 rows of at least 8 px
        assert rows_shown(pane.table) >= (6 if size[1] < 1080 else 8)  # at 768 px the lanes come first
        if size[1] >= 1080:  # the height beyond the picture's need goes to the source
            lower = pane.split.widget(1)
            assert pane.picture.height() <= WARP * MAX_ROW_PX + 8
            assert lower.height() == lower.maximumHeight(), "the picture's part stops at what it needs"
            assert pane.split.sizes()[0] + lower.height() + pane.split.handleWidth() == pane.split.height()


def panel_with_a_reference_fits(qtbot, w):
    """A benchmark panel with the shipped reference: 8 table rows, the chart, its legend and key."""
    w.workspaces.select("Benchmarks")
    panel = w.panels["Reduction"]
    if panel.reference.count() < 2:
        return  # no GPU reference shipped for reduction
    panel.reference.setCurrentIndex(1)  # 23 ghost rows and bars of the shipped H100 run
    qtbot.wait(50)
    panel.chart.grab()
    qtbot.wait(50)
    assert inside(panel.table, w) and rows_shown(panel.table) >= 8
    assert inside(panel.chart, w)
    chart = panel.chart
    plot_rect = chart.getPlotItem().sceneBoundingRect()
    if chart.getPlotItem().getAxis("bottom").numbered:
        assert chart.key.isVisible() and plot_rect.contains(chart.key.sceneBoundingRect())
        assert chart.key_text().count("(H100)") == len(chart.names)
    assert plot_rect.contains(chart.legend.sceneBoundingRect())


def test_a_run_far_below_its_reference_gets_a_log_axis(qtbot, make_window, cpu_backend, monkeypatch):
    """Item 6: a CPU run beside an H100 reference drew its own bars at about 1% of the scale."""
    from kernels.harness import bench
    from kernels.timing import Timing

    w = opened(qtbot, make_window, cpu_backend, monkeypatch, SIZES[0])
    panel = w.panels["Reduction"]
    if panel.reference.count() < 2:
        pytest.skip("no GPU reference shipped for reduction")
    n = 1 << 22
    panel.chart.add(bench.Row("numpy", "sum", "int32", n, "cpu", "test", timing=Timing((4.0,), "wall"),
                              verified="yes", gbps=4 * n / 4e-3 / 1e9))
    assert not panel.log_y.isChecked()
    panel.reference.setCurrentIndex(1)
    assert panel.chart.reference_spread() > panel.FAR_BELOW_REFERENCE
    assert panel.log_y.isChecked() and panel.chart.log_y and "log y axis on" in panel.status.text()


def editor_and_lessons_fit(qtbot, w):
    """The editor's Run row, message and 15 lines of code; the Lessons table and chart."""
    w.workspaces.show_dock(w.variant_dock)
    qtbot.wait(50)
    editor = w.variant_editor
    for widget in (editor.run_button, editor.stop_button, editor.status, editor.editor):
        assert widget.isVisible() and inside(widget, w), widget
    assert editor.editor.viewport().height() >= 15 * editor.editor.fontMetrics().lineSpacing()
    lessons = w.ensure_lessons()
    w.workspaces.show_dock(w.lessons_dock)
    qtbot.wait(50)
    viewport = w.lessons_dock.widget().viewport() if hasattr(w.lessons_dock.widget(), "viewport") else w
    for widget in (lessons.table, lessons.chart):
        assert widget.isVisible() and inside(widget, viewport), widget
    assert rows_shown(lessons.table) >= 5
