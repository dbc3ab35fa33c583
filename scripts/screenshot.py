"""Take the README screenshot (assets/screenshot.png) of the real app on an X display.

Usage (no GPU needed: the app runs on the CPU backend):

    xvfb-run -s "-screen 0 1920x1080x24" python scripts/screenshot.py [--size 1920x1080] [--out assets/screenshot.png]

What it does, with the app's own start-up (``run_gui``) and a throw-away QSettings dir (your settings are
not read or touched):

1. opens the main window on the CPU backend at ``--size`` (default 1920x1080, the screen's size at most),
   Spheres tab, 1024x1024, in the default layout (View > Reset Layout), the Reduction panel in front;
2. renders a random scene of 40 spheres (seed 1; ``--spheres``, ``--seed``) or a scene preset
   (``--scene book-20``, the book's scene), then renders it again back to back a few times (as View >
   Render Continuously does) so the status line shows kernel time, frame time and frames per second;
3. runs the Reduction panel as a sweep over N (1024 .. 4M int32 elements, the CPU variants: numpy and
   cpu-parallel, with the copy-bandwidth line), so its chart and table fill in;
4. grabs the whole screen of the X display (falls back to ``window.grab()`` if the screen cannot be
   grabbed), saves the PNG and closes the app. It exits by itself: 0 on success, 1 on a failure or when
   something takes longer than the guard time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPHERES, SEED = 40, 1  # the random scene shown (colourful, with depth, and a PNG well under 400 KB)
BENCH_PANEL = "Reduction"
BENCH_N = 1 << 22  # 4M elements
BENCH_REPEATS = 10
WINDOW = (1920, 1080)
FPS_FRAMES = 12  # frames rendered back to back before the benchmark starts (fps in the status line)
GUARD_S = 300  # never hang


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "assets" / "screenshot.png", help="PNG to write")
    p.add_argument("--spheres", type=int, default=SPHERES, help=f"spheres in the random scene (default {SPHERES})")
    p.add_argument("--seed", type=int, default=SEED, help=f"seed of the random scene (default {SEED})")
    p.add_argument("--scene", help="show this scene preset of assets/scenes instead (book-20, crowd-200, ...)")
    p.add_argument("--size", default="{}x{}".format(*WINDOW), help="window size WxH (default %(default)s)")
    args = p.parse_args(argv)
    args.size = tuple(int(v) for v in args.size.lower().split("x"))
    return args


class Driver:
    """Steps the running app through the scenario with event-loop callbacks (no blocking waits)."""

    def __init__(self, out: Path, scene: str | None, size=WINDOW):
        self.out, self.scene, self.size = out, scene, size
        self.frames_left = 0
        self.window = None
        self.ok = False
        self.t0 = time.perf_counter()

    def log(self, text: str) -> None:
        print(f"[{time.perf_counter() - self.t0:6.1f} s] {text}", flush=True)

    def poll(self, ready, then, every_ms: int = 50) -> None:
        """Call ``then()`` once ``ready()`` is true, checking every ``every_ms``."""
        from PyQt6.QtCore import QTimer

        if ready():
            then()
        else:
            QTimer.singleShot(every_ms, lambda: self.poll(ready, then, every_ms))

    # ------------------------------------------------------------------ steps
    def start(self) -> None:
        from PyQt6.QtWidgets import QApplication

        from raytracer_app.gui.main_window import MainWindow

        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if not windows:  # run_gui has not shown it yet
            self.poll(lambda: any(isinstance(w, MainWindow) and w.isVisible() for w in QApplication.topLevelWidgets()),
                      self.start)
            return
        w = self.window = windows[0]
        screen = w.screen().availableGeometry()
        w.setGeometry(screen.x(), screen.y(), min(self.size[0], screen.width()), min(self.size[1], screen.height()))
        w.reset_layout()  # the default arrangement for this width, as a first start gets
        w.bench_docks[list(w.panels).index(BENCH_PANEL)].raise_()
        self.log(f"window on {QApplication.platformName()} display, screen {screen.width()}x{screen.height()}, "
                 f"backend {w.model.backend.label}")
        c = w.controls
        if self.scene:
            if c.presets.findText(self.scene) < 0:
                self.fail(f"no scene preset {self.scene!r}")
                return
            c.presets.setCurrentText(self.scene)
            c._preset_chosen(self.scene)  # what choosing the preset in the combo box does
        self.poll(self._scene_shown, self.measure_fps)

    def _scene_shown(self) -> bool:
        shown = self.window.last.get("spheres")
        if shown is None:
            return False
        frame, request = shown
        return request.scene is self.window.model.scene and frame.size == (1024, 1024)

    def measure_fps(self) -> None:
        """Render again as soon as each frame is shown (what View > Render Continuously does), a fixed
        number of times, so the status line ends with a frames-per-second figure."""
        w = self.window
        self.log(f"{w.model.scene.count} spheres rendered: {w.status['kernel'].text()}, {w.status['frame'].text()}")
        self.frames_left = FPS_FRAMES
        w.worker.frameReady.connect(self._next_frame)  # after the window's own slot, which shows the frame
        w.request_render(force=True)

    def _next_frame(self, frame, request) -> None:
        w = self.window
        self.frames_left -= 1
        if self.frames_left > 0:
            w.request_render(force=True)
            return
        w.worker.frameReady.disconnect(self._next_frame)
        self.log(f"after {FPS_FRAMES} frames: {w.status['kernel'].text()}, {w.status['frame'].text()}, "
                 f"{w.status['fps'].text()}")
        self.poll(w.worker.idle, self._start_bench)

    def _start_bench(self) -> None:
        w = self.window
        panel = w.panels[BENCH_PANEL]
        panel.sweep.setCurrentText("sweep N")
        panel.n.setValue(BENCH_N)
        panel.repeats.setValue(BENCH_REPEATS)
        panel.metric.setCurrentText("GB/s")
        panel.show_peak.setChecked(True)
        panel.runFinished.connect(self.bench_done)
        self.log(f"{BENCH_PANEL}: sweep N up to {BENCH_N}, variants {', '.join(panel.selected_variants())}")
        if not panel.run():
            self.fail(f"{BENCH_PANEL} panel did not start: {panel.status.text()}")

    def bench_done(self, stopped: bool) -> None:
        from PyQt6.QtCore import QTimer

        panel = self.window.panels[BENCH_PANEL]
        self.log(f"{BENCH_PANEL}: {panel.status.text()}")
        if stopped or panel.table.rowCount() == 0:
            self.fail("the benchmark did not complete")
            return
        panel.table.scrollToTop()
        QTimer.singleShot(300, self.grab)  # let the last chart update and the status line repaint

    def grab(self) -> None:
        from PyQt6.QtCore import Qt
        from PyQt6.QtGui import QImage
        from PyQt6.QtWidgets import QApplication

        w = self.window
        w.repaint()
        QApplication.processEvents()
        g = w.frameGeometry()
        pixmap = w.screen().grabWindow(0, g.x(), g.y(), g.width(), g.height())  # what the X server shows
        how = "screen"
        if pixmap.isNull() or pixmap.toImage().allGray():
            pixmap, how = w.grab(), "window.grab()"
        image = pixmap.toImage().convertToFormat(QImage.Format.Format_RGB32)
        if image.width() > self.size[0]:  # a HiDPI screen: keep the image at the asked width
            image = image.scaledToWidth(self.size[0], Qt.TransformationMode.SmoothTransformation)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(self.out), "PNG", 0):  # quality 0: the smallest PNG (zlib level 9)
            self.fail(f"cannot write {self.out}")
            return
        self.ok = True
        self.log(f"{how} grab {image.width()}x{image.height()} written to {self.out} "
                 f"({self.out.stat().st_size} bytes)")
        w.close()

    def fail(self, text: str) -> None:
        from PyQt6.QtCore import QTimer
        from PyQt6.QtWidgets import QApplication

        self.log(f"error: {text}")
        for _ in range(5):  # e.g. the app's "Unexpected error" box
            modal = QApplication.activeModalWidget()
            if modal is None:
                break
            modal.close()
        if self.window is not None:
            self.window.close()  # stops the workers, as when the user closes it
        QTimer.singleShot(10_000, lambda: QApplication.exit(1))  # in case closing is refused


def main(argv=None) -> int:
    args = parse_args(argv)
    from PyQt6.QtCore import QSettings, QTimer
    from PyQt6.QtWidgets import QApplication

    settings_dir = tempfile.TemporaryDirectory(prefix="raytracer-screenshot-")
    # the app's settings go to a temp dir, as in tests/test_gui.py
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings_dir.name)
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)

    from raytracer_app.gui import run_gui
    from raytracer_app.gui.state import Keys, make_settings

    app = QApplication(sys.argv[:1])  # run_gui uses the existing instance
    if app.platformName() != "xcb":
        print(f"warning: Qt platform is {app.platformName()!r}, not an X display (run it under xvfb-run)",
              file=sys.stderr)
    s = make_settings()  # what the window reads at start
    s.setValue(Keys.TAB, "spheres")
    s.setValue(Keys.SIZE.format("spheres"), "1024x1024")
    s.setValue(Keys.COUNT, args.spheres)
    s.setValue(Keys.SEED, args.seed)
    s.sync()

    driver = Driver(args.out.resolve(), args.scene, args.size)
    QTimer.singleShot(0, driver.start)
    guard = QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(lambda: driver.fail(f"gave up after {GUARD_S} s"))
    guard.start(GUARD_S * 1000)
    code = run_gui("cpu")
    guard.stop()
    settings_dir.cleanup()
    return 0 if code == 0 and driver.ok else 1


if __name__ == "__main__":
    sys.exit(main())
