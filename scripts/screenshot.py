"""Take the README screenshots (assets/screenshot.png, assets/inspector.png) of the real app on an X display.

Usage (no GPU needed: the app runs on the CPU backend; the Inspector compiles offline with the compiler
packages, ``pip install -e '.[inspect]'``):

    xvfb-run -s "-screen 0 1920x1080x24" python scripts/screenshot.py [--size 1920x1080] [--out assets/screenshot.png]
    xvfb-run -s "-screen 0 1920x1080x24" python scripts/screenshot.py --inspector [--out assets/inspector.png]

What it does, with the app's own start-up (``run_gui``) and a throw-away folder for the app's settings and
caches (your settings are not read, your saved runs and compiles not touched):

1. opens the main window on the CPU backend at ``--size`` (default 1920x1080, the screen's size at most),
   Spheres tab, 1024x1024, in the default layout (View > Reset Layout), the Reduction panel in front of the
   Benchmarks workspace (the README's picture is that workspace: ``--workspace Benchmarks``);
2. renders a random scene of 40 spheres (seed 1; ``--spheres``, ``--seed``) or a scene preset
   (``--scene book-20``, the book's scene), then renders it again back to back a few times (as View >
   Render Continuously does) so the status line shows kernel time, frame time and frames per second;
3. runs the Reduction panel as a sweep over N (1024 .. 4M int32 elements, the CPU variants: numpy and
   cpu-parallel, with the copy-bandwidth line), so its chart and table fill in;
4. grabs the whole screen of the X display (falls back to ``window.grab()`` if the screen cannot be
   grabbed), saves the PNG and closes the app. It exits by itself: 0 on success, 1 on a failure or when
   something takes longer than the guard time.

With ``--inspector`` steps 2 and 3 are replaced by the Inspector (the default ``--out`` is then
assets/inspector.png):

2. opens it as View > Inspector does, and in its Kernel tab picks Target reduction, Variant best, Arch sm_90
   and presses Inspect (the compile runs on the Inspector's worker thread, the compiler in a child process);
3. once the report is shown, moves the occupancy marker to 256 threads per block (what a benchmark panel's
   block-size slider does) and puts the cursor on the kernel's first ``total = warp_sum(total)`` line (as a
   click on it does), so that line and its PTX and SASS are highlighted;
4. makes the dock most of the window's height and grabs the dock alone (its part of the X screen, or
   ``dock.grab()``). It fails when the compiler packages are missing (no PTX or SASS to show).

Options for checking the layout (issue 20) rather than the README's pictures:

- ``--shrink-maximize``: after placing the window, shrink it (900x600), then maximize it, and print the
  docks' widths before and after (they should get their share back);
- ``--reference H100``: the benchmark panel shows that device's shipped reference results (ghost points
  and ghost rows);
- ``--open-inspector``: after the benchmark, open View > Inspector and inspect reduction best for sm_90
  (as with --inspector), then grab the whole window;
- ``--workspace Benchmarks``: the workspace shown when the window is grabbed (each owns the window);
- ``--every-tool DIR``: instead, every workspace's tool at work, one grab each, as DIR/WxH-TOOL.png.
"""

from __future__ import annotations

