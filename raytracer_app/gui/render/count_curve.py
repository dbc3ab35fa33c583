"""Render > Sphere Count Curve: frame time against sphere count (log-log), one line per memory, as
`raytracer-app bench spheres --sizes ...` measures it. The sweep runs in a BenchWorker thread (the
simulator's in its child process), streams its rows into the chart and can be cancelled at any time.

The sweep is sized for the backend: up to a million spheres at 1024x1024 on a GPU, a few small points on
the CPU (its two twins: rows, and binned tiles) and on the simulator (every GPU thread runs in Python)."""

from __future__ import annotations


import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout

from kernels.harness.rows import ERROR, SKIPPED
from kernels.launch import Launch
from raytracer_app.gui.common import chart_export
from raytracer_app.gui.common.charts import EmptyNote, reference_pen, set_title, short_axes
from raytracer_app.gui.common.reference_picker import ReferencePicker
from raytracer_app.gui.common.reference_results import curve_points
from raytracer_app.gui.common.bench_worker import BenchWorker
from raytracer_app.gui.common.workers import WorkerThread
from raytracer_app.gui.render.models import SPHERES

GPU_MEMORIES = ("global", "constant", "shared", "binned")
GPU_COUNTS = (20, 100, 1000, 2340, 10_000, 100_000, 1_000_000)
CPU_COUNTS = (20, 100, 1000)  # the CPU twins at 256x256: a few seconds in all
CPU_VARIANTS = ("spheres-cpu", "spheres-cpu-tiles")  # rows against binned tiles: what binning buys
LINE_COLOURS = {"global": "#1f77b4", "constant": "#d62728", "shared": "#2ca02c", "binned": "#9467bd",
                "cpu": "#7f7f7f", "cpu-tiles": "#ff7f0e"}


def sweep_for(backend) -> tuple[list[int], list[str], tuple[int, int], int]:
    """(sphere counts, variant names, image size, repeats) for a curve on ``backend``: counts from 20 to
    the backend's cap; constant memory's own rows past its capacity come back skipped."""
    from raytracer_app.gui.common.sim_limits import SIM_MAX_SPHERES

    if backend.is_simulator:
        return [20, SIM_MAX_SPHERES], [f"spheres-{m}" for m in GPU_MEMORIES], (16, 16), 1
    if not backend.runs_cuda_kernels:
        return list(CPU_COUNTS), list(CPU_VARIANTS), (256, 256), 3
    cap = backend.caps.max_spheres
    return [n for n in GPU_COUNTS if n <= cap], [f"spheres-{m}" for m in GPU_MEMORIES], (1024, 1024), 5


def memory_of(variant: str) -> str:
    return variant.removeprefix("spheres-")


