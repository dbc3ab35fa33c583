"""Dialogs every tool uses: a read-only text (Help > Device Info), Help > About's text, and the file dialog
that opens where files were chosen last (ask_path)."""

from __future__ import annotations

from PyQt6.QtGui import QFontDatabase
from PyQt6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QVBoxLayout


def versions() -> dict[str, str]:
    from PyQt6.QtCore import PYQT_VERSION_STR, QT_VERSION_STR, qVersion

    from kernels.harness.rows import package_version as ver

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


def ask_path(parent, title: str, filters: str, name: str = "", save: bool = True, settings=None,
             folder=None) -> str | None:
    """A file chosen in a save (or open) dialog that starts in ``folder`` when given (Load baseline: where runs
    are saved), else in the folder used last, and remembers the new one; None when cancelled."""
    from pathlib import Path

    from PyQt6.QtWidgets import QFileDialog

    from raytracer_app.gui.common import file_dialogs
    from raytracer_app.gui.common.settings import make_settings

    settings = settings if settings is not None else make_settings()
    ask = QFileDialog.getSaveFileName if save else QFileDialog.getOpenFileName
    start = str(Path(folder) / name) if folder is not None and Path(folder).is_dir() else file_dialogs.start_in(settings, name)
    path, _ = ask(parent, title, start, filters)
    file_dialogs.remember(settings, path)
    return path or None
