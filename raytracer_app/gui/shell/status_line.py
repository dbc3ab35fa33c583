"""The main window's status line: backend, kernel time, time outside the kernel, frame time, frames per
second (only under Render Continuously) and image size for the visible tab, and one message at a time: a
message shown for a while (a saved file, an error) or else what is running (the busy text, with Cancel).
A long message is elided in the middle, its whole text in the tooltip. ``build(window)`` makes the widgets,
``update(window, tab)`` fills them in."""

from __future__ import annotations

from PyQt6.QtCore import QSize, Qt, QTimer
from PyQt6.QtWidgets import QLabel, QPushButton, QSizePolicy, QStatusBar


class ElidedLabel(QLabel):
    """A one-line label that shows its text elided in the middle when it does not fit (a path keeps its
    start and its file name), the whole text as its tooltip."""

    def __init__(self, text: str = ""):
        super().__init__()
        self.full = ""
        self.tip = None  # a tooltip of its own (what a figure means), kept: the whole text goes above it
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # never widens the window
        self.setMinimumWidth(40)
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        self.full = text
        self._elide()

    def setToolTip(self, tip: str) -> None:  # noqa: N802 (Qt naming)
        self.tip = tip
        self._elide()

    def text(self) -> str:  # the whole text (what is drawn may be elided: text_shown)
        return self.full

    def setText(self, text: str) -> None:  # noqa: N802 (Qt naming)
        self.set_full_text(text)
        self.updateGeometry()

    def sizeHint(self):  # noqa: N802 (Qt naming) - the whole text's width: it shows whole where there is room
        hint = super().sizeHint()
        return QSize(self.fontMetrics().horizontalAdvance(self.full) + 16, hint.height())

    def minimumSizeHint(self):  # noqa: N802 (Qt naming) - never more than a few letters: the window never widens
        return QSize(40, super().minimumSizeHint().height())

    def text_shown(self) -> str:
        return super().text()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        room = max(self.width() - 4, 10)
        shown = self.fontMetrics().elidedText(self.full, Qt.TextElideMode.ElideMiddle, room)
        super().setText(shown)
        if not self.tip:
            super().setToolTip(self.full)
        else:
            super().setToolTip(self.tip if shown == self.full else f"{self.full}\n\n{self.tip}")


class StatusBar(QStatusBar):
    """One message at a time in one elided label: ``showMessage(text, ms)`` shows ``text`` (for ``ms``, 0:
    until the next) in place of the busy text (``set_busy``), which comes back when it ends. Messages are
    never painted over other text, as QStatusBar's own painted message and a normal widget were."""

    def __init__(self):
        super().__init__()
        self.note = ElidedLabel()
        self.addWidget(self.note, 1)
        self.message = ""
        self.busy = ""
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.clearMessage)
        self.cancel = None  # the Cancel button shown with the busy text (build() sets it)

    def showMessage(self, text: str, timeout: int = 0) -> None:  # noqa: N802 (Qt naming)
        self.message = str(text)
        self.timer.stop()
        if timeout:
            self.timer.start(int(timeout))
        self._refresh()

    def clearMessage(self) -> None:  # noqa: N802 (Qt naming)
        self.message = ""
        self.timer.stop()
        self._refresh()

    def currentMessage(self) -> str:  # noqa: N802 (Qt naming)
        return self.message

    def set_busy(self, text: str) -> None:
        """What runs now ('' when nothing): shown when no message is."""
        if text != self.busy:
            self.busy = text
            self._refresh()

    def shown(self) -> str:
        """The one message the line shows: the message, else the busy text."""
        return self.message or self.busy

    def _refresh(self) -> None:
        self.note.set_full_text(self.shown())
        self.note.setStyleSheet("" if self.message or not self.busy else "color: palette(text)")
        if self.cancel is not None:
            self.cancel.setVisible(bool(self.busy) and not self.message)

KERNEL_TIP = "kernel time (CUDA events on a GPU, wall time elsewhere)"
SAMPLED_KERNEL_TIP = ("kernel time by CUDA events, from the latest timed frame: rendering continuously, a GPU times "
                      "a frame every {every:.0f} ms and renders the frames between untimed, as fast as an "
                      "untimed viewer (timing one costs a 0.2 ms head-start kernel and event waits)")
