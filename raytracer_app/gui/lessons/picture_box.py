"""A lesson step's warp request, drawn below its explanation (issue 36): the sides of its picture
(lessons/pictures.py) traced in the simulator's child process by the Access tool's worker, one after the other,
each drawn as the Access tool draws a request; kept per (variant, options), so going back to a step draws at
once. Steps without a picture show nothing here."""

from __future__ import annotations

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QGridLayout, QLabel, QWidget

from raytracer_app.gui.common.access_listing import describe
from raytracer_app.gui.common.access_picture import WarpPicture
from raytracer_app.gui.common.access_worker import AccessWorker, TraceAsk
from raytracer_app.gui.common.workers import WorkerThread
from raytracer_app.gui.lessons import pictures


class LessonPictures(QWidget):
    """``show_step(lesson, step)``; ``accessRequested(target, variant)`` from its 'open in Access' link."""

    accessRequested = pyqtSignal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.results: dict = {}  # (variant, options) -> AccessResult
        self.picture = None  # the Picture shown
        self.target = ""
        self._queue: list[TraceAsk] = []
        self.worker = AccessWorker()
        self.thread = WorkerThread(self.worker, "lesson-access")
        self.worker.traced.connect(self._traced)
        self.worker.failed.connect(lambda ask, text: self.status.setText(f"{ask.label}: {text}"))
        self.worker.finished.connect(lambda *_: self._next())
        self.thread.start()
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.linkActivated.connect(lambda link: self.accessRequested.emit(self.target, link))
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.captions = [QLabel(), QLabel()]
        self.texts = [QLabel(), QLabel()]
        self.drawings = [WarpPicture(), WarpPicture()]
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 6, 0, 0)
        grid.addWidget(self.title, 0, 0, 1, 2)
        grid.addWidget(self.status, 1, 0, 1, 2)
        for k in range(2):
            for w in (self.captions[k], self.texts[k]):
                w.setWordWrap(True)
            self.drawings[k].setMinimumSize(300, 272)
            grid.addWidget(self.captions[k], 2, k)
            grid.addWidget(self.drawings[k], 3, k)
            grid.addWidget(self.texts[k], 4, k)
        self.hide()

    def show_step(self, lesson, step) -> None:
        picture = pictures.picture_for(lesson.name, step)
        self.picture, self.target = picture, lesson.target
        if picture is None:
            self.hide()
            return
        self.show()
        self.title.setText(f"<b>Each warp's request, traced in the CUDA simulator</b>: {picture.title}. "
                           f'<a href="{picture.sides[-1].variant}">Open it in the Access tool</a>')
        self._queue = []
        for k in range(2):
            used = k < len(picture.sides)
            for w in (self.captions[k], self.drawings[k], self.texts[k]):
                w.setVisible(used)
            if used:
                self.captions[k].setText(picture.sides[k].caption)
                self.drawings[k].show_request(None)
                self.drawings[k].empty_text = "tracing…"
                self.texts[k].setText("")
        for side in picture.sides:
            key = (side.variant, side.options)
            if key not in self.results:
                ask = TraceAsk(lesson.target, side.variant, options=side.options)
                if ask not in self._queue:
                    self._queue.append(ask)
        self._draw()
        self.status.setText("tracing…" if self._queue else "")
        if self._queue and not self.worker.running():
            self.worker.start(self._queue.pop(0))

    def _next(self) -> None:
        if self._queue and not self.worker.running():
            self.worker.start(self._queue.pop(0))
        elif not self._queue:
            self.status.setText("")

    def _traced(self, ask, result, listings) -> None:
        self.results[(ask.variant, ask.options)] = result
        self._draw()

    def _draw(self) -> None:
        if self.picture is None:
            return
        for k, side in enumerate(self.picture.sides):
            result = self.results.get((side.variant, side.options))
            if result is None:
                continue
            line = pictures.line_of(result, side)
            request = pictures.first_request(line, side) if line is not None else None
            self.drawings[k].show_request(request)
            self.texts[k].setText("" if request is None else f"{line.file}:{line.line}  {line.source.strip()}<br>"
                                  + describe(request))

    def busy(self) -> bool:
        return self.worker.running()

    def shutdown(self, timeout_ms: int = 500) -> bool:
        self._queue = []
        self.worker.stop()
        return self.thread.shutdown(timeout_ms)
