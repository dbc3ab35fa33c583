"""The window's size and default arrangement (first start and View > Reset Layout), and how a layout is
kept per screen size.

Two arrangements, chosen by the screen's available geometry (``available_geometry``, one function, so tests
can stand in another screen):

- side by side (a screen at least WIDE_PX x TALL_PX): Controls on the left, the benchmark panels on the
  right, the Inspector below when opened; the render view gets at least half the width;
- workspaces (smaller screens, a laptop's 1366x768): one workspace at a time owns the window (Render: the
  view with Controls; Benchmarks: the panels; Inspector), switched by the tabs in the menu bar, so each tool
  gets the whole height (see workspaces.py).

Every dock's contents sit in a scroll area (``scrolling``): a tool's minimum size never raises the window's,
so opening one never makes the window taller than the screen; the tool scrolls instead."""

from __future__ import annotations

from PyQt6.QtCore import QEvent, QMargins, QObject, QRect, Qt, QTimer
from PyQt6.QtWidgets import QFrame, QScrollArea

WIDE_PX, TALL_PX = 1600, 900  # the smallest available geometry for side-by-side panels
CONTROLS_PX = 360  # the Controls column
VIEW_SHARE = 0.52  # of the window's width, for the render view (side by side)
# the window manager's frame before the window is shown (its real frame is known only afterwards): a title
# bar and thin borders, as most window managers draw them
FRAME_GUESS = QMargins(4, 32, 4, 4)


def available_geometry(window) -> QRect:
    """The screen area the window may use (without panels and task bars)."""
    screen = window.screen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1366, 768)


def screen_key(window) -> str:
    """The name a layout is saved under: the available geometry's size, e.g. '1366x768'."""
    g = available_geometry(window)
    return f"{g.width()}x{g.height()}"


def is_wide(window) -> bool:
    g = available_geometry(window)
    return g.width() >= WIDE_PX and g.height() >= TALL_PX


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


def apply_default_layout(window, wide: bool | None = None) -> bool:
    """Place and size the docks of ``window`` (a MainWindow): side by side when ``wide`` (default: the
    screen is wide enough and the fonts leave the view half the width), else for workspaces. Returns
    ``wide``."""
    controls, benches = window.controls_dock, window.bench_docks
    size = window.size()  # moving docks about can grow the window for a moment: keep its size
    width = max(window.width(), 800)
    controls_px = max(CONTROLS_PX, _controls_need(window))  # large fonts: as wide as its contents
    controls.setMinimumWidth(min(controls_px, 480))  # never narrowed into sideways scrolling
    bench_min = max(contents(dock).minimumSizeHint().width() for dock in benches)
    if wide is None:
        wide = is_wide(window) and width - controls_px - min(bench_min, 560) >= width // 2
    for dock in (controls, *benches, window.inspector_dock):
        dock.setFloating(False)
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, controls)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, benches[0])
    for dock in benches[1:]:  # straight into one tab group: never stacked, which would need their heights
        window.tabifyDockWidget(benches[0], dock)
    # the panels keep the window's whole height beside a tool opened below (the view and Controls share theirs)
    window.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, window.inspector_dock)
    window.inspector_dock.hide()
    for dock in (controls, *benches):
        dock.show()
    _resize_docks(window, width, controls_px, wide)
    benches[0].raise_()
    window.layout().activate()  # the docks' new minimum sizes take effect now, so the size can go back
    window.resize(size)
    DockShares.of(window).reset(wide)
    for panel in window.panels.values():  # each panel's heights once it is shown at its own size
        panel.split_dragged = False
        _ProportionWhenShown.arm(panel)
    return wide


def _resize_docks(window, width: int, controls_px: int, wide: bool) -> None:
    """The default widths for a window ``width`` wide: Controls ``controls_px``, and side by side (``wide``)
    the panels what the render view's share leaves."""
    controls, benches = window.controls_dock, window.bench_docks
    if wide:
        bench_px = max(300, int(width * (1 - VIEW_SHARE)) - controls_px)
        window.resizeDocks([controls, benches[0]], [controls_px, bench_px], Qt.Orientation.Horizontal)
    else:
        window.resizeDocks([controls], [controls_px], Qt.Orientation.Horizontal)


