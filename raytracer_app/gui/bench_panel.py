"""One benchmark panel class, parameterised by an algorithm descriptor (Reduction, Histogram, Hash table):
variant check boxes, problem size and options, launch, repeats, sweep mode, Run / Stop, a live chart
and a results table. Runs happen in a BenchWorker thread through ``kernels.harness.bench.run``."""

from __future__ import annotations

import time

from PyQt6.QtCore import Qt, QTimer, pyqtSignal
from PyQt6.QtGui import QColor
from PyQt6.QtWidgets import (
    QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel,
    QProgressBar, QPushButton, QScrollArea, QSlider, QSpinBox, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from kernels.harness import bench
from raytracer_app.gui import chart_export
from raytracer_app.gui.algorithms import block_sweep, n_sweep
from raytracer_app.gui.chart_export import describe
from raytracer_app.gui.charts import BenchChart, row_value
from raytracer_app.gui.measure import MeasureControl
from raytracer_app.gui.panel_results import DELTA_TIP, VERDICT_TIP, PanelResults
from raytracer_app.gui.reference_picker import ReferencePicker
from raytracer_app.gui.saving import export_to, message_of
from raytracer_app.gui.sim_limits import SIM_DEFAULT_REPEATS, SIM_MAX_REPEATS, SIM_TIMING_NOTE, sim_default_n
from raytracer_app.gui.workers import BenchJob, BenchWorker, WorkerThread

# what a reader looks for first comes first; launch details and the note go to the right
TABLE_COLUMNS = ("variant", "n", "median ms", "Δ%", "verdict", "GB/s", "verified", "% copy BW", "min ms", "max ms", "block",
                 "grid", "note")
PCT_TIP = ("percent of this device's copy bandwidth (the dashed line on the chart: a device-to-device copy on a "
           "GPU, numpy's copy on the CPU): the bytes the kernel reads per second divided by it. Above 100 % is "
           "no error: a copy reads and writes every byte, so a read-only kernel (a reduction, a histogram) moves "
           "half the copy's traffic per byte of input and can pass it (the reason at large N); and an input that "
           "fits in the L2 cache (marked \"in cache\") is read from the cache, not memory.")


def no_launch_tip(spec) -> str:
    """Why the launch controls are off, naming this panel's own variants that take no launch."""
    host = [v.name for v in spec.variants if v.launch is None and v.runs_on_host]
    library = [v.name for v in spec.variants if v.launch is None and not v.runs_on_host]
    parts = ([f"CPU variants ({', '.join(host)})"] if host else []) + ([f"library calls ({', '.join(library)})"]
                                                                       if library else [])
    return ("none of the selected variants takes a block size or grid: " + " and ".join(parts or ["they"])
            + " choose their own work split")


SWEEPS = {"single run": "bars", "sweep block size": "block", "sweep N": "n"}
IN_CACHE_TIP = ("\nThis row's input fits in the cache (the GPU's L2, or the CPU's last-level cache for host code): "
                "its GB/s measure the cache, not memory.")
CHART_PX = 260  # the chart's height in a fresh layout, where the panel has room
FAILED_BG, SKIPPED_FG = QColor(255, 190, 190), QColor(120, 120, 120)


def verified_text(row) -> str:
    if row.verified == bench.FAILED:
        return f"FAILED: got {row.result}, expected {row.expected}" + (f" ({row.note})" if row.note else "")
    if row.verified in (bench.SKIPPED, bench.ERROR) and row.note:
        return f"{row.verified}: {row.note}"
    return row.verified


def eta_text(elapsed: float, done: int, total: int) -> str:
    """', about 40 s left' from the steps done so far ('' before the first or after the last)."""
    if not 0 < done < total:
        return ""
    left = elapsed / done * (total - done)
    return f", about {left / 60:.0f} min left" if left >= 120 else f", about {left:.0f} s left"


def _fmt(x, digits=4):
    return "" if x is None else f"{x:.{digits}f}"


class BenchPanel(QWidget):
    """``message(text)`` reports errors and results for the status line."""

    message = pyqtSignal(str)
    runFinished = pyqtSignal(bool)  # stopped

    def __init__(self, spec, model, log):
        super().__init__()
        self.spec, self.model, self.log = spec, model, log
        self.rows: list = []
        self.columns = tuple(spec.rate_unit if c == "GB/s" else c for c in TABLE_COLUMNS)
        self._started_at = 0.0
        self._running_text = ""
        self._elapsed = QTimer(self)
        self._elapsed.setInterval(200)
        self._elapsed.timeout.connect(self._show_elapsed)
        self._block_ready = False
        self.job: BenchJob | None = None
        self.results = PanelResults(self)  # saved runs, Export JSON, the baseline
        self.worker = BenchWorker()
        self.thread = WorkerThread(self.worker, f"bench-{spec.title}")
        self.worker.peakReady.connect(self._peak)
        self.worker.rowReady.connect(self._row)
        self.worker.progress.connect(self._progress)
        self.worker.failed.connect(self._failed)
        self.worker.finished.connect(self._finished)
        self.thread.start()

        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        settings = QWidget()
        top = QHBoxLayout(settings)
        top.setContentsMargins(0, 0, 0, 0)
        self.variants_box = QGroupBox("Variants")
        vlay = QVBoxLayout(self.variants_box)
        self.checks: dict[str, QCheckBox] = {}
        for v in spec.variants:
            cb = QCheckBox(v.name)
            cb.setChecked(v.skip_reason(model.backend) is None)
            tip = v.description + (f"\nlaunch: {v.rules}" if v.rules else "")
            cb.setToolTip(tip)
            vlay.addWidget(cb)
            cb.toggled.connect(lambda _=False: self._update_launch_controls())
            self.checks[v.name] = cb
        vlay.addStretch(1)
        top.addWidget(self.variants_box, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self._settings_box(), 1)
        self.settings_area = QScrollArea()  # scrolls instead of clipping in a small window
        self.settings_area.setWidget(settings)
        self.settings_area.setWidgetResizable(True)

        row = QHBoxLayout()
        self.run_button, self.stop_button = QPushButton("Run"), QPushButton("Stop")
        self.run_button.clicked.connect(self.run)
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setFormat("%v / %m")
        csv_button, png_button = QPushButton("Export CSV…"), QPushButton("Export chart…")
        png_button.setToolTip("the chart as PNG (at least 1600 px wide, or twice its size on screen: you choose) or "
                              "SVG, with target, options, N, backend, device and date in its title and metadata")
        csv_button.clicked.connect(lambda: self.export_csv())
        png_button.clicked.connect(lambda: self.export_chart())
        baseline_button, json_button = QPushButton("Load baseline…"), QPushButton("Export JSON…")
        baseline_button.setToolTip("draw a saved result (bench --json, or a run this app saved) behind this panel's "
                                   "rows, with Δ% and a verdict for the rows that match")
        json_button.setToolTip("the last run with every repeat's time, for raytracer-app compare or a baseline "
                               "(every run is also saved under the cache folder's results/)")
        baseline_button.clicked.connect(lambda: self.load_baseline())
        json_button.clicked.connect(lambda: self.export_json())
        self.measure = MeasureControl(self)  # Nsight Compute's counters for the selected GPU variants
        for w in (self.run_button, self.stop_button, self.measure.button, self.progress):
            row.addWidget(w, 1 if w is self.progress else 0)
        exports = QHBoxLayout()
        self.log_y = QCheckBox("log y axis")
        self.log_y.setToolTip("a logarithmic y axis: values far below the copy-bandwidth line stay readable")
        self.log_y.toggled.connect(lambda on: self.chart.set_log_y(on))
        self.reference = ReferencePicker(spec.name)
        self.reference.chosen.connect(lambda ref: self.chart.set_reference(
            ref.result.rows if ref else [], f"{ref.label} reference" if ref else ""))
        self.reference.said.connect(lambda text, error: self._say(text, error=error))
        for w in (self.log_y, self.reference, baseline_button, csv_button, json_button, png_button):
            exports.addWidget(w)
        exports.insertStretch(1, 1)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.sim_note = QLabel(SIM_TIMING_NOTE)
        self.sim_note.setWordWrap(True)
        self.sim_note.setStyleSheet("color: #b06000")

        self.chart = BenchChart(spec.rate_unit)
        self.chart.setMinimumSize(200, 140)
        self.table = QTableWidget(0, len(self.columns))
        self.table.setHorizontalHeaderLabels(self.columns)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeaderItem(self.columns.index("% copy BW")).setToolTip(PCT_TIP)
        self.table.horizontalHeaderItem(self.columns.index("Δ%")).setToolTip(DELTA_TIP)
        self.table.horizontalHeaderItem(self.columns.index("verdict")).setToolTip(VERDICT_TIP)
        self.table.horizontalHeaderItem(self.columns.index("verified")).setToolTip(
            "yes: the result matches an independent reference; FAILED / skipped / error say why")
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.split = QSplitter(Qt.Orientation.Vertical)
        lower = QWidget()
        low = QVBoxLayout(lower)
        low.setContentsMargins(0, 0, 0, 0)
        low.addLayout(row)
        low.addLayout(exports)
        low.addWidget(self.status)
        low.addWidget(self.sim_note)
        low.addWidget(self.chart, 1)
        self.split.addWidget(self.settings_area)
        self.split.addWidget(lower)
        self.split.addWidget(self.table)
        self.split.setChildrenCollapsible(False)
        lay.addWidget(self.split, 1)
        model.changed.connect(lambda group: group == "backend" and self._backend_changed())
        self._backend_changed()

    def _settings_box(self) -> QGroupBox:
        box = QGroupBox("Run")
        form = QFormLayout(box)
        self.n = QSpinBox()
        backend = self.model.backend
        self.n.setRange(1, min(self.spec.size.maximum[backend.kind], 2**31 - 1))
        self.n.setStepType(QSpinBox.StepType.AdaptiveDecimalStepType)
        self.n.setValue(self.spec.size.default_for(backend, gui=True))
        form.addRow(self.spec.size.label, self.n)
        self.options: dict[str, QComboBox] = {}
        for opt in self.spec.gui_options:
            combo = QComboBox()
            combo.addItems([str(v) for v in (opt.choices or opt.suggestions)])
            combo.setCurrentText(str(opt.default_for(backend)))
            combo.setToolTip(opt.help)
            form.addRow(opt.name, combo)
            self.options[opt.name] = combo
        self.default_launch = QCheckBox("each variant's default launch")
        self.default_launch.setToolTip("off: every variant runs with the block size and grid below")
        self.default_launch.setChecked(True)
        self.default_launch.toggled.connect(self._launch_enabled)
        form.addRow(self.default_launch)
        blk = QHBoxLayout()
        self.block = QSlider(Qt.Orientation.Horizontal)
        self.block_label = QLabel()
        self.block.valueChanged.connect(lambda _: self.block_label.setText(f"{self.block_size()} threads"))
        blk.addWidget(self.block, 1)
        blk.addWidget(self.block_label)
        form.addRow("Block size", blk)
        self.grid_sm = QDoubleSpinBox()
        self.grid_sm.setRange(0, 1024)
        self.grid_sm.setDecimals(1)
        self.grid_sm.setSpecialValueText("variant default")
        self.grid_sm.setSuffix(" x SMs")
        self.grid_sm.setToolTip("blocks in the grid, as a multiple of the device's SM count")
        form.addRow("Grid", self.grid_sm)
        self.repeats = QSpinBox()
        self.repeats.setRange(1, 10000)
        self.repeats.setValue(5)
        form.addRow("Repeats", self.repeats)
        self.sweep = QComboBox()
        self.sweep.addItems(list(SWEEPS))
        self.sweep.setToolTip("sweep block size: powers of two up to the device limit (each variant's own grid "
                              "unless set); sweep N: x4 steps from 1024 up to N")
        form.addRow("Mode", self.sweep)
        self.metric = QComboBox()
        self.metric.addItems([self.spec.rate_unit, "ms"])
        self.metric.currentTextChanged.connect(self.chart_metric)
        form.addRow("Chart", self.metric)
        self.show_peak = QCheckBox("measure copy bandwidth (line on the chart)")
        self.show_peak.setChecked(True)
        form.addRow(self.show_peak)
        self._launch_enabled(True)
        self.sweep.currentTextChanged.connect(lambda _: self._update_launch_controls())
        return box

    # ------------------------------------------------------------------ values
    def block_size(self) -> int:
        sizes = block_sweep(self.model.limits.max_threads_per_block)
        return sizes[min(self.block.value(), len(sizes) - 1)]

    def selected_variants(self) -> list[str]:
        return [name for name, cb in self.checks.items() if cb.isChecked()]

    def set_variants(self, names) -> None:
        for name, cb in self.checks.items():
            cb.setChecked(name in names)

    def busy(self) -> bool:
        measure = getattr(self, "measure", None)
        return self.worker.running() or (measure is not None and measure.running)

    def _launch_enabled(self, default: bool) -> None:
        self._update_launch_controls()

    def takes_launch(self) -> bool:
        """True when a selected variant that runs on this backend takes a block size and grid."""
        backend = self.model.backend
        by_name = {v.name: v for v in self.spec.variants}
        return any(by_name[n].launch is not None and by_name[n].skip_reason(backend) is None
                   for n in self.selected_variants())

    def _update_launch_controls(self) -> None:
        """Launch controls that cannot affect the selected variants are disabled and say why."""
        if not hasattr(self, "sweep"):
            return
        launch = self.takes_launch()
        custom = launch and not self.default_launch.isChecked()
        self.default_launch.setEnabled(launch)
        self.default_launch.setToolTip("off: every variant runs with the block size and grid below" if launch
                                       else no_launch_tip(self.spec))
        for w in (self.block, self.grid_sm):
            w.setEnabled(custom)
            w.setToolTip(no_launch_tip(self.spec) if not launch else "" if custom else
                         "used when \"each variant's default launch\" is off")
        item = self.sweep.model().item(list(SWEEPS).index("sweep block size"))
        item.setEnabled(launch)
        item.setToolTip("" if launch else no_launch_tip(self.spec))
        if not launch and SWEEPS[self.sweep.currentText()] == "block":
            self.sweep.setCurrentText("single run")

    def apply_backend_caps(self, reset: bool = False) -> None:
        """The simulator's caps on N and repeats (its own defaults when ``reset``); the full range elsewhere."""
        backend = self.model.backend
        sim = backend.is_simulator
        self.n.setMaximum(min(self.spec.size.maximum[backend.kind], 2**31 - 1))
        self.repeats.setMaximum(SIM_MAX_REPEATS if sim else 10000)
        if sim and reset:
            self.n.setValue(sim_default_n(self.spec))
            self.repeats.setValue(SIM_DEFAULT_REPEATS)
        tip = f"at most {self.n.maximum()} on the simulator (every GPU thread runs in Python)" if sim else ""
        self.n.setToolTip(tip)
        self.repeats.setToolTip("timed repeats after a warm-up" + (f"; at most {SIM_MAX_REPEATS} on the simulator" if sim else ""))
        self.sim_note.setVisible(sim)
        self._update_launch_controls()

    def default_proportions(self) -> None:
        """Settings, chart and table heights for a fresh layout: the chart at least CHART_PX tall where the
        panel has room, the table room for a few rows, the settings (which scroll) the rest."""
        total = max(self.split.height(), 500)
        extras = self.split.widget(1).minimumSizeHint().height() - self.chart.minimumSizeHint().height()
        lower = max(CHART_PX, int(total * 0.40) - extras) + extras
        table = max(110, int(total * 0.22))
        self.split.setSizes([max(total - lower - table, 100), lower, table])

    def _backend_changed(self) -> None:
        sizes = block_sweep(self.model.limits.max_threads_per_block)
        current = self.block_size() if self._block_ready else 256
        self._block_ready = True
        self.block.setRange(0, len(sizes) - 1)
        self.block.setValue(sizes.index(current) if current in sizes else min(3, len(sizes) - 1))
        self.block_label.setText(f"{self.block_size()} threads")
        backend = self.model.backend
        changed, self._backend = getattr(self, "_backend", backend) != backend, backend
        for v in self.spec.variants if self.checks else []:
            why = v.skip_reason(backend)
            cb = self.checks[v.name]
            tip = v.description + (f"\nlaunch: {v.rules}" if v.rules else "")
            cb.setToolTip(tip + (f"\nskipped on this backend: {why}" if why else ""))
            cb.setStyleSheet("color: gray" if why else "")
            if changed:  # a new backend: check what runs there
                cb.setChecked(why is None)
        self.apply_backend_caps()
        self.measure.refresh()

    # ------------------------------------------------------------------ run / stop
    def run(self) -> bool:
        if self.busy():
            return False
        names = self.selected_variants()
        if not names:
            self._say("choose at least one variant", error=True)
            return False
        mode = SWEEPS[self.sweep.currentText()]
        n = self.n.value()
        grid_sm = self.grid_sm.value() or None
        if mode == "block":
            launches = [bench.Launch(block=b, grid_sm=grid_sm) for b in block_sweep(self.model.limits.max_threads_per_block)]
        elif self.default_launch.isChecked():
            launches = [bench.Launch()]
        else:
            launches = [bench.Launch(block=self.block_size(), grid_sm=grid_sm)]
        options = {key: combo.currentText() for key, combo in self.options.items()}
        sizes = n_sweep(n) if mode == "n" else [n]
        self.job = BenchJob(self.spec, self.model.backend, sizes, options, launches, names, self.repeats.value(),
                            want_peak=self.show_peak.isChecked() and self.spec.measures_copy_peak)
        self.rows = []
        self.table.setRowCount(0)
        self.chart.reset(mode, self.metric.currentText())
        what = ", ".join(f"{k} {v}" for k, v in options.items())
        self.chart.set_info(describe(
            self.spec.title, what, f"{sizes[0]:,} to {sizes[-1]:,}" if len(sizes) > 1 else f"{n:,}",
            self.model.backend.kind, self.model.device_label,
            "simulator: timings meaningless for a GPU" if self.model.backend.is_simulator else ""))
        self.chart.set_peak(None)
        self.results.peak = None
        self.progress.setRange(0, len(sizes) * len(launches) * len(names))
        self.progress.setValue(0)
        self.run_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        steps = len(sizes) * len(launches) * len(names)
        self._running_text = f"running {len(names)} variant(s) on {self.model.backend.label}, {steps} step(s)"
        self._say(self._running_text + "…")
        self._started_at = time.perf_counter()
        self._elapsed.start()
        self.worker.start(self.job)
        self.measure.refresh()
        return True

    def stop(self) -> None:
        self.measure.stop()
        if self.worker.running():
            self.worker.stop()
            sim = self.job is not None and self.job.backend.is_simulator  # its child process is ended at once
            self._say("stopping…" if sim else "stopping after the current variant…")

    def shutdown(self) -> None:
        self.measure.shutdown()
        self.worker.stop()
        self.thread.shutdown()

    # ------------------------------------------------------------------ worker signals
    def _x_for(self, index: int) -> float:
        """Rows arrive problem by problem, launch by launch, variant by variant."""
        job = self.job
        per_problem = len(job.launches) * len(job.variant_names)
        if self.chart.mode == "n":
            return float(job.sizes[min(index // per_problem, len(job.sizes) - 1)])
        if self.chart.mode == "block":
            launch = job.launches[(index // len(job.variant_names)) % len(job.launches)]
            return float(launch.block)
        return 0.0

    def _peak(self, peak) -> None:
        self.results.peak = peak
        self.chart.set_peak(peak.gbps, peak.how)

    def _show_elapsed(self) -> None:
        if self.busy():
            elapsed = time.perf_counter() - self._started_at
            self.status.setText(f"{self._running_text}… {elapsed:.1f} s"
                                f"{eta_text(elapsed, self.progress.value(), self.progress.maximum())} (Stop ends it)")

    def _row(self, row) -> None:
        x = self._x_for(len(self.rows))
        self.rows.append((row, x))
        self.log.add(row)
        self.chart.add(row, x)
        self._add_table_row(row)

    def add_user_row(self, row) -> None:
        """A row from the variant editor (a user's file run at this panel's size), beside this panel's own."""
        x = {"n": float(row.n), "block": float(row.block or 0)}.get(self.chart.mode, 0.0)
        self.rows.append((row, x))
        self.log.add(row)
        self.chart.add(row, x)
        self._add_table_row(row)

    def chart_metric(self, metric: str) -> None:
        self.chart.set_metric(metric)

    def _add_table_row(self, row) -> None:
        t = row.timing
        rate = row_value(row, self.spec.rate_unit) if self.spec.rate_unit != "GB/s" else None
        in_cache = row.cache_resident == "yes"  # then GB/s measures the cache, not memory: say so beside %
        pct = _fmt(row.pct_of_peak, 1) + (" (in cache)" if in_cache and row.pct_of_peak is not None else "")
        values = (row.variant, row.n, _fmt(t and t.median_ms), "", "", _fmt(rate[0] if rate else row.gbps, 2),
                  verified_text(row), pct, _fmt(t and t.min_ms), _fmt(t and t.max_ms), row.block, row.grid, row.note)
        r = self.table.rowCount()
        self.table.insertRow(r)
        for c, v in enumerate(values):
            item = QTableWidgetItem(str(v))
            if row.verified == bench.FAILED:
                item.setBackground(FAILED_BG)
                item.setForeground(QColor(160, 0, 0))
            elif row.verified == bench.ERROR:
                item.setForeground(QColor(200, 0, 0))
            elif row.verified == bench.SKIPPED:
                item.setForeground(SKIPPED_FG)
            item.setToolTip(verified_text(row) if c == TABLE_COLUMNS.index("verified") else
                            PCT_TIP + (IN_CACHE_TIP if in_cache else "") if c == TABLE_COLUMNS.index("% copy BW")
                            else str(v))
            self.table.setItem(r, c, item)
        self.results.set_cells(r, row)  # Δ% and verdict
        if row.variant in self.measure.results:
            self.measure.show_in_table()
        self.table.scrollToBottom()

    def refresh_baseline_cells(self) -> None:
        """After a baseline was loaded: every row's Δ% and verdict again."""
        for r, (row, _) in enumerate(self.rows[: self.table.rowCount()]):
            self.results.set_cells(r, row)

    def _progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def _failed(self, text: str) -> None:
        self._say(text, error=True)

    def _finished(self, rows, stopped: bool) -> None:
        self._elapsed.stop()
        self.run_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        failed = sum(r.verified == bench.FAILED for r, _ in self.rows)
        saved = self.results.save_run(stopped)
        if stopped:
            self._say(f"stopped after {len(self.rows)} row(s)" + saved)
        elif self.rows:
            self._say(f"{len(self.rows)} row(s)" + (f", {failed} FAILED verification" if failed else ", all verified or skipped")
                      + saved, error=bool(failed))
        self.measure.refresh()
        self.runFinished.emit(stopped)

    def _say(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #c00000" if error else "")
        self.message.emit(f"{self.spec.title}: {text}")

    # ------------------------------------------------------------------ settings
    def _key(self, name: str) -> str:
        return f"bench/{self.spec.name}/{name}"

    def save(self, s) -> None:
        s.setValue(self._key("variants"), ",".join(self.selected_variants()))
        for name, w in (("n", self.n), ("repeats", self.repeats), ("block", self.block)):
            s.setValue(self._key(name), w.value())
        s.setValue(self._key("grid_sm"), self.grid_sm.value())
        s.setValue(self._key("default_launch"), self.default_launch.isChecked())
        s.setValue(self._key("peak"), self.show_peak.isChecked())
        s.setValue(self._key("log_y"), self.log_y.isChecked())
        for name, combo in (("sweep", self.sweep), ("metric", self.metric), *self.options.items()):
            s.setValue(self._key(name), combo.currentText())

    def load(self, s) -> None:
        """Restore saved choices; anything missing or unreadable keeps its default."""
        from raytracer_app.gui.settings import read

        names = s.value(self._key("variants"))
        if isinstance(names, str):
            self.set_variants(set(names.split(",")))
        for name, w in (("n", self.n), ("repeats", self.repeats), ("block", self.block)):
            w.setValue(read(s, self._key(name), w.value(), int, w.minimum(), w.maximum()))
        self.log_y.setChecked(read(s, self._key("log_y"), False, bool))
        self.grid_sm.setValue(read(s, self._key("grid_sm"), 0.0, float, self.grid_sm.minimum(), self.grid_sm.maximum()))
        self.default_launch.setChecked(read(s, self._key("default_launch"), True, bool))
        self.show_peak.setChecked(read(s, self._key("peak"), True, bool))
        for name, combo in (("sweep", self.sweep), ("metric", self.metric), *self.options.items()):
            text = read(s, self._key(name), combo.currentText(), str)
            if combo.findText(text) >= 0:
                combo.setCurrentText(text)

    # ------------------------------------------------------------------ export
    def export_csv(self, path=None) -> bool:
        if not self.rows:  # a header-only file helps no one
            self._say("nothing to export yet: Run first (no file written)", error=True)
            return False
        rows = [r for r, _ in self.rows]
        path = export_to(self, lambda p: bench.write_csv(rows, p, "Export CSV"),
                         lambda exc: self._say(f"cannot export: {message_of(exc)}", error=True),
                         "Export results", "CSV (*.csv)", f"{self.spec.name}.csv", path)
        if path is None:
            return False
        self._say(f"{len(self.rows)} row(s) written to {path}")
        return True

    def export_json(self, path=None) -> bool:
        """The last run as a result file (every repeat's time), for `raytracer-app compare` or a baseline."""
        return self.results.export(path)

    def load_baseline(self, path=None) -> bool:
        """A saved result drawn behind this panel's rows, with Δ% and verdict cells where rows match."""
        return self.results.load(path)

    def export_chart(self, path=None, width=None) -> bool:
        """The chart as PNG (``width`` px, default twice its on-screen width and at least 1600) or SVG."""
        return chart_export.export_interactive(self, self.chart, self.chart.info, f"{self.spec.name}-chart",
                                               lambda text, error: self._say(text, error=error), path, width)
