"""pyqtgraph charts of timing rows: bars with min-max error bars, or one line per variant in a sweep, a
horizontal line at the device's measured copy bandwidth, and a loaded baseline's matching rows behind them
as a dashed, semi-transparent ghost series."""

from __future__ import annotations

import re

import numpy as np
import pyqtgraph as pg

PEAK_PEN = dict(color=(255, 200, 0), width=2)
GHOST_PEN = dict(color=(230, 230, 230, 170), width=1.5)  # a loaded baseline: dashed, semi-transparent
GHOST_BRUSH = (230, 230, 230, 45)
REFERENCE_PEN = dict(color=(90, 150, 255, 200), width=1.5)  # shipped GPU reference results: dashed blue
REFERENCE_BRUSH = (90, 150, 255, 90)
FAR_BELOW = 5.0  # the copy-bandwidth line leaves the y range when it is this many times the largest value


def ghost_pen():
    return pg.mkPen(**GHOST_PEN, style=pg.QtCore.Qt.PenStyle.DashLine)


def reference_pen():
    return pg.mkPen(**REFERENCE_PEN, style=pg.QtCore.Qt.PenStyle.DashLine)


def row_value(row, metric: str):
    """(value, low, high) of a row in a metric, or None when the row has no such number."""
    t = row.timing
    if t is None or t.median_ms <= 0:
        return None
    if metric == "ms":
        return t.median_ms, t.min_ms, t.max_ms
    rate = row.rate if metric == row.rate_unit else row.gbps if metric == "GB/s" else None
    if rate is None:
        return None
    # a rate is work / time: the slowest repeat gives the low end, the fastest the high end
    return rate, rate * t.median_ms / t.max_ms, rate * t.median_ms / max(t.min_ms, 1e-12)


def compact(x: float) -> str:
    """1024 -> '1K', 4194304 -> '4M': tick labels short enough not to run into each other."""
    for factor, suffix in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if x >= factor and x % factor == 0:
            return f"{int(x // factor)}{suffix}"
    return f"{x:g}"


def threads_of(value) -> int | None:
    """A row's block or grid ('256', '16x16', 256, (16, 16)) as a number of threads or blocks."""
    if value in (None, ""):
        return None
    parts = value if isinstance(value, (tuple, list)) else str(value).lower().split("x")
    try:
        total = 1
        for p in parts:
            total *= int(p)
        return total
    except (TypeError, ValueError):
        return None


def short_number(x: float) -> str:
    """20, 50, 200, 1k, 10k, 2.5M, 0.05: a log axis's tick label, never "2·10¹" and never long."""
    if x <= 0 or not np.isfinite(x):
        return ""
    for factor, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= factor:
            return f"{x / factor:.3g}{suffix}"
    return f"{x:.3g}"


class ShortLogAxis(pg.AxisItem):
    """An axis whose log-mode tick labels are short (:func:`short_number`). Over two decades or more only
    the powers of ten are labelled, over less also 2 and 5 times them: pyqtgraph's own labels every minor
    tick with an exponent ("5·10¹6·10¹7·10¹"), which runs together."""

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph's name
        lo, hi = self.range if self.range else (0, 0)
        wide = abs(hi - lo) >= 2.0
        out = []
        for v in values:
            x = 10.0 ** float(v) * scale
            mantissa = x / 10.0 ** np.floor(np.log10(x) + 1e-9)
            keep = np.isclose(mantissa, 1.0) or (not wide and any(np.isclose(mantissa, m) for m in (2.0, 5.0)))
            out.append(short_number(x) if keep else "")
        return out


def fit_label(name: str, pixels: float, width_of) -> str:
    """``name`` shortened until ``width_of(text)`` fits ``pixels``: whole; else each hyphenated part cut to its
    first letters (interleaved-divergent -> inter-diver -> int-div -> i-d); '' when nothing fits."""
    if width_of(name) <= pixels:
        return name
    parts = name.split("-")
    for keep in (5, 4, 3, 2, 1):
        short = re.sub(r"\s*\([^)]*$", "", "-".join(p[:keep] for p in parts)).rstrip()  # never a dangling "("
        if short and width_of(short) <= pixels:
            return short
    return ""