SIM_KERNEL_TIP = ("one frame's wall time in numba's CUDA simulator, which runs every GPU thread in Python: it says "
                  "nothing about a GPU, and one frame varies with what the simulator sets up; Compare Memory's "
                  "medians over several renders are what to compare memories by")


def build(window) -> None:
    """The status line's labels (window.status[key]), the busy label and Cancel; a timer shows them."""
    bar = StatusBar()
    window.setStatusBar(bar)
    # the figures shrink (elided in the middle, whole in the tooltip) rather than widen the window: a long
    # kernel-time text on a GPU widened a 1024 px view to 1700 px while frames were counted
    window.status = {k: ElidedLabel() for k in ("backend", "kernel", "outside", "frame", "fps", "size")}
    for label in window.status.values():
        label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
    tips = {"backend": "backend and device", "kernel": KERNEL_TIP,
            "outside": "time per frame spent outside the kernel: launch, copy to the host and display",
            "frame": "frame time: render + copy to the host + display", "fps": "frames displayed per second",
            "size": "image size"}
    window.busy_label = bar.note  # the one message label: the busy text when no message covers it
    window.cancel_button = QPushButton("Cancel")
    window.cancel_button.setToolTip("cancel the running render (Render Continuously is switched off)")
    window.cancel_button.clicked.connect(window.cancel_render)
    bar.addWidget(window.cancel_button)
    bar.cancel = window.cancel_button
    window.cancel_button.hide()
    window.busy_timer = QTimer(window)
    window.busy_timer.setInterval(100)
    window.busy_timer.timeout.connect(window._show_busy)
    window.busy_timer.start()
    for key, label in window.status.items():
        label.setToolTip(tips[key])
        label.setStyleSheet("padding: 0 6px; border-left: 1px solid palette(mid)")
        bar.addPermanentWidget(label)


def update(window, tab: str) -> None:
    """What the status line says about ``tab``'s last frame."""
    shown = window.last.get(tab)
    if shown is None:
        for key in ("kernel", "outside", "frame", "fps", "size"):
            window.status[key].setText("")
        return
    frame, request = shown
    if frame.preview:  # what the kernel is doing meanwhile is the busy label's (compiling, loading)
        window.status["kernel"].setText("preview (numpy reference)")
        for key in ("outside", "frame", "fps"):
            window.status[key].setText("")
        window.status["size"].setText("{}x{}".format(*frame.size))
        return
    # an untimed frame (rendering continuously on a GPU) shows the kernel time of the latest timed one
    timed = frame if frame.kernel is not None else window.timed.get(tab)
    display = window.display_ms.get(tab, 0.0)
    if timed is None:
        window.status["kernel"].setText("kernel not timed")
        window.status["outside"].setText("")
    else:
        t = timed.kernel
        if request.backend.is_simulator:  # Python running every thread: nothing a GPU would take
            window.status["kernel"].setText(f"simulated kernel {t.median_ms:.0f} ms (simulator wall time, not a GPU's)")
            window.status["kernel"].setToolTip(SIM_KERNEL_TIP)
        else:
            window.status["kernel"].setText(f"kernel {t.median_ms:.2f} ms ({t.method})")
            window.status["kernel"].setToolTip(KERNEL_TIP if timed is frame else
                                               SAMPLED_KERNEL_TIP.format(every=window.timed_every_s * 1e3))
        outside = timed.outside_kernel_ms if timed is frame else max(0.0, frame.frame_ms - t.median_ms)
        window.status["outside"].setText(f"outside kernel {outside + display:.2f} ms")
    window.status["frame"].setText(f"frame {frame.frame_ms + display:.1f} ms")
    # frames per second only while frames follow one another (Render Continuously): otherwise it would
    # be one over the time between the user's changes
    fps = window.fps.fps() if window.continuous else None
    window.status["fps"].setText("" if not window.continuous else
                                 ("-" if fps is None else f"{fps:.2f}" if fps < 10 else f"{fps:.1f}") + " fps")
    window.status["fps"].setVisible(window.continuous)
    w, h = frame.size
    window.status["size"].setText(f"{w}x{h}")
    where = frame.meta.get("drawn on")  # *Run on* a cluster: its worker drew it; the transfer is outside
    window.status["backend"].setText(f"{request.backend.label}" + (f", drawn on {where}" if where else ""))
