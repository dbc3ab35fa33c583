"""The Inspector's Roofline tab: the chosen architecture's ceilings (memory bandwidth and peak compute),
drawn always, with or without a GPU, and the GPU benchmark rows placed under them with each variant's own
traffic model. Rows that are not GPU measurements are never plotted: a CPU row has no kernel and a
simulator row times Python running each thread; the note under the chart says why they are missing."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyqtgraph as pg
from PyQt6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from kernels.backend import choice
from kernels.errors import InputError
from raytracer_app.gui.common import chart_export
from raytracer_app.gui.common.charts import set_title, short_axes, threads_of

CPU_WHY = "CPU rows are not GPU measurements (no kernel, no GPU memory): run the panel on a GPU to see points"
SIM_WHY = ("simulator rows are not plotted: the simulator runs every GPU thread in Python, so its times say "
           "nothing about a GPU and would sit orders of magnitude below any GPU roofline")


def inspectable(target: str, variant: str) -> bool:
    """True when the inspector has a compiled kernel for this (target, variant)."""
    from kernels.inspector import declarations

    return target in declarations.targets() and variant in declarations.variants(target)


def ops_kind(target: str, variant: str | None = None) -> str:
    """The peak the target's operations count against (int32 for reductions, fp32 for images, ...)."""
    from kernels.inspector import declarations

    names = declarations.variants(target) if target in declarations.targets() else []
    variant = variant if variant in names else (names[0] if names else None)
    return declarations.declaration(target, variant).traffic(1, 32, 1).ops_kind if variant else "fp32"


@dataclasses.dataclass(frozen=True)
class MeasuredPeak:
    """A panel's measured copy bandwidth and the architecture of the GPU it was measured on (None: not a GPU,
    whose bandwidth says nothing about any GPU's roofline)."""

    gbps: float | None
    how: str = ""
    arch: str | None = None


def gpu_arch(backend) -> str | None:
    """'sm_90' for a real GPU backend, None for the CPU, the simulator or a GPU the driver cannot name."""
    if backend is None or not backend.is_gpu:
        return None
    try:
        from kernels.backend import driver

        major, minor = driver.compute_capability(backend.device)
        return f"sm_{major}{minor}"
    except Exception:  # noqa: BLE001 - no driver answer: the published figures stay
        return None


