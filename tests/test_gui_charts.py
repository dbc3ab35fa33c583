"""Charts on a laptop (issue 20): short log-axis labels, axis titles that fit, legends outside the lines,
exports of any chart at a chosen size and as SVG with metadata, dialogs in the last folder, tooltips that
name the real variants and reasons. pytest-qt, offscreen."""

from __future__ import annotations

import struct

import numpy as np
import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg

from kernels.harness.rows import Row
from kernels.registry import by_name
from kernels.timing import Timing
from raytracer_app.gui.common import chart_export
from raytracer_app.gui.common.charts import (BenchChart, ShortLogAxis, chart_title, fit_label,
                                             short_number, y_label)
from raytracer_app.png import read_png_text
from tests.test_gui import WAIT, make_window, settings_dir, wait_frame  # noqa: F401

INFO = chart_export.describe("Hash table", "buckets 1024", "1,048,576", "cpu", "AMD EPYC")


def png_size(path) -> tuple[int, int]:
    data = open(path, "rb").read(24)
    return struct.unpack(">II", data[16:24])


def timed_row(variant: str, ms: float, n: int = 1 << 20) -> Row:
    return Row(variant, "insert", "uint32", n, "cpu", "test", timing=Timing((ms, ms * 1.1), "wall"),
                     rate=n / ms / 1e3, rate_unit="G ops/s", verified="yes")


def test_short_numbers_for_log_ticks():
    assert [short_number(x) for x in (20, 50, 200, 1000, 10_000, 2_500_000, 0.05)] == \
        ["20", "50", "200", "1k", "10k", "2.5M", "0.05"]


def test_log_axis_labels_only_decades_over_a_wide_range_and_1_2_5_over_a_narrow_one(qtbot):
    axis = ShortLogAxis("bottom")
    axis.setLogMode(True)
    axis.setRange(1.0, 6.0)  # 10 .. 1M
    values = [1.0, 1.30103, 1.69897, 1.77815, 2.0, 3.0]  # 10, 20, 50, 60, 100, 1000
    assert axis.logTickStrings(values, 1.0, 1.0) == ["10", "", "", "", "100", "1k"]
    axis.setRange(1.0, 2.0)  # one decade: 2x and 5x labelled too, 6x never
    assert axis.logTickStrings(values, 1.0, 1.0) == ["10", "20", "50", "", "100", "1k"]
    assert all("·" not in t for t in axis.logTickStrings(values, 1.0, 1.0))


@pytest.mark.parametrize("metric", ["GB/s", "G ops/s", "ms"])
def test_the_y_axis_title_fits_a_250_px_chart(qtbot, metric):
    chart = BenchChart(metric if metric != "ms" else "GB/s")
    qtbot.addWidget(chart)
    chart.resize(420, 250)
    chart.show()
    chart.set_metric(metric)
    chart.set_log_y(True)
    qtbot.waitExposed(chart)
    axis = chart.getPlotItem().getAxis("left")
    assert axis.labelText == y_label(metric, True)
    assert axis.label.boundingRect().width() <= axis.geometry().height()


def test_png_export_is_wide_with_metadata_and_svg_has_title(qtbot, tmp_path):
    chart = BenchChart("G ops/s")
    qtbot.addWidget(chart)
    chart.resize(651, 196)  # the on-screen size the issue measured at 1366x768
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_info(INFO)
    chart.add(timed_row("cpu", 2.0))
    assert chart_export.default_width(chart) == 1600
    written = chart_export.export(chart.getPlotItem(), tmp_path / "c.png", chart.info, 1600)
    w, h = png_size(written)
    assert w == 1600 and h == pytest.approx(1600 * 196 / 651, abs=3)
    text = read_png_text(written)  # plain tEXt chunks
    for key, value in (("raytracer:target", "Hash table"), ("raytracer:options", "buckets 1024"),
                       ("raytracer:n", "1,048,576"), ("raytracer:backend", "cpu"), ("raytracer:device", "AMD EPYC"),
                       ("raytracer:date", INFO["date"])):
        assert text[key] == value
    assert text["Title"] == chart_title(INFO).replace("<br>", "; ") and "N 1,048,576" in text["Title"]
    assert "N 1,048,576" in chart.getPlotItem().titleLabel.text
    chart.resize(1000, 300)
    assert chart_export.default_width(chart) == 2000
    svg = chart_export.export(chart.getPlotItem(), tmp_path / "c.svg", chart.info).read_text()
    assert "<svg" in svg[:400] and "<path" in svg
    assert f"<title>{text['Title']}</title>" in svg and 'key="raytracer:device">AMD EPYC<' in svg