import argparse
import os
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
# --inspector: what the Inspector shows
INSPECT = ("reduction", "best", "sm_90")  # target, variant, architecture
INSPECT_BLOCK = 256  # threads per block at the occupancy marker
INSPECT_LINE = "total = warp_sum(total)"  # the Python line selected (its warp shuffles in PTX and SASS)
DOCK_SHARE = 0.72  # of the window's height given to the Inspector dock


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="PNG to write (default assets/screenshot.png, with --inspector "
                   "assets/inspector.png)")
    p.add_argument("--inspector", action="store_true",
                   help="grab the Inspector dock (reduction best, sm_90, block 256, one Python line highlighted) "
                        "instead of the window with a benchmark")
    p.add_argument("--spheres", type=int, default=SPHERES, help=f"spheres in the random scene (default {SPHERES})")
    p.add_argument("--seed", type=int, default=SEED, help=f"seed of the random scene (default {SEED})")
    p.add_argument("--scene", help="show this scene preset of assets/scenes instead (book-20, crowd-200, ...)")
    p.add_argument("--size", default="{}x{}".format(*WINDOW), help="window size WxH (default %(default)s)")
    p.add_argument("--shrink-maximize", action="store_true",
                   help="shrink the window, maximize it again and print the docks' widths before and after")
    p.add_argument("--reference", help="show this device's shipped reference results in the panel (e.g. H100)")
    p.add_argument("--open-inspector", action="store_true",
                   help="after the benchmark, open the Inspector (reduction best, sm_90) and grab the whole window")
    p.add_argument("--workspace", help="the workspace shown when grabbing (Render, Benchmarks, Inspector, Editor, "
                   "Lessons, Access)")
    p.add_argument("--every-tool", type=Path, metavar="DIR",
                   help="instead: grab the screen once per workspace, each tool at work (a Reduction run, the best "
                        "kernel inspected where the compiler packages are, a new variant, the reduction lesson's "
                        "step 3, two traces), as DIR/WxH-TOOL.png (issue 35's proof)")
    args = p.parse_args(argv)
    args.size = tuple(int(v) for v in args.size.lower().split("x"))
    if args.out is None:
        args.out = ROOT / "assets" / ("inspector.png" if args.inspector else "screenshot.png")
    return args


