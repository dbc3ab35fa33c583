"""The shell (issue 35): at 1366x768, 1920x1080 and 2560x1440 every tool owns the window in its workspace and
meets its minimum size there: the render view half the window, each benchmark panel its variants list and its
chart together, the Inspector and the Editor enough lines of code, Lessons every step and the explanation
with no sideways scrolling, Access two variants side by side with a whole warp picture each. A tool floats only on an explicit action, Reset Layout restores everything, and
a layout saved by an older version is discarded. pytest-qt, offscreen (the screen's available geometry stood
in, as tests/test_gui_laptop.py does); no timing asserts."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtCore import QPoint, QRect
from PyQt6.QtWidgets import QDockWidget

from raytracer_app.gui.shell import layout
from tests.test_gui import WAIT, make_window, preset, settings_dir  # noqa: F401
from tests.test_gui_laptop import lines_shown, screen, settle  # noqa: F401

SCREENS = [(1366, 768), (1920, 1080), (2560, 1440)]
CHART_MIN_PX = 250  # a benchmark chart's height, at least
CODE_LINES = {768: 15, 1080: 25, 1440: 25}  # source, PTX and SASS lines in view, at least, by screen height
EDITOR_LINES = {768: 20, 1080: 30, 1440: 30}


def within(widget, outer) -> bool:
    """``widget`` lies wholly inside ``outer``'s visible rectangle."""
    top_left = widget.mapTo(outer, QPoint(0, 0))
    return outer.rect().contains(QRect(top_left, widget.size()))


def no_sideways_scrolling(dock) -> bool:
    area = dock.widget()
    return not area.horizontalScrollBar().isVisible()


def open_tool(qtbot, w, name: str) -> None:
    w.workspaces.select(name)
    qtbot.wait(80)
    assert w.workspaces.current().name == name


@pytest.mark.slow
@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_tool_meets_its_minimum_size(qtbot, make_window, cpu_backend, screen, size):
    screen(*size)
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    settle(qtbot, w)
    available = QRect(0, 0, *size)
    assert available.contains(w.frameGeometry())
    assert w.frameGeometry().size() == available.size()  # the window fills the screen

    # Render: the view at least half the window, the Controls with no sideways scrolling
    open_tool(qtbot, w, "Render")
    assert w.view.isVisible() and w.view.width() >= w.width() // 2 and w.view.height() >= 0.6 * w.height()
    assert w.controls.widget().minimumSizeHint().width() <= w.controls.viewport().width()

    # each benchmark panel: every variant in view beside a chart at least CHART_MIN_PX tall, and the table
    open_tool(qtbot, w, "Benchmarks")
    for dock in w.bench_docks:
        dock.raise_()
        qtbot.wait(30)
        panel = layout.contents(dock)
        title = dock.windowTitle()
        assert panel.isVisible() and no_sideways_scrolling(dock), title
        assert not panel.settings_area.verticalScrollBar().isVisible(), title  # the whole list shows
        assert all(box.isVisible() and within(box, panel.settings_area.viewport()) for box in panel.checks.values()), title
        assert panel.chart.isVisible() and panel.chart.height() >= CHART_MIN_PX, (title, panel.chart.height())
        assert panel.table.isVisible() and panel.table.viewport().height() >= 80, title
        assert within(panel.chart, dock) and within(panel.table, dock)

    # the Inspector: source, PTX and SASS side by side, each with enough lines
    open_tool(qtbot, w, "Inspector")
    qtbot.waitUntil(lambda: w.inspector is not None and w.inspector.isVisible(), timeout=WAIT)
    qtbot.wait(50)
    assert no_sideways_scrolling(w.inspector_dock)
    for view in (w.inspector.panel.source_view, w.inspector.panel.ptx_view, w.inspector.panel.sass_view):
        assert lines_shown(view) >= CODE_LINES[size[1]], (view.objectName(), lines_shown(view))
        assert view.width() >= 0.25 * w.width()

    # the Editor: the code with many lines and a wide line
    open_tool(qtbot, w, "Editor")
    editor = w.variant_editor.editor
    assert editor.isVisible() and no_sideways_scrolling(w.variant_dock)
    assert lines_shown(editor) >= EDITOR_LINES[size[1]] and editor.width() >= 0.8 * w.width()

    # Lessons: every step in view, the chosen step's explanation beside the chart, nothing scrolled sideways
    open_tool(qtbot, w, "Lessons")
    qtbot.waitUntil(lambda: w.lessons is not None and w.lessons.isVisible(), timeout=WAIT)
    qtbot.wait(50)
    lessons = w.lessons
    assert no_sideways_scrolling(w.lessons_dock)
    table = lessons.table
    assert table.rowCount() >= 9 and not table.verticalScrollBar().isVisible()
    assert not table.horizontalScrollBar().isVisible()
    last = table.visualItemRect(table.item(table.rowCount() - 1, 0))
    assert table.viewport().rect().contains(last)  # the last step is in view
    assert lessons.explanation_area.isVisible() and lessons.explanation_area.width() >= 380
    assert not lessons.explanation_area.horizontalScrollBar().isVisible()
    assert lessons.explanation.text() and lessons.chart.isVisible()

    # Access: two variants side by side, each with its source and a whole warp picture
    open_tool(qtbot, w, "Access")
    qtbot.waitUntil(lambda: w.access is not None and w.access.isVisible(), timeout=WAIT)
    qtbot.wait(50)
    assert no_sideways_scrolling(w.access_dock)
    for pane in w.access.panes:
        assert pane.width() >= 0.4 * w.width() and within(pane.picture, w.access_dock)
        assert pane.picture.height() >= pane.picture.minimumHeight() and pane.table.viewport().height() >= 100
    w.access.stop()
    assert available.contains(w.frameGeometry())  # no tool grew the window


