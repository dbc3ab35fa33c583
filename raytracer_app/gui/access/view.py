"""The Access tool: two traced variants side by side (say interleaved-strided and sequential), each pane the
kernel's Python source with a heat column per line (the figure chosen at the top: sectors per request,
conflicts per request, active lanes, or a figure per line: the trace's totals, measured on this GPU, a
shipped reference's; see line_figures.py), and for the chosen line a picture of one warp request, stepped
through the line's requests (previous, next, play) or one warp's through a loop's iterations. Each pane
traces in its own worker (the simulator's child process; Stop ends it within a second)."""

from __future__ import annotations

from PyQt6.QtCore import Qt, QTimer, pyqtSignal
from PyQt6.QtGui import QColor, QFont, QFontDatabase
from PyQt6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLabel, QPushButton, QSpinBox, QSplitter,
                             QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from raytracer_app.gui.common import access_listing as listing
from raytracer_app.gui.access.line_figures import KINDS as LINE_KINDS, PaneFigures
from raytracer_app.gui.common.access_picture import WarpPicture
from raytracer_app.gui.common.access_worker import AccessWorker, TraceAsk
from raytracer_app.gui.common import line_figures as lf
from raytracer_app.gui.common.workers import WorkerThread

DEFAULT_SIDES = (("reduction", "interleaved-strided"), ("reduction", "sequential"))
PLAY_MS = 600  # a request shown this long when playing
HEAT_COLUMN, LINE_COLUMN, TEXT_COLUMN = 0, 1, 2


def traceable(target: str) -> list[str]:
    """The target's GPU variants the simulator can trace, in declaration order."""
    from kernels.registry import by_name

    return [v.name for v in by_name(target).variants if v.kind == "gpu" and not v.runs_on_host and not v.sim_skip]


def why_not(target: str, variant: str) -> str:
    """Why the Access tool cannot trace a variant, in the trace's own words."""
    from kernels.registry import by_name

    v = next((v for v in by_name(target).variants if v.name == variant), None)
    if v is None:
        return "no such variant"
    if v.runs_on_host:
        return "it is CPU code, which makes no GPU memory requests"
    if v.kind != "gpu":
        return "it is a library call: its kernels are not Python, so the simulator cannot run them"
    return f"the simulator cannot run it ({v.sim_skip})"


def targets() -> list[str]:
    from kernels.registry import ALGORITHMS

    return [a.name for a in ALGORITHMS if traceable(a.name)]


def _cpu_backend():
    from kernels.backend import Backend

    return Backend("cpu")