class Driver:
    """Steps the running app through the scenario with event-loop callbacks (no blocking waits)."""

    def __init__(self, out: Path, scene: str | None, size=WINDOW, args=None):
        self.out, self.scene, self.size = out, scene, size
        self.args = args
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

        from raytracer_app.gui.shell.main_window import MainWindow

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
        if self.args is not None and self.args.shrink_maximize:
            self.shrink_maximize()
        else:
            self.begin()

    def dock_widths(self) -> str:
        w = self.window
        return (f"window {w.width()}x{w.height()}, workspace {w.workspaces.current().name}: Controls "
                f"{w.controls_dock.width()} px, view {w.view.width()} px, {BENCH_PANEL} dock {w.bench_docks[0].width()} px "
                f"(chart, table heights {w.panels[BENCH_PANEL].split.sizes()})")

    def shrink_maximize(self) -> None:
        """--shrink-maximize: shrink the window, maximize it, and say the docks' widths at each step."""
        from PyQt6.QtCore import QTimer

        w = self.window
        self.log("placed: " + self.dock_widths())
        w.showNormal()
        w.resize(900, 600)

        def maximize():
            self.log("shrunk: " + self.dock_widths())
            w.showMaximized()
            QTimer.singleShot(1500, lambda: (self.log("maximized: " + self.dock_widths()), self.begin()))

        QTimer.singleShot(1000, maximize)

    def begin(self) -> None:
        """The scenario, once the window is placed: the scene, frames per second, the benchmark."""
        w = self.window
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
        return not frame.preview and request.params.scene is self.window.model.scene and frame.size == (1024, 1024)

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
        if self.args is not None and self.args.reference:
            choice = f"show {self.args.reference} reference"
            if panel.reference.findText(choice) < 0:
                self.fail(f"no {choice!r} in the {BENCH_PANEL} panel")
                return
            panel.reference.setCurrentText(choice)
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
        ghosts = panel.table.measured_count()
        if ghosts < panel.table.rowCount():  # the last measured rows and the reference's ghost rows below them
            panel.table.scrollToItem(panel.table.item(max(ghosts - 2, 0), 0), panel.table.ScrollHint.PositionAtTop)
        if self.args is not None and self.args.open_inspector:
            self.open_inspector()
            return
        self.show_workspace()
        QTimer.singleShot(300, self.grab)  # let the last chart update and the status line repaint

    def show_workspace(self) -> None:
        if self.args is not None and self.args.workspace:
            self.window.workspaces.select(self.args.workspace)
            if self.args.workspace == "Benchmarks":
                self.window.bench_docks[list(self.window.panels).index(BENCH_PANEL)].raise_()

    def open_inspector(self) -> None:
        """--open-inspector: View > Inspector, reduction best for sm_90, then the whole window is grabbed."""
        w = self.window
        w.inspector_dock.toggleViewAction().trigger()
        panel = w.inspector.panel
        w.inspector.tabs.setCurrentWidget(panel)
        for box, value in zip((panel.target_box, panel.variant_box, panel.arch_box), INSPECT):
            box.setCurrentText(value)
        panel.reportShown.connect(self._inspected)
        panel.worker.failed.connect(lambda message, _: self.fail(f"the Inspector could not inspect: {message}"))
        panel.inspect_button.click()

    def _inspected(self, report) -> None:
        from PyQt6.QtCore import QTimer

        self.window.inspector.panel.reportShown.disconnect(self._inspected)
        self.log(f"Inspector: {report.target} {report.variant} {report.arch} shown")
        self.show_workspace()
        QTimer.singleShot(600, self.grab)

    def grab(self) -> None:
        from PyQt6.QtCore import QRect, Qt
        from PyQt6.QtGui import QImage
        from PyQt6.QtWidgets import QApplication

        w = self.window
        target = self.grabbed()
        w.repaint()
        QApplication.processEvents()
        if target is w:
            g = w.frameGeometry()
        else:  # a widget inside the window: its rectangle on the screen
            g = QRect(target.mapToGlobal(target.rect().topLeft()), target.size())
        pixmap = w.screen().grabWindow(0, g.x(), g.y(), g.width(), g.height())  # what the X server shows
        how = "screen"
        if pixmap.isNull() or pixmap.toImage().allGray():
            pixmap, how = target.grab(), f"{'window' if target is w else 'widget'}.grab()"
        image = pixmap.toImage().convertToFormat(QImage.Format.Format_RGB32)
        if image.width() > self.size[0]:  # a HiDPI screen: keep the image at the asked width
            image = image.scaledToWidth(self.size[0], Qt.TransformationMode.SmoothTransformation)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(self.out), "PNG", 0):  # quality 0: the smallest PNG (zlib level 9)
            self.fail(f"cannot write {self.out}")
            return
        self.ok = True
        self.log(f"{how} grab {image.width()}x{image.height()} written to {self.out} "
                 f"({self.out.stat().st_size} bytes); " + self.dock_widths())
        w.close()

    def grabbed(self):
        """The widget whose picture is saved: the whole window."""
        return self.window

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


