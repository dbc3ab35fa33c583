"""pyqtgraph charts of timing rows: bars with min-max error bars, or one line per variant in a sweep, and
a horizontal line at the device's measured copy bandwidth."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

METRICS = ("GB/s", "ms")
MODES = ("bars", "block", "n")  # bars per variant, or a sweep over block size / over N


def row_value(row, metric: str):
    """(value, low, high) of a row in a metric, or None when the row has no such number."""
    t = row.timing
    if t is None or t.median_ms <= 0:
        return None
    if metric == "ms":
        return t.median_ms, t.min_ms, t.max_ms
    if row.gbps is None:
        return None
    # bandwidth is bytes / time: the slowest repeat gives the low end, the fastest the high end
    return row.gbps, row.gbps * t.median_ms / t.max_ms, row.gbps * t.median_ms / max(t.min_ms, 1e-12)


def bar_chart(plot: pg.PlotItem, names, values, lows, highs, brushes=None):
    """Bars at x = 0..k-1 labelled with ``names``, with error bars from ``lows`` to ``highs``."""
    x = np.arange(len(names), dtype=float)
    values, lows, highs = (np.asarray(v, dtype=float) for v in (values, lows, highs))
    bars = pg.BarGraphItem(x=x, height=values, width=0.6, brushes=brushes or [pg.intColor(i, 8) for i in range(len(x))])
    errors = pg.ErrorBarItem(x=x, y=values, top=highs - values, bottom=values - lows, beam=0.25, pen=pg.mkPen("w", width=1.5))
    plot.addItem(bars)
    plot.addItem(errors)
    plot.getAxis("bottom").setTicks([[(float(i), n) for i, n in enumerate(names)]])
    return bars, errors


class BenchChart(pg.PlotWidget):
    """Fills in as rows arrive: ``add(row, x)``; ``x`` is the row's block size or N in sweep mode."""

    def __init__(self):
        super().__init__()
        self.mode, self.metric = "bars", "GB/s"
        self.points: list[tuple[object, float]] = []  # (row, x)
        self.peak_gbps: float | None = None
        self.bars = None
        self.lines: dict[str, pg.PlotDataItem] = {}
        self.peak_line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen((255, 200, 0), width=2, style=pg.QtCore.Qt.PenStyle.DashLine),
                                         label="", labelOpts={"position": 0.97, "color": (255, 200, 0), "anchors": [(1, 1), (1, 1)]})
        self.showGrid(x=False, y=True, alpha=0.3)
        # top left, on a dark backing: bandwidth rises to the right, so lines would cross it there
        self.legend = self.addLegend(offset=(10, 10), brush=(0, 0, 0, 170))
        self.reset("bars", "GB/s")

    def reset(self, mode: str, metric: str) -> None:
        self.mode, self.metric = mode, metric
        self.points.clear()
        self._redraw()

    def set_metric(self, metric: str) -> None:
        self.metric = metric
        self._redraw()

    def set_peak(self, gbps: float | None, how: str = "") -> None:
        self.peak_gbps = gbps
        self.peak_line.label.setFormat(f"copy bandwidth {gbps:.1f} GB/s" if gbps else "")
        self.peak_line.setToolTip(how)
        self._redraw()

    def add(self, row, x: float = 0.0) -> None:
        self.points.append((row, x))
        self._redraw()

    def bar_count(self) -> int:
        return 0 if self.bars is None else len(self.bars.opts["height"])

    def line_count(self) -> int:
        return len(self.lines)

    def _redraw(self) -> None:
        plot = self.getPlotItem()
        plot.clear()
        self.legend.clear()
        self.bars, self.lines = None, {}
        plot.setLogMode(x=self.mode == "n", y=False)
        axis = {"bars": "variant", "block": "threads per block", "n": "N"}[self.mode]
        plot.setLabel("bottom", axis)
        plot.setLabel("left", "bandwidth (GB/s)" if self.metric == "GB/s" else "kernel time (ms)")
        plot.getAxis("bottom").setTicks(None)
        if self.mode == "bars":
            latest = {}
            for row, _ in self.points:  # one bar per variant: its latest row
                v = row_value(row, self.metric)
                if v is not None:
                    latest[row.variant] = v
            if latest:
                names = list(latest)
                vals = np.array([latest[n] for n in names])
                self.bars, _ = bar_chart(plot, names, vals[:, 0], vals[:, 1], vals[:, 2])
        else:
            series: dict[str, list] = {}
            for row, x in self.points:
                v = row_value(row, self.metric)
                if v is not None:
                    series.setdefault(row.variant, []).append((x, v[0]))
            for i, (name, pts) in enumerate(series.items()):
                pts.sort()
                xs, ys = np.array(pts, dtype=float).T
                color = pg.intColor(i, 8)
                self.lines[name] = plot.plot(xs, ys, pen=pg.mkPen(color, width=2), symbol="o", symbolSize=6,
                                             symbolBrush=color, name=name)
        if self.metric == "GB/s" and self.peak_gbps:
            self.peak_line.setPos(self.peak_gbps)
            plot.addItem(self.peak_line, ignoreBounds=False)
        plot.enableAutoRange()


class CompareChart(pg.PlotWidget):
    """Compare memory: median kernel time with global and with constant memory, min-max error bars."""

    def __init__(self):
        super().__init__()
        self.showGrid(x=False, y=True, alpha=0.3)
        self.setLabel("left", "kernel time (ms)")
        self.setLabel("bottom", "memory the spheres are read from")
        self.bars = None

    def show_frames(self, frames) -> None:
        plot = self.getPlotItem()
        plot.clear()
        names = [f.meta.get("memory", "?") for f in frames]
        t = [f.kernel for f in frames]
        self.bars, _ = bar_chart(plot, names, [x.median_ms for x in t], [x.min_ms for x in t], [x.max_ms for x in t],
                                 brushes=[pg.mkBrush(70, 130, 220), pg.mkBrush(230, 150, 40)])
        plot.setYRange(0, max(x.max_ms for x in t) * 1.15, padding=0)
        plot.setXRange(-0.7, len(names) - 0.3, padding=0)
