"""The docks of the window on a laptop and a wide screen (issue 20): they get their share of the width back
when the window grows again (unless the user sized them), every benchmark panel fits its dock's default
width, and the shipped GPU reference results show as ghost rows in a panel's table. pytest-qt, offscreen
(the screen's available geometry stood in by tests/test_gui_laptop.py's ``screen``); no timing asserts."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtCore import QPoint, QRect, Qt  # noqa: E402
from PyQt6.QtWidgets import QAbstractScrollArea, QWidget  # noqa: E402

from raytracer_app.gui import layout  # noqa: E402
from tests.test_gui import WAIT, make_window, preset, settings_dir  # noqa: E402,F401
from tests.test_gui_laptop import LAPTOP, WIDE, screen, settle  # noqa: E402,F401


def widths(w) -> tuple[int, int]:
    return w.controls_dock.width(), w.bench_docks[0].width()


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
    screen(*WIDE)
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    settle(qtbot, w)
    full = w.size()
    before = widths(w)
    assert before[1] >= 0.2 * w.width()  # side by side: the panels have their share
    w.resize(1000, 700)  # shrunk (the docks narrow with the window)...
    qtbot.wait(50)
    assert widths(w)[1] < before[1]
    w.resize(full)  # ...and grown again, as maximizing does
    qtbot.waitUntil(lambda: abs(widths(w)[1] - before[1]) <= 8, timeout=WAIT)
    assert abs(widths(w)[0] - before[0]) <= 8
    assert not layout.DockShares.of(w).dragged


def test_docks_the_user_sized_keep_their_width(qtbot, make_window, cpu_backend, screen):
    screen(*WIDE)
    preset(**{"render/size_spheres": "32x32"})
    w = make_window(cpu_backend)
    settle(qtbot, w)
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