class InspectorDriver(Driver):
    """--inspector: the Inspector dock showing one kernel, opened and driven through its own widgets."""

    def begin(self) -> None:
        from kernels.inspector import toolchain

        missing = toolchain.missing()
        if missing:
            self.fail(f"the Inspector needs the compiler packages ({', '.join(missing)}): {toolchain.EXTRA_HINT}")
            return
        w = self.window
        w.inspector_dock.toggleViewAction().trigger()  # View > Inspector: builds the dock's contents
        inspector = w.inspector
        if inspector is None or not w.inspector_dock.isVisible():
            self.fail("View > Inspector did not open the Inspector")
            return
        panel = inspector.panel
        inspector.tabs.setCurrentWidget(panel)  # the Kernel tab
        target, variant, arch = INSPECT
        for box, value in ((panel.target_box, target), (panel.variant_box, variant), (panel.arch_box, arch)):
            if box.findText(value) < 0:
                self.fail(f"the Inspector offers no {value!r}")
                return
            box.setCurrentText(value)  # the variant box refills when the target changes: target first
        panel.reportShown.connect(self.report_shown)
        # the worker's other answers (queued to this thread: the proxies of these lambdas are made here)
        panel.worker.failed.connect(lambda message, _: self.fail(f"the Inspector could not inspect: {message}"))
        panel.worker.sourceOnly.connect(lambda _, why, __: self.fail(f"the Inspector showed the source only: {why}"))
        self.log(f"Inspector: {target} {variant} for {arch}, Inspect pressed")
        panel.inspect_button.click()

    def report_shown(self, report) -> None:
        from PyQt6.QtCore import Qt, QTimer

        w = self.window
        inspector = w.inspector
        panel = inspector.panel
        panel.reportShown.disconnect(self.report_shown)
        if (report.target, report.variant, report.arch) != INSPECT:
            self.fail(f"the Inspector showed {report.target} {report.variant} {report.arch}, not {' '.join(INSPECT)}")
            return
        inspector.set_block(INSPECT_BLOCK)  # as a panel's block-size slider moves the marker
        xs, _ = panel.marker.getData()
        if list(xs) != [INSPECT_BLOCK]:
            self.fail(f"the occupancy marker is at {list(xs)}, not {INSPECT_BLOCK} threads")
            return
        o = panel.current_occupancy
        self.log(f"{report.target} {report.variant} on {report.arch}: {report.resources.registers} registers per "
                 f"thread; occupancy at {INSPECT_BLOCK} threads: {o.blocks_per_sm} blocks/SM, {o.warps_per_sm} of "
                 f"{o.max_warps_per_sm} warps ({o.percent:.0f}%), limited by {o.limiter}")
        # the dock as tall as the other docks' minimum heights let it be (as dragging its edge up does)
        w.resizeDocks([w.inspector_dock], [int(w.height() * DOCK_SHARE)], Qt.Orientation.Vertical)
        QTimer.singleShot(300, self.select_line)  # select once the views have their final size, so it centres

    def select_line(self) -> None:
        from PyQt6.QtCore import QTimer

        panel = self.window.inspector.panel
        kernel = panel.report.sources[0]  # the kernel itself; the device functions it calls follow
        found = [i for i, text in enumerate(kernel.text.splitlines()) if text.strip().startswith(INSPECT_LINE)]
        if not found:
            self.fail(f"no line {INSPECT_LINE!r} in {kernel.name}")
            return
        line = kernel.first_line + found[0]
        panel.select_source_line(kernel.file, line)  # what clicking the line does; PTX and SASS scroll to it
        panel.source_view.centerCursor()  # and the line scrolled to the middle of its view
        marked = {name: len(view.highlighted()) for name, view in
                  (("source", panel.source_view), ("PTX", panel.ptx_view), ("SASS", panel.sass_view))}
        dock = self.window.inspector_dock
        self.log(f"dock {dock.width()}x{dock.height()}; line {line} ({INSPECT_LINE}) selected: highlighted lines "
                 + ", ".join(f"{name} {n}" for name, n in marked.items()))
        if not all(marked.values()):
            self.fail("the selected line is not highlighted in all of source, PTX and SASS")
            return
        QTimer.singleShot(300, self.grab)  # let the views repaint

    def grabbed(self):
        return self.window.inspector_dock


def throwaway_home() -> tempfile.TemporaryDirectory:
    """A temp folder for the app's settings and its caches (saved runs, the editor's autosave, compiles), as
    in the tests: the pictures' runs are not the user's, and the user's settings are not read. Removed when
    the returned object goes."""
    from PyQt6.QtCore import QSettings

    from kernels.io.cache import CACHE_ENV

    home = tempfile.TemporaryDirectory(prefix="raytracer-screenshot-")
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, os.path.join(home.name, "settings"))
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    os.environ[CACHE_ENV] = os.path.join(home.name, "cache")
    return home


