"""The Inspector: a GPU variant's Python source, PTX and SASS side by side (selecting a Python line
highlights the PTX and SASS it compiled to), a figure per Python line beside the source (SourceFigures:
static, measured, a shipped reference's), its resources, and its occupancy curve with a marker at the
current block size. Compiling runs in an InspectWorker on its own thread; the window never waits on it.

Not wired into the main window here: create ``InspectorPanel()``, put it in a dock or tab, call
``inspect(target, variant, arch, block)`` when a variant is picked and ``set_block(block)`` when the
block-size slider moves (the curve's marker moves without recompiling), and ``shutdown()`` on close.
"""

from __future__ import annotations

import pyqtgraph as pg
from PyQt6.QtCore import QObject, Qt, pyqtSignal, pyqtSlot
from PyQt6.QtGui import QColor, QFont, QTextCursor, QTextFormat
from PyQt6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QSplitter, QTextEdit,
                             QVBoxLayout, QWidget)

from kernels.backend.compiler import NUMBA_CUDA_MLIR
from kernels.errors import InputError
from raytracer_app.gui.common.line_figures import cell, levels, tint
from raytracer_app.gui.common.workers import WorkerThread, describe
from raytracer_app.gui.inspector.line_figures import SourceFigures

WIDE_RATIO = 2.6  # width / height above which the resources and the curve go beside the code
CODE_SHARE = 0.76  # of the panel's height (or width) for the source, PTX and SASS
HIGHLIGHT = QColor(255, 236, 150)
ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")


def _compiler_picker() -> QComboBox:
    """The compilers the Inspector can compile with (kernels/backend/compiler.py), the process's own first
    picked; numba-cuda-mlir is greyed out, saying how to install it, where it is not installed."""
    from kernels.backend.compiler import COMPILER_NAMES, MLIR_INSTALL_HINT, mlir_installed, requested

    box = QComboBox()
    box.addItems(COMPILER_NAMES)
    box.setToolTip("which compiler builds the kernel shown (docs/compilers.md)")
    if not mlir_installed():
        item = box.model().item(COMPILER_NAMES.index(NUMBA_CUDA_MLIR))
        item.setEnabled(False)
        item.setToolTip(f"numba-cuda-mlir is not installed: {MLIR_INSTALL_HINT}")
    try:
        chosen = requested()
    except InputError:  # a bad RAYTRACER_COMPILER: the commands refuse it; the picker starts at the default
        chosen = COMPILER_NAMES[0]
    box.setCurrentText(chosen if chosen != NUMBA_CUDA_MLIR or mlir_installed() else COMPILER_NAMES[0])
    return box


class InspectWorker(QObject):
    """Compiles and inspects on its own thread (the compile itself runs in a child process)."""

    ready = pyqtSignal(object, object)  # KernelReport, request
    sourceOnly = pyqtSignal(object, str, object)  # source blocks, why there is no more, request
    failed = pyqtSignal(str, object)  # one-line message, request
    linesReady = pyqtSignal(object, object, object, object)  # static KernelLines or None, references, refused, request

    def __init__(self, cache=None):
        super().__init__()
        self.cache = cache

    @pyqtSlot(object)
    def run(self, request) -> None:
        from kernels.inspector import toolchain

        target, variant, arch, block, compiler = request
        try:
            if toolchain.missing():
                from kernels.inspector.source import kernel_sources

                why = f"PTX, SASS, resources and occupancy need the compiler packages: {toolchain.what_to_do()}"
                self.sourceOnly.emit(kernel_sources(target, variant), why, request)
                self._lines(None, request)
                return
            from kernels.inspector.report import inspect

            report = inspect(target, variant, arch, block, cache=self.cache, compiler=compiler)
            self.ready.emit(report, request)
            self._lines(report, request)
        except Exception as exc:  # noqa: BLE001 - shown as a message in the panel, never a traceback
            self.failed.emit(describe(exc), request)

    def _lines(self, report, request) -> None:
        """The figures per line the compile gives (static) and the variant's shipped references (a file read)."""
        from kernels.inspector.line_references import load
        from kernels.inspector.lines import static_lines

        static = static_lines(report) if report is not None else None
        if request[4] == NUMBA_CUDA_MLIR:  # the shipped references measured numba-cuda's code
            self.linesReady.emit(static, [], [], request)
            return
        try:
            found, refused = load(request[0], request[1])
        except OSError as exc:
            found, refused = [], [describe(exc)]
        self.linesReady.emit(static, found, refused, request)