def test_export_refuses_other_suffixes_and_silly_widths(qtbot, tmp_path):
    from kernels.errors import InputError

    chart = BenchChart()
    qtbot.addWidget(chart)
    with pytest.raises(InputError, match=r"\.png or \.svg"):
        chart_export.export(chart.getPlotItem(), tmp_path / "c.jpg", INFO, 1600)
    with pytest.raises(InputError, match="width"):
        chart_export.export(chart.getPlotItem(), tmp_path / "c.png", INFO, 10**6)
    assert list(tmp_path.iterdir()) == []


def test_panel_tooltips_name_the_panels_own_variants_and_the_real_reasons(qtbot, make_window, cpu_backend):
    from raytracer_app.gui.benchmarks.panel import PCT_TIP, no_launch_tip

    tip = no_launch_tip(by_name("histogram"))
    assert "cpu-numpy" in tip and "(numpy" not in tip
    assert "read-only" in PCT_TIP and "reads and writes" in PCT_TIP and "L2" in PCT_TIP
    w = make_window(cpu_backend)
    panel = w.panels["Histogram"]
    panel.set_variants({"cpu-numpy"})
    assert "cpu-numpy" in panel.default_launch.toolTip()


def test_export_csv_with_no_results_says_so_and_dialogs_start_in_the_last_folder(qtbot, make_window, cpu_backend,
                                                                                  tmp_path, monkeypatch):
    from PyQt6.QtWidgets import QFileDialog

    from raytracer_app.gui.common import file_dialogs
    from raytracer_app.gui.common.settings import make_settings

    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    said = []
    panel.message.connect(said.append)
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: asked.append(a) or ("", ""))
    assert not panel.export_csv()
    assert "nothing to export" in said[-1] and not asked  # no dialog, no file
    file_dialogs.remember(make_settings(), str(tmp_path / "earlier.json"))
    panel.rows = [(Row("numpy", "sum", "int32", 8, "cpu", "test"), 0.0)]
    assert not panel.export_csv()  # cancelled
    assert asked[-1][2] == str(tmp_path / "reduction.csv")
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: asked.append(a) or (str(tmp_path / "r.png"), ""))
    monkeypatch.setattr(chart_export.SizeDialog, "ask", lambda self: (1700, 956))  # 16:9, as chosen
    assert panel.export_chart()
    assert asked[-1][2] == str(tmp_path / "reduction-chart.png")
    assert png_size(tmp_path / "r.png") == (1700, 956) and "1700 x 956 px" in said[-1]


def test_count_curve_has_short_ticks_a_title_with_the_image_size_and_exports(qtbot, make_window, cpu_backend,
                                                                              monkeypatch, tmp_path):
    from raytracer_app.gui.render import count_curve

    monkeypatch.setattr(count_curve, "CPU_COUNTS", (20, 40, 80))
    w = make_window(cpu_backend)
    wait_frame(qtbot, w)
    dialog = w.sphere_count_curve()
    with qtbot.waitSignal(dialog.finished_run, timeout=WAIT):
        pass
    plot = dialog.plot.getPlotItem()
    assert isinstance(plot.getAxis("bottom"), ShortLogAxis) and isinstance(plot.getAxis("left"), ShortLogAxis)
    assert dialog.legend.parentItem() is not plot.getViewBox()  # outside the plotted lines
    assert {label.text for _, label in dialog.legend.items} == {"cpu", "cpu-tiles"}
    title = plot.titleLabel.text
    assert "256x256 image" in title and "20 to 80 spheres" in title and "cpu" in title
    assert dialog.export_chart(tmp_path / "curve.png")
    assert png_size(tmp_path / "curve.png")[0] >= 1600
    assert read_png_text(tmp_path / "curve.png")["raytracer:n"] == "20 to 80 spheres"
    assert dialog.export_chart(tmp_path / "curve.svg") and "<title>" in (tmp_path / "curve.svg").read_text()
    dialog.close()