class AccessPane(QWidget):
    """One traced variant. ``message(text)`` for the window's status line; ``linesChanged(prefer)`` when its
    figures per line changed (``prefer``: a (key, kind) worth showing now, or None)."""

    message = pyqtSignal(str)
    linesChanged = pyqtSignal(object)

    def __init__(self, figure_of, parent=None, backend_of=None, name: str = "access"):
        super().__init__(parent)
        self.figure_of = figure_of  # the heat figure chosen at the top: (its text, a line_figures.Choice or None)
        self.result = None
        self.trace_summary = ""
        self.listings: dict = {}
        self.requests: list = []
        self.index = 0
        self._then_trace = False  # a new variant was asked for while one was tracing: trace it once stopped
        self.worker = AccessWorker(lines=True)
        self.thread = WorkerThread(self.worker, name)
        self.figures = PaneFigures(backend_of or _cpu_backend, name, self)
        self.worker.linesReady.connect(self.figures.set_traced)
        self.figures.said.connect(self.status_text)
        self.figures.changed.connect(self.linesChanged)
        self.figures.measure.running_changed.connect(lambda _: self._buttons())
        self.worker.traced.connect(self._traced)
        self.worker.progress.connect(lambda text: self.status.setText(text + " (Stop ends it)"))
        self.worker.failed.connect(self._failed)
        self.worker.finished.connect(self._finished)
        self.thread.start()
        self.play_timer = QTimer(self)
        self.play_timer.setInterval(PLAY_MS)
        self.play_timer.timeout.connect(self._play_step)
        self._build()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.target_box, self.variant_box = QComboBox(), QComboBox()
        for box, chars in ((self.target_box, 9), (self.variant_box, 18)):  # two panes fit a laptop's width
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(chars)
        self.target_box.addItems(targets())
        self.target_box.currentTextChanged.connect(self._fill_variants)
        self.n_box = QSpinBox()
        self.n_box.setRange(0, 1 << 24)
        self.n_box.setSpecialValueText("default n")
        self.n_box.setToolTip("problem size; default: the simulator's (blocks are sampled: all of a small grid, "
                              "else the first few and a spread)")
        self.trace_button, self.stop_button = QPushButton("Trace"), QPushButton("Stop")
        self.trace_button.setToolTip("run the variant in the CUDA simulator, recording every load, store and atomic "
                                     "of each warp (no GPU needed)")
        self.trace_button.clicked.connect(self.trace)
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.setEnabled(False)
        top = QHBoxLayout()
        for w in (self.target_box, self.variant_box, self.n_box, self.trace_button, self.stop_button):
            top.addWidget(w)
        top.addStretch(1)
        self.status = QLabel("Trace runs the variant in the simulator and shows what each warp asks of memory")
        self.status.setWordWrap(True)
        self.kernel_box = QComboBox()
        self.kernel_box.setToolTip("the kernels the variant launched")
        self.kernel_box.currentTextChanged.connect(lambda _: self._show_kernel())
        self.summary = QLabel()
        self.summary.setWordWrap(True)

        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["heat", "line", "source"])
        self.table.verticalHeader().hide()
        self.table.setShowGrid(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(HEAT_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(LINE_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(TEXT_COLUMN, QHeaderView.ResizeMode.Stretch)
        self.table.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 4)
        self.table.currentCellChanged.connect(lambda row, *_: self._line_chosen(row))
        # 6 lines at least: at 1366x768 the 32 lanes below come first (more lines where the screen is taller)
        self.table.setMinimumHeight(6 * self.table.verticalHeader().defaultSectionSize() + 30)

        self.warp_box = QComboBox()
        self.warp_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.warp_box.setMinimumContentsLength(10)
        self.warp_box.setToolTip("every request the line kept, or one warp's (of its first traced block): its "
                                 "requests are the loop's iterations, in order")
        self.warp_box.currentIndexChanged.connect(lambda _: self._fill_requests())
        self.prev_button, self.next_button, self.play_button = QPushButton("◀ Prev"), QPushButton("Next ▶"), \
            QPushButton("Play")
        self.prev_button.setToolTip("the line's previous request")
        self.next_button.setToolTip("the line's next request")
        self.play_button.setToolTip("step through the requests on their own, one every 0.6 s")
        self.play_button.setCheckable(True)
        self.prev_button.clicked.connect(lambda: self.step(-1))
        self.next_button.clicked.connect(lambda: self.step(1))
        self.play_button.toggled.connect(self._play)
        self.position = QLabel()
        stepper = QHBoxLayout()
        for w in (self.warp_box, self.prev_button, self.next_button, self.play_button, self.position):
            stepper.addWidget(w)
        stepper.addStretch(1)
        self.request_text = QLabel()
        self.request_text.setWordWrap(True)
        self.picture = WarpPicture()

        lower = QWidget()
        low = QVBoxLayout(lower)
        low.setContentsMargins(0, 0, 0, 0)
        low.addLayout(stepper)
        low.addWidget(self.request_text)
        low.addWidget(self.picture, 1)
        # the picture's part no taller than its 32 lanes need: the height beyond shows more of the source
        lower.setMaximumHeight(self.picture.maximumHeight() + self.prev_button.sizeHint().height()
                               + 3 * self.request_text.fontMetrics().lineSpacing() + 12)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.table)
        self.split.addWidget(lower)
        self.split.setChildrenCollapsible(False)
        self.split.setStretchFactor(0, 2)
        self.split.setStretchFactor(1, 3)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.status)
        kernel_row = QHBoxLayout()
        kernel_row.addWidget(QLabel("kernel"))
        kernel_row.addWidget(self.kernel_box, 1)
        self.measure_button = self.figures.measure.button
        self.measure_button.clicked.connect(lambda: self.figures.start_measure(self.n_box.value() or None))
        for w in (self.measure_button, self.figures.reference_box):
            kernel_row.addWidget(w)
        lay.addLayout(kernel_row)
        lay.addWidget(self.summary)
        lay.addWidget(self.split, 1)
        self._fill_variants(self.target_box.currentText())
        self._fill_requests()

    def _fill_variants(self, target: str) -> None:
        self.variant_box.clear()
        self.variant_box.addItems(traceable(target) if target else [])

    # ------------------------------------------------------------------ tracing
    def choose(self, target: str, variant: str) -> bool:
        """Put (target, variant) in the pickers; False when the simulator cannot trace it (said why)."""
        if target not in targets() or variant not in traceable(target):
            self.status.setText(f"{target} {variant}: cannot be traced: {why_not(target, variant)}")
            return False
        self.target_box.setCurrentText(target)
        self.variant_box.setCurrentText(variant)
        return True

    def ask(self) -> TraceAsk:
        return TraceAsk(self.target_box.currentText(), self.variant_box.currentText(), self.n_box.value() or None)

    def trace(self) -> bool:
        if self.busy() or not self.variant_box.currentText():
            return False
        ask = self.ask()
        self.status.setText(f"tracing {ask.label} in the CUDA simulator…")
        self.trace_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.worker.start(ask)
        return True

    def stop(self) -> None:
        if self.busy() or self.measuring():
            self.worker.stop()
            self.figures.measure.stop()
            self.status.setText("stopping…")

    def busy(self) -> bool:
        """A trace is running."""
        return self.worker.running()

    def measuring(self) -> bool:
        return self.figures.measure.running()

    def status_text(self, text: str) -> None:
        self.status.setText(text)

    def _buttons(self) -> None:
        self.stop_button.setEnabled(self.busy() or self.measuring())

    def shutdown(self, timeout_ms: int = 500) -> bool:
        self.play_timer.stop()
        self.worker.stop()
        measuring = self.figures.shutdown(timeout_ms)
        return self.thread.shutdown(timeout_ms) and measuring

    def _traced(self, ask, result, listings) -> None:
        self.result, self.listings = result, listings
        self.kernel_box.blockSignals(True)
        self.kernel_box.clear()
        self.kernel_box.addItems([k.name for k in result.kernels])
        self.kernel_box.blockSignals(False)
        launch = result.launch
        self.status.setText(f"{ask.label}: n = {result.n:,}, block {launch.get('block')}, grid {launch.get('grid')}; "
                            f"traced in the CUDA simulator in {result.seconds:.1f} s")
        self._show_kernel()
        self.message.emit(f"Access: {ask.label} traced")

    def _failed(self, ask, text: str) -> None:
        self.status.setText(f"{ask.label}: {text}")
        self.message.emit(f"Access: {text}")

    def _finished(self, ask, stopped: bool) -> None:
        self.trace_button.setEnabled(True)
        self._buttons()
        if stopped:
            self.status.setText(f"{ask.label}: stopped")
        if self._then_trace:
            self._then_trace = False
            QTimer.singleShot(0, self.trace)

    # ------------------------------------------------------------------ showing
    @property
    def kernel(self):
        if self.result is None:
            return None
        return self.result.kernel(self.kernel_box.currentText()) or (self.result.kernels or [None])[0]

    def _show_kernel(self) -> None:
        kernel = self.kernel
        self.table.setRowCount(0)
        if kernel is None:
            return
        totals = [f"{label}: {value:.2f}" for label in listing.FIGURES
                  if (value := kernel.per_request(listing.FIGURES[label][0])) is not None]
        self.trace_summary = (f"{kernel.name}: grid {kernel.grid}, block {kernel.block}; {kernel.scope}; "
                              + "; ".join(totals))
        self.summary.setText(self.trace_summary)
        rows = self.listings.get(kernel.name, [])
        self.table.setRowCount(len(rows))
        for r, line in enumerate(rows):
            heading = line.number == 0
            number = QTableWidgetItem("" if heading else str(line.number))
            text = QTableWidgetItem(line.text)
            if heading:
                font = QFont(text.font())
                font.setItalic(True)
                text.setFont(font)
                text.setForeground(QColor(110, 110, 110))
            if line.access is not None and line.access.notes:
                text.setToolTip("\n".join(line.access.notes))
            self.table.setItem(r, LINE_COLUMN, number)
            self.table.setItem(r, TEXT_COLUMN, text)
        self.repaint_heat()
        costly = kernel.costliest(1)
        if costly:  # the line that costs most, chosen: its requests in the picture at once
            self.select_line(costly[0].line, costly[0].file)
        else:
            self._line_chosen(-1)

    def repaint_heat(self) -> None:
        """The heat column for the figure chosen at the top: a ratio of the trace, or a figure per line."""
        kernel, (figure, choice) = self.kernel, self.figure_of()
        header = QTableWidgetItem(figure)
        header.setToolTip(listing.FIGURES[figure][1] if choice is None else choice.tooltip(self.figures.kernels()))
        self.table.setHorizontalHeaderItem(HEAT_COLUMN, header)
        if kernel is None:
            return
        if choice is not None:
            self._paint_line_figures(kernel, choice)
            return
        self.summary.setText(self.trace_summary)
        for r, line in enumerate(self.listings.get(kernel.name, [])):
            value = listing.heat(line.access, figure)
            item = QTableWidgetItem("" if value is None else f"{value:.2f}")
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if value is not None:
                level = listing.heat_level(figure, value)
                item.setBackground(QColor.fromHsvF(0.33 * (1.0 - level), 0.2 + 0.5 * level, 1.0))  # green to red
                item.setToolTip(f"{figure}: {value:.2f} over {line.access.requests_seen} request(s) of the traced "
                                "blocks")
            self.table.setItem(r, HEAT_COLUMN, item)

    def _paint_line_figures(self, kernel, choice) -> None:
        """A figure per line (predicted, measured here, or a reference's), tinted by its share of the
        largest; the summary says where it comes from (or why this pane has none)."""
        column = self.figures.column(kernel.name, choice)
        heat = lf.levels(column)
        label = self.figures.label(kernel.name, choice.kind)
        for r, line in enumerate(self.listings.get(kernel.name, [])):
            at = (line.file, line.number)
            value = column.get(at) if line.number else None
            item = QTableWidgetItem(lf.cell(choice.key, value))
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if at in heat:
                item.setBackground(lf.tint(heat[at]))
            if value is not None:
                item.setToolTip(f"{choice.text}: {lf.cell(choice.key, value)}\n{label}")
            self.table.setItem(r, HEAT_COLUMN, item)
        if column:
            self.summary.setText(f"{kernel.name}, {choice.text}: {self.figures.summary(kernel.name, choice)}")
        else:
            self.summary.setText(f"{kernel.name} has no {choice.text} figures" + self.figures.why_none(choice.kind))

    def rows_with_access(self) -> list[int]:
        kernel = self.kernel
        rows = self.listings.get(kernel.name, []) if kernel is not None else []
        return [r for r, line in enumerate(rows) if line.access is not None]

    def select_line(self, number: int, file: str | None = None) -> bool:
        """Choose the source line ``number`` (of ``file``) as a click on it does."""
        kernel = self.kernel
        for r, line in enumerate(self.listings.get(kernel.name, []) if kernel is not None else []):
            if line.number == number and (file is None or line.file == file):
                self.table.setCurrentCell(r, TEXT_COLUMN)
                self.table.scrollToItem(self.table.item(r, TEXT_COLUMN))
                return True
        return False

    @property
    def line(self):
        kernel, row = self.kernel, self.table.currentRow()
        rows = self.listings.get(kernel.name, []) if kernel is not None else []
        return rows[row].access if 0 <= row < len(rows) else None

    def _line_chosen(self, row: int) -> None:
        line = self.line
        self.warp_box.blockSignals(True)
        self.warp_box.clear()
        self.warp_box.addItem("all requests kept", None)
        if line is not None:
            for warp in sorted({r.warp for r in line.requests}):
                self.warp_box.addItem(f"warp {warp}, its iterations", warp)
        self.warp_box.blockSignals(False)
        self._fill_requests()

    def _fill_requests(self) -> None:
        line = self.line
        self.requests = listing.steps(line, self.warp_box.currentData()) if line is not None else []
        self.index = 0
        self._show_request()

    def step(self, by: int) -> None:
        if self.requests:
            self.index = (self.index + by) % len(self.requests)
            self._show_request()

    def _play(self, on: bool) -> None:
        self.play_button.setText("Pause" if on else "Play")
        self.play_timer.start() if on else self.play_timer.stop()

    def _play_step(self) -> None:
        if not self.requests:
            self.play_button.setChecked(False)
            return
        self.step(1)

    def _show_request(self) -> None:
        line = self.line
        for w in (self.prev_button, self.next_button, self.play_button):
            w.setEnabled(len(self.requests) > 1)
        if not self.requests:
            self.position.setText("")
            self.request_text.setText("" if line is None else "this line makes no memory request")
            self.picture.show_request(None)
            return
        request = self.requests[self.index]
        kept = f" ({line.requests_seen} traced)" if line.requests_seen > len(line.requests) else ""
        self.position.setText(f"request {self.index + 1} of {len(self.requests)}{kept}")
        self.position.setToolTip("a line keeps its first 24 requests and 24 spread over the rest of the traced "
                                 "blocks; its counts cover them all")
        self.request_text.setText(listing.describe(request))
        self.picture.show_request(request)