class CategoryAxis(ShortLogAxis):
    """A bottom axis that can name categories at x = 0, 1, 2, ... (``set_categories``): each label fits its
    category's width, abbreviated where the full name would run into its neighbour's (interleaved-divergent
    beside interleaved-strided: int-div, int-str), else numbered (1, 2, 3: the full names in the chart's
    tooltip and the table). So labels never overlap, at any width and any number of bars."""

    def __init__(self, orientation="bottom"):
        super().__init__(orientation)
        self.categories: list[str] | None = None
        self.numbered = False  # the labels are numbers: the chart then draws a key naming them
        self.on_numbered = None  # called (later, not while painting) when ``numbered`` changes
        self._unit_px = 0.0
        self.shown: list[str] = []  # the labels drawn last, for tests and tooltips

    def set_categories(self, names) -> None:
        self.categories = list(names) if names is not None else None
        self.setTicks(None)  # the labels come from tickValues / tickStrings below, fitted to the width
        self.picture = None
        self.update()

    def tickValues(self, minVal, maxVal, size):  # noqa: N802 - pyqtgraph's name
        if self.categories is None or self.logMode:
            return super().tickValues(minVal, maxVal, size)
        self._unit_px = size / max(maxVal - minVal, 1e-9)
        return [(1.0, [float(i) for i in range(len(self.categories)) if minVal - 0.5 <= i <= maxVal + 0.5])]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph's name
        if self.categories is None or self.logMode:
            return super().tickStrings(values, scale, spacing)
        from PyQt6.QtGui import QFont, QFontMetrics

        metrics = QFontMetrics(self.style.get("tickFont") or QFont())
        room = self._unit_px - 6  # a gap between neighbours
        labels = [fit_label(self.categories[int(v)], room, metrics.horizontalAdvance)
                  if 0 <= int(v) < len(self.categories) else "" for v in values]
        if not all(labels) or len(set(labels)) < len(labels):  # no room for names, or two read the same
            step = 1
            while step < len(values) and metrics.horizontalAdvance(str(len(self.categories))) > room * step:
                step += 1
            labels = [str(int(v) + 1) if int(v) % step == 0 else "" for v in values]
        self.shown = labels
        numbered = bool(labels) and all(s.isdigit() or not s for s in labels) and any(labels)
        if numbered != self.numbered:
            self.numbered = numbered
            if self.on_numbered is not None:
                pg.QtCore.QTimer.singleShot(0, self.on_numbered)
        return labels


def short_axes(categories: bool = False) -> dict:
    return {"left": ShortLogAxis("left"), "bottom": CategoryAxis("bottom") if categories else ShortLogAxis("bottom")}


class EmptyNote:
    """What an empty chart says instead of drawing 0..1 axes: a centred line of grey text, the axes' numbers
    hidden; ``show(plot, text)`` while there is nothing to draw, ``hide(plot)`` once there is."""

    def __init__(self):
        self.item = pg.TextItem("", color=(150, 150, 150), anchor=(0.5, 0.5))
        self.text = ""

    def show(self, plot: pg.PlotItem, text: str) -> None:
        self.text = text
        self.item.setText(text)
        if self.item.scene() is None:
            plot.addItem(self.item, ignoreBounds=True)
        plot.setXRange(0, 1, padding=0)
        plot.setYRange(0, 1, padding=0)
        self.item.setPos(0.5, 0.5)
        for side in ("left", "bottom"):
            plot.getAxis(side).setStyle(showValues=False)

    def hide(self, plot: pg.PlotItem) -> None:
        self.text = ""
        if self.item.scene() is not None:
            plot.removeItem(self.item)
        for side in ("left", "bottom"):
            plot.getAxis(side).setStyle(showValues=True)

    @property
    def shown(self) -> bool:
        return bool(self.text)


def y_label(metric: str, log_y: bool = False, simulated: bool = False) -> str:
    """The y axis title: short enough to stand beside a 250 px tall chart (the long name is the chart's
    tooltip), never cut off. A simulated time is Python's, and says so."""
    unit = {"GB/s": "GB/s", "G ops/s": "G ops/s"}.get(metric, "simulated ms" if simulated else "kernel ms")
    return unit + (" (log)" if log_y else "")


