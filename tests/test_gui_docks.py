"""The docks of the window on a laptop and a wide screen (issue 20): they get their share of the width back
when the window grows again (unless the user sized them), every benchmark panel fits its dock's default
width, and the shipped GPU reference results show as ghost rows in a panel's table. pytest-qt, offscreen
(the screen's available geometry stood in by tests/test_gui_laptop.py's ``screen``); no timing asserts."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtCore import QPoint, QRect, Qt  # noqa: E402
from PyQt6.QtWidgets import QAbstractScrollArea, QWidget  # noqa: E402

from raytracer_app.gui.shell import layout  # noqa: E402
from tests.test_gui import WAIT, make_window, preset, settings_dir  # noqa: E402,F401
from tests.test_gui_laptop import LAPTOP, WIDE, screen, settle  # noqa: E402,F401


def widths(w) -> tuple[int, int]:
    return w.controls_dock.width(), w.bench_docks[0].width()


def wide_window(qtbot, make_window, cpu_backend, screen):
    """A settled window on a WIDE screen, rendering a 32x32 frame (quick to redraw while it is resized)."""
    screen(*WIDE)
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    settle(qtbot, w)
    return w


def drag_separator(qtbot, w, dx: int) -> None:
    """Drag the separator on the benchmark dock's left edge by ``dx`` pixels, as the user does."""
    dock = w.bench_docks[0]
    y = dock.y() + dock.height() // 2
    x = next(x for x in range(dock.x() - 1, dock.x() - 12, -1) if w.childAt(QPoint(x, y)) is None)
    qtbot.mousePress(w, Qt.MouseButton.LeftButton, pos=QPoint(x, y))
    for step in (dx // 3, 2 * dx // 3, dx):
        qtbot.mouseMove(w, QPoint(x + step, y))
        qtbot.wait(10)
    qtbot.mouseRelease(w, Qt.MouseButton.LeftButton, pos=QPoint(x + dx, y))


def test_docks_get_their_share_back_when_the_window_grows_again(qtbot, make_window, cpu_backend, screen):
    w = wide_window(qtbot, make_window, cpu_backend, screen)
    full = w.size()
    before = widths(w)
    panel = layout.contents(w.bench_docks[0])
    heights = panel.split.sizes()  # settings, chart, table
    assert before[1] >= 0.2 * w.width()  # side by side: the panels have their share
    w.resize(900, 450)  # shrunk (the docks narrow with the window)...
    qtbot.wait(50)
    assert widths(w)[1] < before[1]
    # the heights a small window left under X11 and a window manager: the settings squeezed to a sliver
    # (growing again gave them the same share of the new height)
    panel.split.setSizes([40, 300, 40])
    w.resize(full)  # ...and grown again, as maximizing does
    qtbot.waitUntil(lambda: abs(widths(w)[1] - before[1]) <= 8, timeout=WAIT)
    assert abs(widths(w)[0] - before[0]) <= 8
    assert not layout.DockShares.of(w).dragged
    # and the panel's settings, chart and table their heights (not all the new height to the chart)
    qtbot.waitUntil(lambda: all(abs(a - b) <= 8 for a, b in zip(panel.split.sizes(), heights)), timeout=WAIT)
    # a panel whose handles the user moved keeps its heights
    panel.split.moveSplitter(heights[0] - 40, 1)  # what dragging the handle does
    moved = panel.split.sizes()
    assert panel.split_dragged
    w.resize(1000, 600)
    qtbot.wait(50)
    w.resize(full)
    qtbot.waitUntil(lambda: abs(widths(w)[1] - before[1]) <= 8, timeout=WAIT)
    qtbot.wait(50)
    assert panel.split.sizes() != heights and panel.split.sizes()[0] <= moved[0] + 8
    w.reset_layout()  # View > Reset Layout: the default heights again, and kept from then on
    assert not panel.split_dragged


def test_docks_the_user_sized_keep_their_width(qtbot, make_window, cpu_backend, screen):
    w = wide_window(qtbot, make_window, cpu_backend, screen)
    full = w.size()
    default = widths(w)[1]
    drag_separator(qtbot, w, 150)  # the panels narrower by the user's hand
    qtbot.wait(50)
    dragged = widths(w)[1]
    assert dragged < default - 100 and layout.DockShares.of(w).dragged
    w.resize(1000, 700)
    qtbot.wait(50)
    w.resize(full)
    qtbot.wait(100)
    assert widths(w)[1] <= dragged  # not put back to the default share
    w.save_settings()  # the choice is kept with the layout...
    again = make_window(cpu_backend)
    qtbot.wait(50)
    assert layout.DockShares.of(again).dragged
    again.reset_layout()  # ...until View > Reset Layout
    assert not layout.DockShares.of(again).dragged


def _outside(panel, visible: QRect) -> list[str]:
    """Visible widgets of ``panel`` that end outside ``visible`` (panel coordinates). Scroll areas inside the
    panel are checked themselves, not their contents (those scroll inside them)."""
    out = []

    def walk(widget):
        for child in widget.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if not child.isVisible() or child.isWindow():
                continue
            rect = QRect(child.mapTo(panel, QPoint(0, 0)), child.size())
            if not visible.contains(rect):
                out.append(f"{type(child).__name__} {getattr(child, 'text', lambda: '')()!r} at {rect}")
            if not isinstance(child, QAbstractScrollArea):
                walk(child)

    walk(panel)
    return out


@pytest.mark.parametrize("size", [WIDE, LAPTOP])
def test_every_benchmark_panel_fits_its_docks_default_width(qtbot, make_window, cpu_backend, screen, size):
    screen(*size)
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    settle(qtbot, w)
    w.workspaces.select("Benchmarks")  # (side by side the panels are already shown)
    for dock in w.bench_docks:
        dock.raise_()
        qtbot.wait(30)
        panel, area = layout.contents(dock), dock.widget()
        title = dock.windowTitle()
        assert panel.isVisible(), title
        assert panel.minimumSizeHint().width() <= dock.width(), title
        assert panel.minimumSizeHint().width() <= area.viewport().width(), title
        assert not area.horizontalScrollBar().isVisible(), title  # no sideways scrolling of the panel
        visible = QRect(QPoint(0, 0), area.viewport().size())
        assert not _outside(panel, visible), (title, _outside(panel, visible))


def test_reference_results_show_as_ghost_rows_never_taken_for_measurements(qtbot, make_window, cpu_backend,
                                                                            monkeypatch, tmp_path):
    import csv

    from raytracer_app.gui.benchmarks import reference_results
    from raytracer_app.gui.benchmarks.panel_table import GHOST_FG
    from tests.test_reference_results import FIXTURE

    monkeypatch.setattr(reference_results, "REFERENCE_DIR", FIXTURE)
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    table, source = panel.table, panel.columns.index("source")
    panel.reference.setCurrentText("show H100 reference")
    ref_rows = panel.reference.reference.result.rows
    assert ref_rows and table.rowCount() == len(ref_rows)
    for r, row in enumerate(ref_rows):  # one ghost row per reference row, labelled with the device
        assert table.item(r, 0).text() == row.variant and table.item(r, source).text() == "H100 reference"
        item = table.item(r, 0)
        assert item.font().italic() and item.foreground().color() == GHOST_FG
        assert not item.flags() & Qt.ItemFlag.ItemIsSelectable
    # a run: its rows come first, the ghosts stay below them
    panel.set_variants({"numpy"})
    panel.n.setValue(4096)
    panel.repeats.setValue(2)
    panel.show_peak.setChecked(False)
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.run_button.isEnabled(), timeout=WAIT)
    assert table.rowCount() == 1 + len(ref_rows) and table.measured_count() == 1
    assert table.item(0, 0).text() == "numpy" and table.item(0, source).text() == "this run"
    assert [table.item(1 + i, source).text() for i in range(len(ref_rows))] == ["H100 reference"] * len(ref_rows)
    table.selectAll()  # only the measurement can be selected
    assert {i.row() for i in table.selectedIndexes()} == {0}
    # Export CSV: the measured rows; the reference rows only when asked for
    plain, both = tmp_path / "plain.csv", tmp_path / "both.csv"
    assert panel.export_csv(plain) and panel.export_csv(both, with_reference=True)
    plain_rows, both_rows = (list(csv.DictReader(p.open())) for p in (plain, both))
    assert [r["variant"] for r in plain_rows] == ["numpy"]
    assert len(both_rows) == 1 + len(ref_rows)
    assert [r["device"] for r in both_rows[1:]] == [row.device for row in ref_rows]
    assert all("H100" in r["device"] for r in both_rows[1:])
    # the picker back to none: the ghosts go, the measurement stays
    panel.reference.setCurrentText("no GPU reference")
    assert table.rowCount() == 1 and table.item(0, 0).text() == "numpy"
    # another run replaces the measured rows only
    panel.reference.setCurrentText("show H100 reference")
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.run_button.isEnabled(), timeout=WAIT)
    assert table.rowCount() == 1 + len(ref_rows) and table.item(0, source).text() == "this run"
