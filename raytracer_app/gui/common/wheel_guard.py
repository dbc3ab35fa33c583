"""Nothing changes by accident: the mouse wheel never changes a combo box, spin box or slider that does not
have the keyboard focus (a click or Tab gives it); over one, the wheel scrolls the area around it, as it does
elsewhere in that area. ``guard_tree(root)`` does it for every such input under a widget: each loses Qt's
wheel focus (a wheel turn would otherwise give it the focus, and then the value), and one event filter sends
wheel events over an unfocused one to the enclosing scroll area's scroll bar. (Per input rather than on the
whole application: an application-wide Python filter would be called for every event of every frame.)"""

from __future__ import annotations

from PyQt6.QtCore import QEvent, QObject, Qt
from PyQt6.QtWidgets import (QAbstractScrollArea, QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox,
                             QScrollBar, QWidget)

INPUTS = (QComboBox, QAbstractSpinBox, QAbstractSlider)


def is_input(widget) -> bool:
    return isinstance(widget, INPUTS) and not isinstance(widget, QScrollBar)


def guard(widget: QWidget) -> None:
    """Take the wheel out of an input's focus policy (it keeps click and Tab focus)."""
    if is_input(widget) and widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


def _input_under(widget) -> QWidget | None:
    """The input ``widget`` is part of (a spin box's line edit is part of the spin box), within its window."""
    while widget is not None:
        if is_input(widget):
            return widget
        if widget.isWindow():
            return None
        widget = widget.parentWidget()
    return None


def _focused(widget) -> bool:
    focus = QApplication.focusWidget()
    return focus is not None and (focus is widget or widget.isAncestorOf(focus))


def _scroll_area_around(widget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not parent.isWindow():
        if isinstance(parent, QAbstractScrollArea):
            return parent
        parent = parent.parentWidget()
    return None


class WheelGuard(QObject):
    """The filter: installed on each guarded input."""

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt naming)
        if event.type() != QEvent.Type.Wheel or not isinstance(obj, QWidget):
            return False
        target = _input_under(obj)
        if target is None or _focused(target):
            return False
        area = _scroll_area_around(target)
        if area is not None:
            delta = event.angleDelta()
            sideways = abs(delta.x()) > abs(delta.y())
            bar = area.horizontalScrollBar() if sideways else area.verticalScrollBar()
            QApplication.sendEvent(bar, event)
        return True  # the input never sees it


def guard_tree(root: QWidget) -> int:
    """Guard every combo box, spin box and slider under ``root`` (and root itself); returns how many. A
    widget guarded before is left as it is, so calling it again after adding widgets is cheap."""
    inputs = [w for w in [root, *root.findChildren(QWidget)] if is_input(w) and not w.property(_GUARDED)]
    if not inputs:
        return 0
    filters = root.findChild(WheelGuard, "wheel-guard", Qt.FindChildOption.FindDirectChildrenOnly)
    if filters is None:
        filters = WheelGuard(root)
        filters.setObjectName("wheel-guard")
    for widget in inputs:
        guard(widget)
        widget.installEventFilter(filters)
        widget.setProperty(_GUARDED, True)
    return len(inputs)


_GUARDED = "wheel_guarded"
