"""The main window: render view, controls dock, benchmark docks, status line, settings; its menus are
built by menus.Menus."""

from __future__ import annotations

import time

from PyQt6.QtCore import Qt, QTimer
from PyQt6.QtWidgets import QDockWidget, QMainWindow

from kernels.errors import InputError
from kernels.harness.render import frame_row
from kernels.service.requests import CompareRequest
from raytracer_app.gui.benchmarks.algorithms import ALGORITHMS
from raytracer_app.gui.benchmarks.panel import BenchPanel
from raytracer_app.gui.common import wheel_guard
from raytracer_app.gui.common.run_on import RunOnControl
from raytracer_app.gui.common.settings import PROBLEM, Keys, make_settings, read
from raytracer_app.gui.common.workers import ORPHANS, WorkerThread
from raytracer_app.gui.editor.editor import VariantEditor
from raytracer_app.gui.render.compare_dialog import CompareDialog
from raytracer_app.gui.render.controls import CPU_MEMORY_TIP, SIM_WAY, Controls
from raytracer_app.gui.render.models import KINDS, TABS, RenderModel
from raytracer_app.gui.render.view import RenderView
from raytracer_app.gui.render.worker import RenderWorker
from raytracer_app.gui.shell import backend_settings, layout, status_line
from raytracer_app.gui.shell.menus import Menus
from raytracer_app.gui.shell.timing_log import FpsMeter, TimingLog
from raytracer_app.gui.shell.workspaces import Workspaces, commit_typed

CLOSE_WAIT_S = 5.0  # how long closing waits for a running benchmark row or render
VIEW_MIN_PX = 360
BUSY_AFTER_S = 0.5  # a render running longer than this shows what it is, its time, and Cancel
# after a preview, what the first frame did not need waits for the kernel's frame, or this long at most
LATER_AFTER_PREVIEW_S = 12.0
STATUS_EVERY_S = 0.1  # rendering continuously, the status line changes at most this often
# rendering continuously, a frame is timed with CUDA events this often, so the status line always has a
# recent kernel time; the frames between are rendered untimed (kernels.harness.frames.time_frames)
TIMED_EVERY_S = STATUS_EVERY_S / 2

# which tabs a model change makes stale: every tab, or a kind's own tab ('size': the shown one)
STALE_ALL = ("backend", "settings", "block")


def stale_tabs(group: str, shown: str) -> tuple[str, ...]:
    if group in STALE_ALL:
        return TABS
    return (group,) if group in TABS else (shown,) if group == "size" else ()