class RooflineChart(QWidget):
    """``arch()`` gives the architecture whose published ceilings are drawn and ``target()`` the target shown
    (the Inspector's); ``peaks[target]`` a panel's MeasuredPeak, which replaces the published bandwidth only
    when it was measured on a GPU of that architecture."""

    def __init__(self, arch, target=None, parent=None):
        super().__init__(parent)
        self.arch = arch
        self.current_target = target or (lambda: self.target)
        self.peaks: dict[str, MeasuredPeak] = {}  # target -> the copy bandwidth its panel measured
        # (target, arch) -> {ceiling name: rate per second} its rows carried, measured on a GPU of that arch
        self.row_ceilings: dict[str, dict[str, float]] = {}
        self.points: dict[str, list] = {}  # target -> [(variant, RooflinePoint)], bytes from the traffic model
        self.measured: dict[str, list] = {}  # target -> [(variant, RooflinePoint)], bytes and time from ncu
        self.left_out: dict[str, dict[str, int]] = {}  # target -> {reason: rows not plotted}
        self.target = "reduction"
        self.info: dict = {}
        self.plot = pg.PlotWidget(axisItems=short_axes())
        self.plot.setBackground("w")
        self.plot.setLogMode(x=True, y=True)
        self.plot.setLabel("bottom", "operations / byte")
        self.plot.setLabel("left", "operations / s")
        for side in ("left", "bottom"):
            self.plot.getAxis(side).enableAutoSIPrefix(False)
        # below the plot, where no ceiling line can cross it
        self.legend = pg.LegendItem(colCount=3, labelTextSize="8pt")
        self.plot.getPlotItem().layout.addItem(self.legend, 4, 1)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.export_button = QPushButton("Export chart…")
        self.export_button.clicked.connect(lambda: self.export_chart())
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot, 1)
        row = QHBoxLayout()
        row.addWidget(self.note, 1)
        row.addWidget(self.export_button)
        lay.addLayout(row)

    def ceilings(self, target: str):
        """The architecture's published ceilings, with the panel's measured copy bandwidth when it has one;
        None when no figures are stored for the architecture."""
        from kernels.inspector.roofline import PUBLISHED

        arch = self.arch()
        base = PUBLISHED.get(arch)
        peak = self.peaks.get(target)
        # a CPU's or the simulator's copy bandwidth (21 GB/s) under an H100's compute peak drew one diagonal
        # and no roof: only a GPU of this architecture's own measurement replaces the published figure
        if base is not None and peak is not None and peak.gbps and getattr(peak, "arch", None) == arch:
            base = dataclasses.replace(base, bandwidth_gbs=float(peak.gbps),
                                       label=f"measured copy bandwidth {peak.gbps:.0f} GB/s; compute: {base.label}")
        measured = self.row_ceilings.get((target, arch))
        if base is None or not measured:
            return base
        from kernels.inspector.roofline import with_measured_ceilings

        return with_measured_ceilings(base, measured)

    def add_row(self, target: str, row) -> bool:
        """Place a benchmark row (a GPU variant timed on a GPU); False, with the reason kept for the note,
        when it is not placed."""
        from kernels.inspector.roofline import place_run

        try:
            backend = choice(row.backend)
        except InputError:  # a row without a backend name (never from a panel's run): judged by the rest
            backend = None
        why = "" if backend is None else CPU_WHY if backend.is_host else SIM_WHY if backend.is_simulator else ""
        threads, blocks = threads_of(row.block), threads_of(row.grid)
        if why or not inspectable(target, row.variant) or row.timing is None or not threads or not blocks:
            if why:
                counts = self.left_out.setdefault(target, {})
                counts[why] = counts.get(why, 0) + 1
                self.draw()
            return False
        if getattr(row, "ceiling", "") and getattr(row, "ceiling_rate", None):  # measured in the run, on this GPU
            self.row_ceilings.setdefault((target, gpu_arch(backend)), {})[row.ceiling] = row.ceiling_rate
        ceilings = self.ceilings(target)
        try:
            point = place_run(target, row.variant, int(row.n), threads, blocks, row.timing.median_ms / 1e3,
                              ceilings or self._any_ceilings())
        except Exception:  # noqa: BLE001 - a row the model cannot place (zero time) is left out
            return False
        self.points.setdefault(target, []).append((row.variant, point))
        self.draw()
        return True

    @staticmethod
    def _any_ceilings():
        from kernels.inspector.roofline import published

        return published("sm_90")  # only to place a point; its ceiling figures are not drawn

    def draw(self, target: str | None = None) -> None:
        """The ceilings of the chosen architecture, the shown target's GPU points (``target``, else the
        Inspector's), and a note on what is missing."""
        self.target = target = target or self.current_target() or self.target
        arch = self.arch()
        plot = self.plot
        plot.clear()
        self.legend.clear()
        points, measured = self.points.get(target, []), self.measured.get(target, [])
        kind = ops_kind(target, (points + measured)[0][0] if points + measured else None)
        c = self.ceilings(target)
        xs = [p.intensity for _, p in points + measured]
        lo, hi = min(xs + [0.01]) / 4, max(xs + [100.0]) * 4
        lines = []
        if c is not None:
            grid = np.geomspace(lo, hi, 96)
            memory = plot.plot(grid, np.minimum(grid * c.bandwidth_gbs * 1e9, c.peak_ops(kind)),
                               pen=pg.mkPen("#444444", width=2))
            self.legend.addItem(memory, f"{arch} roofline: {c.bandwidth_gbs:.0f} GB/s, "
                                        f"{c.peak_ops(kind) / 1e12:.1f} T {kind} op/s")
            lines.append(f"ceilings for {arch}: {c.label}")
        else:
            lines.append(f"no published ceilings are stored for {arch}: pick another architecture")
        for i, name in enumerate(dict.fromkeys(v for v, _ in points + measured)):
            colour = pg.intColor(i, 8)  # circles: modelled bytes; stars: bytes the counters measured
            for series, symbol, label in ((points, "o", name), (measured, "star", f"{name} (measured)")):
                mine = [p for v, p in series if v == name]
                if mine:
                    item = plot.plot([p.intensity for p in mine], [max(p.achieved_ops, 1.0) for p in mine],
                                     pen=None, symbol=symbol, symbolBrush=colour, symbolSize=12 if series is measured else 9)
                    self.legend.addItem(item, label)
        if measured:
            lines.insert(0, f"{target}: {len(points)} GPU row(s) by the traffic model (circles), {len(measured)} "
                            "measured by ncu (stars)")
        elif points:
            lines.insert(0, f"{target}: {len(points)} GPU row(s)")
        else:
            lines.insert(0, f"{target}: no GPU rows yet: run its benchmark panel on a GPU")
        for why, count in self.left_out.get(target, {}).items():
            lines.append(f"{count} row(s) left out: {why}")
        self.note.setText("; ".join(lines[:2]) + ("\n" + "\n".join(lines[2:]) if lines[2:] else ""))
        self.info = chart_export.describe(f"Roofline: {target}", f"{arch}, {kind}", "", "", "")
        set_title(plot, self.info)
        plot.enableAutoRange()

    def export_chart(self, path=None, width=None, height=None) -> bool:
        return chart_export.export_interactive(self, self.plot, self.info, f"roofline-{self.target}",
                                               lambda text, error: self.note.setText(text), path, width, height)
