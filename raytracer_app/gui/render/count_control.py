"""The sphere count control: a logarithmic slider (1 .. a million in even steps of the exponent) beside a
typed box, and a line saying where the limit is and why. The slider only commits on release, so dragging
across a million spheres does not generate a scene per pixel of travel."""

from __future__ import annotations

import math

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import QHBoxLayout, QLabel, QSlider, QSpinBox, QVBoxLayout, QWidget

SLIDER_STEPS = 1000  # slider positions from 1 to the maximum, evenly spaced in log(count)


def count_at(position: int, maximum: int) -> int:
    """The count a slider position stands for (0 -> 1, SLIDER_STEPS -> maximum)."""
    if maximum <= 1:
        return 1
    return max(1, min(maximum, round(math.exp(math.log(maximum) * position / SLIDER_STEPS))))


def position_of(count: int, maximum: int) -> int:
    if maximum <= 1:
        return 0
    return round(SLIDER_STEPS * math.log(max(1, min(count, maximum))) / math.log(maximum))


class SphereCountControl(QWidget):
    """``valueChanged(int)`` when the user commits a count (Enter, focus out, slider release)."""

    valueChanged = pyqtSignal(int)

    def __init__(self):
        super().__init__()
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, SLIDER_STEPS)
        self.spin = QSpinBox()
        self.spin.setKeyboardTracking(False)  # typed counts are taken on Enter, not per keystroke
        self.spin.setGroupSeparatorShown(True)
        self.limit = QLabel()
        self.limit.setWordWrap(True)
        self.limit.setStyleSheet("color: palette(placeholder-text)")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.slider, 1)
        row.addWidget(self.spin)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.limit)
        self.slider.sliderMoved.connect(self._preview)
        self.slider.sliderReleased.connect(lambda: self._commit(count_at(self.slider.value(), self.maximum())))
        self.slider.valueChanged.connect(self._slider_value)
        self.spin.valueChanged.connect(self._commit)

    def _slider_value(self, position: int) -> None:
        # keys, page clicks and wheel turns commit at once; a drag commits on release
        if not self.slider.isSliderDown():
            self._commit(count_at(position, self.maximum()))

    def _preview(self, position: int) -> None:
        self.spin.blockSignals(True)
        self.spin.setValue(count_at(position, self.maximum()))
        self.spin.blockSignals(False)

    def _commit(self, count: int) -> None:
        self.setValue(count)
        self.valueChanged.emit(self.value())

    def maximum(self) -> int:
        return self.spin.maximum()

    def value(self) -> int:
        return self.spin.value()

    def setRange(self, lo: int, hi: int) -> None:  # noqa: N802 (Qt naming)
        self.spin.blockSignals(True)
        self.spin.setRange(lo, hi)
        self.spin.blockSignals(False)

    def setValue(self, count: int) -> None:  # noqa: N802
        for w in (self.slider, self.spin):
            w.blockSignals(True)
        self.spin.setValue(int(count))
        self.slider.setValue(position_of(self.spin.value(), self.maximum()))
        for w in (self.slider, self.spin):
            w.blockSignals(False)

    def set_limit(self, text: str) -> None:
        """Where the limit is and why; also the tooltip of the slider and the box."""
        self.limit.setText(text)
        for w in (self.slider, self.spin, self.limit):
            w.setToolTip("number of spheres (a random scene with the seed below): " + text)