def every_tool(args) -> int:
    """--every-tool DIR: the window at --size on the X screen, each workspace in turn with its tool at work,
    the whole screen grabbed for each (waiting in Qt's event loop, never a busy loop: the workers need the GIL)."""
    from PyQt6.QtCore import QEventLoop, QTimer
    from PyQt6.QtWidgets import QApplication

    settings_dir = throwaway_home()
    from raytracer_app.gui import open_window
    from raytracer_app.gui.common.settings import Keys, make_settings

    app = QApplication(sys.argv[:1])
    s = make_settings()
    s.setValue(Keys.SIZE.format("spheres"), "1024x1024")
    s.setValue(Keys.COUNT, args.spheres)
    s.setValue(Keys.SEED, args.seed)
    s.sync()
    opened = open_window("cpu")
    if isinstance(opened, int):
        return opened
    app, w = opened
    t0 = time.perf_counter()

    def wait_until(ready, seconds: float) -> bool:
        deadline = time.perf_counter() + seconds
        loop, timer = QEventLoop(), QTimer()
        timer.timeout.connect(lambda: (ready() or time.perf_counter() > deadline) and loop.quit())
        timer.start(20)
        if not ready():
            loop.exec()
        timer.stop()
        return ready()

    def grab(name: str) -> None:
        w.repaint()
        wait_until(lambda: False, 0.6)
        g = w.frameGeometry()
        pixmap = w.screen().grabWindow(0, g.x(), g.y(), g.width(), g.height())
        if pixmap.isNull() or pixmap.toImage().allGray():
            pixmap = w.grab()
        path = args.every_tool / f"{args.size[0]}x{args.size[1]}-{name}.png"
        pixmap.save(str(path))
        print(f"[{time.perf_counter() - t0:6.1f} s] {name}: {path}", flush=True)

    args.every_tool.mkdir(parents=True, exist_ok=True)
    w.setGeometry(w.screen().availableGeometry())
    w.reset_layout()
    shown = lambda: w.last.get("spheres", (None,))[0]  # noqa: E731
    wait_until(lambda: shown() is not None and not shown().preview, 120)
    grab("Render")
    w.workspaces.select("Benchmarks")
    panel = w.panels[BENCH_PANEL]
    panel.show_peak.setChecked(True)
    panel.sweep.setCurrentText("single run")
    panel.n.setValue(1 << 20)
    panel.repeats.setValue(3)
    panel.reference.setCurrentText("show H100 reference")  # ghost bars: every variant's label on the axis
    panel.run()
    wait_until(lambda: not panel.busy(), 180)
    grab("Benchmarks")
    w.workspaces.select("Inspector")
    wait_until(lambda: w.inspector is not None, 30)
    from kernels.inspector import toolchain

    if not toolchain.missing():
        w.inspector.open(*INSPECT[:2], INSPECT_BLOCK)
        wait_until(lambda: w.inspector.panel.report is not None, 180)
    grab("Inspector")
    w.workspaces.select("Editor")
    wait_until(lambda: bool(w.variant_editor.editor.toPlainText()), 30)
    grab("Editor")
    w.workspaces.select("Lessons")
    wait_until(lambda: w.lessons is not None, 30)
    w.lessons.table.setCurrentCell(2, 0)  # step 3: the bank picture of the conflict it removes
    wait_until(lambda: all(d.request is not None for d in w.lessons.pictures.drawings), 120)
    grab("Lessons")
    w.workspaces.select("Access")
    wait_until(lambda: w.access is not None and all(p.result is not None for p in w.access.panes), 180)
    grab("Access")
    w.close()
    settings_dir.cleanup()
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.every_tool is not None:
        return every_tool(args)
    from PyQt6.QtCore import QTimer
    from PyQt6.QtWidgets import QApplication

    settings_dir = throwaway_home()

    from raytracer_app.gui import run_gui
    from raytracer_app.gui.common.settings import Keys, make_settings

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

    driver = (InspectorDriver if args.inspector else Driver)(args.out.resolve(), args.scene, args.size, args)
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
    status = main()
    # the PNG is written and the settings folder removed: end without the interpreter's teardown of the
    # remaining Qt objects, which crashed now and then after the work was done (a segfault at exit)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
