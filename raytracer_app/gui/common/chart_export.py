"""Export a chart (a benchmark panel's, the sphere count curve's, the roofline) as PNG at a chosen width or as
SVG. Both carry what the chart shows (target, options, N, backend, device, date) in the title drawn on it and
in the file's metadata: PNG tEXt entries (written by raytracer_app.png, so every key is a plain tEXt chunk),
an SVG <title> and <metadata>. The bytes are made on the GUI thread (pyqtgraph paints there) and written
through the app's one output writer off it."""

from __future__ import annotations

import contextlib
import datetime
import re
from html import escape

import numpy as np

MIN_PNG_WIDTH = 1600  # an exported PNG is at least this wide, else twice the chart's width on screen
MAX_PNG_WIDTH = 8000
FORMATS = {".png": "PNG image (*.png)", ".svg": "SVG vector image (*.svg)"}


def describe(target: str, options: str = "", n="", backend: str = "", device: str = "", note: str = "",
             when: datetime.datetime | None = None) -> dict:
    """What a chart shows, as chart_title and the metadata read it."""
    when = when or datetime.datetime.now()
    return {"target": target, "options": options, "n": str(n), "backend": backend, "device": device,
            "date": f"{when:%Y-%m-%d %H:%M}", "note": note}


def option_text(value) -> str:
    """An option's value as a title says it: a list or tuple as its items ('insert/find'; '0.5'), never
    Python's repr ('('insert',)')."""
    if isinstance(value, (list, tuple)):
        return "/".join(option_text(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def metadata(info: dict) -> dict[str, str]:
    """PNG text keys: a Title as image viewers show it, and one raytracer: key per field."""
    from raytracer_app.gui.common.charts import chart_title

    meta = {"Title": chart_title(info).replace("<br>", "; "), "Software": "raytracer-app"}
    meta.update({f"raytracer:{k}": str(v) for k, v in info.items() if v})
    return meta


def default_width(widget) -> int:
    """Twice the chart's on-screen width, and never under MIN_PNG_WIDTH."""
    return max(2 * int(widget.width()), MIN_PNG_WIDTH)


def _rgba(image) -> np.ndarray:
    from PyQt6.QtGui import QImage

    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    w, h, stride = image.width(), image.height(), image.bytesPerLine()
    data = np.frombuffer(image.constBits().asstring(stride * h), np.uint8).reshape(h, stride)
    return np.ascontiguousarray(data[:, : 4 * w].reshape(h, w, 4))


def png_bytes(plot_item, width: int, info: dict, height: int | None = None) -> bytes:
    """The chart drawn ``width`` x ``height`` pixels (``height`` None: in the on-screen proportion), as PNG with
    the metadata. The chart is laid out at READABLE_PX wide (or the width, if less) and that drawing scaled up,
    so axis labels and the legend grow with the image instead of shrinking into a corner of it."""
    import pyqtgraph.exporters

    from raytracer_app.png import png_bytes as encode

    with laid_out(plot_item, width, height):
        exporter = pyqtgraph.exporters.ImageExporter(plot_item)
        exporter.parameters()["width"] = int(width)
        image = exporter.export(toBytes=True)
    if image is None or image.isNull():
        raise ValueError("the chart could not be drawn")
    if height is not None and (image.width(), image.height()) != (int(width), int(height)):  # a pixel of rounding
        from PyQt6.QtCore import Qt

        image = image.scaled(int(width), int(height), Qt.AspectRatioMode.IgnoreAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    return encode(_rgba(image), metadata(info))


READABLE_PX = 1000  # the width a chart is laid out at for export: its 8-9 pt text is read at this size


@contextlib.contextmanager
def laid_out(plot_item, width: int, height: int | None):
    """The chart's widget resized, for the export only, to READABLE_PX wide in the aspect ``width`` x ``height``
    (nothing changes when ``height`` is None); its own size comes back after."""
    view = plot_item.getViewWidget()
    if height is None or view is None:
        yield
        return
    logical_w = min(int(width), READABLE_PX)
    logical_h = max(1, round(logical_w * int(height) / int(width)))
    old_min, old_max, old_size = view.minimumSize(), view.maximumSize(), view.size()
    view.setFixedSize(logical_w, logical_h)  # within a layout too, until the size below comes back
    view.resizeEvent(None)  # the plot laid out at once, shown or not (a hidden view gets no event)
    try:
        yield
    finally:
        view.setMinimumSize(old_min)
        view.setMaximumSize(old_max)
        view.resize(old_size)
        view.resizeEvent(None)


def svg_bytes(plot_item, info: dict) -> bytes:
    """The chart as SVG with a <title> and the metadata as <metadata> entries. Drawn through Qt's own
    QSvgGenerator: pyqtgraph 0.14's SVGExporter cannot parse the paths Qt 6.11 writes."""
    from PyQt6.QtCore import QBuffer, QIODevice, QRectF, QSize
    from PyQt6.QtGui import QPainter, QPicture
    from PyQt6.QtSvg import QSvgGenerator

    meta = metadata(info)
    source = plot_item.sceneBoundingRect()
    w, h = max(1, round(source.width())), max(1, round(source.height()))
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(QSize(w, h))
    generator.setViewBox(QRectF(0, 0, w, h))
    # the resolution pyqtgraph's cached QPictures (axes, text) were recorded at: any other replays them
    # scaled (at the default 72 dpi the axes came out 0.75x against the data)
    generator.setResolution(QPicture().logicalDpiX())
    generator.setTitle(meta["Title"])
    generator.setDescription("; ".join(f"{k}: {v}" for k, v in meta.items()))
    painter = QPainter(generator)
    try:
        view = plot_item.getViewWidget()
        if view is not None:  # the chart's background is the view's, not the scene's
            painter.fillRect(QRectF(0, 0, w, h), view.backgroundBrush())
        plot_item.scene().render(painter, QRectF(0, 0, w, h), source)
    finally:
        painter.end()
    text = flatten_transforms(bytes(buffer.data()).decode("utf-8"))
    block = ("<metadata>\n" + "".join(f'<raytracer key="{escape(k)}">{escape(v)}</raytracer>\n'
                                      for k, v in meta.items()) + "</metadata>\n")
    start = text.index("<svg")
    close = text.index(">", start) + 1
    return (text[:close] + "\n" + block + text[close:]).encode("utf-8")


_SVG_NS = "http://www.w3.org/2000/svg"
_MATRIX = re.compile(r"matrix\(([^)]*)\)")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def flatten_transforms(text: str) -> str:
    """Qt's SVG with every group's transform applied to its shapes' coordinates, so the strokes are as wide
    as drawn in any renderer. Qt draws the data inside a group scaled from data to pixels (x100s) and marks
    each stroke ``vector-effect="non-scaling-stroke"``; a renderer that ignores that (librsvg, Inkscape,
    Tiny 1.2's own reading) draws those strokes hundreds of pixels wide, as bands. A group holding text or
    an image keeps its transform (text is not stroked)."""
    import xml.etree.ElementTree as ET

    ET.register_namespace("", _SVG_NS)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    root = ET.fromstring(text.encode("utf-8"))
    shapes = {f"{{{_SVG_NS}}}{t}" for t in ("path", "polyline", "polygon", "rect", "line", "ellipse", "circle")}
    for group in root.iter(f"{{{_SVG_NS}}}g"):
        m = _MATRIX.fullmatch(group.get("transform", "").strip())
        if m is None or not all(child.tag in shapes for child in group):
            continue
        a, b, c, d, e, f = (float(v) for v in m.group(1).replace(",", " ").split())
        if b or c:  # a rotation: never drawn by the charts; leave it as it is
            continue

        def point(x, y, a=a, d=d, e=e, f=f):  # this group's matrix, bound now
            return a * x + e, d * y + f

        for shape in list(group):
            _move_shape(shape, point, a, d)
        del group.attrib["transform"]
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _pairs(numbers: str, point) -> str:
    values = [float(v) for v in _NUMBER.findall(numbers)]
    out = []
    for x, y in zip(values[::2], values[1::2]):
        px, py = point(x, y)
        out.append(f"{px:.6g},{py:.6g}")
    return " ".join(out)


def _move_shape(shape, point, sx: float, sy: float) -> None:
    """One shape's coordinates through ``point`` (x -> sx x + e, y -> sy y + f)."""
    tag = shape.tag.rsplit("}", 1)[-1]
    if tag in ("polyline", "polygon"):
        shape.set("points", _pairs(shape.get("points", ""), point))
    elif tag == "path":  # Qt writes absolute M / L / C / Z commands only: every number pair is a point
        shape.set("d", re.sub(r"[-+]?[\d.eE+-]+,[-+]?[\d.eE+-]+(?:\s+[-+]?[\d.eE+-]+,[-+]?[\d.eE+-]+)*",
                              lambda m: _pairs(m.group(0), point), shape.get("d", "")))
    elif tag == "line":
        (x1, y1), (x2, y2) = (point(float(shape.get(f"x{i}", 0)), float(shape.get(f"y{i}", 0))) for i in (1, 2))
        shape.set("x1", f"{x1:.6g}"), shape.set("y1", f"{y1:.6g}"), shape.set("x2", f"{x2:.6g}"), shape.set("y2", f"{y2:.6g}")
    elif tag == "rect":
        x0, y0 = point(float(shape.get("x", 0)), float(shape.get("y", 0)))
        x1, y1 = point(float(shape.get("x", 0)) + float(shape.get("width", 0)),
                       float(shape.get("y", 0)) + float(shape.get("height", 0)))
        for key, value in (("x", min(x0, x1)), ("y", min(y0, y1)), ("width", abs(x1 - x0)), ("height", abs(y1 - y0))):
            shape.set(key, f"{value:.6g}")
    elif tag in ("ellipse", "circle"):
        cx, cy = point(float(shape.get("cx", 0)), float(shape.get("cy", 0)))
        shape.set("cx", f"{cx:.6g}"), shape.set("cy", f"{cy:.6g}")
        if tag == "circle" and abs(sx) != abs(sy):
            shape.tag = shape.tag.replace("circle", "ellipse")
            shape.set("rx", shape.get("r")), shape.set("ry", shape.get("r"))
            del shape.attrib["r"]
        if tag == "circle" and shape.tag.endswith("circle"):
            shape.set("r", f"{abs(sx) * float(shape.get('r', 0)):.6g}")
        else:
            shape.set("rx", f"{abs(sx) * float(shape.get('rx', 0)):.6g}")
            shape.set("ry", f"{abs(sy) * float(shape.get('ry', 0)):.6g}")


def export(plot_item, path, info: dict, width: int | None = None, height: int | None = None):
    """Write the chart to ``path`` (.png ``width`` x ``height`` pixels, the height in the on-screen proportion when
    None; or .svg); returns the written Path."""
    from pathlib import Path

    from kernels.errors import InputError
    from kernels.io.writer import write_output
    from raytracer_app.gui.common.saving import in_background

    suffix = Path(str(path)).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"Export chart: {path} does not end in .png or .svg")
    action = f"Export chart {suffix[1:].upper()}"
    if suffix == ".svg":
        data = svg_bytes(plot_item, info)
    else:
        if width is None or not MIN_PNG_WIDTH // 16 <= int(width) <= MAX_PNG_WIDTH:
            raise InputError(f"{action}: a width of {width} px is not between {MIN_PNG_WIDTH // 16} and {MAX_PNG_WIDTH}")
        if height is not None and not MIN_PNG_WIDTH // 16 <= int(height) <= MAX_PNG_WIDTH:
            raise InputError(f"{action}: a height of {height} px is not between {MIN_PNG_WIDTH // 16} and "
                             f"{MAX_PNG_WIDTH}")
        data = png_bytes(plot_item, width, info, height)
    return in_background(lambda: write_output(path, data, action, suffixes=(suffix,)))


ASPECTS = {"as on screen": None, "16:9 (slides)": 9 / 16, "4:3": 3 / 4, "3:2": 2 / 3, "1:1": 1.0}


class SizeDialog:
    """Export chart PNG's size: a width and an aspect (as on screen, 16:9, 4:3, 3:2, 1:1) or a height of your
    own; ``ask()`` returns (width, height) or None when cancelled."""

    def __init__(self, parent, widget):
        from PyQt6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QSpinBox

        self.widget = widget
        self.dialog = QDialog(parent)
        self.dialog.setWindowTitle("Export chart PNG")
        form = QFormLayout(self.dialog)
        self.width, self.height = QSpinBox(), QSpinBox()
        for box in (self.width, self.height):
            box.setRange(MIN_PNG_WIDTH // 16, MAX_PNG_WIDTH)
            box.setSuffix(" px")
        self.aspect = QComboBox()
        self.aspect.addItems([*ASPECTS, "your own height"])
        self.width.setValue(default_width(widget))
        self.note = QLabel("the chart is laid out at about 1000 px wide and scaled to this size, so its labels "
                           "and legend grow with it")
        self.note.setWordWrap(True)
        form.addRow("Width", self.width)
        form.addRow("Aspect", self.aspect)
        form.addRow("Height", self.height)
        form.addRow(self.note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.dialog.accept)
        buttons.rejected.connect(self.dialog.reject)
        form.addRow(buttons)
        self.width.valueChanged.connect(lambda _: self._follow())
        self.aspect.currentTextChanged.connect(lambda _: self._follow())
        self._follow()

    def ratio(self) -> float | None:
        """height / width of the chosen aspect (None: your own height)."""
        text = self.aspect.currentText()
        if text not in ASPECTS:
            return None
        on_screen = self.widget.height() / max(self.widget.width(), 1)
        return ASPECTS[text] if ASPECTS[text] is not None else on_screen

    def _follow(self) -> None:
        ratio = self.ratio()
        self.height.setEnabled(ratio is None)
        if ratio is not None:
            self.height.setValue(max(self.height.minimum(), round(self.width.value() * ratio)))

    def size(self) -> tuple[int, int]:
        return self.width.value(), self.height.value()

    def ask(self) -> tuple[int, int] | None:
        return self.size() if self.dialog.exec() else None


def ask(parent, widget, name: str, settings=None) -> tuple[str, int | None, int | None] | None:
    """A file (PNG or SVG) in a save dialog that opens in the last folder used, then for a PNG its width and
    height (default :func:`default_width`, as on screen); None when cancelled."""
    from raytracer_app.gui.common.dialogs import ask_path

    path = ask_path(parent, "Export chart", ";;".join(FORMATS.values()), f"{name}.png", settings=settings)
    if not path:
        return None
    if path.lower().endswith(".svg"):
        return path, None, None
    if not path.lower().endswith(".png"):
        path += ".png"
    size = SizeDialog(parent, widget).ask()
    return (path, *size) if size else None


def export_interactive(parent, widget, info: dict, name: str, say, path=None, width=None, height=None) -> bool:
    """Export Chart…: ask (unless ``path`` is given), write, and report through ``say(text, error)``."""
    if path is None:
        chosen = ask(parent, widget, name)
        if chosen is None:
            return False
        path, width, height = chosen
    elif width is None:
        width = default_width(widget)
    from raytracer_app.gui.common.saving import message_of

    try:
        written = export(widget.getPlotItem(), path, info, width, height)
    except Exception as exc:  # noqa: BLE001 - a refused path, a failed write or an empty chart
        say(f"cannot export the chart: {message_of(exc)}", True)
        return False
    size = (f" ({width} x {height} px)" if height else f" ({width} px wide)") if str(path).lower().endswith(".png") else ""
    say(f"chart written to {written}{size}{written.kept() if hasattr(written, 'kept') else ''}", False)
    return True
