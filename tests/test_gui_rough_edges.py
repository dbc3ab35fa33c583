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