def occupancy_text(threads: int, o) -> str:
    """The occupancy line; a limiter is named only where it keeps the SM below full occupancy."""
    limit = f", limited by {o.limiter}" if o.percent < 100 else ": full occupancy"
    return (f"<br><br>occupancy at {threads} threads: {o.blocks_per_sm} blocks/SM, {o.warps_per_sm} of "
            f"{o.max_warps_per_sm} warps ({o.percent:.0f}%){limit}")


class _CodeView(QPlainTextEdit):
    def __init__(self, title: str):
        super().__init__()
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.setFont(font)
        self.setObjectName(title)
        self._heat: list = []  # a figure's tint per line, under the highlight
        self._marked: list[int] = []

    def _selection(self, number: int, colour: QColor):
        block = self.document().findBlockByNumber(number)
        if not block.isValid():
            return None
        sel = QTextEdit.ExtraSelection()
        sel.format.setBackground(colour)
        sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        sel.cursor = QTextCursor(block)
        return sel

    def set_heat(self, levels: dict[int, float]) -> None:
        """Tint text lines (0-based) by a level from 0 (none) to 1 (the hottest)."""
        tints = (self._selection(n, tint(level)) for n, level in sorted(levels.items()) if level > 0)
        self._heat = [t for t in tints if t is not None]
        self.setExtraSelections(self._heat + [s for s in (self._selection(n, HIGHLIGHT) for n in self._marked) if s])

    def highlight(self, blocks: list[int], scroll: bool = True) -> None:
        """Mark these text lines (0-based) and, with ``scroll``, bring the first into view."""
        selections = [s for s in (self._selection(n, HIGHLIGHT) for n in blocks) if s is not None]
        self._marked = [s.cursor.blockNumber() for s in selections]
        self.setExtraSelections(self._heat + selections)
        if blocks and scroll:
            self.setTextCursor(QTextCursor(self.document().findBlockByNumber(blocks[0])))
            self.centerCursor()

    def highlighted(self) -> list[int]:
        return list(self._marked)


