"""The window's size and its one arrangement at every screen size, and how a layout is kept per screen size.

Workspaces at every size (docs/gui.md says why): one tool owns the window at a time (Render: the view with
its Controls; Benchmarks: the panels, one tab each; Inspector; Editor; Lessons; Access), switched by the tabs
at the menu bar's right or Ctrl+1..Ctrl+6 (see workspaces.py). So each tool gets the window's whole width and
height on a 1366x768 laptop as on a 2560x1440 screen, and none is ever squeezed into a strip beside another.
A tool leaves the window only on an explicit action: its title bar's float button (docks cannot be dragged
off). View > Reset Layout puts every tool back, docked, and the Render workspace in front.

The screen is asked for through ``available_geometry`` (one function, so tests can stand in another screen).
Every dock's contents sit in a scroll area (``scrolling``): a tool's minimum size never raises the window's;
where the window is smaller than a tool's minimum (a window the user shrank), the tool scrolls.

A layout is saved per screen size with LAYOUT_VERSION; one saved by another version, or that does not fit the
screen, is discarded for the default."""

from __future__ import annotations

from PyQt6.QtCore import QEvent, QMargins, QRect, Qt
from PyQt6.QtWidgets import QDockWidget, QFrame, QScrollArea

CONTROLS_PX = 360  # the Controls column, at least
# the window manager's frame before the window is shown (its real frame is known only afterwards): a title
# bar and thin borders, as most window managers draw them
FRAME_GUESS = QMargins(4, 32, 4, 4)
# 2: workspaces at every size, docks not movable (older layouts could hold side-by-side and floating docks)
LAYOUT_VERSION = 2
DOCK_FEATURES = QDockWidget.DockWidgetFeature.DockWidgetClosable | QDockWidget.DockWidgetFeature.DockWidgetFloatable


def available_geometry(window) -> QRect:
    """The screen area the window may use (without panels and task bars)."""
    screen = window.screen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1366, 768)


def screen_key(window) -> str:
    """The name a layout is saved under: the available geometry's size, e.g. '1366x768'."""
    g = available_geometry(window)
    return f"{g.width()}x{g.height()}"


def frame_margins(window) -> QMargins:
    """The frame the window manager draws around the window: measured once it is shown, else a guess."""
    outer, inner = window.frameGeometry(), window.geometry()
    if window.isVisible() and outer != inner:
        return QMargins(inner.left() - outer.left(), inner.top() - outer.top(),
                        outer.right() - inner.right(), outer.bottom() - inner.bottom())
    return QMargins(0, 0, 0, 0) if window.isVisible() else FRAME_GUESS


def fits(window) -> bool:
    """The window, frame included, is no larger than the available geometry (see place_on_screen)."""
    g, m = available_geometry(window), frame_margins(window)
    outer = window.geometry().marginsAdded(m)
    return outer.width() <= g.width() and outer.height() <= g.height()


def place_on_screen(window) -> None:
    """Move a window that fits the screen's size fully onto it."""
    g, m = available_geometry(window), frame_margins(window)
    outer = window.geometry().marginsAdded(m)
    x = min(max(outer.x(), g.x()), g.right() + 1 - outer.width())
    y = min(max(outer.y(), g.y()), g.bottom() + 1 - outer.height())
    if (x, y) != (outer.x(), outer.y()):
        window.move(x, y)


def fit_to_screen(window) -> None:
    """Size the window so that it, with its frame, fills the available geometry."""
    g, m = available_geometry(window), frame_margins(window)
    window.setProperty("fitted_by_guess", not window.isVisible())  # check_fit fits it again once framed
    window.resize(max(g.width() - m.left() - m.right(), 200), max(g.height() - m.top() - m.bottom(), 200))
    window.move(g.topLeft())  # move() places the frame's top-left corner


