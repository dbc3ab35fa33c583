"""One benchmark panel class, parameterised by an algorithm descriptor (Reduction, Histogram, Hash table):
variant check boxes, problem size and options, launch, repeats, sweep mode, Run / Stop, a live chart
and a results table. A Run is one BenchRequest, run in a BenchWorker thread through the service's
``run_bench``; each row is charted at its own size or block."""

from __future__ import annotations

import time

from PyQt6.QtCore import Qt, QTimer, pyqtSignal
from PyQt6.QtWidgets import (
    QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QFrame, QGroupBox, QHBoxLayout, QLabel, QMenu, QProgressBar,
    QPushButton, QScrollArea, QSlider, QSpinBox, QSplitter, QToolButton, QVBoxLayout, QWidget,
)

from kernels.errors import InputError
from kernels.harness.rows import FAILED
from kernels.launch import Launch
from kernels.harness.table import write_csv
from kernels.service.bench_request import BenchRequest
from kernels.service.fields import CHECK, DECIMAL, SPIN, defaults_of, panel_words, settings_of
from raytracer_app.gui.common import chart_export
from raytracer_app.gui.benchmarks.algorithms import block_sweep, n_sweep
from raytracer_app.gui.common.chart_export import describe, option_text
from raytracer_app.gui.common.charts import BenchChart
from raytracer_app.gui.benchmarks.measure import MeasureControl
from raytracer_app.gui.benchmarks.panel_results import PanelResults
from raytracer_app.gui.benchmarks.panel_table import (  # noqa: F401 - the table's names, as the panel's
    FAILED_BG, IN_CACHE_TIP, PCT_TIP, SKIPPED_FG, TABLE_COLUMNS, ResultsTable, verified_text,
)
from raytracer_app.gui.common.reference_picker import ReferencePicker
from raytracer_app.gui.common.saving import export_to, message_of
from raytracer_app.gui.common.sim_offer import SimulatorOffer
from raytracer_app.gui.common.sim_limits import SIM_DEFAULT_REPEATS, SIM_MAX_REPEATS, SIM_TIMING_NOTE, sim_default_n
from raytracer_app.gui.common.bench_worker import BenchWorker
from raytracer_app.gui.common.workers import WorkerThread

def no_launch_tip(spec) -> str:
    """Why the launch controls are off, naming this panel's own variants that take no launch."""
    host = [v.name for v in spec.variants if v.launch is None and v.runs_on_host]
    library = [v.name for v in spec.variants if v.launch is None and not v.runs_on_host]
    parts = ([f"CPU variants ({', '.join(host)})"] if host else []) + ([f"library calls ({', '.join(library)})"]
                                                                       if library else [])
    return ("none of the selected variants takes a block size or grid: " + " and ".join(parts or ["they"])
            + " choose their own work split")


SWEEPS = {"single run": "bars", "sweep block size": "block", "sweep N": "n"}


def eta_text(elapsed: float, done: int, total: int) -> str:
    """', about 40 s left' from the steps done so far ('' before the first or after the last)."""
    if not 0 < done < total:
        return ""
    left = elapsed / done * (total - done)
    return f", about {left / 60:.0f} min left" if left >= 120 else f", about {left:.0f} s left"


