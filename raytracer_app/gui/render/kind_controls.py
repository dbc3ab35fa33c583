"""A render kind's controls made from its descriptor (kernels.harness.renderable.Control, data, not Qt): a
slider with a spin box for a number, a combo for a choice, two boxes for a point. Each writes its value into
the RenderModel (``set_params``) and follows the model's ``changed`` signal, as the hand-built groups do."""

from __future__ import annotations

from PyQt6.QtWidgets import (QAbstractSpinBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QHBoxLayout,
                             QPushButton, QWidget)

from raytracer_app.gui.common.slider_spin import SliderSpin

POINT_RANGE = 1e6  # a point's boxes: any coordinate the kind's own check accepts within this
SLIDER_STEPS = 1000  # a float slider's resolution over its range
GPU_ONLY_TIP = "applies to CUDA kernels; the CPU backend has none"


class KindControls(QGroupBox):
    """The controls of ``renderable`` (its ``window`` controls, in order), shown while its tab is."""

    def __init__(self, model, renderable):
        super().__init__(renderable.title)
        self.model, self.kind = model, renderable
        self.widgets: dict[str, QWidget] = {}
        form = QFormLayout(self)
        for control in renderable.controls:
            if control.window:
                widget = self._widget(control)
                widget.setToolTip(control.help)
                self.widgets[control.name] = widget
                form.addRow(control.label, widget)
        if renderable.pan_zoom:
            reset = QPushButton("Reset view")
            reset.setToolTip("the default centre and zoom (drag to pan, the wheel zooms about the cursor)")
            reset.clicked.connect(lambda: model.reset_view(renderable.name))
            form.addRow(reset)
        self._inputs = [w for w in self.findChildren(QWidget) if isinstance(w, (QAbstractSpinBox, QComboBox, SliderSpin))]
        model.changed.connect(self.sync)
        self.sync()

    def _set(self, name: str, value) -> None:
        if not self.model.set_params(self.kind.name, **{name: value}):
            self.sync()  # refused: show the value in use

    def _widget(self, c) -> QWidget:
        name = c.name
        if c.kind == "choice":
            combo = QComboBox()
            combo.addItems([str(x) for x in c.choices])
            combo.textActivated.connect(lambda text: self._set(name, c.parse(text)))
            return combo
        if c.kind == "int":
            slider = SliderSpin(int(c.low), int(c.high))
            slider.valueChanged.connect(lambda v: self._set(name, int(v)))
            return slider
        if c.kind == "float" and not c.log:
            slider = SliderSpin(c.low, c.high, int(SLIDER_STEPS / (c.high - c.low)) or 1, 6)
            slider.valueChanged.connect(lambda v: self._set(name, float(v)))
            return slider
        if c.kind == "float":  # a log scale: a box whose step grows with the value
            box = _number_box(c.low, c.high)
            box.setStepType(QAbstractSpinBox.StepType.AdaptiveDecimalStepType)
            box.valueChanged.connect(lambda v: self._set(name, float(v)))
            return box
        row = QWidget()  # a point: two boxes
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        x, y = _number_box(-POINT_RANGE, POINT_RANGE), _number_box(-POINT_RANGE, POINT_RANGE)
        x.valueChanged.connect(lambda v: self._set(name, (float(v), getattr(self._params(), name)[1])))
        y.valueChanged.connect(lambda v: self._set(name, (getattr(self._params(), name)[0], float(v))))
        lay.addWidget(x)
        lay.addWidget(y)
        row.boxes = (x, y)
        return row

    def _params(self):
        return self.model.params[self.kind.name]

    def sync(self, group: str = "") -> None:
        """Show the model's values (signals blocked, so nothing echoes back) and which controls apply here."""
        cpu = self.model.backend.is_host
        self.setVisible(self.model.tab == self.kind.name)
        for w in self._inputs:
            w.blockSignals(True)
        try:
            params = self._params()
            for c in self.kind.controls:
                widget = self.widgets.get(c.name)
                if widget is None:
                    continue
                value = getattr(params, c.name)
                if c.kind == "choice":
                    widget.setCurrentText(str(value))
                elif c.kind == "point":
                    for box, v in zip(widget.boxes, value):
                        box.setValue(v)
                else:
                    widget.setValue(value)
                widget.setEnabled(not (c.gpu_only and cpu))
                widget.setToolTip(GPU_ONLY_TIP if c.gpu_only and cpu else c.help)
        finally:
            for w in self._inputs:
                w.blockSignals(False)


def _number_box(low: float, high: float) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setDecimals(12)
    box.setRange(low, high)
    box.setKeyboardTracking(False)  # a typed value is taken on Enter, not at every keystroke
    return box