def chart_title(info: dict) -> str:
    """The title an exported chart carries: target and options on the first line, then N, backend, device and
    date (two short lines rather than one cut off at a laptop's width); ``info`` as
    :func:`raytracer_app.gui.common.chart_export.describe` builds it."""
    first = info.get("target", "") + (f" ({info['options']})" if info.get("options") else "")
    second = " | ".join(p for p in (f"N {info['n']}" if info.get("n") else "", info.get("backend", ""),
                                    info.get("device", ""), info.get("date", "")) if p)
    return "<br>".join(p for p in (first, second, info.get("note", "")) if p)


def set_title(plot: pg.PlotItem, info: dict, size: str = "8pt") -> None:
    """The chart's title (:func:`chart_title`), its row as tall as its lines: pyqtgraph fixes the title row
    at 30 px, which cut the simulator chart's third line at the top. ``plot``: a PlotItem or PlotWidget."""
    plot = plot.getPlotItem() if isinstance(plot, pg.PlotWidget) else plot
    plot.setTitle(chart_title(info), size=size)
    height = int(np.ceil(plot.titleLabel.item.boundingRect().height())) + 2
    plot.titleLabel.setMaximumHeight(max(30, height))
    plot.layout.setRowFixedHeight(0, max(30, height))


def bar_chart(plot: pg.PlotItem, names, values, lows, highs, brushes=None):
    """Bars at x = 0..k-1 labelled with ``names``, with error bars from ``lows`` to ``highs``."""
    x = np.arange(len(names), dtype=float)
    values, lows, highs = (np.asarray(v, dtype=float) for v in (values, lows, highs))
    bars = pg.BarGraphItem(x=x, height=values, width=0.6, brushes=brushes or [pg.intColor(i, 8) for i in range(len(x))])
    errors = pg.ErrorBarItem(x=x, y=values, top=highs - values, bottom=values - lows, beam=0.25, pen=pg.mkPen("w", width=1.5))
    plot.addItem(bars)
    plot.addItem(errors)
    axis = plot.getAxis("bottom")
    if isinstance(axis, CategoryAxis):
        axis.set_categories(names)  # fitted to the bars' width
    else:
        axis.setTicks([[(float(i), n) for i, n in enumerate(names)]])
    return bars, errors