class DockShares(QObject):
    """Keeps the docks' default share of the window's width when the window is resized (shrunk, then
    maximized again: QMainWindow gives all the new width to the render view, leaving the docks as narrow as
    the small window made them), until the user drags a dock's edge: from then on their widths are the
    user's (``dragged``, saved with the layout) until View > Reset Layout."""

    @classmethod
    def of(cls, window) -> "DockShares":
        shares = window.findChild(cls, "dock-shares", Qt.FindChildOption.FindDirectChildrenOnly)
        if shares is None:
            shares = cls(window)
            shares.setObjectName("dock-shares")
            window.installEventFilter(shares)
        return shares

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.wide = False
        self.dragged = False
        self._width = window.width()
        self._pressed: list[int] | None = None
        self._pending = False

    def reset(self, wide: bool, dragged: bool = False) -> None:
        self.wide, self.dragged, self._width = wide, dragged, self.window.width()

    def _widths(self) -> list[int]:
        return [dock.width() for dock in (self.window.controls_dock, *self.window.bench_docks)]

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt naming)
        kind = event.type()
        # a press on the window itself, between its docks and the view, is on a separator (QMainWindow
        # moves it): the user sizes the docks when their widths change before the release
        if (kind == QEvent.Type.MouseButtonPress and event.button() == Qt.MouseButton.LeftButton
                and obj.childAt(event.position().toPoint()) is None):
            self._pressed = self._widths()
        elif kind == QEvent.Type.MouseButtonRelease and self._pressed is not None:
            if self._widths() != self._pressed and self.window.width() == self._width:
                self.dragged = True
            self._pressed = None
        elif kind == QEvent.Type.Resize:
            if self.window.width() != self._width:
                self._width = self.window.width()
                if not self.dragged and not self._pending:
                    self._pending = True
                    QTimer.singleShot(0, self.apply)  # once the window's layout has its new size
            # a panel's heights too (the settings squeezed by a small window stay so when it grows back),
            # unless the user moved its handles
            for panel in self.window.panels.values():
                if not panel.split_dragged:
                    _ProportionWhenShown.arm(panel)
        return False

    def applies(self) -> bool:
        w = self.window
        controls, bench = w.controls_dock, w.bench_docks[0]
        return (not self.dragged and not controls.isFloating() and not bench.isFloating()
                and w.dockWidgetArea(controls) == Qt.DockWidgetArea.LeftDockWidgetArea
                and w.dockWidgetArea(bench) == Qt.DockWidgetArea.RightDockWidgetArea)

    def apply(self) -> None:
        """The default widths for the window's width now (nothing when the user sized or moved the docks)."""
        self._pending = False
        if self.applies():
            w = self.window
            wide = self.wide and not w.workspaces.separate
            _resize_docks(w, max(w.width(), 800), max(CONTROLS_PX, _controls_need(w)), wide)


class _ProportionWhenShown(QObject):
    """Calls a benchmark panel's default_proportions once, at its first showing after a layout reset (a
    panel of a hidden workspace has no size of its own before)."""

    @classmethod
    def arm(cls, panel) -> None:
        watcher = panel.findChild(cls, "proportions", Qt.FindChildOption.FindDirectChildrenOnly)
        if watcher is None:
            watcher = cls(panel)
            watcher.setObjectName("proportions")
            panel.installEventFilter(watcher)
        watcher.armed = True
        if panel.isVisible():
            watcher.eventFilter(panel, QEvent(QEvent.Type.Show))

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt naming)
        if getattr(self, "armed", False) and event.type() in (QEvent.Type.Show, QEvent.Type.Resize) \
                and obj.isVisible():
            self.armed = False
            QTimer.singleShot(0, obj.default_proportions)
        return False


# ---------------------------------------------------------------------------------------------- kept per screen
def _key(window, what: str) -> str:
    from raytracer_app.gui.common.settings import Keys

    return Keys.LAYOUT.format(screen_key(window), what)


def save_layout(window) -> None:
    """The window's geometry, docks and workspace, under this screen's size."""
    s = window.settings
    s.setValue(_key(window, "geometry"), window.saveGeometry())
    s.setValue(_key(window, "state"), window.saveState())
    s.setValue(_key(window, "separate"), window.workspaces.separate)
    s.setValue(_key(window, "workspace"), window.workspaces.current().name)
    s.setValue(_key(window, "dragged"), DockShares.of(window).dragged)


def restore_layout(window) -> bool:
    """The layout saved for this screen's size when it fits there (True); else the default, fitted (False).
    A layout saved on another screen size is never applied: its sizes were chosen for that screen."""
    from raytracer_app.gui.common.settings import read, read_bytes

    s = window.settings
    geometry, state = read_bytes(s, _key(window, "geometry")), read_bytes(s, _key(window, "state"))
    ok = geometry is not None and state is not None and window.restoreGeometry(geometry)
    if ok and not fits(window):
        ok = False
    if not ok:
        reset_layout(window)
        return False
    place_on_screen(window)
    window.restoreState(state)
    window.workspaces.separate = read(s, _key(window, "separate"), not is_wide(window), bool)
    name = read(s, _key(window, "workspace"), "Render", str)
    window.workspaces.select(name if name in window.workspaces.names() else "Render")
    window.workspaces.apply()
    DockShares.of(window).reset(is_wide(window), read(s, _key(window, "dragged"), False, bool))
    return True


def reset_layout(window) -> None:
    """View > Reset Layout and a first start: the window fills the screen (frame included), the default
    arrangement for it, the Render workspace."""
    fit_to_screen(window)
    wide = apply_default_layout(window)
    window.workspaces.separate = not wide
    window.workspaces.select("Render")
    if hasattr(window, "menus"):
        window.menus.separate.setChecked(not wide)


def check_fit(window) -> None:
    """Once the window manager has framed the window: if the frame pushes it off the screen, fit it."""
    if window.isMaximized() or window.isFullScreen():
        return
    if not fits(window) or window.property("fitted_by_guess"):
        fit_to_screen(window)
    place_on_screen(window)
    # the fonts in use are known now: the Controls column as wide as its contents
    window.controls_dock.setMinimumWidth(min(_controls_need(window), 480))
