"""The Lessons place: pick a lesson, guess each step's outcome (faster / about the same / slower) before it
runs, run it on the window's backend, and see per step the table, the explanation with its evidence and
verdict, a chart of cumulative speedup (the published figures and yours) and the score of your guesses;
export the lesson as CSV or Markdown. Without a GPU the table, chart and explanation add the project's
reference results (:mod:`.lesson_references`), each labelled with the device and date it was measured on;
with a GPU and Nsight Compute, *Measure counters* reads every step's counters first, as `lesson --counters`.

The lesson runs on its own worker thread (:class:`LessonWorker`); without a GPU its steps run in the
simulator's child process, so Stop ends them at once. On a GPU the compute lock keeps renders out of the
timings. Guesses are scored against this GPU's measurement, or without one against the published figure,
and the score says which."""

from __future__ import annotations

import contextlib
import traceback

import pyqtgraph as pg
from PyQt6.QtCore import Qt, pyqtSignal, pyqtSlot
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QProgressBar,
                             QPushButton, QScrollArea, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout,
                             QWidget)

from kernels.errors import InputError, whole_items
from kernels.lessons import catalog, references, report, report_refs
from kernels.lessons.run import OUTCOMES, outcome, run_lesson, sizes_for
from kernels.backend.child import Cancelled, SimulatorProcess
from raytracer_app.gui.lessons import references as shown_refs
from raytracer_app.gui.lessons.picture_box import LessonPictures
from raytracer_app.gui.common.run_on import resources_for, run_on
from raytracer_app.gui.common.workers import COMPUTE_LOCK, JobWorker, WorkerThread, describe

NO_GUESS = "guess…"
COLUMNS = ("step", "your guess", "verified", "ms", "GB/s", "% copy", "step x", "cum x", "paper step x", "paper cum x",
           "outcome")
GUESS, TIME, OUTCOME = 1, 3, 10
TIMED = (3, 4, 5, 6, 7)  # this machine's figures: hidden where nothing is timed (no GPU)
PAPER = (8, 9)  # the published figures: the answers, hidden until the step's guess is made
HIDDEN = "?"  # an answer's cell before the guess
EXPLANATION_MIN_PX = 380
TABLE_MAX_PX = 420  # more rows than this (several sizes) scroll


class LessonWorker(JobWorker):
    """Runs one lesson at a time through :func:`kernels.lessons.run.run_lesson`, streaming its steps."""

    stepDone = pyqtSignal(object)  # StepResult
    finished = pyqtSignal(object, bool)  # LessonRun or None, stopped
    failed = pyqtSignal(str)
    counting = pyqtSignal(str)  # the counters' progress, one line

    def __init__(self):
        super().__init__()
        self.sim = SimulatorProcess()  # the steps' simulator runs: Stop ends this child at once

    def start(self, lesson, backend, sizes, arch, counters: bool = False) -> None:
        super().start((lesson, backend, sizes, arch, counters))

    @pyqtSlot(object)
    def _run(self, request) -> None:
        lesson, backend, sizes, arch, counters = request
        result = None
        try:
            client = run_on().client
            place = None
            if client is not None:  # *Run on* a cluster: each step on a worker (docs/cluster.md)
                from kernels.cluster import remote

                if counters:
                    raise InputError("Counters read Nsight Compute on this machine; choose Run on: This machine")
                place = remote.LessonPlace(client, resources_for(client, backend))
            lock = COMPUTE_LOCK if backend.is_gpu and place is None else contextlib.nullcontext()
            with lock:
                result = run_lesson(lesson, backend, sizes, None, arch, on_step=self.stepDone.emit,
                                    should_stop=self._stop.is_set, simulator=None if backend.is_gpu else self.sim,
                                    counters=counters, on_counters=self.counting.emit, place=place)
        except Cancelled:
            pass
        except Exception as exc:  # noqa: BLE001 - one line in the panel
            if not isinstance(exc, InputError):
                traceback.print_exc()
            self.failed.emit(describe(exc))
        finally:
            self._running.clear()
            self.finished.emit(result, self._stop.is_set())