# ------------------------------------------------------------------------------------------- roofline
def _legend_texts(chart) -> list[str]:
    return [label.text for _, label in chart.legend.items]


def test_roofline_draws_the_architectures_ceilings_without_any_rows_and_follows_the_arch(qtbot):
    from kernels.inspector.roofline import PUBLISHED
    from raytracer_app.gui.inspector.dock import InspectorDock

    dock = InspectorDock()
    qtbot.addWidget(dock)
    try:
        chart = dock.roofline_chart
        assert chart.legend.parentItem() is not chart.plot.getPlotItem().getViewBox()  # outside the lines
        texts = _legend_texts(chart)
        h100 = PUBLISHED["sm_90"]
        assert len(texts) == 1 and "sm_90 roofline" in texts[0] and f"{h100.bandwidth_gbs:.0f} GB/s" in texts[0]
        (line,) = chart.plot.getPlotItem().listDataItems()
        xs, ys = line.getOriginalDataset()
        assert ys.max() == pytest.approx(h100.peak_ops("int32"))  # a reduction counts int32 operations
        assert "no GPU rows yet" in dock.roofline_note.text() and "H100 SXM5" in dock.roofline_note.text()
        dock.panel.arch_box.setCurrentText("sm_80")
        assert "2039 GB/s" in _legend_texts(chart)[0] and "A100" in dock.roofline_note.text()
        dock.panel.arch_box.setCurrentText("sm_100")  # no figures stored: said, nothing made up
        assert _legend_texts(chart) == [] and "no published ceilings" in dock.roofline_note.text()
    finally:
        dock.shutdown()


def test_roofline_leaves_out_cpu_and_simulator_rows_and_says_why(qtbot, tmp_path):
    from raytracer_app.gui.inspector.dock import InspectorDock

    dock = InspectorDock()
    qtbot.addWidget(dock)
    try:
        timing = Timing((0.5,), "wall")
        assert not dock.add_row("reduction", Row("numpy", "sum", "int32", 1 << 20, "cpu", "test",
                                                       timing=timing))
        assert "CPU rows are not GPU measurements" in dock.roofline_note.text()
        sim = Row("best", "sum", "int32", 4096, "sim", "simulator", block="256", grid="16", timing=timing)
        assert not dock.add_row("reduction", sim)  # a kernel the inspector knows, but timed in Python
        assert "simulator rows are not plotted" in dock.roofline_note.text()
        assert dock.points.get("reduction", []) == []
        assert len(dock.roofline_chart.plot.getPlotItem().listDataItems()) == 1  # the ceilings only
        assert dock.roofline_chart.export_chart(tmp_path / "roof.png")
        assert read_png_text(tmp_path / "roof.png")["raytracer:target"] == "Roofline: reduction"
    finally:
        dock.shutdown()


# ------------------------------------------------------------------------------------------- issue 35
def test_category_labels_never_overlap_and_the_full_name_is_the_tooltip(qtbot):
    """23 reduction variants (the H100 reference's) under a chart 650 px wide ran into one smear: each label
    now fits its bar's width, abbreviated or numbered, and hovering a bar names it in full."""
    from PyQt6.QtGui import QFont, QFontMetrics

    names = [v.name for v in by_name("reduction").variants]
    chart = BenchChart()
    qtbot.addWidget(chart)
    for width in (650, 1300, 2400):
        chart.resize(width, 300)
        chart.show()
        qtbot.waitExposed(chart)
        chart.reset("bars", "ms")
        for i, name in enumerate(names):
            chart.add(Row(name, "sum", "int32", 1 << 20, "cpu", "test", timing=Timing((1.0 + i,), "wall"),
                                verified="yes"))
        chart.grab()  # lays out and draws the axis
        axis = chart.getPlotItem().getAxis("bottom")
        metrics = QFontMetrics(axis.style.get("tickFont") or QFont())
        per_bar = axis.width() / len(names)
        shown = axis.shown
        assert len(shown) == len(names) and len([s for s in shown if s]) >= len(names) // 3
        assert all(metrics.horizontalAdvance(s) <= per_bar for s in shown), (width, shown)
        assert len({s for s in shown if s}) == len([s for s in shown if s])  # no two bars read the same
    assert shown[names.index("sequential")] == "sequential" and shown[names.index("interleaved-divergent")] == "inter-diver"
    chart.resize(650, 300)
    chart.grab()
    centre = chart.getPlotItem().vb.mapViewToScene(pg.QtCore.QPointF(names.index("sequential"), 1.0))
    chart._hover(centre)
    assert chart.toolTip().startswith("sequential: ")
    assert fit_label("interleaved-divergent", 60, lambda s: 7 * len(s)) == "int-div"
    assert fit_label("interleaved-divergent", 10, lambda s: 7 * len(s)) == ""