class MainWindow(QMainWindow):
    def __init__(self, backend, backend_name: str | None = None, settings=None, t_launch: float | None = None,
                 startup_message: str = ""):
        super().__init__()
        self.setWindowTitle("GPU kernel lab")
        self.settings = settings if settings is not None else make_settings()
        self.t_launch = time.perf_counter() if t_launch is None else t_launch
        self.first_frame_s: float | None = None
        self.first_frame_loaded: tuple = ()
        self.model = RenderModel(backend, backend_settings.ModelStore(self.settings))
        self.model.backend_name = backend_name or backend.kind
        self.settings_kind = backend.kind  # whose per-backend settings the benchmark panels show
        self.restart_argv: list[str] | None = None  # set by Restart: run_gui re-executes the app
        self.log = TimingLog()
        self.fps = FpsMeter()
        self.last: dict = {}  # tab -> (Frame, RenderRequest) last shown
        self.timed: dict = {}  # tab -> the last Frame shown with a timed kernel
        self.timed_every_s = TIMED_EVERY_S
        self._timed_at = 0.0  # when a continuous frame was last requested timed
        self.stale = dict.fromkeys(TABS, True)
        self.continuous = False
        self._status_at = 0.0  # when the status line last changed (see STATUS_EVERY_S)
        self.display_ms: dict = {}  # tab -> milliseconds the last frame took to display
        self.work: tuple[str, float] | None = None  # (what, start time) of the render running now
        self.compare_dialog = None
        self._closing = False
        self._after_done = False  # _after_first_frame has run
        # the render worker: its first frame is the fast start's preview, then the kernel's (see workers)
        self.worker = RenderWorker()
        self.render_thread = WorkerThread(self.worker, "render")
        self.render_thread.start()

        self.view = RenderView()
        self.view.setMinimumWidth(VIEW_MIN_PX)  # shrinking the window narrows the docks, not only the image
        self.setCentralWidget(self.view)
        self.controls = Controls(self.model)
        self.controls_dock = self._dock("Controls", self.controls, Qt.DockWidgetArea.LeftDockWidgetArea, scroll=False)
        self.panels: dict[str, BenchPanel] = {}
        docks = []
        for spec in ALGORITHMS:
            panel = BenchPanel(spec, self.model, self.log)
            panel.message.connect(lambda text: self.statusBar().showMessage(text, 10000))
            self.panels[spec.title] = panel
            docks.append(self._dock(spec.title, panel, Qt.DockWidgetArea.RightDockWidgetArea))
        self.bench_docks = docks
        # *Run on*: this machine or a cluster, its state always in the status bar (docs/cluster.md; placed there
        # by _status_widgets, after the status line's own bar is in place)
        self.run_on = RunOnControl()
        # the Inspector is built after the first frame (it imports the inspector): see ensure_inspector
        self.inspector = None
        self.inspector_dock = self._dock("Inspector", None, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.inspector_dock.hide()
        self.inspector_dock.visibilityChanged.connect(lambda shown: shown and self.ensure_inspector())
        self.lessons = None  # built when first shown (see ensure_lessons)
        self.lessons_dock = self._dock("Lessons", None, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.lessons_dock.hide()
        self.lessons_dock.visibilityChanged.connect(lambda shown: shown and self.ensure_lessons())
        self.workspaces = Workspaces(self, self.view)
        self.workspaces.add("Render", [self.controls_dock], view=True, tip="the render view and its Controls")
        self.workspaces.add("Benchmarks", docks, tip="the benchmark panels")
        self.workspaces.add("Inspector", [self.inspector_dock], tip="a GPU variant's source, PTX, SASS, "
                            "occupancy, roofline and comparisons")
        # the editor's rows go to the benchmark panels, its comparisons to the Inspector
        self.variant_editor = VariantEditor(self.model, self.panels, self.settings)
        self.variant_dock = self._dock("Variant editor", self.variant_editor, Qt.DockWidgetArea.RightDockWidgetArea)
        self.variant_dock.hide()
        self.variant_editor.message.connect(lambda text: self.statusBar().showMessage(text, 10000))
        self.variant_editor.rowReady.connect(lambda title, row: self.panels[title].add_user_row(row))
        self.variant_editor.compared.connect(lambda a, b: self.ensure_inspector().show_compared(a, b))
        # a row skipped for lack of CUDA offers the simulator in one click
        for tool in (self.variant_editor, *self.panels.values()):
            tool.restartRequested.connect(lambda: self.restart_switching_simulator())
        self.workspaces.add("Editor", [self.variant_dock], tip="your own variant: edit, Run, Inspect vs a built-in")
        self.workspaces.add("Lessons", [self.lessons_dock], tip="a lesson's steps: guess, run, see why each paid")
        self.access = None  # built when first shown (see ensure_access)
        self.access_dock = self._dock("Access", None, Qt.DockWidgetArea.RightDockWidgetArea)
        self.access_dock.hide()
        self.access_dock.visibilityChanged.connect(lambda shown: shown and self.ensure_access())
        self.workspaces.add("Access", [self.access_dock], tip="what each warp does to memory, line by line: a run "
                            "traced in the CUDA simulator, two variants side by side")
        self.count_curve = None
        self.model.restore()  # the saved values; the controls follow its changed signal
        backend_settings.load_panels(self.settings, backend.kind, self.panels.values())

        self.worker.frameReady.connect(self._frame_ready)
        self.worker.renderFailed.connect(self._render_failed)
        self.worker.compareReady.connect(self._compare_ready)
        self.worker.compareFailed.connect(self._compare_failed)
        self.worker.started.connect(self._work_started)
        self.worker.cancelled.connect(self._render_cancelled)

        self._status_widgets()
        self.menus = Menus(self)
        self.continuous_action, self.compare_action = self.menus.continuous, self.menus.compare
        self.restart_action = self.menus.restart
        self.model.changed.connect(self._model_changed)
        self.model.backendChanging.connect(self._save_backend_settings)
        self.model.message.connect(lambda text: self.statusBar().showMessage(text, 10000))
        self.controls.compareRequested.connect(self.compare_memory)
        self.controls.restartRequested.connect(lambda: self.restart_switching_simulator())
        self.view.tabChangedTo.connect(lambda name: (commit_typed(), self.model.set_tab(name)))
        for kind, box in self.view.boxes.items():  # a kind that pans and zooms: its view asks the model
            box.panRequested.connect(lambda dx, dy, k=kind: self.model.pan(k, dx, dy))
            box.zoomRequested.connect(lambda f, px, py, k=kind: self.model.zoom(k, f, px, py))

        wheel_guard.guard_tree(self)  # the wheel never changes an input that has not been given the focus
        layout.restore_layout(self)  # this screen size's saved layout, or the default for it
        self.view.select(self.model.tab)
        self.continuous_action.setChecked(read(self.settings, Keys.CONTINUOUS, False, bool))
        self._model_changed("backend")
        settings_note = self.settings.property(PROBLEM) or ""  # e.g. a FIFO in place of the settings file
        note = "; ".join(t for t in (startup_message or backend.note, self.model.load_note, settings_note) if t)
        if note:
            self.statusBar().showMessage(note, 15000)

    # ------------------------------------------------------------------ construction
    def _dock(self, title: str, widget, area, scroll: bool = True) -> QDockWidget:
        """A dock; its contents in a scroll area (``scroll``) so their minimum size never grows the window."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title}")
        dock.setFeatures(layout.DOCK_FEATURES)  # never dragged off: a tool floats by its float button only
        if widget is not None:
            dock.setWidget(layout.scrolling(widget) if scroll else widget)
        self.addDockWidget(area, dock)
        return dock

    def _status_widgets(self) -> None:
        status_line.build(self)
        self.statusBar().addPermanentWidget(self.run_on)

    # ------------------------------------------------------------------ rendering
    def _model_changed(self, group: str) -> None:
        if group == "backend" and self.model.backend.kind != self.settings_kind:
            self._switch_backend_settings()
        if group == "tab":
            self._tab_shown()
        for tab in stale_tabs(group, self.model.tab):
            self.stale[tab] = True
        cpu = self.model.backend.is_host
        self.compare_action.setEnabled(not cpu)
        self.compare_action.setToolTip(CPU_MEMORY_TIP + SIM_WAY if cpu else "render the scene N times with global and constant memory")
        self.status["backend"].setText(self.model.backend.label)
        if self.view.current_name() != self.model.tab:
            self.view.select(self.model.tab)
        if self.stale[self.model.tab]:
            self.request_render()

    def _save_backend_settings(self, new_kind: str) -> None:
        """Before a backend switch: keep the old backend's panel values under its name (the model keeps
        its own)."""
        if new_kind != self.settings_kind:
            backend_settings.save_panels(self.settings, self.settings_kind, self.panels.values())

    def _switch_backend_settings(self) -> None:
        """The panels show the new backend's own values (the old one's were saved by _save_backend_settings)."""
        self.settings_kind = self.model.backend.kind
        backend_settings.load_panels(self.settings, self.settings_kind, self.panels.values())

    def _tab_shown(self) -> None:
        """The status line describes the visible tab; Render Continuously follows it."""
        self.fps = FpsMeter()
        self._status_at = 0.0  # the new tab's first frame shows its figures at once
        self._timed_at = 0.0
        self._update_status(self.model.tab)
        if self.continuous:
            self.stale[self.model.tab] = True

    def _update_status(self, tab: str) -> None:
        status_line.update(self, tab)

    def request_render(self, force: bool = False, timed: bool = True) -> None:
        """Render the current tab (coalesced: a newer request replaces one still waiting); ``timed=False``:
        a GPU leaves its kernel untimed."""
        if self._closing:
            return
        tab = self.model.tab
        if force or self.stale[tab]:
            self.stale[tab] = False
            try:
                request = self.model.request(timed=timed)
            except InputError as exc:  # a value the backend refuses: said, nothing rendered
                self.statusBar().showMessage(str(exc), 10000)
                return
            self.worker.submit(request)

    def _frame_ready(self, frame, request) -> None:
        view = self.view.view(request.kind)
        if self.continuous:  # the worker renders the next frame while this one is shown and painted
            now = time.perf_counter()
            timed = now - self._timed_at >= self.timed_every_s
            if timed:
                self._timed_at = now
            self.request_render(force=True, timed=timed)
        try:
            display_ms = view.show_frame(frame)
            self.last[request.kind] = (frame, request)
            self.display_ms[request.kind] = display_ms
            if not frame.preview:  # a preview is no measurement: never logged, never counted
                if not self._after_done:
                    QTimer.singleShot(0, self._after_first_frame)
                if frame.kernel is not None:  # an untimed frame has no row to log
                    self.timed[request.kind] = frame
                    self.log.add_frame(frame_row(frame))
                if request.kind == self.model.tab:
                    self.fps.tick()
            if self.first_frame_s is None:
                self.first_frame_s = time.perf_counter() - self.t_launch
                # what the first picture needed (scripts/gui_fps.py and the start-up tests report it)
                # noted by the worker when it handed this frame out, before it rendered ahead
                self.first_frame_loaded = self.worker.first_frame_loaded or ()
                if frame.preview:  # the kernel compiles now: what waits for it must not slow it (2 cores)
                    QTimer.singleShot(int(LATER_AFTER_PREVIEW_S * 1000), self._after_first_frame)
                self.status["fps"].setToolTip(f"frames displayed per second (first frame {self.first_frame_s:.2f} s after launch)")
            now = time.perf_counter()
            if request.kind == self.model.tab and (not self.continuous or now - self._status_at >= STATUS_EVERY_S):
                self._status_at = now  # rendering continuously, the text changes at a readable rate, and
                self._update_status(request.kind)  # the status bar is not repainted with every frame
        finally:
            self.work = None
            # a frame rendered ahead is shown once this one is on screen, so every counted frame is painted
            view.when_painted(self.worker.ack)

    def _render_failed(self, text: str, request) -> None:
        self.work = None
        self.worker.ack()
        if self.first_frame_s is None:
            QTimer.singleShot(0, self._after_first_frame)
        self.stale[request.kind] = True  # the next change (or Render Now) tries again
        self.statusBar().showMessage(f"render failed: {text}", 15000)

    def _work_started(self, job) -> None:
        r = getattr(job, "render", job)
        loading = self.worker.loading(r) if r is job else ""
        if loading:  # a first frame: numba compiles or loads, which is no render time; said as such
            self.work = (loading, time.perf_counter())
            return
        what = (f"comparing {' and '.join(job.memories)} memory ({job.repeats} renders each)" if r is not job
                else f"rendering {r.kind}")
        self.work = (f"{what} {r.size[0]}x{r.size[1]} on {r.backend.kind}", time.perf_counter())

    def _show_busy(self) -> None:
        elapsed = time.perf_counter() - self.work[1] if self.work else 0.0
        busy = elapsed > BUSY_AFTER_S
        self.statusBar().set_busy(f"{self.work[0]}… {elapsed:.1f} s" if busy else "")

    def cancel_render(self) -> None:
        """End the running render or comparison and stop rendering continuously."""
        self.continuous_action.setChecked(False)
        self.worker.cancel()
        self.statusBar().showMessage("cancelling the render…", 5000)

    def _render_cancelled(self, job) -> None:
        self.work = None
        self.worker.ack()
        r = getattr(job, "render", job)
        self.stale[r.kind] = True  # Render Now or the next change renders it again
        self.statusBar().showMessage("render cancelled", 10000)

    def set_continuous(self, on: bool) -> None:
        self.continuous = on
        self.fps = FpsMeter()
        self._update_status(self.model.tab)  # the last frame's figures, which the throttle may have skipped
        if on:
            self.request_render(force=True)

    def reset_view(self) -> None:
        if self.model.tab in self.view.boxes:  # a view that pans and zooms: its own centre and zoom
            self.model.reset_view(self.model.tab)
        self.view.view(self.model.tab).reset_view()

    def _after_first_frame(self) -> None:
        """What the first kernel frame did not need, once it is shown (or LATER_AFTER_PREVIEW_S after the
        preview, if the kernel takes longer): the Inspector, and on a CPU window the check for GPUs."""
        if self._closing or self._after_done:
            return
        self._after_done = True
        if not self.controls.backends_checked:
            self.controls.refresh_backend_choices()
        self.ensure_inspector()

    # ------------------------------------------------------------------ inspector, sphere count curve
    def ensure_lessons(self):
        if self.lessons is None and not self._closing:
            from raytracer_app.gui.lessons.panel import LessonsPanel

            self.lessons = LessonsPanel(lambda: self.model.backend)
            self.lessons.message.connect(lambda text: self.statusBar().showMessage(text, 10000))
            self.lessons.accessRequested.connect(self.open_access)
            self.lessons_dock.setWidget(layout.scrolling(self.lessons))
            wheel_guard.guard_tree(self.lessons)
        return self.lessons

    def ensure_access(self):
        """The Access tool, built on first need."""
        if self.access is None and not self._closing:
            from raytracer_app.gui.access.view import AccessView

            self.access = AccessView(backend_of=lambda: self.model.backend)
            self.access.message.connect(lambda text: self.statusBar().showMessage(text, 10000))
            self.access_dock.setWidget(layout.scrolling(self.access))
            wheel_guard.guard_tree(self.access)
        return self.access

    def open_access(self, target: str, variant: str) -> bool:
        """Clicking a variant's 'memory access' in a panel, the Inspector or a lesson: trace it in the Access
        tool, which then owns the window."""
        view = self.ensure_access()
        if view is None:
            return False
        self.workspaces.show_dock(self.access_dock)
        return view.show_variant(target, variant)

    def ensure_inspector(self):
        """The Inspector dock's contents, built on first need and wired to every benchmark panel."""
        if self.inspector is None and not self._closing:
            from raytracer_app.gui.inspector.dock import InspectorDock

            self.inspector = InspectorDock(backend_of=lambda: self.model.backend)
            self.inspector.shown.connect(lambda *_: self.workspaces.show_dock(self.inspector_dock))
            self.inspector.accessRequested.connect(self.open_access)
            for panel in self.panels.values():
                self.inspector.attach(panel)
            self.inspector_dock.setWidget(layout.scrolling(self.inspector))
            wheel_guard.guard_tree(self.inspector)
        return self.inspector

    def sphere_count_curve(self):
        """Open the Sphere Count Curve and start its sweep (in a worker; Cancel ends it)."""
        if self.count_curve is None:
            from raytracer_app.gui.render.count_curve import CountCurveDialog

            self.count_curve = CountCurveDialog(self.model, self)
            wheel_guard.guard_tree(self.count_curve)
        self.count_curve.show()
        self.count_curve.raise_()
        self.count_curve.start()
        return self.count_curve

    # ------------------------------------------------------------------ compare memory
    def compare_memory(self) -> bool:
        if self.model.backend.is_host:
            self.statusBar().showMessage(f"Compare memory needs a CUDA backend: {CPU_MEMORY_TIP}", 10000)
            return False
        if not KINDS[self.model.tab].memories:  # the first kind whose kernels read more than one memory
            self.view.select(next(name for name, kind in KINDS.items() if len(kind.memories) > 1))
        repeats = self.controls.compare_repeats.value()
        try:
            request = self.model.request()
        except InputError as exc:
            self.statusBar().showMessage(str(exc), 10000)
            return False
        job = CompareRequest(request, repeats)
        self.worker.submit_job(job)
        # one message at a time: the busy label says what runs (with its time and Cancel) from now on
        self.statusBar().clearMessage()
        self.statusBar().set_busy(f"comparing {' and '.join(job.memories)} memory ({repeats} renders each)…")
        return True

    def _compare_ready(self, frames, job) -> None:
        self.work = None
        self.worker.ack()
        self.log.add(*(frame_row(f) for f in frames))
        if self.compare_dialog is None:
            self.compare_dialog = CompareDialog(self)
        r = job.render
        op, _, what = r.renderable.row(frames[0].meta, r.size)
        self.compare_dialog.show_frames(frames, job.memories, f"{what}, {r.size[0]}x{r.size[1]}, {op} access")
        self.compare_dialog.show()
        self.compare_dialog.raise_()
        self.statusBar().showMessage(self.compare_dialog.summary.text(), 15000)

    def _compare_failed(self, text: str, job) -> None:
        self.work = None
        self.worker.ack()
        self.statusBar().showMessage(f"compare failed: {text}", 15000)

    # ------------------------------------------------------------------ layout, restart
    def reset_layout(self) -> None:
        """View > Reset Layout: every tool docked in its place, the window fitted to the screen, Render in front."""
        layout.reset_layout(self)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        super().showEvent(event)
        # the window manager frames the window after it is shown: fit it again once its frame is known
        for ms in (300, 1500):
            timer = QTimer(self)  # a child: never fires after the window is gone
            timer.setSingleShot(True)
            timer.timeout.connect(lambda: self._closing or layout.check_fit(self))
            timer.start(ms)

    def restart_switching_simulator(self) -> None:
        """Close (saving settings) and start again in or out of the CUDA simulator (see run_gui)."""
        from raytracer_app.gui.shell.restart import restart_argv

        if not self.variant_editor.ask_to_keep("restarting"):  # typed text is never lost without asking
            return
        self.variant_editor.dirty = False  # saved or let go: closing does not ask again
        self.restart_argv = restart_argv()
        self.close()
        if not self._closing:  # closing was refused
            self.restart_argv = None

    # ------------------------------------------------------------------ closing
    def busy(self) -> bool:
        """A benchmark or a render is still running in a worker thread."""
        curve = self.count_curve is not None and self.count_curve.running()
        lessons = self.lessons is not None and self.lessons.busy()
        access = self.access is not None and self.access.busy()
        lines = self.inspector is not None and self.inspector.panel.figures.measure.running()
        return (any(p.busy() for p in self.panels.values()) or not self.worker.idle() or curve or lessons or access
                or lines)

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        """Stop every worker and join its thread. Rows and frames are short, so this usually waits for
        the current one to return; one that runs past CLOSE_WAIT_S (a huge simulator render) is left to
        finish on its own: run_gui then ends the process without waiting for it."""
        now = time.perf_counter()
        if not self._closing and not self.variant_editor.ask_to_keep("quitting"):
            event.ignore()
            return
        if not self._closing:
            self._closing, self._close_deadline = True, now + CLOSE_WAIT_S
            self.continuous = False
            self.worker.cancel()
            for panel in self.panels.values():
                panel.worker.stop()
                panel.measure.stop()  # ends its ncu child process
            if self.count_curve is not None:
                self.count_curve.cancel()
            if self.lessons is not None:
                self.lessons.worker.stop()
                self.lessons.pictures.worker.stop()
            if self.access is not None:
                self.access.stop()
            if self.inspector is not None:
                self.inspector.panel.figures.measure.stop()  # ends its ncu child process
        if self.busy() and now < self._close_deadline:
            event.ignore()
            self.statusBar().showMessage("stopping the running work before closing…")
            QTimer.singleShot(50, self.close)
            return
        self.save_settings()
        if self.restart_argv:
            self.settings.setValue(Keys.BACKEND, self.restart_argv[-1])
            self.settings.sync()
        threads = [p.thread for p in self.panels.values()] + [p.measure.thread for p in self.panels.values()]
        threads += [self.render_thread, self.variant_editor.thread]
        threads += [self.inspector.panel.thread, self.inspector.panel.figures.measure.thread] \
            if self.inspector is not None else []
        threads += [self.count_curve.thread] if self.count_curve is not None else []
        threads += [self.lessons.thread, self.lessons.pictures.thread] if self.lessons is not None else []
        threads += self.access.threads() if self.access is not None else []
        for thread in threads:
            if not thread.shutdown(timeout_ms=500):
                ORPHANS.append(thread)  # keep it referenced: destroying a running QThread aborts
        self.run_on.model.shutdown()
        if self.compare_dialog is not None:
            self.compare_dialog.close()
        event.accept()

    def save_settings(self) -> None:
        s = self.settings
        backend_settings.save(s, self.settings_kind, self.model, self.panels.values())
        s.setValue(Keys.BACKEND, self.model.backend_name)
        s.setValue(Keys.DEVICE, self.model.backend.device)
        s.setValue(Keys.CONTINUOUS, self.continuous_action.isChecked())
        layout.save_layout(self)
        s.sync()
