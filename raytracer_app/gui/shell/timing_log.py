"""The session's timings: every timing row for File > Export Timings CSV (TimingLog), and the frames
per second the status line shows (FpsMeter). No widgets here."""

from __future__ import annotations

import time
from collections import deque

from PyQt6.QtCore import QObject, pyqtSignal

from kernels.harness.rows import Row
from kernels.harness.table import write_csv as write_rows_csv


class TimingLog(QObject):
    """The session's timing rows for File > Export Timings CSV: every benchmark and compare row, and the
    last FRAME_WINDOW frame rows (single renders), so Render Continuously cannot grow memory without bound."""

    rowsAdded = pyqtSignal(int)  # total number of rows held
    FRAME_WINDOW = 1000

    def __init__(self):
        super().__init__()
        self.kept: list[Row] = []  # benchmark and compare rows, all of them
        self.frames: deque[Row] = deque(maxlen=self.FRAME_WINDOW)
        self.frames_seen = 0

    @property
    def rows(self) -> list[Row]:
        return self.kept + list(self.frames)

    def add(self, *rows: Row) -> None:
        self.kept.extend(rows)
        self.rowsAdded.emit(len(self.kept) + len(self.frames))

    def add_frame(self, row: Row) -> None:
        """One displayed frame's row; only the last FRAME_WINDOW are held."""
        self.frames.append(row)
        self.frames_seen += 1
        self.rowsAdded.emit(len(self.kept) + len(self.frames))

    def describe(self) -> str:
        dropped = self.frames_seen - len(self.frames)
        text = f"{len(self.kept)} benchmark/compare row(s) and the last {len(self.frames)} of {self.frames_seen} rendered frame(s)"
        return text + (f"; {dropped} older frame rows are not kept" if dropped else "")

    def write_csv(self, path, option: str = "Export Timings CSV"):
        return write_rows_csv(self.rows, path, option)


class FpsMeter:
    """Frames per second over the frames displayed in the last ``window`` seconds."""

    def __init__(self, window: float = 1.0):
        self.window = window
        self.times: deque[float] = deque()

    def tick(self, now: float | None = None) -> None:
        now = time.perf_counter() if now is None else now
        self.times.append(now)
        # keep two frames at least, so frames slower than the window still give a figure (e.g. 0.3 fps)
        while len(self.times) > 2 and now - self.times[0] > self.window:
            self.times.popleft()

    def fps(self) -> float | None:
        if len(self.times) < 2 or self.times[-1] == self.times[0]:
            return None
        return (len(self.times) - 1) / (self.times[-1] - self.times[0])