def test_a_tool_floats_only_on_an_explicit_action_and_reset_layout_restores(qtbot, make_window, cpu_backend, screen):
    screen(1920, 1080)
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    settle(qtbot, w)
    for dock in layout.tool_docks(w):  # no dragging a dock off (a drag on its title bar moves nothing)
        assert not dock.features() & QDockWidget.DockWidgetFeature.DockWidgetMovable, dock.windowTitle()
        assert dock.features() & QDockWidget.DockWidgetFeature.DockWidgetFloatable  # its float button does
    open_tool(qtbot, w, "Inspector")
    w.inspector_dock.setFloating(True)  # what the float button does
    open_tool(qtbot, w, "Benchmarks")
    assert w.inspector_dock.isFloating() and w.inspector_dock.isVisible()  # a floated tool stays where it is
    w.controls_dock.hide()
    w.reset_layout()
    qtbot.wait(50)
    assert w.workspaces.current().name == "Render" and not w.controls_dock.isHidden()
    assert not any(dock.isFloating() for dock in layout.tool_docks(w))
    assert all(dock.isHidden() for dock in layout.tool_docks(w) if dock is not w.controls_dock)
    assert QRect(0, 0, 1920, 1080).contains(w.frameGeometry())


def test_workspaces_switch_by_shortcut_and_are_kept_with_the_layout(qtbot, make_window, cpu_backend, screen):
    from PyQt6.QtCore import Qt

    screen(1366, 768)
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    settle(qtbot, w)
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=WAIT)
    qtbot.keyClick(w, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert w.workspaces.current().name == "Benchmarks"
    assert "Ctrl+2" in w.workspaces.bar.tabToolTip(1)
    w.resize(780, 700)  # a size the offscreen platform's own 800x800 screen lets restoreGeometry keep
    w.save_settings()
    again = make_window(cpu_backend)
    settle(qtbot, again)
    assert again.workspaces.current().name == "Benchmarks" and not again.view.isVisible()


@pytest.mark.slow
def test_a_layout_saved_by_an_older_version_is_discarded(qtbot, make_window, cpu_backend, screen):
    from raytracer_app.gui.common.settings import Keys

    screen(1366, 768)
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    settle(qtbot, w)
    w.inspector_dock.setFloating(True)  # a layout that would open with a floating tool...
    w.workspaces.select("Inspector")
    w.resize(780, 700)
    w.save_settings()
    preset(**{Keys.LAYOUT.format("1366x768", "version"): 1})  # ...saved by the version before workspaces everywhere
    again = make_window(cpu_backend)
    settle(qtbot, again)
    assert again.workspaces.current().name == "Render" and again.frameGeometry().height() == 768
    assert not any(dock.isFloating() for dock in layout.tool_docks(again))
    preset(**{Keys.LAYOUT.format("1366x768", "version"): 2})  # this version's own is kept
    kept = make_window(cpu_backend)
    qtbot.wait(50)
    assert kept.inspector_dock.isFloating()  # (its workspace left empty, the window shows Render)