class BenchPanel(QWidget):
    """``message(text)`` reports errors and results for the status line."""

    message = pyqtSignal(str)
    runFinished = pyqtSignal(bool)  # stopped

    def __init__(self, spec, model, log):
        super().__init__()
        self.spec, self.model, self.log = spec, model, log
        self.rows: list = []
        self._started_at = 0.0
        self._running_text = ""
        self._elapsed = QTimer(self)
        self._elapsed.setInterval(200)
        self._elapsed.timeout.connect(self._show_elapsed)
        self._block_ready = False
        self.job: BenchRequest | None = None  # the last Run's request
        self._restore: tuple[str, str] | None = None  # (reference, baseline path) to show again (load)
        self.results = PanelResults(self)  # saved runs, Export JSON, the baseline
        self.worker = BenchWorker()
        self.thread = WorkerThread(self.worker, f"bench-{spec.title}")
        self.worker.peakReady.connect(self._peak)
        self.worker.rowReady.connect(self._row)
        self.worker.progress.connect(self._progress)
        self.worker.failed.connect(self._failed)
        self.worker.ceilingsReady.connect(self._ceilings)
        self.worker.finished.connect(self._finished)
        self.thread.start()

        lay = QHBoxLayout(self)
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
        # the variants and the run's settings in a column beside the chart: every variant in view with the
        # chart, on a laptop's screen too; it scrolls (upright only) where the window is lower than its list
        self.settings_area = QScrollArea()
        self.settings_area.setWidget(settings)
        self.settings_area.setWidgetResizable(True)
        self.settings_area.setFrameShape(QFrame.Shape.NoFrame)
        self.settings_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.settings_area.setMinimumWidth(settings.minimumSizeHint().width()
                                           + self.settings_area.verticalScrollBar().sizeHint().width())

        row = QHBoxLayout()
        self.run_button, self.stop_button = QPushButton("Run"), QPushButton("Stop")
        self.run_button.clicked.connect(self.run)
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setFormat("%v / %m")
        self.files = self._files_button()  # Load baseline and the exports: one button, so the row fits a dock
        self.measure = MeasureControl(self)  # Nsight Compute's counters for the selected GPU variants
        for w in (self.run_button, self.stop_button, self.measure.button, self.progress):
            row.addWidget(w, 1 if w is self.progress else 0)
        exports = QHBoxLayout()
        self.log_y = QCheckBox("log y axis")
        self.log_y.setToolTip("a logarithmic y axis: values far below the copy-bandwidth line stay readable")
        self.log_y.toggled.connect(lambda on: self.chart.set_log_y(on))
        self.reference = ReferencePicker(spec.name)
        # as narrow as a dock needs: the longest choice shows in the open list and the tooltip
        self.reference.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.reference.setMinimumContentsLength(len("show H100 reference"))
        self.reference.chosen.connect(self._reference_chosen)
        self.reference.said.connect(lambda text, error: self._say(text, error=error))
        for w in (self.log_y, self.reference, self.files):
            exports.addWidget(w)
        exports.insertStretch(1, 1)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.sim_offer = SimulatorOffer()  # rows skipped for lack of CUDA: the simulator in one click
        self.restartRequested = self.sim_offer.restartRequested
        self.sim_note = QLabel(SIM_TIMING_NOTE)
        self.sim_note.setWordWrap(True)
        self.sim_note.setStyleSheet("color: #b06000")

        self.chart = BenchChart(spec.rate_unit)
        self.chart.setMinimumSize(200, 140)
        self.table = ResultsTable(spec.rate_unit)
        self.columns = self.table.columns
        self.split = QSplitter(Qt.Orientation.Vertical)  # the chart above the table
        lower = QWidget()
        low = QVBoxLayout(lower)
        low.setContentsMargins(0, 0, 0, 0)
        low.addLayout(row)
        low.addLayout(exports)
        low.addWidget(self.status)
        low.addWidget(self.sim_offer)
        low.addWidget(self.sim_note)
        low.addWidget(self.chart, 1)
        self.split.addWidget(lower)
        self.split.addWidget(self.table)
        self.split.setChildrenCollapsible(False)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        lay.addWidget(self.settings_area, 0)
        lay.addWidget(self.split, 1)
        model.changed.connect(lambda group: group == "backend" and self._backend_changed())
        self._backend_changed()

    def _files_button(self) -> QToolButton:
        """"Files ▾": Load baseline and the exports in a menu (a row of four buttons is wider than a dock)."""
        button = QToolButton()
        button.setText("Files")
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        button.setToolTip("Load baseline…, Export CSV…, Export JSON…, Export chart…")
        menu = QMenu(button)
        menu.setToolTipsVisible(True)
        for text, call, tip in (
                ("Load baseline…", self.load_baseline, "draw a saved result (bench --json, or a run this app saved) "
                 "behind this panel's rows, with Δ% and a verdict for the rows that match"),
                ("Export CSV…", self.export_csv, "this panel's measured rows (the reference's ghost rows are left out)"),
                ("Export CSV with reference rows…", lambda: self.export_csv(with_reference=True),
                 "the measured rows and the GPU reference's rows shown as ghost rows (their device in the device column)"),
                ("Export JSON…", self.export_json, "the last run with every repeat's time, for raytracer-app compare or "
                 "a baseline (every run is also saved under the cache folder's results/)"),
                ("Export chart…", self.export_chart, "the chart as PNG at the width and aspect you choose (16:9, 4:3, "
                 "...; its labels and legend grow with it) or SVG, with target, options, N, backend, device and "
                 "date in its title and metadata")):
            action = menu.addAction(text)
            action.setToolTip(tip)
            action.triggered.connect(lambda _=False, call=call: call())
        button.setMenu(menu)
        return button

    def _reference_chosen(self, ref) -> None:
        """The GPU reference as ghosts: points or bars in the chart, ghost rows in the table."""
        rows, label = (ref.result.rows, f"{ref.label} reference") if ref else ([], "")
        self.chart.set_reference(rows, label)
        self.table.set_ghosts(rows, label)
        self._readable_beside_reference()

    FAR_BELOW_REFERENCE = 20  # this run's bars under 1/20 of the reference's: a log axis keeps them readable

    def _readable_beside_reference(self) -> None:
        """Turn the log y axis on (and say so) where this run's values are far below the reference's."""
        spread = self.chart.reference_spread()
        if spread is not None and spread > self.FAR_BELOW_REFERENCE and not self.log_y.isChecked():
            self.log_y.setChecked(True)
            self._say(f"log y axis on: the reference's values are up to {spread:,.0f}x this run's")

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
            if opt.sweep:  # an axis: several values may be typed, e.g. 0.5,0.9 (Mode "sweep NAME" runs them all)
                combo.setEditable(True)
                combo.setToolTip(opt.help + "\nseveral values separated by commas run one row each")
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
        self.run_controls = self._request_controls(form)
        self.sweeps = dict(SWEEPS)  # and each swept option of the algorithm: its values across the x axis
        self.sweeps.update({f"sweep {o.name}": f"axis:{o.name}" for o in self.spec.gui_options if o.sweep})
        self.sweep = QComboBox()
        self.sweep.addItems(list(self.sweeps))
        self.sweep.setToolTip("sweep block size: powers of two up to the device limit (each variant's own grid "
                              "unless set); sweep N: x4 steps from 1024 up to N")
        form.addRow("Mode", self.sweep)
        self.metric = QComboBox()
        self.metric.addItems([self.spec.rate_unit, "ms"])
        self.metric.currentTextChanged.connect(self.chart_metric)
        form.addRow("Chart", self.metric)
        self._launch_enabled(True)
        self.sweep.currentTextChanged.connect(lambda _: self._update_launch_controls())
        return box

    def _request_controls(self, form) -> dict:
        """A control for every BenchRequest field declared with one (kernels.service.fields): its kind, range,
        label, tooltip and starting value from that declaration; also the panel's attribute it names."""
        controls, self._saved_as = {}, {}
        for name, declared in settings_of(BenchRequest).items():
            if declared.control is None:
                continue
            self._saved_as[name] = declared.key or name
            start = declared.gui_default if declared.gui_default is not None else defaults_of(BenchRequest)[name]
            if declared.control == CHECK:
                w = QCheckBox(declared.label)
                w.setChecked(bool(start))
                form.addRow(w)
            else:
                w = QSpinBox() if declared.control == SPIN else QDoubleSpinBox()
                low = declared.minimum if declared.minimum is not None else 1
                high = declared.maximum if declared.maximum is not None else 2**31 - 1
                if declared.control == DECIMAL:
                    w.setDecimals(declared.decimals)
                    w.setRange(float(low), float(high))
                else:
                    w.setRange(int(low), int(high))
                w.setSuffix(declared.suffix)
                w.setValue(start)
                form.addRow(declared.label, w)
            w.setToolTip(declared.help)
            setattr(self, declared.attr or name, w)
            controls[name] = w
        return controls

    def _control_values(self) -> dict:
        return {name: w.isChecked() if isinstance(w, QCheckBox) else w.value() for name, w in self.run_controls.items()}

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
        item = self.sweep.model().item(list(self.sweeps).index("sweep block size"))
        item.setEnabled(launch)
        item.setToolTip("" if launch else no_launch_tip(self.spec))
        if not launch and self.sweeps[self.sweep.currentText()] == "block":
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
        # a simulated time is Python running every thread: as GB/s it read 2.5e-06, a rate of nothing
        rate = self.metric.model().item(0)
        rate.setEnabled(not sim)
        rate.setToolTip(f"no {self.spec.rate_unit} in the simulator: its times are Python's, not a GPU's" if sim else "")
        if sim:
            self.metric.setCurrentText("ms")
        self.chart.set_simulated(sim)
        self._update_launch_controls()

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
    def request(self, **changes) -> BenchRequest:
        """The Run's BenchRequest from the controls (InputError, in the panel's words, for a value it refuses)."""
        mode = self.sweeps[self.sweep.currentText()]
        grid_sm = self.grid_sm.value() or None
        if mode == "block":
            launches = [Launch(block=b, grid_sm=grid_sm) for b in block_sweep(self.model.limits.max_threads_per_block)]
        elif self.default_launch.isChecked():
            launches = [Launch()]
        else:
            launches = [Launch(block=self.block_size(), grid_sm=grid_sm)]
        n = self.n.value()
        options = {key: combo.currentText() for key, combo in self.options.items()}
        if mode.startswith("axis:"):  # every suggested value of the swept option, one row each
            swept = self.spec.option(mode[5:])
            options[swept.name] = ",".join(str(v) for v in swept.suggestions)
        fields = dict(algorithm=self.spec.name, backend=self.model.backend,
                      sizes=tuple(n_sweep(n) if mode == "n" else [n]), options=options,
                      launches=tuple(launches), variants=tuple(self.selected_variants()), **self._control_values())
        return BenchRequest(**{**fields, **changes}, labels=self.labels())

    def labels(self) -> dict:
        """The panel's words for a request's fields, as its refusals name them."""
        return {**panel_words(BenchRequest), "sizes": self.spec.size.label, "block": "Block size", "grid_sm": "Grid",
                "variants": "Variants", **{o.name: o.name for o in self.spec.options}}

    def run(self) -> bool:
        if self.busy():
            return False
        if not self.selected_variants():
            self._say("choose at least one variant", error=True)
            return False
        try:
            request = self.request()
        except InputError as exc:
            self._say(str(exc), error=True)
            return False
        self.job = request
        mode = self.sweeps[self.sweep.currentText()]
        self.rows = []
        self.sim_offer.hide()
        self.table.clear_measured()
        self.chart.reset(mode, self.metric.currentText())
        what = ", ".join(f"{k} {option_text(v)}" for k, v in request.options)
        sizes = request.sizes
        self.chart.set_info(describe(
            self.spec.title, what, f"{sizes[0]:,} to {sizes[-1]:,}" if len(sizes) > 1 else f"{sizes[0]:,}",
            self.model.backend.kind, self.model.device_label,
            "simulator: timings meaningless for a GPU" if self.model.backend.is_simulator else ""))
        self.chart.set_peak(None)
        self.results.peak = None
        self.results.ceilings = []
        names = request.variants
        # as bench.run counts them: a row per round
        steps = request.problem_count * len(request.launches) * len(names) * request.rounds
        self.progress.setRange(0, steps)
        self.progress.setValue(0)
        self.run_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self._running_text = f"running {len(names)} variant(s) on {self.model.backend.label}, {steps} step(s)"
        self._say(self._running_text + "…")
        self._started_at = time.perf_counter()
        self._elapsed.start()
        self.worker.start(request)
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
    def _x_for(self, row) -> float:
        """Where a row goes on the chart's x axis: its own size, block or swept value (a single run's bars: 0)."""
        if self.chart.mode.startswith("axis:"):
            value = (row.axes or {}).get(self.chart.mode[5:])
            return float(value) if isinstance(value, (int, float)) else 0.0
        if self.chart.mode == "n":
            return float(row.n)
        if self.chart.mode == "block":
            try:
                return float(row.block)
            except (TypeError, ValueError):  # a 2-D block or none: not on a block axis
                return 0.0
        return 0.0

    def _peak(self, peak) -> None:
        self.results.peak = peak
        self.chart.set_peak(peak.gbps, peak.how)

    def _ceilings(self, figures) -> None:
        """The run's measured ceilings, for its result file (before ``_finished`` saves it)."""
        self.results.ceilings = list(figures)

    def _show_elapsed(self) -> None:
        if self.busy():
            elapsed = time.perf_counter() - self._started_at
            self.status.setText(f"{self._running_text}… {elapsed:.1f} s"
                                f"{eta_text(elapsed, self.progress.value(), self.progress.maximum())} (Stop ends it)")

    def _row(self, row) -> None:
        x = self._x_for(row)
        self.rows.append((row, x))
        self.log.add(row)
        self.chart.add(row, x)
        self._add_table_row(row)

    def add_user_row(self, row) -> None:
        """A row from the variant editor (a user's file run at this panel's size), beside this panel's own."""
        x = self._x_for(row)
        self.rows.append((row, x))
        self.log.add(row)
        self.chart.add(row, x)
        self._add_table_row(row)

    def chart_metric(self, metric: str) -> None:
        self.chart.set_metric(metric)

    def _add_table_row(self, row) -> None:
        r = self.table.add_measured(row)
        self.results.set_cells(r, row)  # Δ% and verdict
        if row.variant in self.measure.results:
            self.measure.show_in_table()

    def refresh_baseline_cells(self) -> None:
        """After a baseline was loaded: every row's Δ% and verdict again."""
        for r, (row, _) in enumerate(self.rows[: self.table.measured_count()]):
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
        failed = sum(r.verified == FAILED for r, _ in self.rows)
        self.sim_offer.offer([r for r, _ in self.rows])
        saved = self.results.save_run(stopped)
        if stopped:  # the rows that finished stay in the table and the chart, and are saved marked partial
            self._say(f"stopped after {len(self.rows)} row(s), kept" + saved)
        elif self.rows:
            self._say(f"{len(self.rows)} row(s)" + (f", {failed} FAILED verification" if failed else ", all verified or skipped")
                      + saved, error=bool(failed))
        self.measure.refresh()
        self._readable_beside_reference()
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
        for name, w in (("n", self.n), ("block", self.block)):
            s.setValue(self._key(name), w.value())
        for name, value in self._control_values().items():
            s.setValue(self._key(self._saved_as[name]), value)
        s.setValue(self._key("grid_sm"), self.grid_sm.value())
        s.setValue(self._key("default_launch"), self.default_launch.isChecked())
        s.setValue(self._key("log_y"), self.log_y.isChecked())
        for name, combo in (("sweep", self.sweep), ("metric", self.metric), *self.options.items()):
            s.setValue(self._key(name), combo.currentText())
        # the choices now, or those still waiting to be shown again (a panel never opened this session)
        pending = self._restore or ("", "")
        reference = self.reference.currentText() if self.reference.currentIndex() > 0 else pending[0]
        s.setValue(self._key("reference"), reference)
        s.setValue(self._key("baseline"), self.results.baseline_path or pending[1])

    def load(self, s) -> None:
        """Restore saved choices; anything missing or unreadable keeps its default."""
        from raytracer_app.gui.common.settings import read

        names = s.value(self._key("variants"))
        if isinstance(names, str):
            self.set_variants(set(names.split(",")))
        for name, w in (("n", self.n), ("block", self.block)):
            w.setValue(read(s, self._key(name), w.value(), int, w.minimum(), w.maximum()))
        for name, w in self.run_controls.items():
            key = self._key(self._saved_as[name])
            if isinstance(w, QCheckBox):
                w.setChecked(read(s, key, w.isChecked(), bool))
            else:
                w.setValue(read(s, key, w.value(), type(w.value()), w.minimum(), w.maximum()))
        self.log_y.setChecked(read(s, self._key("log_y"), False, bool))
        self.grid_sm.setValue(read(s, self._key("grid_sm"), 0.0, float, self.grid_sm.minimum(), self.grid_sm.maximum()))
        self.default_launch.setChecked(read(s, self._key("default_launch"), True, bool))
        for name, combo in (("sweep", self.sweep), ("metric", self.metric), *self.options.items()):
            text = read(s, self._key(name), combo.currentText(), str)
            if combo.findText(text) >= 0:
                combo.setCurrentText(text)
        # the GPU reference and the baseline chosen last time: read when the panel is first shown (reading
        # files at start-up would delay the first frame)
        self._restore = (read(s, self._key("reference"), "", str), read(s, self._key("baseline"), "", str))

    def showEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        super().showEvent(event)
        if self._restore is not None:
            QTimer.singleShot(0, self.restore_choices)

    def restore_choices(self) -> None:
        """Show again the reference and the baseline chosen last time (a baseline file now gone is said)."""
        if self._restore is None:
            return
        reference, baseline = self._restore
        self._restore = None
        if reference and self.reference.findText(reference) > 0 and self.reference.currentText() != reference:
            self.reference.setCurrentText(reference)
        if baseline and not self.results.baseline_path:
            from pathlib import Path

            if Path(baseline).is_file():
                self.load_baseline(baseline)
            else:
                self._say(f"the baseline chosen last time is gone: {baseline}")

    # ------------------------------------------------------------------ export
    def export_csv(self, path=None, with_reference: bool = False) -> bool:
        """The measured rows as CSV; ``with_reference``: and the reference's ghost rows (only when asked)."""
        rows = [r for r, _ in self.rows] + (self.table.ghost_rows if with_reference else [])
        if not rows:  # a header-only file helps no one
            self._say("nothing to export yet: Run first (no file written)" if not with_reference else
                      "nothing to export: no rows and no GPU reference shown (no file written)", error=True)
            return False
        path = export_to(self, lambda p: write_csv(rows, p, "Export CSV"),
                         lambda exc: self._say(f"cannot export: {message_of(exc)}", error=True),
                         "Export results", "CSV (*.csv)", f"{self.spec.name}.csv", path)
        if path is None:
            return False
        ghosts = f" ({len(rows) - len(self.rows)} of them reference rows)" if with_reference else ""
        self._say(f"{len(rows)} row(s) written to {path}{ghosts}{path.kept}")
        return True

    def export_json(self, path=None) -> bool:
        """The last run as a result file (every repeat's time), for `raytracer-app compare` or a baseline."""
        return self.results.export(path)

    def load_baseline(self, path=None) -> bool:
        """A saved result drawn behind this panel's rows, with Δ% and verdict cells where rows match."""
        return self.results.load(path)

    def export_chart(self, path=None, width=None, height=None) -> bool:
        """The chart as PNG (``width`` x ``height`` px: default twice its on-screen width and at least 1600, in
        its on-screen proportion) or SVG."""
        return chart_export.export_interactive(self, self.chart, self.chart.info, f"{self.spec.name}-chart",
                                               lambda text, error: self._say(text, error=error), path, width, height)
