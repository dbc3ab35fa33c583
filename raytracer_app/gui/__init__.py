"""The desktop GUI (PyQt6 + pyqtgraph). ``run_gui`` is the entry point the CLI calls.

One sub-package per tool, each holding that tool's widgets, models and workers: render/, benchmarks/,
inspector/, editor/, lessons/, access/; the shell/ (window, menus, workspaces, layout, status line) puts
them in one window; common/ holds what several share (charts, dialogs, settings, workers). Models and state
never hold a widget (tests/test_architecture.py lists them).
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

ICON = Path(__file__).resolve().parents[2] / "assets" / "icons" / "app.svg"


def _first_choice(backend_name: str, device: int | None, settings) -> tuple[str, int | None]:
    """(backend name, GPU) to try first: the ones asked for, or with 'auto' and no device the backend (and
    its GPU) saved last time."""
    from kernels import backend as backends
    from raytracer_app.gui.common.settings import Keys, read

    if backends.choice(backend_name).is_auto and device is None:
        saved = read(settings, Keys.BACKEND, "auto", str)
        if saved in backends.BACKEND_NAMES and not backends.choice(saved).is_auto:
            return saved, (read(settings, Keys.DEVICE, 0, int, 0, 2**31 - 1) if backends.choice(saved).is_gpu else None)
    return backend_name, device


def _resolve_backend(backend_name: str, device: int | None, settings):
    """The backend to open with: the one asked for; with 'auto' the one saved last time if it still works.
    A backend that cannot run here falls back to auto, with a message instead of an error."""
    from kernels import backend as backends
    from kernels.errors import InputError

    first = _first_choice(backend_name, device, settings)
    if first != (backend_name, device):  # a saved choice: if it no longer works, what was asked, silently
        try:
            return backends.resolve(*first), first[0], ""
        except (InputError, ValueError, TypeError):
            pass
    try:
        return backends.resolve(backend_name, device), backend_name, ""
    except InputError as exc:
        b = backends.resolve("auto")
        return b, "auto", f"{exc}; using {b.label}"


_showing_error = False


def _excepthook(kind, value, tb):
    """An exception escaping a slot becomes one line in the main window's status bar (a dialog when
    there is no window); the app keeps running. RAYTRACER_DEBUG=1 also prints the traceback."""
    global _showing_error
    from kernels.errors import one_line

    text = one_line(value) if value is not None else kind.__name__
    if os.environ.get("RAYTRACER_DEBUG"):
        traceback.print_exception(kind, value, tb)
    else:
        print(f"raytracer-app: {text}", file=sys.stderr)
    if _showing_error:  # one dialog at a time; the rest go to stderr
        return
    try:
        from PyQt6.QtWidgets import QApplication, QMainWindow, QMessageBox

        app = QApplication.instance()
        if app is None:
            return
        windows = [w for w in app.topLevelWidgets() if isinstance(w, QMainWindow) and w.isVisible()]
        if windows:
            windows[0].statusBar().showMessage(f"error: {text}", 15000)
            return
        _showing_error = True
        QMessageBox.warning(None, "Error", f"{text}\n\nThe app keeps running.")
    except Exception:  # noqa: BLE001
        pass
    finally:
        _showing_error = False


def run_gui(backend_name: str = "auto", device: int | None = None) -> int:
    """Create the QApplication and the main window, run the event loop; returns the exit code."""
    from raytracer_app import STARTED

    opened = open_window(backend_name, device, STARTED)
    if isinstance(opened, int):
        return opened
    app, window = opened
    code = app.exec()
    if window.restart_argv:  # Render > Restart with / without the CUDA simulator
        from raytracer_app.gui.shell.restart import exec_restart

        exec_restart(window.restart_argv)
    from raytracer_app.gui.common.workers import ORPHANS

    if any(t.isRunning() for t in ORPHANS):
        # a kernel that cannot be interrupted (e.g. a huge simulator render) is still running: settings are
        # saved, so end the process now instead of waiting for it
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def open_window(backend_name: str = "auto", device: int | None = None, t_launch: float | None = None):
    """Everything the app does before its event loop runs: returns (QApplication, shown MainWindow), or an
    exit code when no window can open. scripts/gui_fps.py calls it too, so it measures the app's own start
    (``t_launch``: when the process began, as the first frame's time is counted from it)."""
    t_launch = time.perf_counter() if t_launch is None else t_launch
    from kernels import backend as backends

    backends.prepare(backend_name)  # before numba is imported (no-op when the CLI already did)
    from raytracer_app.gui.shell.display import display_problem

    problem = display_problem()
    if problem:  # decided before QApplication exists: without a display Qt aborts the process
        print(f"raytracer-app: error: {problem}", file=sys.stderr)
        return 1
    from PyQt6.QtCore import QCoreApplication

    from raytracer_app.gui.common.settings import APPLICATION, ORGANIZATION, make_settings

    QCoreApplication.setOrganizationName(ORGANIZATION)
    QCoreApplication.setApplicationName(APPLICATION)
    settings = make_settings()
    backend, name, message = _resolve_backend(backend_name, device, settings)

    from PyQt6.QtGui import QIcon
    from PyQt6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    if ICON.exists():
        app.setWindowIcon(QIcon(str(ICON)))
    sys.excepthook = _excepthook

    from raytracer_app.gui.shell.main_window import MainWindow

    window = MainWindow(backend, name, settings, t_launch=t_launch, startup_message=message)
    window.show()
    return app, window


__all__ = ["run_gui"]
