"""Render > Compare Memory's dialog: the median kernel time with global and with constant memory, side by
side, and why they differ."""

from __future__ import annotations

from PyQt6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout

from kernels.backend import choice
from raytracer_app.gui.common.charts import CompareChart

WHY_MEMORY_DIFFERS = (
    "Constant memory broadcasts one address to a whole warp and caches it, so when every thread reads the "
    "same sphere (uniform) it is one read for 32 threads; threads reading different addresses (staggered) "
    "are serialised, where global memory would serve them in parallel."
)


class CompareDialog(QDialog):
    """Median kernel time with global and with constant memory, side by side, and why they differ."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Compare memory: global vs constant")
        self.chart = CompareChart()
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        why = QLabel(WHY_MEMORY_DIFFERS)
        why.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.chart, 1)
        lay.addWidget(self.summary)
        lay.addWidget(why)
        lay.addWidget(buttons)
        self.resize(560, 480)

    def show_frames(self, frames, memories, what: str) -> None:
        """The two frames read from ``memories`` (in order); ``what`` says what they show."""
        self.chart.show_frames(frames)
        g, c = (f.kernel for f in frames)
        first, second = memories
        faster = second if c.median_ms < g.median_ms else first
        ratio = max(g.median_ms, c.median_ms) / max(min(g.median_ms, c.median_ms), 1e-12)
        self.summary.setText(
            f"{what}, {g.repeats} renders each ({g.method}): "
            f"{first} {g.median_ms:.3f} ms, {second} {c.median_ms:.3f} ms; {faster} is {ratio:.2f}x faster."
            + (" (The simulator runs threads in Python: its timings say nothing about a GPU.)"
               if choice(frames[0].backend).is_simulator else ""))
