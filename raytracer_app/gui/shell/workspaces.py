"""Workspaces: named sets of docks (Render: the view and Controls; Benchmarks: the panels; Inspector; Editor;
Lessons; Access), picked by tabs in the menu bar's corner or Ctrl+1..Ctrl+9 in their order. The chosen
workspace owns the window: its docks are shown, every other workspace's docks are hidden (a tool the user
floated stays where it is), and the render view shows only in a workspace that includes it, so each tool gets
the window's whole width and height (layout.py says why this is the one arrangement).

Adding a workspace is one call: ``window.workspaces.add("Notes", [notes_dock])``."""

from __future__ import annotations

from dataclasses import dataclass, field

from PyQt6.QtCore import QObject, Qt, QTimer, pyqtSignal
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import QApplication, QTabBar


@dataclass
class Workspace:
    name: str
    docks: list = field(default_factory=list)
    view: bool = False  # shows the render view
    tip: str = ""


def commit_typed() -> None:
    """A value typed into the focused box but not yet entered is taken now (its focus-out does that), as
    before a tab or workspace change that would redraw the box from the model."""
    focused = QApplication.focusWidget()
    if focused is not None:
        focused.clearFocus()


class Workspaces(QObject):
    """The workspaces of ``window`` (a QMainWindow with a central ``view``). ``changed(name)`` after a switch."""

    changed = pyqtSignal(str)

    def __init__(self, window, view):
        super().__init__(window)
        self.window, self.view = window, view
        self.items: list[Workspace] = []
        self.bar = QTabBar()
        self.bar.setDocumentMode(True)
        self.bar.setDrawBase(False)
        self.bar.setExpanding(False)
        self.bar.setToolTip("workspaces: each owns the window (Ctrl+1, Ctrl+2, ... in this order)")
        self.bar.currentChanged.connect(self._tab_changed)
        window.menuBar().setCornerWidget(self.bar, Qt.Corner.TopRightCorner)
        self._applying = False

    # ------------------------------------------------------------------ building
    def add(self, name: str, docks=(), view: bool = False, tip: str = "") -> Workspace:
        """A workspace of these docks (and the render view with ``view``), as one more tab (and Ctrl+N)."""
        ws = Workspace(name, list(docks), view, tip)
        self.items.append(ws)
        number = len(self.items)
        self.bar.blockSignals(True)
        index = self.bar.addTab(name)
        self.bar.setTabToolTip(index, (tip or name) + (f" (Ctrl+{number})" if number <= 9 else ""))
        self.bar.blockSignals(False)
        if number <= 9:
            shortcut = QShortcut(QKeySequence(f"Ctrl+{number}"), self.window)
            shortcut.setContext(Qt.ShortcutContext.ApplicationShortcut)  # also from a floated tool
            shortcut.activated.connect(lambda n=name: self.select(n))
        for dock in ws.docks:
            dock.toggleViewAction().triggered.connect(lambda on, d=dock: on and self.show_dock(d))
            dock.visibilityChanged.connect(lambda shown: shown or QTimer.singleShot(0, self._closed))
        return ws

    def _closed(self) -> None:
        """A workspace whose last tool was closed would leave an empty window: go back to the first."""
        ws = self.current() if self.items else None
        if (not self._applying and ws is not None and not ws.view
                and all(dock.isHidden() or dock.isFloating() for dock in ws.docks)):
            self.select(self.items[0].name)

    def names(self) -> list[str]:
        return [ws.name for ws in self.items]

    def current(self) -> Workspace:
        return self.items[max(self.bar.currentIndex(), 0)]

    def of(self, dock) -> Workspace | None:
        return next((ws for ws in self.items if dock in ws.docks), None)

    # ------------------------------------------------------------------ switching
    def select(self, name: str) -> None:
        index = self.names().index(name)
        if index == self.bar.currentIndex():
            self.apply()
        else:
            self.bar.setCurrentIndex(index)  # _tab_changed applies it

    def show_dock(self, dock) -> None:
        """Bring ``dock`` to the front, in its workspace (which then owns the window)."""
        ws = self.of(dock)
        if ws is not None and ws is not self.current():
            self.select(ws.name)
        dock.show()
        dock.raise_()

    def _tab_changed(self, _index: int) -> None:
        commit_typed()
        self.apply()
        self.changed.emit(self.current().name)

    def apply(self) -> None:
        """Show the current workspace's docks and hide the others' (a floated one stays)."""
        if self._applying or not self.items:
            return
        self._applying = True
        try:
            ws = self.current()
            for other in self.items:
                for dock in other.docks:
                    if dock not in ws.docks and not dock.isFloating():
                        dock.hide()
            self.view.setVisible(ws.view)
            for dock in ws.docks:
                dock.show()
        finally:
            self._applying = False