class InspectorPanel(QWidget):
    reportShown = pyqtSignal(object)  # KernelReport
    accessRequested = pyqtSignal(str, str)  # (target, variant): its memory accesses in the Access tool
    _request = pyqtSignal(object)

    def __init__(self, cache=None, parent=None, backend_of=None):
        super().__init__(parent)
        self.report = None
        self.block: tuple[int, ...] | None = None
        self._source_lines: list = []  # text line -> (file, line) or None
        self._source_rows: list = []  # text line -> (its heading or code, (file as shown, line) or None)
        self.backend_of = backend_of
        self._pending = None
        self._proportioned = False
        self.worker = InspectWorker(cache)
        self.thread = WorkerThread(self.worker, "inspector")
        self._request.connect(self.worker.run, Qt.ConnectionType.QueuedConnection)
        self.worker.ready.connect(self._show_report)
        self.worker.sourceOnly.connect(self._show_source_only)
        self.worker.failed.connect(self._show_failure)
        self.worker.linesReady.connect(self._show_lines)
        self.thread.start()
        self._build()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        from kernels.inspector import declarations

        self.target_box, self.variant_box, self.arch_box = QComboBox(), QComboBox(), QComboBox()
        self.target_box.addItems(declarations.targets())
        self.arch_box.addItems(ARCHS)
        self.arch_box.setCurrentText("sm_90")
        self.compiler_box = _compiler_picker()
        self.target_box.currentTextChanged.connect(
            lambda t: (self.variant_box.clear(), self.variant_box.addItems(declarations.variants(t))))
        self.variant_box.addItems(declarations.variants(declarations.targets()[0]))
        self.inspect_button = QPushButton("Inspect")
        self.inspect_button.clicked.connect(
            lambda: self.inspect(self.target_box.currentText(), self.variant_box.currentText(),
                                 self.arch_box.currentText()))
        top = QHBoxLayout()
        for label, widget in (("Target", self.target_box), ("Variant", self.variant_box), ("Arch", self.arch_box),
                              ("Compiler", self.compiler_box)):
            top.addWidget(QLabel(label))
            top.addWidget(widget)
        top.addWidget(self.inspect_button)
        self.access_button = QPushButton("Memory access…")
        self.access_button.setToolTip("what each warp of this variant does to memory, line by line, traced in the "
                                      "CUDA simulator (the Access tool)")
        self.access_button.clicked.connect(lambda: self.accessRequested.emit(self.target_box.currentText(),
                                                                             self.variant_box.currentText()))
        top.addWidget(self.access_button)
        top.addStretch(1)
        self.status = QLabel("pick a variant and press Inspect")
        self.status.setWordWrap(True)
        self.figures = SourceFigures(self.backend_of)
        self.figures.changed.connect(self._render_source)
        self.figures.said.connect(self.status.setText)

        self.source_view, self.ptx_view, self.sass_view = _CodeView("source"), _CodeView("ptx"), _CodeView("sass")
        self.source_view.cursorPositionChanged.connect(self._source_line_selected)
        code = QSplitter(Qt.Orientation.Horizontal)
        for title, view in (("Python source", self.source_view), ("PTX", self.ptx_view), ("SASS", self.sass_view)):
            box = QWidget()
            col = QVBoxLayout(box)
            col.setContentsMargins(0, 0, 0, 0)
            col.addWidget(QLabel(title))
            col.addWidget(view)
            code.addWidget(box)

        self.resources = QLabel("")
        self.resources.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.curve_plot = pg.PlotWidget()
        self.curve_plot.setBackground("w")
        self.curve_plot.setLabel("bottom", "threads per block")
        self.curve_plot.setLabel("left", "occupancy", units="%")
        self.curve_plot.setYRange(0, 105)
        self.curve_line = self.curve_plot.plot([], [], pen=pg.mkPen("#1f77b4", width=2))
        self.marker = pg.ScatterPlotItem(size=12, brush=pg.mkBrush("#d62728"))
        self.curve_plot.addItem(self.marker)
        self.curve_plot.setMinimumHeight(120)  # beside the code in a low dock: its axis stays in view
        self.details = bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.resources)
        bottom.addWidget(self.curve_plot)

        self.outer = outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(code)
        outer.addWidget(bottom)
        outer.setStretchFactor(0, 3)
        outer.setSizes([600, 240])  # the code gets most of the height
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.figures)
        layout.addWidget(outer, 1)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        """A wide, low panel (a dock below the view on a wide screen) puts the resources and the curve beside
        the code instead of below it, so the code panes keep their height."""
        super().resizeEvent(event)
        size = event.size()
        wide = size.width() > WIDE_RATIO * size.height()
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if not wide and not self._proportioned and size.height() > 300:  # its first real size: the code most of it
            self._proportioned = True
            whole = self.outer.height() or size.height()
            self.outer.setSizes([int(whole * CODE_SHARE), whole - int(whole * CODE_SHARE)])
        if self.outer.orientation() != orientation:
            self.outer.setOrientation(orientation)
            # resources and curve one above the other beside the code, side by side below it
            self.details.setOrientation(Qt.Orientation.Vertical if wide else Qt.Orientation.Horizontal)
            across = size.height() if wide else int(size.width() * 0.72)  # the details' length, roughly
            text = self.resources.sizeHint().height() if wide else self.resources.sizeHint().width()
            self.details.setSizes([text, max(across - text, 120)])  # the old sizes were for the other way
            whole = size.width() if wide else size.height()
            self.outer.setSizes([int(whole * CODE_SHARE), whole - int(whole * CODE_SHARE)])

    # ------------------------------------------------------------------ API
    def inspect(self, target: str, variant: str, arch: str = "sm_90", block: tuple[int, ...] | None = None) -> None:
        """Compile and show a variant; returns at once (the worker reports back)."""
        self._pending = (target, variant, arch, block, self.compiler_box.currentText())
        for box, value in ((self.target_box, target), (self.variant_box, variant), (self.arch_box, arch)):
            box.setCurrentText(value)  # the pickers show what is being inspected
        self.status.setText(f"compiling {target} {variant} for {arch} with {self._pending[4]}…")
        self.figures.set_variant(target, variant)
        self._request.emit(self._pending)

    def set_block(self, block: tuple[int, ...]) -> None:
        """Move the occupancy marker to another block size (no recompile: the resources stay the same)."""
        self.block = tuple(block)
        if self.report is not None:
            self._show_occupancy()

    def shutdown(self, timeout_ms: int = 30000) -> bool:
        measuring = self.figures.shutdown(min(timeout_ms, 5000))
        return self.thread.shutdown(timeout_ms) and measuring

    # ------------------------------------------------------------------ results
    def _stale(self, request) -> bool:
        return request != self._pending  # a newer request replaced this one

    def _show_report(self, report, request) -> None:
        if self._stale(request):
            return
        self.report = report
        self.block = report.block
        self._fill_source(report.sources)
        self.ptx_view.setPlainText(report.ptx)
        self.sass_view.setPlainText("\n".join(
            f"{ins.line if ins.line else '':>5}  /*{ins.address:04x}*/ {ins.text}" for ins in report.sass))
        res = report.resources
        self._resource_text = (
            f"<b>{report.target} {report.variant}</b> on {report.arch}<br>"
            f"registers per thread: {res.registers}<br>"
            f"shared memory per block: {res.static_shared} B static + {report.dynamic_shared} B dynamic<br>"
            f"local memory per thread: {res.stack_frame} B (spills {res.spill_stores} B stored, {res.spill_loads} B loaded)<br>"
            f"__constant__ data: {res.constant} B; barriers: {res.barriers}<br>"
            f"max threads per block: {report.max_threads_per_block}")
        xs = [p.threads_per_block for p in report.curve]
        self.curve_line.setData(xs, [p.percent for p in report.curve])
        self._show_occupancy()
        self.status.setText(f"{report.target} {report.variant}: {len(report.sass)} SASS instructions; "
                            "select a Python line to see its PTX and SASS")
        self.reportShown.emit(report)

    def _show_occupancy(self) -> None:
        from kernels.inspector.declarations import declaration, threads
        from kernels.inspector.occupancy import occupancy

        report = self.report
        decl = declaration(report.target, report.variant)
        block = report.block if decl.fixed_block else self.block
        total = threads(block)
        o = occupancy(report.arch, total, report.resources.registers,
                      report.resources.static_shared + decl.dynamic_shared(total))
        self.current_occupancy = o
        self.marker.setData([total], [o.percent])
        self.resources.setText(self._resource_text + occupancy_text(total, o))

    def _show_source_only(self, sources, why, request) -> None:
        if self._stale(request):
            return
        self.report = None
        self._fill_source(sources)
        for view in (self.ptx_view, self.sass_view):
            view.setPlainText("")
        self.resources.setText("")
        self.curve_line.setData([], [])
        self.marker.setData([], [])
        self.status.setText(why)

    def _show_failure(self, message, request) -> None:
        if not self._stale(request):
            self.status.setText(f"could not inspect: {message}")

    def _show_lines(self, static, references, refused, request) -> None:
        if not self._stale(request):
            self.figures.set_lines(static, references, refused)

    def _fill_source(self, sources) -> None:
        from kernels.counters.lines import shown_file

        rows, where, shown = [], [], {}
        for s in sources:
            name, file, first, body = (s["name"], s["file"], s["first_line"], s["source"]) if isinstance(s, dict) \
                else (s.name, s.file, s.first_line, s.text)
            rows.append((f"# {name}  ({file}, line {first})", None))
            where.append(None)
            shown.setdefault(file, shown_file(file))
            for i, line in enumerate(body.rstrip("\n").splitlines()):
                rows.append((line, (shown[file], first + i)))
                where.append((file, first + i))
            rows.append(("", None))
            where.append(None)
        self._source_lines, self._source_rows = where, rows
        self._render_source(keep=False)

    def _render_source(self, keep: bool = True) -> None:
        """The source with the chosen figure per line between the line number and the code, each line tinted
        by it (numbers: the largest the deepest)."""
        column, choice = self.figures.column()
        cells = [cell(choice.key, column.get(at)) if at is not None and choice is not None else ""
                 for _, at in self._source_rows]
        width = max((len(c) for c in cells), default=0) if column else 0
        text = []
        for (code, at), figure in zip(self._source_rows, cells):
            if at is None:
                text.append(code)
            else:
                text.append(f"{at[1]:5d} {figure:>{width}}  {code}" if width else f"{at[1]:5d}  {code}")
        view = self.source_view
        number, scroll = (view.textCursor().blockNumber(), view.verticalScrollBar().value()) if keep else (0, 0)
        view.blockSignals(True)
        view.setPlainText("\n".join(text))
        heat = levels(column)
        view.set_heat({i: heat[at] for i, (_, at) in enumerate(self._source_rows) if at in heat})
        if 0 < number < len(text):
            view.setTextCursor(QTextCursor(view.document().findBlockByNumber(number)))
        view.verticalScrollBar().setValue(scroll)
        view.blockSignals(False)
        self._source_line_selected()

    def select_source_line(self, file: str, line: int) -> None:
        """Put the cursor on a Python line (as a click does), highlighting its PTX and SASS."""
        number = self._source_lines.index((file, line))
        self.source_view.setTextCursor(QTextCursor(self.source_view.document().findBlockByNumber(number)))

    def _source_line_selected(self) -> None:
        number = self.source_view.textCursor().blockNumber()
        where = self._source_lines[number] if number < len(self._source_lines) else None
        self.source_view.highlight([number] if where else [], scroll=False)
        self.figures.line_selected(*(where or (None, None)))
        if self.report is None or where is None:
            return
        self.ptx_view.highlight(self.report.ptx_lines.get(where, []))
        self.sass_view.highlight(self.report.sass_for_line(*where))