class BenchChart(pg.PlotWidget):
    """Fills in as rows arrive: ``add(row, x)``; ``x`` is the row's block size or N in sweep mode.

    The legend sits below the plot, outside the data, and names the copy-bandwidth line, so no label is
    drawn over bars or lines. The y axis can be logarithmic (``set_log_y``)."""

    EMPTY = "no rows yet: tick variants on the left and press Run"

    def __init__(self, rate_unit: str = "GB/s"):
        super().__init__(axisItems=short_axes(categories=True))
        self.rate_unit = rate_unit
        self.empty = EmptyNote()
        self.empty_text = self.EMPTY
        self.simulated = False  # the rows are the simulator's: times only, no rates (set by the panel)
        self.names: list[str] = []  # the bars' variants, in x order (a bar's full name for its tooltip)
        self.scene().sigMouseMoved.connect(self._hover)
        self.info: dict = {}  # what the chart shows, for its title and an export's metadata (set_info)
        self.mode, self.metric = "bars", rate_unit
        self.log_y = False
        self.points: list[tuple[object, float]] = []  # (row, x)
        self.peak_gbps: float | None = None
        self.peak_how = ""
        self.bars = None
        self.lines: dict[str, pg.PlotDataItem] = {}
        self.ghost_of = None  # row -> the baseline's matching row, or None (set_baseline)
        self.ghost_label = ""
        self.ghost_points = 0  # baseline values drawn
        self.reference_rows: list = []  # shipped GPU results drawn as ghosts (set_reference)
        self.reference_label = ""
        self.reference_points = 0
        self.peak_line = pg.InfiniteLine(angle=0, movable=False,
                                         pen=pg.mkPen(**PEAK_PEN, style=pg.QtCore.Qt.PenStyle.DashLine))
        # the ceiling the rows are judged against in their own unit (kernels/harness/ceilings.py), dotted
        self.ceiling_line = pg.InfiniteLine(angle=0, movable=False,
                                            pen=pg.mkPen(**PEAK_PEN, style=pg.QtCore.Qt.PenStyle.DotLine))
        self.showGrid(x=False, y=True, alpha=0.3)
        plot = self.getPlotItem()
        for side in ("left", "bottom"):
            plot.getAxis(side).enableAutoSIPrefix(False)  # units in the label, never "(x0.001)"
        self.legend = pg.LegendItem(colCount=3, brush=(0, 0, 0, 170), labelTextSize="8pt")
        plot.layout.addItem(self.legend, 4, 1)  # below the bottom axis
        # where the bars are numbered (no room for names), the numbers' key, drawn in the chart so an
        # exported PNG or SVG can be read without the tooltips
        self.key = pg.LabelItem("", size="7pt", justify="left")
        plot.layout.addItem(self.key, 5, 1)
        plot.getAxis("bottom").on_numbered = self._update_key
        self.reset("bars", rate_unit)

    def reset(self, mode: str, metric: str) -> None:
        self.mode, self.metric = mode, metric
        self.points.clear()
        self._redraw()

    def set_metric(self, metric: str) -> None:
        self.metric = metric
        self._redraw()

    def set_simulated(self, on: bool) -> None:
        """The rows are (or are not) the simulator's: its times are Python's, named so on the axis."""
        if bool(on) != self.simulated:
            self.simulated = bool(on)
            self._redraw()

    def set_log_y(self, on: bool) -> None:
        self.log_y = bool(on)
        self._redraw()

    def set_info(self, info: dict) -> None:
        """What the chart shows (target, options, N, backend, device, date): its title, and the metadata
        of an exported PNG or SVG."""
        self.info = dict(info)
        set_title(self.getPlotItem(), self.info)

    def run_label(self) -> str:
        """This run's name in the legend: its backend and device where the chart knows them."""
        backend, device = self.info.get("backend", ""), self.info.get("device", "")
        if backend and device.lower().startswith(backend.lower() + ":"):  # the window's "cpu: AMD EPYC"
            backend = ""
        where = " on ".join(p for p in (backend, device) if p)
        return f"this run ({where})" if where else "this run"

    def set_peak(self, gbps: float | None, how: str = "") -> None:
        self.peak_gbps, self.peak_how = gbps, how
        self.peak_line.setToolTip(how)
        self._redraw()

    def set_baseline(self, ghost_of, label: str) -> None:
        """Draw each row's match in a loaded baseline behind it, dashed and semi-transparent, named ``label``
        (its device and commit) in the legend; ``ghost_of`` None removes it."""
        self.ghost_of, self.ghost_label = ghost_of, label
        self._redraw()

    def set_reference(self, rows, label: str) -> None:
        """Draw shipped reference rows (another device's results) as dashed blue ghosts named ``label``: a bar
        per variant (beside the panel's own, or behind its bar of the same name), points in a sweep."""
        self.reference_rows, self.reference_label = list(rows or []), label
        self._redraw()

    def reference_spread(self) -> float | None:
        """How many times the reference's largest value exceeds this run's in the metric (None without both):
        a CPU run beside an H100 reference drew its bars at 1% of the scale."""
        own = [v[0] for r, _ in self.points if (v := row_value(r, self.metric)) is not None and v[0] > 0]
        ref = [v for pts in self._reference_values().values() for _, v in pts if v > 0]
        return max(ref) / max(own) if own and ref else None

    def _reference_values(self) -> dict:
        """variant -> (value, x) of the reference rows in this metric (the last row per variant in bars mode)."""
        out: dict = {}
        for row in self.reference_rows:
            v = row_value(row, self.metric)
            if v is None:
                continue
            x = self._x_of(row)
            if x is not None:
                out.setdefault(row.variant, []).append((x, v[0]))
        return out

    def _x_of(self, row):
        """A row's place on the x axis in this mode: its N, block, or swept value (None where it has none)."""
        if self.mode == "n":
            return row.n
        if self.mode == "block":
            return threads_of(row.block)
        if self.mode.startswith("axis:"):
            value = (getattr(row, "axes", None) or {}).get(self.mode[5:])
            return value if isinstance(value, (int, float)) else None
        return 0

    def _series_names(self) -> dict:
        """Each point's line in a sweep: its variant, and the values of the other swept axes that differ
        between the rows (a hash table's op: one line per variant and op)."""
        axis = self.mode[5:] if self.mode.startswith("axis:") else None
        seen: dict[str, set] = {}
        for row, _ in self.points:
            for key, value in (getattr(row, "axes", None) or {}).items():
                if key != axis:
                    seen.setdefault(key, set()).add(str(value))
        varying = [k for k, values in seen.items() if len(values) > 1]

        def name(row) -> str:
            axes = getattr(row, "axes", None) or {}
            return " · ".join([row.variant] + [f"{axes[k]}" if k == "op" else f"{k} {axes[k]}" for k in varying
                                               if k in axes])
        return {id(row): name(row) for row, _ in self.points}

    def _ghost_value(self, row):
        base = self.ghost_of(row) if self.ghost_of is not None else None
        return None if base is None else row_value(base, self.metric)

    def add(self, row, x: float = 0.0) -> None:
        self.points.append((row, x))
        self._redraw()

    def bar_count(self) -> int:
        return 0 if self.bars is None else len(self.bars.opts["height"])

    def line_count(self) -> int:
        return len(self.lines)

    def ghost_count(self) -> int:
        return self.ghost_points

    def peak_shown(self) -> bool:
        return self.peak_line.scene() is not None

    def _y(self, v):
        """A value in the plot's y coordinates (log10 on a log axis: bars and lines are drawn by hand)."""
        v = np.asarray(v, dtype=float)
        return np.log10(np.maximum(v, 1e-12)) if self.log_y else v

    def _redraw(self) -> None:
        plot = self.getPlotItem()
        plot.clear()
        self.legend.clear()
        self.bars, self.lines, self.ghost_points, self.reference_points = None, {}, 0, 0
        sweep = self.mode != "bars"
        linear_x = self.mode.startswith("axis:")  # a swept option's values (a load factor) are not decades
        plot.setLogMode(x=sweep and not linear_x, y=self.log_y)
        axis = {"bars": "variant", "block": "threads per block", "n": "N"}.get(self.mode, self.mode[5:])
        plot.setLabel("bottom", axis)
        plot.setLabel("left", y_label(self.metric, self.log_y, self.simulated))
        plot.getAxis("left").setToolTip({"GB/s": "bandwidth: bytes the kernel reads per second",
                                         "G ops/s": "hash-table operations per second, in billions"}.get(
            self.metric, "median kernel time in milliseconds"))
        plot.getAxis("bottom").setTicks(None)
        plot.getAxis("bottom").set_categories(None)
        self.names = []
        pg.QtCore.QTimer.singleShot(0, self._update_key)
        top = 0.0
        if not sweep:
            latest = {}
            for row, _ in self.points:  # one bar per variant: its latest row
                v = row_value(row, self.metric)
                if v is not None:
                    latest[row.variant] = (v, row)
            reference = {name: pts[-1][1] for name, pts in self._reference_values().items()}
            names = list(latest) + [n for n in reference if n not in latest]  # the reference's own after
            if names:
                vals = np.array([latest[n][0] for n in latest], dtype=float).reshape(-1, 3)
                ghosts = [(i, g[0]) for i, n in enumerate(latest) if (g := self._ghost_value(latest[n][1])) is not None]
                refs = [(names.index(n), v) for n, v in reference.items()]
                extra = [g for _, g in ghosts] + [v for _, v in refs]
                top = max(([float(vals[:, 2].max())] if len(vals) else []) + extra)
                low, mid, high = self._y(vals[:, 1]), self._y(vals[:, 0]), self._y(vals[:, 2])
                floor = float(np.floor(min(list(low) + [float(self._y(g)) for g in extra]))) - 1
                for pairs, width, brush, pen in ((refs, 0.9, REFERENCE_BRUSH, reference_pen()),
                                                 (ghosts, 0.8, GHOST_BRUSH, ghost_pen())):
                    if pairs:  # behind the bars, a little wider, so its dashed outline shows around them
                        xs, ys = np.array([i for i, _ in pairs], float), self._y([g for _, g in pairs])
                        plot.addItem(pg.BarGraphItem(x=xs, height=ys - floor if self.log_y else ys,
                                                     y0=floor if self.log_y else 0, width=width, brush=brush, pen=pen))
                self.ghost_points, self.reference_points = len(ghosts), len(refs)
                if latest:
                    self.bars, _ = bar_chart(plot, list(latest), mid, low, high)
                    if self.log_y:  # bars stand on a floor one decade below the smallest value
                        self.bars.setOpts(y0=floor, height=mid - floor)
                device = self.reference_label.split()[0] if self.reference_label else ""
                self.names = [n if n in latest else f"{n} ({device})" for n in names]  # a reference-only bar: its device
                plot.getAxis("bottom").set_categories(self.names)  # never overlapping: abbreviated or numbered
                if latest:  # this run's bars named in the legend, beside the reference's and the baseline's
                    sample = pg.PlotDataItem(pen=None, symbol="s", symbolSize=10, symbolBrush=pg.intColor(0, 8),
                                             symbolPen=None)
                    self.legend.addItem(sample, self.run_label())
        else:
            series: dict[str, list] = {}
            ghosts: dict[str, list] = {}
            xs_all = set()
            names = self._series_names()
            for row, x in self.points:
                v = row_value(row, self.metric)
                if v is not None:
                    series.setdefault(names[id(row)], []).append((x, v[0]))
                    xs_all.add(x)
                    g = self._ghost_value(row)
                    if g is not None:
                        ghosts.setdefault(names[id(row)], []).append((x, g[0]))
            for i, (name, pts) in enumerate(series.items()):
                pts.sort()
                xs, ys = np.array(pts, dtype=float).T
                top = max(top, float(ys.max()))
                color = pg.intColor(i, 8)
                if name in ghosts:
                    gx, gy = np.array(sorted(ghosts[name]), dtype=float).T
                    top = max(top, float(gy.max()))
                    faded = pg.mkColor(color)
                    faded.setAlpha(120)
                    plot.plot(gx, gy, pen=pg.mkPen(faded, width=2, style=pg.QtCore.Qt.PenStyle.DashLine), symbol="o",
                              symbolSize=5, symbolPen=faded, symbolBrush=None)
                    self.ghost_points += len(gx)
                self.lines[name] = plot.plot(xs, ys, pen=pg.mkPen(color, width=2), symbol="o", symbolSize=6,
                                             symbolBrush=color)
                self.legend.addItem(self.lines[name], name)
            for pts in self._reference_values().values():
                pts.sort()
                xs, ys = np.array(pts, dtype=float).T
                top = max(top, float(ys.max()))
                xs_all.update(x for x in xs if x > 0)
                plot.plot(xs, ys, pen=reference_pen(), symbol="x", symbolSize=7, symbolPen=reference_pen())
                self.reference_points += len(xs)
            if xs_all and linear_x:  # a tick at each swept value, as typed
                plot.getAxis("bottom").setTicks([[(float(x), f"{x:g}") for x in sorted(xs_all)]])
            elif xs_all:  # one tick per swept value, short labels: the first ones never run together
                ticks = [(float(np.log10(x)), compact(x)) for x in sorted(xs_all) if x > 0]
                plot.getAxis("bottom").setTicks([ticks])
        if self.ghost_points:
            self.legend.addItem(pg.PlotDataItem(pen=ghost_pen()), f"baseline: {self.ghost_label} (dashed)")
        if self.reference_points:
            # "(dashed)": its blue pen is drawn beside the label, and a shorter label fits a narrow dock's legend
            self.legend.addItem(pg.PlotDataItem(pen=reference_pen()), f"{self.reference_label} (dashed)")
        if self.metric == "GB/s" and self.peak_gbps:
            # far above every value the line would squash them to the floor: then it stays out of the
            # y range (the legend still gives its figure) unless the axis is logarithmic
            far = top > 0 and self.peak_gbps > FAR_BELOW * top and not self.log_y
            self.peak_line.setPos(float(self._y(self.peak_gbps)))
            plot.addItem(self.peak_line, ignoreBounds=far)
            label = f"copy bandwidth {self.peak_gbps:.1f} GB/s" + (" (above the chart)" if far else "")
            self.legend.addItem(pg.PlotDataItem(pen=pg.mkPen(**PEAK_PEN, style=pg.QtCore.Qt.PenStyle.DashLine)), label)
        self._draw_ceiling(plot, top)
        if not self.points and not self.reference_points and not self.ghost_points:
            self.empty.show(plot, self.empty_text)  # not 0..1 axes: what to do
            return
        self.empty.hide(plot)
        plot.enableAutoRange()
        if sweep:
            plot.getViewBox().setDefaultPadding(0.06)  # the first point clear of the y axis


    def ceiling_value(self) -> tuple[float, str] | None:
        """(the ceiling in the chart's metric, its name) from the rows that carry one: a row's rate over its
        fraction of the ceiling (the largest where a sweep's table sizes give several); None for GB/s (the
        copy line is its ceiling), milliseconds, or rows without one."""
        if self.metric in ("GB/s", "ms"):
            return None
        found = [(v[0] * 100.0 / r.pct_of_ceiling, r.ceiling) for r, _ in self.points
                 if getattr(r, "pct_of_ceiling", None) and (v := row_value(r, self.metric)) is not None]
        return max(found) if found else None

    def _draw_ceiling(self, plot, top: float) -> None:
        ceiling = self.ceiling_value()
        if ceiling is None:
            return
        value, name = ceiling
        far = top > 0 and value > FAR_BELOW * top and not self.log_y
        self.ceiling_line.setPos(float(self._y(value)))
        self.ceiling_line.setToolTip(f"ceiling: {name}, measured in this run")
        plot.addItem(self.ceiling_line, ignoreBounds=far)
        label = f"ceiling ({name}) {value:.4g} {self.metric}" + (" (above the chart)" if far else "")
        self.legend.addItem(pg.PlotDataItem(pen=pg.mkPen(**PEAK_PEN, style=pg.QtCore.Qt.PenStyle.DotLine)), label)

    def key_text(self) -> str:
        """'1 name  2 name ...' when the bars are numbered, in lines that fit the chart ('' otherwise)."""
        axis = self.getPlotItem().getAxis("bottom")
        if self.mode != "bars" or not axis.numbered or not self.names:
            return ""
        from PyQt6.QtGui import QFont, QFontMetrics

        font = QFont()
        font.setPointSizeF(7)
        metrics = QFontMetrics(font)
        room = max(200, self.getPlotItem().width() - 20)
        lines, line = [], ""
        for i, name in enumerate(self.names):
            entry = f"{i + 1} {name}"
            if line and metrics.horizontalAdvance(line + "   " + entry) > room:
                lines.append(line)
                line = entry
            else:
                line = f"{line}   {entry}" if line else entry
        return "\n".join(lines + [line])

    def _update_key(self) -> None:
        from html import escape

        text = self.key_text()
        self.key.setText(escape(text).replace("\n", "<br>"), size="7pt")
        self.key.setVisible(bool(text))
        self.key.setMaximumHeight(1e6 if text else 0)

    def _hover(self, pos) -> None:
        """Over a bar: its variant's full name and value as the tooltip (the axis may show it abbreviated)."""
        if self.mode != "bars" or not self.names:
            self.setToolTip("")
            return
        x = self.getPlotItem().vb.mapSceneToView(pos).x()
        index = int(round(x))
        if not (0 <= index < len(self.names) and abs(x - index) <= 0.45):
            self.setToolTip("")
            return
        name = self.names[index]
        value = next((row_value(r, self.metric) for r, _ in reversed(self.points) if r.variant == name), None)
        self.setToolTip(name + (f": {value[0]:.4g} {y_label(self.metric)}" if value else ""))

    def bar_label(self, name: str) -> str:
        """The label drawn under ``name``'s bar (abbreviated or numbered where the full name does not fit)."""
        axis = self.getPlotItem().getAxis("bottom")
        index = self.names.index(name)
        return axis.shown[index] if index < len(axis.shown) else ""


class CompareChart(pg.PlotWidget):
    """Compare memory: median kernel time with global and with constant memory, min-max error bars."""

    def __init__(self):
        super().__init__()
        self.showGrid(x=False, y=True, alpha=0.3)
        self.setLabel("left", "kernel ms")
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
