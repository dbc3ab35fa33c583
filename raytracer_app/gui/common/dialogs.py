"""Dialogs: Help > Device Info, Help > About, and the Compare memory chart."""

from __future__ import annotations

from PyQt6.QtGui import QFontDatabase
from PyQt6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout

from kernels.backend import choice
from raytracer_app.gui.charts import CompareChart

WHY_MEMORY_DIFFERS = (
    "Constant memory broadcasts one address to a whole warp and caches it, so when every thread reads the "
    "same sphere (uniform) it is one read for 32 threads; threads reading different addresses (staggered) "
    "are serialised, where global memory would serve them in parallel."
)


def versions() -> dict[str, str]:
    from PyQt6.QtCore import PYQT_VERSION_STR, QT_VERSION_STR, qVersion

    from kernels.harness.bench import package_version as ver

    return {"raytracer-app": ver("raytracer-app"), "numba": ver("numba"), "numba-cuda": ver("numba-cuda"),
            "numpy": ver("numpy"), "PyQt6": f"{PYQT_VERSION_STR} (built with Qt {QT_VERSION_STR})",
            "Qt (running)": qVersion(), "pyqtgraph": ver("pyqtgraph")}


def about_text() -> str:
    rows = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in versions().items())
    return ("<h3>GPU kernel lab</h3><p>Ray-traced spheres (global vs constant memory), the Julia set, reductions, "
            f"histograms and hash tables as Numba CUDA kernels with CPU twins.</p><table>{rows}</table>")


class TextDialog(QDialog):
    """A read-only monospace text, e.g. the device report."""

    def __init__(self, title: str, text: str, parent=None):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.text = QPlainTextEdit(text)
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.text)
        lay.addWidget(buttons)
        self.resize(720, 480)


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

    def show_frames(self, frames, pattern: str, spheres: int, size) -> None:
        self.chart.show_frames(frames)
        g, c = (f.kernel for f in frames)
        faster = "constant" if c.median_ms < g.median_ms else "global"
        ratio = max(g.median_ms, c.median_ms) / max(min(g.median_ms, c.median_ms), 1e-12)
        self.summary.setText(
            f"{spheres} spheres, {size[0]}x{size[1]}, {pattern} access, {g.repeats} renders each ({g.method}): "
            f"global {g.median_ms:.3f} ms, constant {c.median_ms:.3f} ms; {faster} is {ratio:.2f}x faster."
            + (" (The simulator runs threads in Python: its timings say nothing about a GPU.)"
               if choice(frames[0].backend).is_simulator else ""))


def ask_path(parent, title: str, filters: str, name: str = "", save: bool = True, settings=None) -> str | None:
    """A file chosen in a save (or open) dialog that starts in the folder used last and remembers the new one;
    None when cancelled."""
    from PyQt6.QtWidgets import QFileDialog

    from raytracer_app.gui import file_dialogs
    from raytracer_app.gui.settings import make_settings

    settings = settings if settings is not None else make_settings()
    ask = QFileDialog.getSaveFileName if save else QFileDialog.getOpenFileName
    path, _ = ask(parent, title, file_dialogs.start_in(settings, name), filters)
    file_dialogs.remember(settings, path)
    return path or None
