"""The Inspector dock: the InspectorPanel (source, PTX, SASS, resources, occupancy curve) with a Roofline
tab that fills in as benchmark rows arrive and a Compare tab for two variants, wired to every benchmark
panel. From a panel, clicking a variant's name (the check box itself still toggles it), its context menu
"Inspect", a results-table row or a chart bar opens that variant here at the panel's block size; moving
the panel's block-size slider moves the occupancy marker.

Everything that compiles runs on the InspectorPanel's worker thread (the compile itself in a child
process); the GUI thread only draws."""

from __future__ import annotations

from PyQt6.QtCore import QEvent, QObject, Qt, pyqtSignal, pyqtSlot
from PyQt6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QMenu, QPlainTextEdit, QPushButton, QStyle,
                             QStyleOptionButton, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from raytracer_app.gui.common.charts import threads_of
from raytracer_app.gui.inspector.panel import InspectorPanel
from raytracer_app.gui.inspector.roofline_chart import MeasuredPeak, RooflineChart, gpu_arch, inspectable
from raytracer_app.gui.common.workers import describe


class CompareWorker(QObject):
    """Compiles two variants for Compare; moved onto the InspectorPanel's worker thread."""

    ready = pyqtSignal(object, object, object)  # report a, report b, request
    failed = pyqtSignal(str, object)

    @pyqtSlot(object)
    def run(self, request) -> None:
        from kernels.inspector import toolchain

        target, a, b, arch, block = request
        try:
            if toolchain.missing():
                self.failed.emit(f"Compare needs the compiler packages: {toolchain.what_to_do()}", request)
                return
            from kernels.inspector.report import inspect_many

            reports = inspect_many([(target, a), (target, b)], arch, block)
            for report in reports.values():
                if isinstance(report, Exception):
                    raise report
            self.ready.emit(reports[(target, a)], reports[(target, b)], request)
        except Exception as exc:  # noqa: BLE001 - one line in the tab, never a traceback
            self.failed.emit(describe(exc), request)


class _NameClicks(QObject):
    """A click on a check box's text (not its indicator) inspects the variant instead of toggling it."""

    def __init__(self, box, open_variant):
        super().__init__(box)
        self.box, self.open_variant = box, open_variant

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.MouseButtonRelease and event.button() == Qt.MouseButton.LeftButton:
            option = QStyleOptionButton()
            self.box.initStyleOption(option)
            indicator = self.box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, self.box)
            if event.position().x() > indicator.right() + 2:
                self.open_variant()
                return True
        if event.type() == QEvent.Type.MouseButtonPress and event.button() == Qt.MouseButton.LeftButton:
            option = QStyleOptionButton()
            self.box.initStyleOption(option)
            indicator = self.box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, self.box)
            return event.position().x() > indicator.right() + 2  # no pressed look, no toggle
        return False