class AccessView(QWidget):
    """The tool: the heat figure picker and two panes. ``show_variant(target, variant)`` traces a variant in the first
    pane (the second keeps its own); ``message(text)`` for the status line. ``backend_of()``: the window's
    backend, on which *Measure per line* measures."""

    message = pyqtSignal(str)

    def __init__(self, parent=None, backend_of=None):
        super().__init__(parent)
        self.options: list = []  # the figures per line offered after the ratios (line_figures.Choice)
        self.figure_box = QComboBox()
        self.figure_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.figure_box.setMinimumContentsLength(20)
        self._fill_figures("conflicts / request")
        self.panes = [AccessPane(self.figure, backend_of=backend_of, name=f"access-{side}")
                      for side in ("left", "right")]
        self.figure_box.currentIndexChanged.connect(lambda _: [p.repaint_heat() for p in self.panes])
        top = QHBoxLayout()
        top.addWidget(QLabel("heat"))
        top.addWidget(self.figure_box)
        note = QLabel("what each warp asks of memory, line by line, from a run traced in the CUDA simulator (no GPU); "
                      "counts are the traced blocks' (kernels/access, docs/gui.md); the heat can also be a figure "
                      "per line: predicted by the trace, measured here (Measure per line) or a shipped reference's")
        note.setWordWrap(True)
        top.addWidget(note, 1)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        for pane, (target, variant) in zip(self.panes, DEFAULT_SIDES):
            pane.choose(target, variant)
            pane.message.connect(self.message)
            pane.linesChanged.connect(self._lines_changed)
            self.split.addWidget(pane)
        self.split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.split, 1)
        self._traced_once = False

    def figure(self) -> tuple:
        """(the heat figure's text, its line_figures.Choice, or None for one of the trace's ratios)."""
        index = self.figure_box.currentIndex() - len(listing.FIGURES)
        choice = self.options[index] if 0 <= index < len(self.options) else None
        return self.figure_box.currentText(), choice

    def choose_figure(self, key: str, kind: str) -> bool:
        """Show figure ``key`` of ``kind`` per line (as picking it does); False where no pane has it."""
        for i, c in enumerate(self.options):
            if (c.key, c.kind) == (key, kind):
                self.figure_box.setCurrentIndex(len(listing.FIGURES) + i)
                return True
        return False

    def _fill_figures(self, keep: str, prefer=None) -> None:
        box = self.figure_box
        box.blockSignals(True)
        box.clear()
        for label, (_, tip) in listing.FIGURES.items():
            box.addItem(label)
            box.setItemData(box.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        kernels = [k for pane in getattr(self, "panes", []) for k in pane.figures.kernels()]
        for c in self.options:
            box.addItem(c.text)
            box.setItemData(box.count() - 1, c.tooltip(kernels), Qt.ItemDataRole.ToolTipRole)
        wanted = next((c.text for c in self.options if prefer is not None and (c.key, c.kind) == tuple(prefer)), keep)
        index = box.findText(wanted)
        box.setCurrentIndex(index if index >= 0 else box.findText("conflicts / request"))
        box.blockSignals(False)

    def _lines_changed(self, prefer) -> None:
        """A pane's figures per line changed: the picker offers what either pane has."""
        kernels = [k for pane in self.panes for k in pane.figures.kernels()]
        self.options = lf.choices(kernels, LINE_KINDS)
        self._fill_figures(self.figure_box.currentText(), prefer)
        for pane in self.panes:
            pane.repaint_heat()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        """Shown the first time: both sides traced, so the tool opens with something to see."""
        super().showEvent(event)
        if not self._traced_once:
            self._traced_once = True
            for pane in self.panes:
                if pane.result is None and not pane.busy():
                    pane.trace()

    def show_variant(self, target: str, variant: str, side: int = 0) -> bool:
        """Trace ``variant`` of ``target`` in pane ``side``; False (said in the pane) when it cannot be traced."""
        pane = self.panes[side]
        if not pane.choose(target, variant):
            self.message.emit(f"Access: {pane.status.text()}")
            return False
        self._traced_once = True
        if pane.busy():  # the running trace ends within a second; then this one starts
            pane._then_trace = True
            pane.stop()
        else:
            pane.trace()
        return True

    def busy(self) -> bool:
        """A trace or a per-line measurement is running."""
        return any(p.busy() or p.measuring() for p in self.panes)

    def stop(self) -> None:
        for pane in self.panes:
            pane.stop()

    def threads(self) -> list:
        return [p.thread for p in self.panes] + [p.figures.measure.thread for p in self.panes]

    def shutdown(self, timeout_ms: int = 500) -> bool:
        return all(p.shutdown(timeout_ms) for p in self.panes)