class CountCurveDialog(QDialog):
    """Runs the sweep on open (``start``); ``finished_run(stopped)`` when it ends."""

    finished_run = pyqtSignal(bool)

    def __init__(self, model, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Sphere count curve")
        self.model = model
        self.rows: list = []
        self.lines: dict[str, pg.PlotDataItem] = {}
        self.spreads: dict[str, pg.ErrorBarItem] = {}  # per memory: each count's min..max over its repeats
        self.empty = EmptyNote()
        self.worker = BenchWorker()
        self.thread = WorkerThread(self.worker, "count-curve")
        self.worker.rowReady.connect(self._row)
        self.worker.progress.connect(self._progress)
        self.worker.failed.connect(lambda text: self.status.setText(f"failed: {text}"))
        self.worker.finished.connect(self._finished)
        self.thread.start()

        self.info: dict = {}  # what the curve shows: its title and an export's metadata
        self.plot = pg.PlotWidget(axisItems=short_axes())
        self.plot.setBackground("w")
        self.plot.setLogMode(x=True, y=True)
        self.plot.setLabel("bottom", "sphere count")
        self.plot.setLabel("left", "frame ms")
        self.plot.getAxis("left").setToolTip("the whole frame's time, kernels included, in milliseconds")
        for side in ("left", "bottom"):
            self.plot.getAxis(side).enableAutoSIPrefix(False)
        # below the plot, outside the lines: no line ever crosses it
        self.legend = pg.LegendItem(colCount=4, labelTextSize="8pt")
        self.plot.getPlotItem().layout.addItem(self.legend, 4, 1)
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setFormat("%v / %m")
        self.run_button, self.cancel_button = QPushButton("Run again"), QPushButton("Cancel")
        self.export_button = QPushButton("Export chart…")
        self.export_button.setToolTip("the curve as PNG (at least 1600 px wide, or twice its size on screen) or SVG, "
                                      "with the image size, counts, backend, device and date in its title and metadata")
        self.export_button.clicked.connect(lambda: self.export_chart())
        self.reference = ReferencePicker(SPHERES)
        self.reference.chosen.connect(self._draw_reference)
        self.reference.said.connect(self._say)
        self.reference_items: list = []
        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.reference)
        row.addWidget(self.export_button)
        lay = QVBoxLayout(self)
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.status)
        lay.addLayout(row)
        self.resize(760, 520)

    def running(self) -> bool:
        return self.worker.running()

    def start(self) -> None:
        if self.running():
            return
        from kernels.errors import InputError
        from kernels.service.bench_request import BenchRequest

        backend = self.model.backend
        counts, variants, size, repeats = sweep_for(backend)
        block = self.model.block if backend.runs_cuda_kernels else None
        self.rows.clear()
        self.plot.clear()
        self.legend.clear()
        self.lines.clear()
        self.spreads.clear()
        self.empty.show(self.plot.getPlotItem(), "the curve fills in as each count finishes")
        self.reference_items = []  # plot.clear() removed them: drawn again below
        self._draw_reference(self.reference.reference)
        self.info = chart_export.describe(
            "Sphere count curve", f"{size[0]}x{size[1]} image, {', '.join(map(memory_of, variants))}",
            f"{counts[0]:,} to {counts[-1]:,} spheres", backend.kind, self.model.device_label,
            "simulator: timings meaningless for a GPU" if backend.is_simulator else "")
        set_title(self.plot, self.info)
        try:
            self.job = BenchRequest(SPHERES, backend, sizes=tuple(counts), options={"size": size, "pattern": "uniform"},
                                    launches=(Launch(block=block),), variants=tuple(variants), repeats=repeats,
                                    peak=False)
        except InputError as exc:  # a block or size this backend refuses: said, nothing started
            self.status.setText(str(exc))
            return
        self.progress.setRange(0, len(counts) * len(variants))
        self.progress.setValue(0)
        self.status.setText(f"{', '.join(map(memory_of, variants))} at {size[0]}x{size[1]}, "
                            f"{counts[0]:,} to {counts[-1]:,} spheres on {backend.label}; "
                            "constant memory stops at its capacity" +
                            ("; simulator timings mean nothing for a GPU" if backend.is_simulator else ""))
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.worker.start(self.job)

    def cancel(self) -> None:
        self.worker.stop()
        self.status.setText("cancelling…")

    def _row(self, row) -> None:
        self.rows.append(row)
        if row.timing is None or row.verified in (SKIPPED, ERROR):
            return
        memory = memory_of(row.variant)
        points = [(r.n, r.timing.median_ms) for r in self.rows
                  if r.variant == row.variant and r.timing is not None and r.timing.median_ms > 0]
        if self.empty.shown:
            self.empty.hide(self.plot.getPlotItem())
            self.plot.getPlotItem().enableAutoRange()
        if memory not in self.lines:
            colour = LINE_COLOURS.get(memory, "#000000")
            self.lines[memory] = self.plot.plot([], [], pen=pg.mkPen(colour, width=2), symbol="o",
                                                symbolBrush=colour, symbolSize=6)
            self.legend.addItem(self.lines[memory], memory)
            # the spread of each count's repeats (min to max): a point off the trend with a long bar is noise
            self.spreads[memory] = pg.ErrorBarItem(beam=0.04, pen=pg.mkPen(colour, width=1))
            self.plot.addItem(self.spreads[memory])
        self.lines[memory].setData([n for n, _ in points], [ms for _, ms in points])
        self._draw_spread(memory, row.variant)

    def _draw_spread(self, memory: str, variant: str) -> None:
        """Bars from the fastest to the slowest repeat at each count, in the plot's log coordinates."""
        timed = [r for r in self.rows if r.variant == variant and r.timing is not None and r.timing.median_ms > 0]
        if not timed:
            return
        x = np.log10([r.n for r in timed])
        mid = np.log10([r.timing.median_ms for r in timed])
        low = np.log10([max(r.timing.min_ms, 1e-9) for r in timed])
        high = np.log10([max(r.timing.max_ms, 1e-9) for r in timed])
        self.spreads[memory].setData(x=x, y=mid, top=high - mid, bottom=mid - low)

    def spread_of(self, memory: str):
        """(x, low, high) of a memory's bars in log10 coordinates (what the chart draws), for tests."""
        opts = self.spreads[memory].opts
        return opts["x"], opts["y"] - opts["bottom"], opts["y"] + opts["top"]

    def _draw_reference(self, reference) -> None:
        """The shipped GPU curve (1024x1024 frames) behind this one: dashed blue, one line per memory."""
        for item in self.reference_items:
            self.plot.removeItem(item)
            self.legend.removeItem(item)
        self.reference_items = []
        if reference is None:
            return
        for memory, points in curve_points(reference).items():
            colour = pg.mkColor(LINE_COLOURS.get(memory, "#000000"))
            colour.setAlpha(140)
            pen = reference_pen()
            pen.setColor(colour)
            item = self.plot.plot([n for n, _ in points], [ms for _, ms in points], pen=pen, symbol="x",
                                  symbolPen=pen, symbolSize=7)
            self.legend.addItem(item, f"{memory} ({reference.label})")
            self.reference_items.append(item)

    def _progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def _finished(self, rows, stopped: bool) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        skipped = sorted({memory_of(r.variant) for r in self.rows if r.verified == SKIPPED})
        timed = [r for r in self.rows if r.timing is not None]
        repeats = max((len(r.timing.samples_ms) for r in timed), default=0)
        self.status.setText(("cancelled" if stopped else "done") + f": {len(self.rows)} row(s)" +
                            (f"; each point is the median of {repeats} frames, its bar their fastest to slowest"
                             if timed else "") +
                            (f"; skipped rows for {', '.join(skipped)} (past a capacity or not on this backend)"
                             if skipped else ""))
        self.finished_run.emit(stopped)

    def export_chart(self, path=None, width=None, height=None) -> bool:
        """The curve as PNG (``width`` x ``height`` px; default twice on-screen, at least 1600, as on screen) or SVG,
        with its metadata."""
        return chart_export.export_interactive(self, self.plot, self.info, "sphere-count-curve", self._say, path,
                                               width, height)

    def _say(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #c00000" if error else "")

    def shutdown(self, timeout_ms: int = 500) -> bool:
        self.worker.stop()
        return self.thread.shutdown(timeout_ms)

    def closeEvent(self, event) -> None:  # noqa: N802
        self.cancel()
        event.accept()