class InspectorDock(QWidget):
    """The dock's contents. ``shown(target, variant)`` asks the window to raise the dock."""

    shown = pyqtSignal(str, str)
    accessRequested = pyqtSignal(str, str)  # (target, variant): show what its warps do to memory
    _compare = pyqtSignal(object)

    def __init__(self, parent=None, backend_of=None):
        super().__init__(parent)
        self.panel = InspectorPanel(backend_of=backend_of)
        self.measured_sections: dict = {}  # 'counters' (a panel's Measure), 'lines' (Measure per line): text
        self.source_panel = None  # the benchmark panel the inspected variant came from
        self.compare_worker = CompareWorker()
        self.compare_worker.moveToThread(self.panel.thread)
        self._compare.connect(self.compare_worker.run, Qt.ConnectionType.QueuedConnection)
        self.compare_worker.ready.connect(self._compared)
        self.compare_worker.failed.connect(lambda text, _: self.compare_status.setText(text))
        self.tabs = QTabWidget()
        self.tabs.addTab(self.panel, "Kernel")
        self.tabs.addTab(self._roofline_tab(), "Roofline")
        self.tabs.addTab(self._compare_tab(), "Compare")
        self.measured_text = QPlainTextEdit()
        self.measured_text.setReadOnly(True)
        self.measured_text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.measured_index = self.tabs.addTab(self.measured_text, "Measured")
        self.tabs.setTabEnabled(self.measured_index, False)
        self.tabs.setTabToolTip(self.measured_index, "nothing measured yet: press Measure in a benchmark panel or "
                                                     "Measure per line in the Kernel tab (needs a CUDA GPU and "
                                                     "Nsight Compute's ncu)")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.tabs)
        self.panel.target_box.currentTextChanged.connect(lambda _: self._fill_compare_boxes())
        self.panel.accessRequested.connect(self.accessRequested)
        self.panel.figures.measuredLines.connect(self.show_measured_lines)
        self._fill_compare_boxes()

    # ------------------------------------------------------------------ building
    def _roofline_tab(self) -> QWidget:
        self.roofline_chart = RooflineChart(self.panel.arch_box.currentText, self.panel.target_box.currentText)
        self.roofline, self.roofline_note = self.roofline_chart.plot, self.roofline_chart.note
        self.peaks, self.points = self.roofline_chart.peaks, self.roofline_chart.points
        self.measured_points = self.roofline_chart.measured
        self.panel.arch_box.currentTextChanged.connect(lambda _: self.roofline_chart.draw())
        self.panel.target_box.currentTextChanged.connect(lambda _: self.roofline_chart.draw())
        self.roofline_chart.draw()
        return self.roofline_chart

    def _compare_tab(self) -> QWidget:
        box = QWidget()
        lay = QVBoxLayout(box)
        row = QHBoxLayout()
        self.compare_a, self.compare_b = QComboBox(), QComboBox()
        self.compare_button = QPushButton("Compare")
        self.compare_button.clicked.connect(lambda: self.compare(self.compare_a.currentText(),
                                                                 self.compare_b.currentText()))
        for w in (QLabel("Variant A"), self.compare_a, QLabel("Variant B"), self.compare_b, self.compare_button):
            row.addWidget(w)
        row.addStretch(1)
        self.compare_status = QLabel("pick two variants of the target shown in the Kernel tab")
        self.compare_status.setWordWrap(True)
        self.compare_table = QTableWidget(0, 3)
        self.compare_table.setHorizontalHeaderLabels(["", "A", "B"])
        self.compare_table.verticalHeader().hide()
        self.compare_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        lay.addLayout(row)
        lay.addWidget(self.compare_status)
        lay.addWidget(self.compare_table, 1)
        return box

    def _fill_compare_boxes(self) -> None:
        from kernels.inspector import declarations

        names = declarations.variants(self.panel.target_box.currentText())
        for i, box in enumerate((self.compare_a, self.compare_b)):
            box.clear()
            box.addItems(names)
            box.setCurrentIndex(min(i, len(names) - 1))

    # ------------------------------------------------------------------ API
    def open(self, target: str, variant: str, block=None, source_panel=None) -> bool:
        """Inspect (target, variant) at ``block`` (threads per block, an int or a shape)."""
        if not inspectable(target, variant):  # said where the click was; the Inspector stays as it was
            text = (f"{variant} runs on the CPU or is a library call: there is no GPU kernel of ours to inspect")
            if source_panel is not None:
                source_panel.message.emit(f"{source_panel.spec.title}: {text}")
                source_panel.status.setText(text)
            else:
                self.panel.status.setText(text)
            return False
        self.source_panel = source_panel
        shape = None if block is None else (tuple(block) if isinstance(block, (tuple, list)) else (int(block),))
        self.panel.inspect(target, variant, self.panel.arch_box.currentText(), shape)
        self.tabs.setCurrentWidget(self.panel)
        self.shown.emit(target, variant)
        return True

    def compare(self, a: str, b: str) -> None:
        from kernels.inspector import declarations

        target = self.panel.target_box.currentText()
        files = [n for n in (a, b) if n not in declarations.variants(target)]
        if files:  # a variant file's NAME, put there by the editor: only the editor can compile it again
            self.compare_status.setText(f"{files[0]} is your variant file: compare it again from the Variant "
                                        "Editor's Inspect vs")
            return
        request = (target, a, b, self.panel.arch_box.currentText(), self.panel.block)
        self._compare_request = request
        self.compare_status.setText(f"compiling {a} and {b} for {request[3]}…")
        self._compare.emit(request)

    def set_block(self, block) -> None:
        self.panel.set_block(block if isinstance(block, tuple) else (int(block),))

    def shutdown(self, timeout_ms: int = 500) -> bool:
        return self.panel.shutdown(timeout_ms)

    # ------------------------------------------------------------------ panels
    def attach(self, panel) -> None:
        """Wire a benchmark panel: variant names, context menus, table rows, bars, block slider, rows."""
        target = panel.spec.name
        for name, box in panel.checks.items():
            if not inspectable(target, name):
                continue
            box.installEventFilter(_NameClicks(box, lambda n=name: self.open(target, n, panel.block_size(), panel)))
            box.setToolTip(box.toolTip() + "\nclick the name to inspect its kernel; the box toggles it")
            box.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            box.customContextMenuRequested.connect(
                lambda pos, n=name, b=box: self._variant_menu(b, pos, target, n, panel))
        panel.table.cellClicked.connect(lambda r, _c: self._table_row(panel, r))
        panel.chart.scene().sigMouseClicked.connect(lambda ev: self._chart_clicked(panel, ev))
        panel.block.valueChanged.connect(lambda _: self._panel_block(panel))
        panel.worker.peakReady.connect(lambda peak: self.peaks.__setitem__(
            target, MeasuredPeak(peak.gbps, peak.how, gpu_arch(panel.model.backend))))
        panel.worker.rowReady.connect(lambda row: self.add_row(target, row))
        panel.measure.measured.connect(self.show_measured)
        why = panel.measure.reason()
        if why:
            self.tabs.setTabToolTip(self.measured_index, why)

    def show_measured(self, target: str, n: int, results: dict) -> None:
        """The Measured tab: each variant's counters (each kernel and the sum) and the guided analysis."""
        from raytracer_app.gui.common.counters_text import counters_tooltip

        text = [f"{target}, n = {n:,} (Nsight Compute)"]
        text += [counters_tooltip(name, m, n) for name, m in results.items()]
        self._show_section("counters", "\n\n".join(text))
        for name, m in results.items():  # their source counters per line go beside the Inspector's source
            if not isinstance(m, str):
                self.panel.figures.take_measured(target, name, [k.lines for k in m.kernels if k.lines is not None])
        self.measured_points[target] = [(name, p) for name, p in
                                        ((name, self._measured_point(target, name, n, m)) for name, m in results.items())
                                        if p is not None]
        self.roofline_chart.draw()

    def show_measured_lines(self, target: str, variant: str, kernels) -> None:
        """The Measured tab's per-line part: the sentence naming the hottest line of each kernel, and its top
        lines (Measure per line, in the Kernel tab)."""
        from kernels.counters.lines import MEASURED
        from kernels.counters.lines_text import table
        from raytracer_app.gui.common.line_figures import sentences

        label = next((k.labels[MEASURED] for k in kernels if MEASURED in k.labels), "")
        text = [f"{target} {variant} per Python line, {label}"]
        text += [f"- {s}" for s in sentences(kernels)]
        text += [table(k, MEASURED, 8) for k in kernels]
        self._show_section("lines", "\n".join(text))

    def _show_section(self, name: str, text: str) -> None:
        self.measured_sections[name] = text
        self.measured_text.setPlainText("\n\n".join(self.measured_sections[k] for k in ("lines", "counters")
                                                    if k in self.measured_sections))
        self.tabs.setTabEnabled(self.measured_index, True)
        self.tabs.setTabToolTip(self.measured_index, "hardware counters of the last Measure (a benchmark panel's) "
                                                     "and of the last Measure per line (the Kernel tab's)")

    def _measured_point(self, target: str, variant: str, n: int, measured):
        """A variant on the roofline from its counters: DRAM bytes and ncu's duration as measured, operations
        from its traffic model at the launch ncu saw; None when that cannot be placed."""
        from kernels.inspector.roofline import place

        if isinstance(measured, str) or not inspectable(target, variant) or not measured.dram_bytes:
            return None
        from kernels.inspector.declarations import declaration

        k = max(measured.kernels, key=lambda k: k.get("duration_ns") or 0)
        try:
            traffic = declaration(target, variant).traffic(n, int(k.get("block")), int(k.get("grid")))
            ceilings = self.ceilings(target) or self.roofline_chart._any_ceilings()
            return place(measured.dram_bytes, traffic.ops, measured.duration_ms / 1e3, ceilings, traffic.ops_kind)
        except Exception:  # noqa: BLE001 - no launch figures, zero time: not placed
            return None

    def _variant_menu(self, box, pos, target, name, panel) -> None:
        menu = self.variant_menu(box, target, name, panel)
        menu.exec(box.mapToGlobal(pos))

    def variant_menu(self, parent, target, name, panel) -> QMenu:
        """A variant name's context menu in a panel: Inspect, and Memory access per warp (the Access tool)."""
        # parented to the window, not to the name: a greyed (disabled) GPU variant's box would grey its menu
        # too, and both items work there
        menu = QMenu(parent.window() if parent is not None else None)
        menu.addAction("Inspect", lambda: self.open(target, name, panel.block_size(), panel))
        menu.addAction("Memory access per warp", lambda: self.accessRequested.emit(target, name))
        return menu

    def _table_row(self, panel, row: int) -> None:
        item = panel.table.item(row, 0)
        if item is not None:
            block = threads_of(panel.table.item(row, panel.columns.index("block")).text()) or panel.block_size()
            self.open(panel.spec.name, item.text(), block, panel)

    def _chart_clicked(self, panel, ev) -> None:
        chart = panel.chart
        if chart.mode != "bars" or chart.bars is None:
            return
        from raytracer_app.gui.common.charts import row_value

        names = list(dict.fromkeys(r.variant for r, _ in chart.points if row_value(r, chart.metric) is not None))
        x = chart.getPlotItem().vb.mapSceneToView(ev.scenePos()).x()
        index = int(round(x))
        if 0 <= index < len(names) and abs(x - index) <= 0.3:
            self.open(panel.spec.name, names[index], panel.block_size(), panel)

    def _panel_block(self, panel) -> None:
        if self.source_panel is panel:
            self.set_block(panel.block_size())

    # ------------------------------------------------------------------ roofline
    def ceilings(self, target: str):
        return self.roofline_chart.ceilings(target)

    def add_row(self, target: str, row) -> bool:
        """Place a benchmark row on the roofline (GPU variants timed on a GPU); False when it is not."""
        return self.roofline_chart.add_row(target, row)

    # ------------------------------------------------------------------ compare
    def show_compared(self, a, b) -> None:
        """Two reports compiled elsewhere (the variant editor's file and a built-in) in the Compare tab, its
        pickers naming them as the table does (the file's NAME added to the A picker, marked as a file)."""
        from PyQt6.QtCore import Qt

        self._compare_request = None
        if a.target != self.panel.target_box.currentText() and self.panel.target_box.findText(a.target) >= 0:
            self.panel.target_box.setCurrentText(a.target)  # refills the pickers with its built-ins
        for box, report in ((self.compare_a, a), (self.compare_b, b)):
            if box.findText(report.variant) < 0:
                box.addItem(report.variant)
                box.setItemData(box.count() - 1, "your variant file (from the Variant Editor's Inspect vs)",
                                Qt.ItemDataRole.ToolTipRole)
            box.setCurrentText(report.variant)
        self._compared(a, b, None)
        self.tabs.setCurrentIndex(2)
        self.shown.emit(a.target, a.variant)

    def _compared(self, a, b, request) -> None:
        if request != getattr(self, "_compare_request", None):
            return
        from kernels.inspector import compare

        rows = compare.rows(a, b)
        self.compare_table.setRowCount(len(rows))
        self.compare_table.setHorizontalHeaderLabels(["", a.variant, b.variant])
        for r, values in enumerate(rows):
            for c, v in enumerate(values):
                self.compare_table.setItem(r, c, QTableWidgetItem(v))
        self.compare_table.resizeColumnsToContents()
        self.compare_status.setText(compare.sentence(a, b))
