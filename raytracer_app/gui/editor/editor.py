"""The variant editor (docs/user-variants.md): write a kernel of your own, Run it, and see it verified and
timed beside the built-ins in its benchmark panel, or compared with a built-in in the Inspector.

The text is a CodeEditor (code_editor.py: Python highlighting, line numbers). New from a built-in
writes its template; Open, Save and Save As go through the one reader and writer; every edit is autosaved
(after a pause) to the editor's folder under the cache folder, with a recent list (variant_files.py).
Run saves the buffer and hands it to a VariantWorker (variant_worker.py): the file's code runs only in the
user-variant child process, under the watchdog set here (seconds, saved in the settings). Shown, New or
Open warms that child with the panel's problem, so a Run waits for little more than its compile; the
status line says where a Run's time went."""

from __future__ import annotations

import os
import re

from PyQt6.QtCore import Qt, QTimer, pyqtSignal
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from kernels.errors import InputError
from kernels.launch import Launch
from raytracer_app.gui.editor import files as variant_files
from raytracer_app.gui.editor.code_editor import CodeEditor
from raytracer_app.gui.editor.worker import VariantJob, VariantWorker
from raytracer_app.gui.common.sim_offer import SimulatorOffer
from raytracer_app.gui.common.workers import WorkerThread

WATCHDOG_KEY = "variants/watchdog_s"
AUTOSAVE_MS = 1500


def error_line(text: str, path: str) -> int | None:
    """The line a 'path:line: ...' message names in ``path``."""
    m = re.match(rf"{re.escape(path)}:(\d+):", text)
    return int(m.group(1)) if m else None


def default_template(target: str, backend) -> str:
    """The built-in New copies by default: one that runs where you are. On a GPU the fastest (best); without
    one, the last of the target's templates the simulator can run (they go from the seed's first kernel to the
    fastest), so Run verifies instead of saying skipped (best's warp shuffles are not in the simulator)."""
    from kernels.registry import by_name
    from kernels.user_variants import templates

    names = templates.names(target)
    if backend.is_gpu and "best" in names:
        return "best"
    variants = {v.name: v for v in by_name(target).variants}
    runnable = [n for n in names if not variants[n].sim_skip]
    return runnable[-1] if runnable else names[-1]


