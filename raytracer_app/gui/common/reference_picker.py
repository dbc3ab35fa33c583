"""The "GPU reference" choice of a benchmark panel and of the sphere count curve: none, or one of the devices
whose results the app ships (raytracer_app.gui.common.reference_results), drawn as dashed blue ghosts labelled
with the device. Where none are shipped it is disabled and says so."""

from __future__ import annotations

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QComboBox

from raytracer_app.gui.common import reference_results
from raytracer_app.gui.common.saving import in_background, message_of

NONE = "no GPU reference"


class ReferencePicker(QComboBox):
    """``chosen(reference or None)`` when the user picks; ``said(text, error)`` for the status line."""

    chosen = pyqtSignal(object)
    said = pyqtSignal(str, bool)

    def __init__(self, target: str, folder=None, parent=None):
        super().__init__(parent)
        self.target, self.folder = target, folder
        self.reference = None
        self.paths: dict[str, object] = {}
        self.refresh()
        self.currentIndexChanged.connect(lambda _: self._pick())

    def refresh(self) -> None:
        """List the shipped files again (a folder listing: nothing is read until one is picked)."""
        self.blockSignals(True)
        self.clear()
        found = reference_results.listed(self.target, self.folder)
        self.paths = {f"show {label} reference": path for label, path in found}
        self.addItems([NONE, *self.paths])
        self.setEnabled(bool(found))
        self.setToolTip(f"draw what {', '.join(label for label, _ in found)} measured for {self.target} behind "
                        "this chart as dashed blue ghosts (results shipped with the app)" if found
                        else reference_results.none_text(self.target))
        self.blockSignals(False)

    def _pick(self) -> None:
        path = self.paths.get(self.currentText())
        if path is None:
            self.reference = None
            self.chosen.emit(None)
            return
        try:
            self.reference = in_background(lambda: reference_results.load(path, self.target))
        except Exception as exc:  # noqa: BLE001 - a damaged shipped file: said, and nothing drawn
            self.said.emit(f"cannot show the reference: {message_of(exc)}", True)
            self.blockSignals(True)
            self.setCurrentIndex(0)
            self.blockSignals(False)
            self.reference = None
            self.chosen.emit(None)
            return
        self.said.emit(self.reference.describe(), False)
        self.chosen.emit(self.reference)
