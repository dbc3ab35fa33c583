"""Issue 50's rough edges in the window (items 11, 13, 14 and the Lessons chart's legend): pytest-qt,
offscreen, settings and caches in temporary folders."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("pytestqt")


def test_a_greyed_variants_menu_items_look_enabled(qtbot):
    """Item 11: a GPU variant greyed on the CPU backend drew its menu's Inspect grey, though it works."""
    from PyQt6.QtWidgets import QCheckBox, QVBoxLayout, QWidget

    from raytracer_app.gui.inspector.dock import InspectorDock

    window = QWidget()
    qtbot.addWidget(window)
    box = QCheckBox("best", window)
    QVBoxLayout(window).addWidget(box)
    box.setStyleSheet("color: gray")  # as the panel greys a GPU variant on the cpu backend
    opened = []
    dock = SimpleNamespace(open=lambda *a: opened.append(a), accessRequested=SimpleNamespace(emit=lambda *a: None))
    menu = InspectorDock.variant_menu(dock, box, "reduction", "best", SimpleNamespace(block_size=lambda: 256))
    from PyQt6.QtGui import QColor, QPalette

    menu.ensurePolished()
    assert menu.isEnabled() and all(a.isEnabled() for a in menu.actions())
    assert menu.palette().color(QPalette.ColorRole.WindowText) != QColor("gray"), "its items are not drawn grey"
    menu.actions()[0].trigger()
    assert opened and opened[0][:2] == ("reduction", "best")


def fake_lookup(cached, afresh):
    """An lru-cached tool lookup that answered ``cached`` when first asked and finds ``afresh`` on disk now."""
    import functools

    lookup = functools.lru_cache(maxsize=None)(lambda: cached)
    lookup.__wrapped__ = lambda: afresh
    return lookup


@pytest.mark.parametrize("afresh, says", [("/site/nvidia/bin/tool", "restart the app"),
                                          (None, "pip install -e '.[inspect]'")])
def test_inspect_hints_a_restart_when_the_extra_was_installed_meanwhile(qtbot, monkeypatch, afresh, says):
    """Item 13: after installing the inspect extra mid-run, Inspect kept asking for the packages."""
    from kernels.inspector import toolchain
    from raytracer_app.gui.inspector.panel import InspectWorker

    for name in ("ptxas_path", "nvdisasm_path", "nvvm_library"):
        monkeypatch.setattr(toolchain, name, fake_lookup(None, afresh))
    assert toolchain.missing() and says in toolchain.what_to_do()
    worker = InspectWorker()
    seen = []
    worker.sourceOnly.connect(lambda blocks, why, request: seen.append(why))
    worker.linesReady.connect(lambda *a: None)
    worker.run(("reduction", "sequential", "sm_90", 256, "numba-cuda"))
    assert seen and says in seen[0]


def test_the_compare_pickers_name_what_inspect_vs_compared(qtbot, monkeypatch):
    """Item 14: after the editor's Inspect vs best the Compare tab's pickers still named other variants."""
    from raytracer_app.gui.inspector.dock import InspectorDock

    dock = InspectorDock()
    qtbot.addWidget(dock)
    monkeypatch.setattr(dock, "_compared", lambda a, b, request: None)  # the table: not what is checked here
    mine = SimpleNamespace(target="reduction", variant="my-best")
    built_in = SimpleNamespace(target="reduction", variant="best")
    dock.show_compared(mine, built_in)
    assert (dock.compare_a.currentText(), dock.compare_b.currentText()) == ("my-best", "best")
    dock.compare("my-best", "best")
    assert "your variant file" in dock.compare_status.text()
    dock.shutdown()


def test_the_lessons_legend_is_below_its_lines(qtbot):
    """Item 10: at 1366 the Lessons chart's legend sat inside the plot, over its lines."""
    from kernels.backend import Backend
    from raytracer_app.gui.lessons.panel import LessonsPanel

    p = LessonsPanel(lambda: Backend("cpu"))
    qtbot.addWidget(p)
    try:
        p.chart.resize(420, 260)
        p.chart.show()
        qtbot.waitExposed(p.chart)
        p.chart.plot([1, 2, 3], [1.0, 2.0, 4.0], name="published")
        p.chart.grab()
        plot = p.chart.getPlotItem()
        assert "published" in [label.text for _, label in plot.legend.items]
        legend, lines = plot.legend.sceneBoundingRect(), plot.vb.sceneBoundingRect()
        assert legend.top() >= lines.bottom() and not legend.intersects(lines)
        plot.clear()
        assert plot.legend.items == []
    finally:
        p.worker.stop()
        p.thread.shutdown(timeout_ms=60_000)
        p.pictures.shutdown()


def test_the_lessons_legend_keeps_each_entry_whole(qtbot):
    from kernels.backend import Backend
    from raytracer_app.gui.lessons.panel import LessonsPanel

    p = LessonsPanel(lambda: Backend("cpu"))
    qtbot.addWidget(p)
    try:
        for width in (560, 1400):
            p.chart.resize(width, 300)
            p.chart.show()
            qtbot.waitExposed(p.chart)
            for name in ("published", "H100 reference (not this machine), n=4,194,304",
                         "H200 reference (not this machine), n=4,194,304"):
                p.chart.plot([1, 2], [1.0, 2.0], name=name)
            p._fit_legend()
            p.chart.grab()
            qtbot.wait(10)
            view = p.chart.mapToScene(p.chart.viewport().rect()).boundingRect()  # what the widget shows
            for _sample, label in p.chart.getPlotItem().legend.items:
                assert view.contains(label.sceneBoundingRect()), (width, label.text)
            p.chart.clear()
    finally:
        p.worker.stop()
        p.thread.shutdown(timeout_ms=60_000)
        p.pictures.shutdown()
