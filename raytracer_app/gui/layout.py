"""The window's default arrangement (first start and View > Reset Layout).

The render view gets at least half the window's width. On a wide screen the Controls dock sits on the
left and the benchmark panels on the right; below WIDE_PX, or when the fonts make the Controls and a panel
so wide that the view would get less than half, there is not room for three columns without clipping, so
Controls becomes one more tab beside the benchmark panels on the right."""

from __future__ import annotations

from PyQt6.QtCore import Qt, QTimer

WIDE_PX = 1600
CONTROLS_PX = 360  # wide layout: the Controls column
VIEW_SHARE = 0.52  # of the window's width, for the render view


def _controls_need(window) -> int:
    """The Controls column's width that shows its contents without clipping or sideways scrolling."""
    area = window.controls  # a QScrollArea around the controls
    return (area.widget().minimumSizeHint().width() + area.verticalScrollBar().sizeHint().width()
            + 2 * area.frameWidth() + 8)


def apply_default_layout(window) -> None:
    """Place and size the docks of ``window`` (a MainWindow) for its current width."""
    controls, benches = window.controls_dock, window.bench_docks
    size = window.size()  # moving docks about can grow the window for a moment: keep its size
    width = max(window.width(), 800)
    for dock in (controls, *benches):
        dock.setFloating(False)
        dock.show()
    right = Qt.DockWidgetArea.RightDockWidgetArea
    controls_px = max(CONTROLS_PX, _controls_need(window))  # large fonts: as wide as its contents
    bench_min = max(dock.widget().minimumSizeHint().width() for dock in benches)
    if width >= WIDE_PX and width - controls_px - bench_min >= width // 2:  # three columns fit
        window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, controls)
        window.addDockWidget(right, benches[0])
        for dock in benches[1:]:
            window.tabifyDockWidget(benches[0], dock)
        bench_px = max(300, int(width * (1 - VIEW_SHARE)) - controls_px)
        window.resizeDocks([controls, benches[0]], [controls_px, bench_px], Qt.Orientation.Horizontal)
        benches[0].raise_()
    else:
        window.addDockWidget(right, controls)
        for dock in benches:  # straight into one tab group: never stacked, which would need their heights
            window.tabifyDockWidget(controls, dock)
        window.resizeDocks([controls], [int(width * (1 - VIEW_SHARE))], Qt.Orientation.Horizontal)
        controls.raise_()
    window.layout().activate()  # the docks' new minimum sizes take effect now, so the size can go back
    window.resize(size)
    QTimer.singleShot(0, lambda: [panel.default_proportions() for panel in window.panels.values()])
