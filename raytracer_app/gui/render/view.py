"""The central render view: a tab per renderer, each a pyqtgraph ImageItem in an aspect-locked ViewBox
with y inverted so row 0 is at the top. Frames are shown as they are (no copy, no level scaling)."""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PyQt6 import sip
from PyQt6.QtCore import QRectF, Qt, QTimer, pyqtSignal
from PyQt6.QtGui import QImage
from PyQt6.QtWidgets import QTabWidget


PAINT_WAIT_MS = 100  # the longest a shown frame holds back the next one waiting for its paint


class FrameImageItem(pg.ImageItem):
    """An ImageItem that remembers how long its last paint took (part of the displayed frame time), and
    wraps an RGBA frame in a QImage itself: pyqtgraph's ndarray_to_qimage passes ``int(sip.voidptr(arr))``,
    for which PyQt6 6.11 keeps about 100 bytes per call (memory creeping up under Render Continuously);
    passing the sip.voidptr itself keeps nothing. The QImage shares the array's memory, so the item keeps
    the array referenced for as long as the QImage lives."""

    def __init__(self):
        super().__init__(axisOrder="row-major")
        self.last_paint_ms = 0.0
        self._qimage_array = None  # the array the QImage reads from
        self.painted = None  # called after each paint (FrameView.when_painted)

    def render(self):
        img = self.image
        if (img is None or img.ndim != 3 or img.shape[2] != 4 or img.dtype != np.uint8 or self.levels is not None
                or self.lut is not None or not img.flags.c_contiguous):
            return super().render()
        h, w = img.shape[:2]
        self._qimage_array = img
        self.qimage = QImage(sip.voidptr(img), w, h, img.strides[0], QImage.Format.Format_RGBA8888)
        self._renderRequired = False
        self._unrenderable = False

    def paint(self, painter, *args):
        t0 = time.perf_counter()
        super().paint(painter, *args)
        self.last_paint_ms = (time.perf_counter() - t0) * 1e3
        if self.painted is not None:
            self.painted()


class PanZoomViewBox(pg.ViewBox):
    """For the Julia view: drags and wheel turns become requests in image pixels instead of moving the
    view; the image itself re-renders at the new centre / zoom."""

    panRequested = pyqtSignal(float, float)  # dx, dy in image pixels
    zoomRequested = pyqtSignal(float, float, float)  # factor, px, py (image pixel under the cursor)

    def mouseDragEvent(self, ev, axis=None):  # noqa: N802
        if ev.button() != Qt.MouseButton.LeftButton:
            ev.ignore()
            return
        ev.accept()
        d = self.mapSceneToView(ev.scenePos()) - self.mapSceneToView(ev.lastScenePos())
        if d.x() or d.y():
            self.panRequested.emit(d.x(), d.y())

    def wheelEvent(self, ev, axis=None):  # noqa: N802
        ev.accept()
        p = self.mapSceneToView(ev.scenePos())
        # pixel i covers [i, i + 1) in view coordinates; the mapping's pixel coordinate is its corner
        self.zoomRequested.emit(1.0015 ** ev.delta(), p.x() - 0.5, p.y() - 0.5)


class FrameView(pg.GraphicsView):
    """Shows Frames. ``interactive`` views pan/zoom the ViewBox; a PanZoomViewBox emits requests."""

    def __init__(self, viewbox: pg.ViewBox | None = None):
        super().__init__()
        self.vb = viewbox or pg.ViewBox()
        self.vb.setAspectLocked(True)
        self.vb.invertY(True)
        self.vb.setMenuEnabled(False)
        self.vb.setDefaultPadding(0.0)
        self.setCentralItem(self.vb)
        self.item = FrameImageItem()
        self.item.painted = self._painted
        self._after_paint: list = []
        self._paint_wait = QTimer(self, singleShot=True, interval=PAINT_WAIT_MS)
        self._paint_wait.timeout.connect(self._painted)
        self.vb.addItem(self.item)
        self.frame = None
        self._shape = None
        self.setBackground((40, 40, 44))  # not black, so a black image shows its edges

    def show_frame(self, frame) -> float:
        """Display the frame's array as it is; returns the milliseconds it took (plus the last paint)."""
        t0 = time.perf_counter()
        self.item.setImage(frame.image, autoLevels=False, levels=None)
        self.frame = frame
        if frame.image.shape != self._shape:
            self._shape = frame.image.shape
            self.reset_view()
        return (time.perf_counter() - t0) * 1e3 + self.item.last_paint_ms

    def when_painted(self, callback) -> None:
        """Call ``callback`` once the frame now set is painted; at once when this view is hidden, and after
        PAINT_WAIT_MS at the latest (a minimised window or an image panned out of view never paints)."""
        if not self.isVisible():
            callback()
            return
        self._after_paint.append(callback)
        self._paint_wait.start()

    def _painted(self) -> None:
        self._paint_wait.stop()
        callbacks, self._after_paint = self._after_paint, []
        for callback in callbacks:
            callback()

    def reset_view(self) -> None:
        """Fit the whole image, and keep fitting it as the window resizes (until the user zooms or pans
        the ViewBox, which turns auto-range off as usual in pyqtgraph)."""
        self.vb.enableAutoRange(enable=True)
        if self._shape is not None:
            h, w = self._shape[:2]
            self.vb.setRange(QRectF(0, 0, w, h), padding=0, disableAutoRange=False)


class RenderView(QTabWidget):
    """A tab per render kind of the registry (a kind that pans and zooms gets a PanZoomViewBox: ``boxes``).
    ``tabChangedTo(name)`` says which renderer is shown."""

    tabChangedTo = pyqtSignal(str)

    def __init__(self):
        from kernels.registry import RENDERABLES

        super().__init__()
        self.NAMES = tuple(r.name for r in RENDERABLES)
        self.views: dict[str, FrameView] = {}
        self.boxes: dict[str, PanZoomViewBox] = {}
        for i, r in enumerate(RENDERABLES):
            if r.pan_zoom:
                self.boxes[r.name] = PanZoomViewBox()
            self.views[r.name] = FrameView(self.boxes.get(r.name))
            self.addTab(self.views[r.name], r.title)
            self.setTabToolTip(i, r.tip)
        self.currentChanged.connect(lambda i: self.tabChangedTo.emit(self.NAMES[i]))

    def view(self, name: str) -> FrameView:
        return self.views[name]

    def current_name(self) -> str:
        return self.NAMES[self.currentIndex()]

    def select(self, name: str) -> None:
        self.setCurrentIndex(self.NAMES.index(name))
