"""The one-click way to the CUDA simulator, where a row was skipped for lack of CUDA on the CPU backend: a
line with a link, shown under a benchmark panel's or the Variant Editor's status; ``restartRequested`` asks
the window to restart with --backend sim (it asks first about unsaved text)."""

from __future__ import annotations

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QLabel

from kernels.backend import SkipKind

TEXT = ('{count} skipped: {what} {verb} CUDA, which the CPU backend has not. '
        '<a href="restart">Restart with the CUDA Simulator</a> runs it without a GPU (slowly; small inputs).')


def needs_cuda(row) -> bool:
    """A row skipped because this backend has no CUDA (the simulator would run it)."""
    skip = getattr(row, "skip", None)
    return skip is not None and skip.kind is SkipKind.NEEDS_CUDA_BACKEND


class SimulatorOffer(QLabel):
    restartRequested = pyqtSignal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWordWrap(True)
        self.setToolTip("closes the window (saving everything, asking about unsaved text) and starts the app "
                        "again with --backend sim")
        self.linkActivated.connect(lambda _: self.restartRequested.emit())
        self.hide()

    def offer(self, rows) -> bool:
        """Shown when any of ``rows`` was skipped for lack of CUDA (hidden otherwise); True when shown."""
        skipped = [r.variant for r in rows if needs_cuda(r)]
        if skipped:
            names = ", ".join(dict.fromkeys(skipped))
            self.setText(TEXT.format(count=f"{len(skipped)} row(s)", what=names,
                                     verb="needs" if len(set(skipped)) == 1 else "need"))
        self.setVisible(bool(skipped))
        return bool(skipped)