def test_an_empty_chart_says_what_to_do_and_hides_its_0_1_axes(qtbot):
    chart = BenchChart()
    qtbot.addWidget(chart)
    plot = chart.getPlotItem()
    assert chart.empty.shown and "press Run" in chart.empty.item.textItem.toPlainText()
    assert not plot.getAxis("left").style["showValues"]
    chart.add(timed_row("cpu", 2.0))
    assert not chart.empty.shown and plot.getAxis("left").style["showValues"]
    chart.reset("bars", "GB/s")
    assert chart.empty.shown


def test_the_simulator_charts_times_never_rates(qtbot, make_window, cuda_backend):
    if not cuda_backend.is_simulator:
        pytest.skip("this session runs real CUDA, not the simulator")
    from tests.test_gui import preset

    preset("sim", **{"render/size_spheres": "8x8", "spheres/count": 2})
    w = make_window(cuda_backend)
    panel = w.panels["Reduction"]
    assert panel.metric.currentText() == "ms" and not panel.metric.model().item(0).isEnabled()
    assert "Python's" in panel.metric.model().item(0).toolTip()
    assert panel.chart.simulated and panel.chart.getPlotItem().getAxis("left").labelText == "simulated ms"


def test_export_at_a_chosen_aspect_scales_the_legend_with_the_image(qtbot, tmp_path):
    chart = BenchChart("G ops/s")
    qtbot.addWidget(chart)
    chart.resize(2720 // 2, 280 // 2)  # a wide, low chart on screen (the 2720x280 export)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_info(INFO)
    for name in ("cpu", "cpu-sort"):
        chart.add(timed_row(name, 2.0))
    chart.set_peak(5.0, "test")
    before = chart.size()
    for size in ((1600, 900), (1200, 1200)):
        written = chart_export.export(chart.getPlotItem(), tmp_path / f"c{size[0]}.png", chart.info, *size)
        assert png_size(written) == size
    assert chart.size() == before  # the chart on screen is as it was
    # laid out 1000 px wide and scaled 1.6x: the legend's text is as large in the image as on a 1000 px chart
    with chart_export.laid_out(chart.getPlotItem(), 1600, 900):
        assert (chart.width(), chart.height()) == (1000, 562)
        legend_px = chart.legend.sceneBoundingRect().height()
    assert legend_px * 1.6 >= 20


def test_the_count_curve_shows_each_counts_spread(qtbot, make_window, cpu_backend, monkeypatch):
    from raytracer_app.gui.render import count_curve

    monkeypatch.setattr(count_curve, "CPU_COUNTS", (20, 40))
    w = make_window(cpu_backend)
    wait_frame(qtbot, w)
    dialog = w.sphere_count_curve()
    assert dialog.empty.shown  # before the first row: what will come, not 0..1 axes
    with qtbot.waitSignal(dialog.finished_run, timeout=WAIT):
        pass
    assert not dialog.empty.shown
    for memory in ("cpu", "cpu-tiles"):
        x, low, high = dialog.spread_of(memory)
        rows = [r for r in dialog.rows if count_curve.memory_of(r.variant) == memory]
        assert list(x) == pytest.approx([np.log10(r.n) for r in rows])
        assert list(low) == pytest.approx([np.log10(r.timing.min_ms) for r in rows])
        assert list(high) == pytest.approx([np.log10(r.timing.max_ms) for r in rows])
    assert "its bar their fastest to slowest" in dialog.status.text()
    dialog.close()