class VariantEditor(QWidget):
    """``rowReady(target_title, row)``: a Run's row for that benchmark panel; ``compared(a, b)``: the file's
    and a built-in's KernelReports for the Inspector's Compare tab; ``message(text)`` for the status line."""

    rowReady = pyqtSignal(str, object)
    compared = pyqtSignal(object, object)
    message = pyqtSignal(str)

    def __init__(self, model, panels: dict, settings=None):
        super().__init__()
        from kernels.registry import ALGORITHMS
        from raytracer_app.gui.common.settings import make_settings, read

        self.model, self.panels = model, panels
        self.settings = settings if settings is not None else make_settings()
        self.targets = {a.name: a for a in ALGORITHMS if a.user is not None}
        self.path: str | None = None  # the file Save writes; None for a new buffer
        self.dirty = False  # edited since New, Open or Save: asked about before it could be lost
        self.disk_text: str | None = None  # what self.path held when last read or written here
        self.autosaved_texts: dict[str, str] = {}  # autosave file -> the text this editor last wrote there
        self._loading = False  # text put in by New or Open, not typed
        self.running = False
        self.last_phases = None  # the last Run's Phases: where its time went
        self.worker = VariantWorker()
        self.thread = WorkerThread(self.worker, "variant-editor")
        self.worker.rowReady.connect(self._row)
        self.worker.failed.connect(self._failed)
        self.worker.compared.connect(self._compared)
        self.worker.finished.connect(self._finished)
        self.thread.start()

        self.editor = CodeEditor()
        self.target_box, self.from_box, self.compare_box = QComboBox(), QComboBox(), QComboBox()
        self.target_box.addItems(list(self.targets))
        self.target_box.currentTextChanged.connect(self._fill_variants)
        self.recent_box = QComboBox()
        self.recent_box.setToolTip("files opened or saved last, then the buffers autosaved in the editor's folder")
        self.recent_box.activated.connect(lambda i: i > 0 and self.open(self.recent_box.itemData(i)))
        self.watchdog = QDoubleSpinBox()
        self.watchdog.setRange(0.5, 600)
        self.watchdog.setSuffix(" s")
        self.watchdog.setValue(read(self.settings, WATCHDOG_KEY, 10.0, float, 0.5, 600))
        self.watchdog.setToolTip("a call of run() that takes longer is stopped (its process ended) and reported")
        self.watchdog.valueChanged.connect(lambda v: self.settings.setValue(WATCHDOG_KEY, v))
        buttons = {}
        for text, slot in (("New", self.new_from), ("Open…", self.open), ("Save", self.save),
                           ("Save As…", self.save_as), ("Run", self.run), ("Stop", self.stop),
                           ("Inspect vs", self.inspect)):
            buttons[text] = QPushButton(text)
            buttons[text].clicked.connect(lambda _=False, s=slot: s())
        self.run_button, self.inspect_button = buttons["Run"], buttons["Inspect vs"]
        self.stop_button = buttons["Stop"]
        self.stop_button.setEnabled(False)
        self.stop_button.setToolTip("end the running Run or Inspect now (its child process is ended)")
        self.run_button.setToolTip("save the buffer, then load, verify and time it at the benchmark panel's size "
                                   "(Ctrl+Return)")
        run_key = QShortcut(QKeySequence("Ctrl+Return"), self)
        run_key.activated.connect(self.run)
        for button in buttons.values():  # a click leaves the keyboard in the editor (Ctrl+Z still edits)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.sim_offer = SimulatorOffer()  # a Run skipped for lack of CUDA: the simulator in one click
        self.restartRequested = self.sim_offer.restartRequested
        self.status = QLabel("New writes a runnable copy of a built-in; Run verifies and times it beside the built-ins")
        self.status.setWordWrap(True)
        # a fixed height: a message of one line or three never moves the Run / Stop row above it
        self.status.setFixedHeight(3 * self.status.fontMetrics().lineSpacing() + 4)
        self.status.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        top, bottom = QHBoxLayout(), QHBoxLayout()
        for w in (self.target_box, QLabel("from"), self.from_box, buttons["New"], buttons["Open…"],
                  buttons["Save"], buttons["Save As…"], self.recent_box):
            top.addWidget(w)
        top.addStretch(1)
        for w in (buttons["Run"], buttons["Stop"], QLabel("watchdog"), self.watchdog, buttons["Inspect vs"],
                  self.compare_box):
            bottom.addWidget(w)
        bottom.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.editor, 1)
        lay.addLayout(bottom)
        lay.addWidget(self.status)
        lay.addWidget(self.sim_offer)
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setSingleShot(True)
        self.autosave_timer.setInterval(AUTOSAVE_MS)
        self.autosave_timer.timeout.connect(self.autosave)
        self.editor.textChanged.connect(self._edited)
        self._fill_variants()
        self._fill_recent(variant_files.recent())
        model.changed.connect(lambda group: group == "backend" and self._fill_variants())

    # ------------------------------------------------------------------ buffers and files
    @property
    def target(self) -> str:
        return self.target_box.currentText()

    def _fill_variants(self) -> None:
        from kernels.user_variants import templates

        names = templates.names(self.target)
        start = default_template(self.target, self.model.backend)
        for box in (self.from_box, self.compare_box):
            box.clear()
            box.addItems(names)
        self.from_box.setCurrentText(start)  # New writes one that runs where you are
        self.compare_box.setCurrentText("best" if "best" in names else start)

    def _fill_recent(self, paths) -> None:
        """Files opened or saved last, then autosaved buffers no file holds (labelled, so nothing typed is
        out of reach: a New that was never saved is there too)."""
        self.recent_box.clear()
        self.recent_box.addItem("Recent…")
        for path in paths:
            self.recent_box.addItem(path, path)
        for path in variant_files.autosaved():
            if path not in paths:
                self.recent_box.addItem(f"autosaved: {os.path.basename(path)}", path)
                self.recent_box.setItemData(self.recent_box.count() - 1, path, Qt.ItemDataRole.ToolTipRole)

    def _edited(self) -> None:
        self.editor.mark_line(None) if self.editor.error_line else None
        if not self._loading:
            self.dirty = True
        self.autosave_timer.start()

    def _put_text(self, text: str) -> None:
        """The buffer replaced by New or Open: nothing typed yet, nothing to lose."""
        self._loading = True
        try:
            self.editor.setPlainText(text)
        finally:
            self._loading = False
        self.dirty = False

    def unsaved(self) -> str:
        """What typing has changed and no file holds ('' when nothing): said before it could be lost."""
        if not self.dirty:
            return ""
        return f"your changes to {os.path.basename(self.path)}" if self.path else f"your new variant {self._name()}"

    def ask_to_keep(self, doing: str) -> bool:
        """Before ``doing`` (restarting, quitting) loses typed text: Save / Discard / Cancel. True to go on."""
        from PyQt6.QtWidgets import QMessageBox

        what = self.unsaved()
        if not what:
            return True
        answer = QMessageBox.question(
            self, "Unsaved variant", f"{what[0].upper() + what[1:]} {'are' if what.startswith('your changes') else 'is'} "
            f"not saved. Save before {doing}?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def choose(self, title: str, text: str, choices: list[str]) -> str:
        """A question with named buttons (the last one is Cancel); the chosen text ('' when closed)."""
        from PyQt6.QtWidgets import QMessageBox

        box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=self)
        buttons = {box.addButton(c, QMessageBox.ButtonRole.RejectRole if c == choices[-1]
                                 else QMessageBox.ButtonRole.AcceptRole): c for c in choices}
        box.exec()
        return buttons.get(box.clickedButton(), "")

    def new_from(self, variant: str | None = None) -> bool:
        """The buffer replaced by a copy of a built-in, never losing text: unsaved typing is asked about,
        and so is an autosaved buffer of the same name that holds other text (Open it, or start anew and
        keep it as a numbered backup)."""
        from kernels.user_variants import templates

        variant = variant or self.from_box.currentText()
        if not self.ask_to_keep("starting a new variant"):
            return False
        text = templates.source(self.target, variant)
        name = re.search(r"^NAME\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
        kept = variant_files.autosave_path(name.group(1) if name else "my-variant")
        old = self._autosaved_text(kept)
        if old is not None and old != text:
            from kernels.io.writer import backup_name

            answer = self.choose("Autosaved variant", f"{kept.name} in the editor's folder holds other text (a buffer "
                                 f"autosaved earlier). Open it, or start a new copy of {variant} (the autosaved text "
                                 f"is then kept as {backup_name(kept).name})?", ["Open it", "New copy", "Cancel"])
            if answer == "Open it":
                return self.open(str(kept), asked=True)
            if answer != "New copy":
                return False
        self._put_text(text)
        self.path, self.disk_text = None, None
        self.autosaved_texts.pop(str(kept), None)  # another buffer's text there is kept as a backup        self._say(f"a copy of {self.target} {variant}: edit it, then Run")
        self.warm()
        return True

    @staticmethod
    def _autosaved_text(path) -> str | None:
        if path is None or not os.path.isfile(path):
            return None
        try:
            return variant_files.read_text(path)
        except Exception:  # noqa: BLE001 - unreadable: the writer's backup still keeps it
            return None

    def open(self, path: str | None = None, asked: bool = False) -> bool:
        from raytracer_app.gui.common.dialogs import ask_path

        if not asked and not self.ask_to_keep("opening another file"):
            return False
        path = path or ask_path(self, "Open variant file", "Python (*.py);;All files (*)", save=False,
                                settings=self.settings)
        if not path:
            return False
        try:
            text = variant_files.read_text(path)
        except Exception as exc:  # noqa: BLE001 - a message, never a crash
            self._say(str(exc), error=True)
            return False
        declared = re.search(r"^TARGET\s*=\s*['\"](\w+)['\"]", text, re.M)
        if declared and declared.group(1) in self.targets:  # its row goes to that target's panel
            self.target_box.setCurrentText(declared.group(1))
        self._put_text(text)
        self.path, self.disk_text = os.path.abspath(path), text
        if os.path.dirname(self.path) == os.path.dirname(str(variant_files.autosave_path(os.path.basename(path)))):
            self.autosaved_texts[self.path] = text  # an autosaved buffer opened: its text is the buffer's now
        self._fill_recent(variant_files.remember(self.path))
        self._say(f"opened {self.path}")
        self.warm()
        return True

    def save(self) -> bool:
        return self.save_as(self.path) if self.path else self.save_as()

    def save_as(self, path: str | None = None) -> bool:
        from raytracer_app.gui.common.dialogs import ask_path

        path = path or ask_path(self, "Save variant file", "Python (*.py)", self._name() + ".py",
                                settings=self.settings)
        if not path:
            return False
        same = self.path is not None and os.path.abspath(path) == self.path
        if same and self._autosaved_text(path) not in (None, self.disk_text):
            answer = self.choose("File changed on disk", f"{os.path.basename(path)} changed on disk since it was "
                                 "opened or saved here. Replace it (its text is kept as a numbered backup "
                                 "NAME.~N~)?", ["Replace", "Cancel"])
            if answer != "Replace":
                return False
        text = self.editor.toPlainText()
        try:
            written = variant_files.write_text(path, text, "Save Variant", replaces=self.disk_text if same else None)
        except Exception as exc:  # noqa: BLE001
            self._say(str(exc), error=True)
            return False
        self.path, self.disk_text = os.path.abspath(path), text
        self.dirty = False
        self._fill_recent(variant_files.remember(self.path))
        self._say(f"saved {self.path}" + written.kept())
        return True

    def _name(self) -> str:
        m = re.search(r"^NAME\s*=\s*['\"]([^'\"]+)['\"]", self.editor.toPlainText(), re.M)
        return m.group(1) if m else "my-variant"

    def autosave(self) -> str | None:
        """The buffer written to the editor's folder (what Run loads); None when that folder is unusable."""
        self.autosave_timer.stop()
        path = variant_files.autosave_path(os.path.basename(self.path) if self.path else self._name())
        if path is None:
            return None
        text = self.editor.toPlainText()
        try:
            written = variant_files.write_text(path, text, "autosave", replaces=self.autosaved_texts.get(str(path)))
        except Exception as exc:  # noqa: BLE001
            self._say(f"autosave failed: {exc}", error=True)
            return None
        self.autosaved_texts[str(path)] = text
        if written.backup is not None:
            self._say(f"the autosaved {path.name} held other text: it is kept as {written.backup.name}")
            self._fill_recent(variant_files.recent())
        elif self.recent_box.findData(str(path)) < 0:
            self._fill_recent(variant_files.recent())
        return str(written)

    # ------------------------------------------------------------------ run and inspect
    def _job(self, compare_with: str | None = None) -> VariantJob | None:
        if self.running:
            return None
        path = self.autosave()
        if path is None:
            self._say("the editor's folder cannot be written; Save the file first", error=True)
            return None
        self.editor.mark_line(None)
        try:
            return self.problem_job(path, compare_with)
        except InputError as exc:  # the panel's size or options refused: said as the panel would
            self._say(str(exc), error=True)
            return None

    def problem_job(self, path: str = "", compare_with: str | None = None) -> VariantJob:
        """A job on the benchmark panel's problem now: its size, options and repeats (InputError, in the
        panel's words, for a value the panel refuses)."""
        from kernels.service.bench_request import BenchRequest

        spec = self.targets[self.target]
        panel = self.panels.get(spec.title)
        one = dict(launches=(Launch(),), variants="all", rounds=1, processes=1, peak=False)
        if panel is not None:
            request = panel.request(sizes=(panel.n.value(),), **one)
        else:
            backend = self.model.backend
            request = BenchRequest(spec.name, backend, sizes=(spec.size.default_for(backend, gui=True),),
                                   repeats=min(2, backend.caps.max_repeats), **one)
        return VariantJob(path, request, self.watchdog.value(), compare_with)

    def run(self) -> bool:
        """Save, load and compile the file in its child process, verify and time it at the panel's size."""
        job = self._job()
        if job is None:
            return False
        self._start(job, f"running {os.path.basename(job.path)} at n = {job.n:,} on {self.model.backend.label}…")
        return True

    def inspect(self) -> bool:
        """Compile the file and the chosen built-in for the Inspector's Compare tab."""
        job = self._job(self.compare_box.currentText())
        if job is None:
            return False
        self._start(job, f"compiling {os.path.basename(job.path)} and {job.compare_with} for {job.arch}…")
        return True

    def _start(self, job: VariantJob, text: str) -> None:
        self.running = True
        self.run_button.setEnabled(False)
        self.inspect_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.sim_offer.hide()
        self._path_running = job.path
        self._say(text)
        self.worker.start(job)
        self.editor.setFocus()  # the keyboard stays in the code: Ctrl+Z, typing on

    def stop(self) -> None:
        """End the running Run or Inspect (its child process is ended; the next Run starts a fresh one)."""
        if self.running:
            self.worker.stop()
            self._say("stopping…")

    def _row(self, row, phases) -> None:
        from kernels.harness.rows import ERROR, FAILED, SKIPPED

        self.last_phases = phases
        self.rowReady.emit(self.targets[self.target].title, row)
        verdict = {FAILED: "FAILED", ERROR: "error"}.get(row.verified, row.verified)
        timing = f"{row.timing.median_ms:.4f} ms" if row.timing else "no timing"
        if row.verified == SKIPPED:  # said as the built-ins say it: skipped, and why
            self._say(f"{row.variant}: skipped: {row.note}")
            self.sim_offer.offer([row])
            return
        self._say(f"{row.variant}: {verdict}, {timing} ({self._named(row.note)}); Run to row "
                  f"{sum(phases.values()):.2f} s: {phases.text()}", error=not row.ok)

    def _failed(self, text: str) -> None:
        self.editor.mark_line(error_line(text, getattr(self, "_path_running", "")))
        self._say(self._named(text), error=True)

    def _named(self, text: str) -> str:
        """``text`` naming your file where it names the autosaved copy that ran (the copy is the buffer as
        typed; the name you know is your file's)."""
        running = getattr(self, "_path_running", "")
        if not running or not self.path or running == self.path:
            return text
        return text.replace(running, self.path + (" (as in the editor, unsaved)" if self.dirty else ""))

    def _compared(self, mine, built_in) -> None:
        self.compared.emit(mine, built_in)
        self._say(f"{mine.variant} and {built_in.variant} are side by side in the Inspector's Compare tab")

    def _finished(self) -> None:
        self.running = False
        self.run_button.setEnabled(True)
        self.inspect_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        if self.status.text() == "stopping…":
            self._say("stopped")

    def showEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        """Shown: start the child process now, so that Run waits only for its own compile."""
        super().showEvent(event)
        if not self.editor.toPlainText():  # an empty editor: the template that runs here, ready to Run
            self.new_from()
        self.warm()

    def warm(self) -> None:
        """Start (or keep) the child for the model's backend, with the panel's problem made and shipped."""
        if self.isVisible() and not self.running:
            try:
                job = self.problem_job()
            except InputError:  # a panel value refused: a Run says so; the child starts without a problem
                job = None
            self.worker.warm(self.model.backend, job)

    def _say(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setToolTip(text)  # the whole text where three lines cut it
        self.status.setStyleSheet("color: #c00000" if error else "")
        self.message.emit(f"Variant editor: {text}")

    def shutdown(self) -> bool:
        from kernels.user_variants import loader

        self.worker.stop()
        done = self.thread.shutdown(timeout_ms=500)
        loader.end_children()
        return done