class FitArea(QScrollArea):
    """A scroll area that makes its widget the viewport's size, or its minimum size where that is larger.
    (QScrollArea's own widgetResizable asks a widget with word-wrapped labels for its preferred height,
    through heightForWidth, and so scrolls a tool that would fit.)"""

    def __init__(self, widget):
        super().__init__()
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidget(widget)
        self.setMinimumSize(80, 60)

    def _fit(self) -> None:
        widget, port = self.widget(), self.viewport().size()
        need = widget.minimumSizeHint().expandedTo(widget.minimumSize())
        widget.resize(max(port.width(), need.width()), max(port.height(), need.height()))

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(event)
        self._fit()

    def viewportEvent(self, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.LayoutRequest:  # the widget's minimum size changed
            self._fit()
        return super().viewportEvent(event)

    def sizeHint(self):  # noqa: N802 - the dock asks for its contents' own size
        return self.widget().sizeHint()


def scrolling(widget) -> QScrollArea:
    """``widget`` in a frameless scroll area: what a dock holds (see the module's note)."""
    return FitArea(widget)


def contents(dock):
    """A dock's own widget (inside its scroll area)."""
    area = dock.widget()
    return area.widget() if isinstance(area, QScrollArea) else area


def _controls_need(window) -> int:
    """The Controls column's width that shows its contents without clipping or sideways scrolling."""
    area = window.controls  # a QScrollArea around the controls
    body = area.widget()
    # the widest group, shown or not (the Spheres and Julia groups take turns): no sideways scrolling on
    # either render tab
    margins = body.layout().contentsMargins()
    groups = max(box.minimumSizeHint().width() for box in (window.controls.spheres_box, window.controls.julia_box))
    need = max(body.minimumSizeHint().width(), groups + margins.left() + margins.right())
    return need + area.verticalScrollBar().sizeHint().width() + 2 * area.frameWidth() + 8


def tool_docks(window) -> list:
    """Every tool's dock, in workspace order."""
    return [dock for ws in window.workspaces.items for dock in ws.docks]


def apply_default_layout(window) -> None:
    """Every tool docked where its workspace shows it, at its default size: Controls on the left of the render
    view, the benchmark panels in one tab group, each other tool alone."""
    size = window.size()  # moving docks about can grow the window for a moment: keep its size
    controls, benches = window.controls_dock, window.bench_docks
    controls_px = max(CONTROLS_PX, _controls_need(window))  # large fonts: as wide as its contents
    controls.setMinimumWidth(min(controls_px, 480))  # never narrowed into sideways scrolling
    for dock in tool_docks(window):
        dock.setFloating(False)
        dock.setFeatures(DOCK_FEATURES)
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, controls)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, benches[0])
    for dock in benches[1:]:  # straight into one tab group: never stacked, which would need their heights
        window.tabifyDockWidget(benches[0], dock)
    for dock in tool_docks(window):
        if dock is not controls and dock not in benches:
            window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.resizeDocks([controls], [controls_px], Qt.Orientation.Horizontal)
    benches[0].raise_()
    window.layout().activate()  # the docks' new minimum sizes take effect now, so the size can go back
    window.resize(size)


# ---------------------------------------------------------------------------------------------- kept per screen
def _key(window, what: str) -> str:
    from raytracer_app.gui.common.settings import Keys

    return Keys.LAYOUT.format(screen_key(window), what)


def save_layout(window) -> None:
    """The window's geometry, docks and workspace, under this screen's size."""
    s = window.settings
    s.setValue(_key(window, "version"), LAYOUT_VERSION)
    s.setValue(_key(window, "geometry"), window.saveGeometry())
    s.setValue(_key(window, "state"), window.saveState(LAYOUT_VERSION))
    s.setValue(_key(window, "workspace"), window.workspaces.current().name)


def restore_layout(window) -> bool:
    """The layout saved for this screen's size when it is this version's and fits there (True); else the
    default, fitted (False). A layout saved on another screen size is never applied: its sizes were chosen for
    that screen."""
    from raytracer_app.gui.common.settings import read, read_bytes

    s = window.settings
    geometry, state = read_bytes(s, _key(window, "geometry")), read_bytes(s, _key(window, "state"))
    ok = (read(s, _key(window, "version"), 0, int) == LAYOUT_VERSION and geometry is not None and state is not None
          and window.restoreGeometry(geometry) and fits(window))
    if ok:
        apply_default_layout(window)  # every tool in its place first: the state then only sizes and floats them
        ok = window.restoreState(state, LAYOUT_VERSION)
    if not ok:
        reset_layout(window)
        return False
    place_on_screen(window)
    for dock in tool_docks(window):
        dock.setFeatures(DOCK_FEATURES)
    name = read(s, _key(window, "workspace"), "Render", str)
    window.workspaces.select(name if name in window.workspaces.names() else "Render")
    return True


def reset_layout(window) -> None:
    """View > Reset Layout and a first start: the window fills the screen (frame included), every tool docked
    in its place, the Render workspace in front."""
    fit_to_screen(window)
    apply_default_layout(window)
    window.workspaces.select("Render")


def check_fit(window) -> None:
    """Once the window manager has framed the window: if the frame pushes it off the screen, fit it."""
    if window.isMaximized() or window.isFullScreen():
        return
    if not fits(window) or window.property("fitted_by_guess"):
        fit_to_screen(window)
    place_on_screen(window)
    # the fonts in use are known now: the Controls column as wide as its contents
    window.controls_dock.setMinimumWidth(min(_controls_need(window), 480))
