"""Watch the desktop app's memory under View > Render Continuously: prints the resident set size (RSS)
every --every seconds, then the first, largest and last values and the frames rendered.

    QT_QPA_PLATFORM=offscreen python scripts/gui_memory.py --seconds 600 --backend cpu

Uses a throw-away QSettings folder, so your settings are neither read nor changed. Linux only (reads
/proc/self/status).
"""

from __future__ import annotations

import argparse
import tempfile
import time


def rss_mb() -> float:
    """This process's resident set size in MB (VmRSS)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS line in /proc/self/status")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu", help="auto, cuda, cpu or sim (default cpu)")
    parser.add_argument("--seconds", type=float, default=600.0, help="how long to render continuously (default 600)")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between RSS lines (default 10)")
    args = parser.parse_args(argv)

    from kernels import backend as backends

    backends.prepare(args.backend)
    from PyQt6.QtCore import QSettings
    from PyQt6.QtWidgets import QApplication

    folder = tempfile.TemporaryDirectory(prefix="gui-memory-")  # removed when the script ends
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, folder.name)
    app = QApplication.instance() or QApplication([])
    from raytracer_app.gui.shell.main_window import MainWindow

    backend = backends.resolve(args.backend)
    window = MainWindow(backend)
    window.show()
    deadline = time.perf_counter() + 120
    while window.first_frame_s is None and time.perf_counter() < deadline:
        app.processEvents()
    window.continuous_action.setChecked(True)
    start = time.perf_counter()
    series, next_at = [], start
    while True:
        now = time.perf_counter()
        if now >= next_at:
            series.append(rss_mb())
            print(f"t={now - start:7.1f} s  rss={series[-1]:8.1f} MB  frames={window.log.frames_seen}", flush=True)
            next_at += args.every
        if now - start >= args.seconds:
            break
        app.processEvents()
        time.sleep(0.001)  # let the render thread run
    window.continuous_action.setChecked(False)
    series.append(rss_mb())
    print(f"rss MB: first {series[0]:.1f}, max {max(series):.1f}, last {series[-1]:.1f}; "
          f"{window.log.frames_seen} frames in {time.perf_counter() - start:.0f} s on {backend.label}", flush=True)
    window.close()
    end = time.perf_counter() + 30
    while not window.render_thread.isFinished() and time.perf_counter() < end:
        app.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
