"""The benchmark docks on a laptop and a wide screen (issue 20): every benchmark panel fits its dock's default
width, and the shipped GPU reference results show as ghost rows in a panel's table. pytest-qt, offscreen
(the screen's available geometry stood in by tests/test_gui_laptop.py's ``screen``); no timing asserts."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtCore import QPoint, QRect, Qt
from PyQt6.QtWidgets import QAbstractScrollArea, QWidget

from raytracer_app.gui.shell import layout
from tests.test_gui import WAIT, make_window, preset, settings_dir  # noqa: F401
from tests.test_gui_laptop import LAPTOP, WIDE, screen, settle  # noqa: F401


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
    w.workspaces.select("Benchmarks")
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

    from raytracer_app.gui.common import reference_results
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