class LessonsPanel(QWidget):
    """``backend_of()`` gives the window's current backend when a lesson starts."""

    message = pyqtSignal(str)
    accessRequested = pyqtSignal(str, str)  # (target, variant): what its warps do to memory, in the Access tool

    def __init__(self, backend_of, parent=None):
        super().__init__(parent)
        self.backend_of = backend_of
        self.run_result = None
        self.results: dict[tuple[int, int], object] = {}  # (n, step index) -> StepResult
        self.row_of: dict[tuple[int, int], int] = {}
        self.sizes: list[int] = []
        self.references: list = []  # the shipped references shown without a GPU (kernels.lessons.references)
        self.answers: dict[int, dict[int, str]] = {}  # row -> {column: the answer shown once guessed}

        self.lesson_box = QComboBox()
        for lesson in catalog.LESSONS:
            self.lesson_box.addItem(lesson.title, lesson.name)
        self.sizes_edit = QLineEdit()
        self.sizes_edit.setToolTip("sizes N1,N2,... in the lesson's unit; empty: the lesson's own")
        self.arch_box = QComboBox()
        self.arch_box.addItem("the GPU's own (sm_90 without one)", None)
        from kernels.inspector.occupancy import LIMITS

        for arch in sorted(LIMITS, key=lambda a: int(a.split("_")[1])):
            self.arch_box.addItem(arch, arch)
        self.arch_box.setToolTip("the architecture the static evidence is compiled for")
        self.counters_box = QCheckBox("Measure counters (Nsight Compute)")
        self.run_button, self.stop_button = QPushButton("Run lesson"), QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.csv_button, self.md_button = QPushButton("Export CSV…"), QPushButton("Export Markdown…")
        for b in (self.csv_button, self.md_button):
            b.setEnabled(False)
        self.progress = QProgressBar()
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.score = QLabel()
        self.status = QLabel()
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.explanation = QLabel()
        self.explanation.setWordWrap(True)
        self.explanation.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.explanation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                                 | Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.explanation.linkActivated.connect(self._link)
        self.pictures = LessonPictures(self)  # a step's warp request, drawn (issue 36): some steps have one
        self.pictures.accessRequested.connect(self.accessRequested)
        explained = QWidget()
        column = QVBoxLayout(explained)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.explanation)
        column.addWidget(self.pictures)
        column.addStretch(1)
        self.explanation_area = QScrollArea()  # a long explanation scrolls down, never sideways
        self.explanation_area.setWidget(explained)
        self.explanation_area.setWidgetResizable(True)
        self.explanation_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.explanation_area.setMinimumWidth(EXPLANATION_MIN_PX)
        self.chart = pg.PlotWidget()
        self.chart.setLabel("bottom", "step")
        self.chart.setLabel("left", "cumulative speedup")
        # the legend below the plot, outside the lines (inside it, it covered them at 1366x768); the plot's
        # own legend, so plot(name=...) and clear() keep it as addLegend's
        plot = self.chart.getPlotItem()
        plot.legend = pg.LegendItem(colCount=3, labelTextSize="8pt")
        plot.layout.addItem(plot.legend, 4, 1)
        self.chart.setMinimumSize(260, 180)
        self.chart.getViewBox().sigResized.connect(lambda *_: self._fit_legend())

        # two rows of controls: what to run, then running it and its exports (one row is wider than a laptop)
        what, run = QHBoxLayout(), QHBoxLayout()
        for w in (QLabel("Lesson"), self.lesson_box, QLabel("n"), self.sizes_edit, QLabel("evidence for"),
                  self.arch_box, self.counters_box):
            what.addWidget(w)
        what.addStretch(1)
        for w in (self.run_button, self.stop_button, self.progress, self.csv_button, self.md_button):
            run.addWidget(w, 1 if w is self.progress else 0)
        # the steps above (each row in view), the chosen step's explanation and the chart below, side by side
        self.lower = QSplitter(Qt.Orientation.Horizontal)
        self.lower.addWidget(self.explanation_area)
        self.lower.addWidget(self.chart)
        self.lower.setStretchFactor(0, 3)
        self.lower.setStretchFactor(1, 2)
        self.lower.setChildrenCollapsible(False)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.table)
        self.split.addWidget(self.lower)
        self.split.setChildrenCollapsible(False)
        self.split.setStretchFactor(1, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(what)
        lay.addLayout(run)
        lay.addWidget(self.summary)
        lay.addWidget(self.split, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.score, 1)
        bottom.addWidget(self.status)
        lay.addLayout(bottom)

        self.worker = LessonWorker()
        self.thread = WorkerThread(self.worker, "lesson")
        self.worker.stepDone.connect(self._step_done)
        self.worker.finished.connect(self._finished)
        self.worker.failed.connect(self._failed)
        self.worker.counting.connect(lambda text: self.status.setText(f"counters: {text}"))
        self.thread.start()
        self.lesson_box.currentIndexChanged.connect(lambda _: self.prepare())
        self.run_button.clicked.connect(self.start)
        # a lambda, so the click sets the flag at once instead of queueing behind the running lesson
        self.stop_button.clicked.connect(lambda: self.worker.stop())
        self.csv_button.clicked.connect(lambda: self.export("csv"))
        self.md_button.clicked.connect(lambda: self.export("markdown"))
        self.table.currentCellChanged.connect(lambda row, *_: self._explain(row))
        self.prepare()

    # ------------------------------------------------------------------ the table before a run
    @property
    def lesson(self):
        return catalog.by_name(self.lesson_box.currentData())

    def _given_sizes(self) -> list[int] | None:
        text = self.sizes_edit.text().strip()
        return whole_items(text, "n") if text else None

    def prepare(self) -> None:
        """One row per step and size, each with a guess to make before it runs."""
        lesson, backend = self.lesson, self.backend_of()
        try:
            self.sizes = sizes_for(lesson, backend, self._given_sizes())
        except InputError as exc:
            self._say(str(exc))
            return
        self.results.clear()
        self.row_of.clear()
        self.answers = {}
        self.run_result = None
        self._refresh_counters(backend)
        self._load_references(lesson, backend)
        self.table.setRowCount(0)
        for n in self.sizes:
            for i, step in enumerate(lesson.steps):
                row = self.table.rowCount()
                self.table.insertRow(row)
                self.row_of[(n, i)] = row
                title = step.title if len(self.sizes) == 1 else f"{step.title} (n={n:,})"
                self._set(row, 0, title)
                guess = QComboBox()
                guess.addItems([NO_GUESS, *OUTCOMES])
                guess.setToolTip("your guess, before the step runs: its published figure and the references show "
                                 "once you have guessed")
                guess.currentIndexChanged.connect(lambda _, r=row: self._guessed(r))
                self.table.setCellWidget(row, GUESS, guess)
                p = step.published
                answers = {8: _x(p and p.step), 9: _x(p and p.cumulative)}
                for k, text in enumerate(shown_refs.cells(self.references, i)):
                    answers[len(COLUMNS) + k] = text
                self.answers[row] = answers
                self._show_answers(row)
        timed = "this GPU ms" if backend.is_gpu else "ms (no GPU: not timed)"
        self.table.setHorizontalHeaderItem(TIME, QTableWidgetItem(timed))
        for column in TIMED:  # without a GPU nothing of this machine is timed: no empty columns
            self.table.setColumnHidden(column, not backend.is_gpu)
        self._fit_table()
        where = ("timed on the GPU" if backend.is_gpu else
                 "no GPU: each step is verified in the CUDA simulator, nothing is timed; guesses are scored "
                 "against the published figures")
        self.summary.setText(f"{lesson.summary}. {where}." + (f" Published: {lesson.source}." if lesson.source else "")
                             + shown_refs.summary(self.references))
        self.progress.setRange(0, len(self.sizes) * len(lesson.steps))
        self.progress.setValue(0)
        self._draw_chart()
        self._update_score()
        self.table.setCurrentCell(0, 0)  # the first step's idea in view, not an empty pane
        self._explain(0)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        """The explanation gets the larger share of the width below the table, once the panel has its size."""
        super().resizeEvent(event)
        width = self.lower.width()
        if not getattr(self, "_shared", False) and width > 2 * EXPLANATION_MIN_PX:
            self._shared = True
            self.lower.setSizes([int(width * 0.58), width - int(width * 0.58)])

    def revealed(self, row: int) -> bool:
        """Whether a row's answers (the published figures, the references) show: once its guess is made or its
        step has run; the first step, which has no step factor to guess, always."""
        key = next((k for k, r in self.row_of.items() if r == row), None)
        if key is None or key[1] == 0 or key in self.results:
            return True
        guess = self.table.cellWidget(row, GUESS)
        return guess is not None and guess.currentText() != NO_GUESS

    def _show_answers(self, row: int) -> None:
        shown = self.revealed(row)
        for column, text in self.answers.get(row, {}).items():
            self._set(row, column, text if shown or not text else HIDDEN)
            if not shown and text:
                self.table.item(row, column).setToolTip("guess first: the answer shows once you have guessed")

    def _guessed(self, row: int) -> None:
        self._show_answers(row)
        self._update_score()
        self._draw_chart()
        if row == self.table.currentRow():
            self._explain(row)

    def _fit_table(self) -> None:
        """Columns as wide as their contents, the step's title taking what is left (elided, whole in its
        tooltip); the table as tall as its rows (up to TABLE_MAX_PX), so every step is in view."""
        table, header = self.table, self.table.horizontalHeader()
        table.resizeColumnsToContents()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(40)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        for row in range(table.rowCount()):
            item = table.item(row, 0)
            if item is not None:
                item.setToolTip(item.text())
        rows = sum(table.rowHeight(r) for r in range(table.rowCount()))
        need = rows + header.sizeHint().height() + 2 * table.frameWidth() + 2
        table.setMinimumHeight(min(need, TABLE_MAX_PX))
        table.setMaximumHeight(max(need, 80))

    def _refresh_counters(self, backend) -> None:
        """The counters option: offered where `lesson --counters` could work (a GPU and ncu), as the benchmark
        panels' Measure is; otherwise off, with the reason as its tooltip."""
        from kernels.counters.tool import why_not

        why = why_not(backend)
        self.counters_box.setEnabled(not why)
        if why:
            self.counters_box.setChecked(False)
        self.counters_box.setToolTip(why or "read every step's hardware counters with Nsight Compute once, before "
                                            "the timed runs, and cite them in the evidence (as lesson --counters)")

    def _load_references(self, lesson, backend) -> None:
        """Without a GPU, the lesson's shipped references (read off the GUI thread) and their columns."""
        self.references = []
        if not backend.is_gpu:
            from raytracer_app.gui.common.saving import in_background

            self.references, refused = in_background(lambda: references.load(lesson))
            if refused:
                self._say("reference not shown: " + "; ".join(refused))
        extra = shown_refs.headings(self.references)
        self.table.setColumnCount(len(COLUMNS) + len(extra))
        for k, (heading, tip) in enumerate(extra):
            item = QTableWidgetItem(heading)
            item.setToolTip(tip)
            self.table.setHorizontalHeaderItem(len(COLUMNS) + k, item)

    # ------------------------------------------------------------------ running
    def start(self) -> None:
        if self.worker.running():
            return
        try:
            sizes = sizes_for(self.lesson, self.backend_of(), self._given_sizes())
        except InputError as exc:
            self._say(str(exc))
            return
        if sizes != self.sizes or len(self.row_of) != len(sizes) * len(self.lesson.steps):
            self.prepare()  # a new table: the guesses made for the old one do not apply
        else:
            self._clear_results()  # the same table: keep the guesses made for it
        if not self.row_of:
            return
        self._refresh_counters(self.backend_of())  # the window's backend may have changed since the table was made
        self.run_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.lesson_box.setEnabled(False)
        self._say("")
        self.worker.start(self.lesson, self.backend_of(), self.sizes, self.arch_box.currentData(),
                          self.counters_box.isEnabled() and self.counters_box.isChecked())

    def _clear_results(self) -> None:
        self.results.clear()
        self.run_result = None
        for row in self.row_of.values():
            self.table.cellWidget(row, GUESS).setEnabled(True)
            self._show_answers(row)
            for column in (2, TIME, 4, 5, 6, 7, OUTCOME):
                self._set(row, column, "")
        self.progress.setValue(0)
        self._draw_chart()
        self._update_score()

    def busy(self) -> bool:
        return self.worker.running()

    @pyqtSlot(object)
    def _step_done(self, r) -> None:
        row = self.row_of.get((r.n, r.index))
        if row is None:
            return
        self.results[(r.n, r.index)] = r
        self.table.cellWidget(row, GUESS).setEnabled(False)  # predict, then measure: no changing it now
        self._show_answers(row)
        cells = {2: r.verified, TIME: _f(r.time_ms, 4), 4: _f(r.gbps, 1), 5: _f(r.pct_of_copy, 1),
                 6: _x(r.step_speedup), 7: _x(r.cumulative)}
        for column, value in cells.items():
            self._set(row, column, value)
        self.progress.setValue(len(self.results))
        self._update_score()
        self._draw_chart()

    @pyqtSlot(object, bool)
    def _finished(self, result, stopped: bool) -> None:
        self.run_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        self.lesson_box.setEnabled(True)
        if result is not None:
            self.run_result = result
            for r in result.results:
                self.results[(r.n, r.index)] = r  # now with their evidence and verdicts
            self.csv_button.setEnabled(True)
            self.md_button.setEnabled(True)
        if stopped:
            self._say("stopped")
        self._explain(self.table.currentRow())

    @pyqtSlot(str)
    def _failed(self, text: str) -> None:
        self._say(text)

    # ------------------------------------------------------------------ score, chart, explanation
    def score_counts(self) -> tuple[int, int, str]:
        """(right, scored, against what) over the steps that ran and were guessed."""
        right = scored = 0
        against = ""
        for key, r in self.results.items():
            guess = self.table.cellWidget(self.row_of[key], GUESS).currentText()
            result = outcome(r)
            if result is None or guess == NO_GUESS:
                continue
            scored += 1
            right += guess == result[0]
            against = result[1]
        return right, scored, against

    def _update_score(self) -> None:
        for key, r in self.results.items():
            result = outcome(r)
            guess = self.table.cellWidget(self.row_of[key], GUESS).currentText()
            mark = "" if result is None or guess == NO_GUESS else " ✓" if guess == result[0] else " ✗"
            self._set(self.row_of[key], OUTCOME, (result[0] + mark) if result else "not measured")
        right, scored, against = self.score_counts()
        self.score.setText(f"score: {right} of {scored} guesses right" + (f" (against {against})" if against else "")
                           if scored else "score: make a guess per step before it runs; it is scored once the step has run")

    def _draw_chart(self) -> None:
        self.chart.clear()
        steps = self.lesson.steps
        self.chart.setXRange(0.5, len(steps) + 0.5, padding=0)  # every step's place, guessed or not
        self.chart.getPlotItem().getAxis("bottom").setTicks([[(i + 1, str(i + 1)) for i in range(len(steps))]])
        first = self.sizes[0] if self.sizes else None
        shown = {i for i in range(len(steps)) if self.revealed(self.row_of.get((first, i), -1))}
        paper = [(i + 1, 1.0 if i == 0 else s.published.cumulative) for i, s in enumerate(steps)
                 if s.published is not None and (i == 0 or s.published.cumulative) and i in shown]
        if paper:
            self.chart.plot([x for x, _ in paper], [y for _, y in paper], pen=pg.mkPen("#888", width=2),
                            symbol="o", name="published")
        colours = ("#1f77b4", "#d62728", "#2ca02c")
        for k, n in enumerate(self.sizes):
            mine = [(i + 1, r.cumulative) for (m, i), r in sorted(self.results.items()) if m == n and r.cumulative]
            if mine:
                self.chart.plot([x for x, _ in mine], [y for _, y in mine], pen=pg.mkPen(colours[k % 3], width=2),
                                symbol="s", name=f"this GPU, n={n:,}")
        for k, (name, points) in enumerate(shown_refs.series(self.references)):
            points = [(x, y) for x, y in points if x - 1 in shown]  # the answers of the steps guessed
            if not points:
                continue
            self.chart.plot([x for x, _ in points], [y for _, y in points], name=name, symbol="t",
                            pen=pg.mkPen(("#9467bd", "#17becf", "#8c564b")[k % 3], width=2, style=Qt.PenStyle.DashLine))
        self._fit_legend()

    def _fit_legend(self) -> None:
        """As many legend columns as the chart's width holds whole entries (a third one was cut at 1366)."""
        legend = self.chart.getPlotItem().legend
        if not legend.items:
            return
        widest = max(sample.boundingRect().width() + label.boundingRect().width() + 10 for sample, label in legend.items)
        columns = max(1, min(3, int(self.chart.width() // max(widest, 1))))
        if columns != legend.columnCount:
            legend.setColumnCount(columns)

    def _explain(self, row: int) -> None:
        key = next((k for k, v in self.row_of.items() if v == row), None)
        if key is None:
            self.explanation.setText("")
            self.pictures.hide()
            return
        step = self.lesson.steps[key[1]]
        parts = [f"<b>{step.title}</b> ({step.variant})", step.idea]
        r = self.results.get(key)
        shown = report.evidence_text(self.run_result, r) if r is not None and self.run_result is not None else ""
        if shown:  # the static facts, then the measured counters, as the CLI's evidence line
            parts.append(f"Evidence {shown}")
        if r is not None and r.verdict:
            parts.append(f"<i>{r.verdict}</i>")
        if self.revealed(row):
            parts += shown_refs.explanation(self.references, key[1])
        elif self.references or step.published is not None:
            parts.append("<i>Guess this step first: its published figure and the references show once you have.</i>")
        self.pictures.show_step(self.lesson, step)
        if traceable(self.lesson.target, step.variant):
            parts.append(f'<a href="access:{step.variant}">What {step.variant}\'s warps do to memory, line by line</a> '
                         "(traced in the CUDA simulator, in the Access tool)")
        self.explanation.setText("<br><br>".join(parts))

    def _link(self, link: str) -> None:
        if link.startswith("access:"):
            self.accessRequested.emit(self.lesson.target, link.split(":", 1)[1])

    # ------------------------------------------------------------------ export
    def export(self, kind: str, path: str | None = None) -> None:
        """Write the last run as CSV or Markdown (``path``, else asked for)."""
        if self.run_result is None:
            return
        from raytracer_app.gui.common.saving import export_to

        suffix = "csv" if kind == "csv" else "md"
        refs, run = self.references, self.run_result
        content = report_refs.csv_text(run, refs) if kind == "csv" else report_refs.markdown(run, refs)
        path = export_to(self, lambda p: report.write(p, content, f"the {kind} file"),
                         lambda exc: self._say(describe(exc)), f"Export the lesson as {kind}",
                         f"{kind} (*.{suffix})", f"lesson-{self.run_result.lesson.name}.{suffix}", path)
        if path is not None:
            self._say(f"wrote {path}{path.kept}")

    def _say(self, text: str) -> None:
        self.status.setText(text)
        if text:
            self.message.emit(text)

    def _set(self, row: int, column: int, text: str) -> None:
        item = QTableWidgetItem(text)
        item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
        self.table.setItem(row, column, item)


def traceable(target: str, variant: str) -> bool:
    """Whether the Access tool can trace this step's variant (a GPU variant the simulator runs)."""
    from kernels.registry import by_name

    v = next((v for v in by_name(target).variants if v.name == variant), None)
    return v is not None and v.kind == "gpu" and not v.runs_on_host and not v.sim_skip


def _f(x, digits: int) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def _x(x) -> str:
    return "" if not x else f"{x:.2f}x"
