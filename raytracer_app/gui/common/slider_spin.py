"""A slider with a spin box beside it (the Controls' block sizes and Julia c)."""

from __future__ import annotations

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QSlider, QSpinBox, QWidget


class SliderSpin(QWidget):
    """A slider with a spin box; ``scale`` > 1 makes a float control with 1/scale resolution."""

    valueChanged = pyqtSignal(float)

    def __init__(self, lo, hi, scale: int = 1, decimals: int = 0):
        super().__init__()
        self.scale = scale
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.spin = QDoubleSpinBox() if scale > 1 else QSpinBox()
        if scale > 1:
            self.spin.setDecimals(decimals)
            self.spin.setSingleStep(1 / scale)
        # a typed value is taken on Enter or when the box loses focus: reacting to every keystroke
        # re-rendered and reformatted the box mid-typing ("-0" became 0.000)
        self.spin.setKeyboardTracking(False)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.spin)
        self.setRange(lo, hi)
        self.slider.valueChanged.connect(lambda v: self._changed(v / self.scale))
        self.spin.valueChanged.connect(lambda v: self._changed(v))

    def _changed(self, v) -> None:
        self.setValue(v)
        self.valueChanged.emit(self.value())

    def _quiet(self):
        return [(w, w.blockSignals(True)) for w in (self.slider, self.spin)]

    def setRange(self, lo, hi) -> None:  # noqa: N802
        was = self._quiet()
        self.slider.setRange(round(lo * self.scale), round(hi * self.scale))
        self.spin.setRange(lo, hi) if self.scale > 1 else self.spin.setRange(int(lo), int(hi))
        for w, old in was:
            w.blockSignals(old)

    def maximum(self):
        return self.spin.maximum()

    def value(self):
        return self.spin.value()

    def setValue(self, v) -> None:  # noqa: N802
        was = self._quiet()
        self.spin.setValue(v if self.scale > 1 else int(round(v)))
        self.slider.setValue(round(self.spin.value() * self.scale))
        for w, old in was:
            w.blockSignals(old)

    def setToolTip(self, tip: str) -> None:  # noqa: N802 (Qt naming)
        self.slider.setToolTip(tip)
        self.spin.setToolTip(tip)
