"""Issue 50 item 3: the exported SVG puts the data where its own axes say, in Qt's SVG renderer and in librsvg
(which ignores ``vector-effect``, so a stroke drawn in a scaled group came out as a band). pytest-qt, offscreen."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg

from raytracer_app.gui.common import chart_export
from raytracer_app.gui.common.charts import BenchChart

RED = (255, 0, 0)


def chart_with_a_red_line_at_1000(qtbot):
    """A sweep chart over N (log x) with one vertical red line at N = 1000 and a tick labelled '1k' there."""
    chart = BenchChart()
    qtbot.addWidget(chart)
    chart.resize(600, 360)
    chart.show()
    qtbot.waitExposed(chart)
    plot = chart.getPlotItem()
    plot.setLogMode(x=True)
    plot.plot([100, 1000, 10000, 100000], [1, 2, 3, 4], pen=pg.mkPen("#2060c0", width=2))
    plot.plot([1000, 1000], [1, 4], pen=pg.mkPen(RED, width=3))
    plot.getAxis("bottom").setTicks([[(2.0, "100"), (3.0, "1k"), (4.0, "10k"), (5.0, "100k")]])
    chart.grab()
    qtbot.wait(20)  # the chart's key settles (it is laid out after the axis is drawn)
    chart.grab()
    return chart


def expected_x(chart) -> float:
    """Where x = 1000 lies in the exported picture: the plot's own mapping, in the SVG's pixel space."""
    plot = chart.getPlotItem()
    at = plot.vb.mapViewToScene(pg.QtCore.QPointF(3.0, 2.5))
    return at.x() - plot.sceneBoundingRect().left()


def red_columns(rgba: np.ndarray) -> np.ndarray:
    r, g, b = (rgba[..., i].astype(int) for i in range(3))
    return np.nonzero(((r > 200) & (g < 80) & (b < 80)).any(axis=0))[0]


def image_rgba(path_or_image) -> np.ndarray:
    from PyQt6.QtGui import QImage

    image = QImage(str(path_or_image)) if not isinstance(path_or_image, QImage) else path_or_image
    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    return np.frombuffer(image.constBits().asstring(image.sizeInBytes()), np.uint8).reshape(
        image.height(), image.bytesPerLine() // 4, 4)[:, : image.width()]


def tick_xs(svg: str, y_axis: float) -> list[float]:
    """The x of each short vertical tick mark the SVG draws at the bottom axis."""
    out = []
    for x1, y1, x2, y2 in re.findall(r'points="([-\d.]+),([-\d.]+) ([-\d.]+),([-\d.]+)"', svg):
        if x1 == x2 and abs(float(y1) - float(y2)) <= 10 and abs(min(float(y1), float(y2)) - y_axis) <= 1:
            out.append(float(x1))
    return out


def test_svg_data_lands_on_its_tick_in_qts_renderer(qtbot, tmp_path):
    from PyQt6.QtCore import QRectF
    from PyQt6.QtGui import QColor, QImage, QPainter
    from PyQt6.QtSvg import QSvgRenderer

    chart = chart_with_a_red_line_at_1000(qtbot)
    svg = chart_export.export(chart.getPlotItem(), tmp_path / "c.svg", chart_export.describe("t")).read_text()
    assert 'transform="matrix(172' not in svg and not re.search(r'transform="matrix\((?:[2-9]\d|\d{3})', svg)
    renderer = QSvgRenderer(svg.encode())
    assert renderer.isValid()
    box = renderer.viewBoxF()
    image = QImage(int(box.width()), int(box.height()), QImage.Format.Format_RGBA8888)
    image.fill(QColor("white"))
    painter = QPainter(image)
    renderer.render(painter, QRectF(0, 0, box.width(), box.height()))
    painter.end()
    rgba = image_rgba(image)
    cols = red_columns(rgba)
    x = expected_x(chart)
    assert len(cols) and abs(cols.mean() - x) < 2.5 and cols.max() - cols.min() <= 6, (cols, x)
    bottom = chart.getPlotItem().getAxis("bottom").sceneBoundingRect().top() - chart.getPlotItem().sceneBoundingRect().top()
    assert any(abs(t - x) < 1.0 for t in tick_xs(svg, bottom)), (tick_xs(svg, bottom), x, bottom)


@pytest.mark.skipif(shutil.which("rsvg-convert") is None,
                    reason="librsvg's rsvg-convert is not installed (Debian: apt-get install librsvg2-bin)")
def test_svg_has_no_bands_in_librsvg(qtbot, tmp_path):
    chart = chart_with_a_red_line_at_1000(qtbot)
    path = chart_export.export(chart.getPlotItem(), tmp_path / "c.svg", chart_export.describe("t"))
    png = tmp_path / "c.png"
    subprocess.run(["rsvg-convert", "--dpi-x", "96", "--dpi-y", "96", "-b", "white", str(path), "-o", str(png)],
                   check=True, timeout=60)
    rgba = image_rgba(png)
    cols = red_columns(rgba)
    scale = rgba.shape[1] / float(re.search(r'viewBox="0 0 ([\d.]+)', path.read_text()).group(1))
    x = expected_x(chart) * scale
    assert len(cols) and abs(cols.mean() - x) < 2.5 * scale and cols.max() - cols.min() <= 6 * scale, (cols, x)


def test_numbered_bars_carry_a_key_and_the_legend_names_this_run(qtbot, tmp_path):
    """Issue 50 items 6 and 10: 22 bars at a laptop's chart width are numbered; the chart then draws a key
    naming every number (so an exported PNG can be read), and the legend names this run beside others."""
    from kernels.harness import bench
    from kernels.registry import by_name
    from kernels.timing import Timing
    from raytracer_app.gui.common.charts import fit_label

    names = [v.name for v in by_name("reduction").variants][:22]
    chart = BenchChart()
    qtbot.addWidget(chart)
    chart.resize(650, 360)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_info(chart_export.describe("Reduction", backend="cpu", device="AMD EPYC"))
    chart.reset("bars", "ms")
    for i, name in enumerate(names):
        chart.add(bench.Row(name, "sum", "int32", 1 << 20, "cpu", "test", timing=Timing((1.0 + i,), "wall"),
                            verified="yes"))
    chart.grab()
    qtbot.wait(20)
    axis = chart.getPlotItem().getAxis("bottom")
    assert axis.numbered and chart.key.isVisible()
    key = chart.key_text()
    assert all(f"{i + 1} {name}" in key for i, name in enumerate(names))
    legend = [label.text for _, label in chart.legend.items]
    assert "this run (cpu on AMD EPYC)" in legend
    chart.resize(2400, 360)
    chart.grab()
    qtbot.wait(20)
    assert not axis.numbered and not chart.key.isVisible()
    assert fit_label("cupy-sum (H200)", 60, lambda s: 7 * len(s)) == "cupy-sum"
    assert "(" not in fit_label("cupy-sum (H200)", 60, lambda s: 7 * len(s))


def test_a_charts_title_says_list_options_as_their_items():
    """Issue 50 item 9: the hash table's title read "op ('insert',), load (0.5,)"."""
    from raytracer_app.gui.common.chart_export import option_text

    assert option_text(("insert",)) == "insert" and option_text((0.5,)) == "0.5"
    assert option_text(["insert", "find"]) == "insert/find" and option_text(1024) == "1024"


def test_a_three_line_title_is_not_cut(qtbot):
    """Issue 50 item 10: the simulator chart's third title line was clipped at the top."""
    chart = BenchChart()
    qtbot.addWidget(chart)
    chart.resize(650, 300)
    chart.show()
    chart.set_info(chart_export.describe("Reduction", "block 256", 4096, "sim", "simulator",
                                         note="simulator: timings meaningless for a GPU"))
    qtbot.waitExposed(chart)
    chart.grab()
    qtbot.wait(10)
    label = chart.getPlotItem().titleLabel
    assert label.geometry().height() >= label.item.boundingRect().height()
