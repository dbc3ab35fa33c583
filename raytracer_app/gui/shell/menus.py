"""The main window's menu bar: its QActions, and the handlers that are not window plumbing (File's image,
screenshot and timings exports, Help's dialogs). ``Menus(window)`` builds them for a MainWindow; the
window keeps what its own state drives (rendering, Compare memory, the curve, the layout, restarting)."""

from __future__ import annotations


from PyQt6.QtGui import QAction, QKeySequence
from PyQt6.QtWidgets import QMessageBox

from kernels.harness.table import write_csv
from kernels.io.writer import write_output
from raytracer_app.gui.common import dialogs
from raytracer_app.gui.common.saving import in_background, kept_note, message_of, png_of
from raytracer_app.gui.shell.timing_log import TimingLog


class Menus:
    """File, View, Render and Help for ``window``. ``continuous``, ``compare`` and ``restart`` are the
    actions the window reads or changes later (the window names them continuous_action, ...)."""

    def __init__(self, window):
        self.window = window
        w, bar = window, window.menuBar()
        file = bar.addMenu("&File")
        self._action(file, "Save &Image…", self.save_image, QKeySequence.StandardKey.Save,
                     "the rendered frame at native resolution, with scene and timing in the PNG's text")
        self._action(file, "Save &Window Screenshot…", self.save_screenshot)
        self._action(file, "&Export Timings CSV…", self.export_timings, "Ctrl+E",
                     "this session's timings: every compare and benchmark row, and the last "
                     f"{TimingLog.FRAME_WINDOW} rendered frames")
        file.addSeparator()
        self._action(file, "&Open Scene…", w.controls.open_scene)
        self._action(file, "Sa&ve Scene…", w.controls.save_scene)
        file.addSeparator()
        self._action(file, "&Quit", w.close, QKeySequence.StandardKey.Quit)
        view = bar.addMenu("&View")
        self._action(view, "&Reset View", w.reset_view, "Ctrl+0", "fit the image; on Julia also reset centre and zoom")
        self.continuous = self._action(view, "Render &Continuously", lambda: None, "F5",
                                       "render again as soon as a frame is shown (measures frames per second)")
        self.continuous.setCheckable(True)
        self.continuous.toggled.connect(w.set_continuous)
        self._action(view, "Reset &Layout", w.reset_layout, None,
                     "every tool back in the window (a floated one docked again), the window fitted to the "
                     "screen, the Render workspace in front")
        view.addSeparator()
        for dock in [w.controls_dock, *w.bench_docks]:
            view.addAction(dock.toggleViewAction())
        inspector = w.inspector_dock.toggleViewAction()
        inspector.setText("&Inspector")
        inspector.setToolTip("a GPU variant's source, PTX, SASS, resources, occupancy and roofline; open it from "
                             "a benchmark panel by clicking a variant's name, a table row or a bar")
        view.addAction(inspector)
        editor = w.variant_dock.toggleViewAction()
        editor.setText("Variant &Editor")
        editor.setToolTip("your own variant: edit a copy of a built-in, Run to verify and time it beside the built-ins")
        view.addAction(editor)
        lessons = w.lessons_dock.toggleViewAction()
        lessons.setText("Lesso&ns")
        lessons.setToolTip("replay a lesson's optimisation steps (Harris's reduction, constant memory, atomics): "
                           "guess each step, run it, see why it paid or not")
        view.addAction(lessons)
        access = w.access_dock.toggleViewAction()
        access.setText("Memory &Access")
        access.setToolTip("what each warp of a GPU variant does to memory, line by line (sectors, bank conflicts, "
                          "active lanes), from a run traced in the CUDA simulator: two variants side by side")
        view.addAction(access)
        render = bar.addMenu("&Render")
        self._action(render, "Render &Now", lambda: w.request_render(force=True), "Ctrl+R")
        self.compare = self._action(render, "&Compare Memory", w.compare_memory, "Ctrl+M",
                                    "render the scene N times with global and with constant memory")
        self._action(render, "Sphere Count &Curve…", w.sphere_count_curve, None,
                     "frame time against sphere count (log-log), one line per memory, as `bench spheres "
                     "--sizes` measures it")
        render.addSeparator()
        from raytracer_app.gui.shell.restart import restart_label

        text, tip = restart_label()
        self.restart = self._action(render, text, w.restart_switching_simulator, None, tip)
        help_ = bar.addMenu("&Help")
        self._action(help_, "&Device Info", self.device_info)
        self._action(help_, "&About", self.about)

    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        action = QAction(text, self.window)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(tip or text)
        action.setStatusTip(tip)
        action.triggered.connect(lambda _=False: slot())
        menu.addAction(action)
        return action

    def _say(self, text: str, ms: int = 0) -> None:
        self.window.statusBar().showMessage(text, ms)

    # ------------------------------------------------------------------ File
    def _ask_path(self, title: str, name: str, filters: str):
        return dialogs.ask_path(self.window, title, filters, name, settings=self.window.settings)

    def save_image(self, path=None) -> bool:
        from raytracer_app.png import frame_metadata, write_png

        tab = self.window.model.tab
        shown = self.window.last.get(tab)
        if shown is None:
            self._say("nothing rendered yet", 5000)
            return False
        frame, request = shown
        path = path or self._ask_path("Save image", f"{tab}.png", "PNG (*.png)")
        if not path:
            return False
        text = frame_metadata(frame)
        text.update(request.renderable.png_text(request.params))  # what reproduces it (a scene's spheres)
        try:
            written = in_background(lambda: write_png(path, frame.image, text, "Save Image"))
        except Exception as exc:  # noqa: BLE001 - InputError for a refused path, WriteFailed for a failed write
            self._say(f"cannot save the image: {message_of(exc)}", 10000)
            return False
        self._say(f"saved {frame.size[0]}x{frame.size[1]} image to {path}{kept_note(written)}", 8000)
        return True

    def save_screenshot(self, path=None) -> bool:
        path = path or self._ask_path("Save window screenshot", "window.png", "PNG (*.png)")
        if not path:
            return False
        try:  # Qt encodes the PNG; the app's writer puts it in place (never over a device or a FIFO)
            image = self.window.grab().toImage()  # grabbed here, encoded and written off the GUI thread
            written = in_background(lambda: write_output(path, png_of(image), "Save Window Screenshot",
                                                          suffixes=(".png",)))
        except Exception as exc:  # noqa: BLE001
            self._say(f"cannot save the screenshot: {message_of(exc)}", 10000)
            return False
        self._say(f"screenshot saved to {path}{kept_note(written)}", 8000)
        return True

    def export_timings(self, path=None) -> bool:
        path = path or self._ask_path("Export timings", "timings.csv", "CSV (*.csv)")
        if not path:
            return False
        log = self.window.log
        rows, held = log.rows, log.describe()  # a snapshot: frames keep arriving while it is written
        try:
            written = in_background(lambda: write_csv(rows, path, "Export Timings CSV"))
        except Exception as exc:  # noqa: BLE001 - InputError for a refused path, WriteFailed for a failed write
            self._say(f"cannot export timings: {message_of(exc)}", 10000)
            return False
        self._say(f"wrote {held} to {path}{kept_note(written)}", 8000)
        return True

    # ------------------------------------------------------------------ Help
    def device_info(self) -> None:
        from kernels.backend.devices import devices_report

        try:
            text = devices_report()
        except Exception as exc:  # noqa: BLE001 - a broken driver must not take the window down
            text = f"device report failed: {type(exc).__name__}: {exc}"
        dialogs.TextDialog("Device info", text, self.window).exec()

    def about(self) -> None:
        QMessageBox.about(self.window, "About GPU kernel lab", dialogs.about_text())
