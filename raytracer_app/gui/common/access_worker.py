"""The Access tool's worker: plans a traced run (kernels.access.plan: the checks, in this process, no numba),
runs it in its own simulator child process (kernels.access.trace with ``child=``), so that Stop ends it within
a second, and reads the kernels' source for the listing, all off the GUI thread."""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from PyQt6.QtCore import pyqtSignal, pyqtSlot

from kernels.backend.child import Cancelled, SimulatorProcess
from kernels.errors import InputError
from raytracer_app.gui.common.workers import JobWorker, describe


@dataclass(frozen=True)
class TraceAsk:
    """What to trace: a built-in GPU variant of a target, at a size and block (None: the trace's defaults)."""

    target: str
    variant: str
    n: int | None = None
    block: int | None = None
    blocks: int | None = None  # blocks traced per launch (None: the trace's default)
    options: tuple = ()  # (name, value) pairs: the target's options (None of them: the simulator's defaults)

    @property
    def label(self) -> str:
        return f"{self.target} {self.variant}"


class AccessWorker(JobWorker):
    """``traced(ask, result, listings)``: the AccessResult and, per kernel name, its source listing;
    ``progress(text)``; ``failed(ask, line)``; ``finished(ask, stopped)``. With ``lines``, before ``traced``:
    ``linesReady(ask, predicted, references, refused)``, per kernel name its predicted figures per line
    (kernels.counters.lines.from_access) and the variant's shipped per-line references (a file read)."""

    traced = pyqtSignal(object, object, object)
    linesReady = pyqtSignal(object, object, object, object)
    progress = pyqtSignal(str)
    failed = pyqtSignal(object, str)
    finished = pyqtSignal(object, bool)

    def __init__(self, lines: bool = False):
        super().__init__()
        self.lines = lines
        self.sim = SimulatorProcess(name="access-trace")  # Stop ends this child at once

    @pyqtSlot(object)
    def _run(self, ask: TraceAsk) -> None:
        from kernels.access import plan, trace
        from raytracer_app.gui.common.access_listing import source_listing

        try:
            extra = {"blocks": ask.blocks} if ask.blocks else {}
            job = plan(ask.target, ask.variant, n=ask.n, block=ask.block, options=dict(ask.options), **extra)
            result = trace(job, self._stop.is_set, self._progress, child=self.sim)
            listings = {k.name: source_listing(k) for k in result.kernels}
            if self.lines:
                self._lines(ask, result)
            self.traced.emit(ask, result, listings)
        except Cancelled:
            pass
        except Exception as exc:  # noqa: BLE001 - bad input (one line) or a failure in the child (one line)
            if not isinstance(exc, InputError):
                traceback.print_exc()
            self.failed.emit(ask, describe(exc))
        finally:
            self._running.clear()
            self.finished.emit(ask, self._stop.is_set())

    def _lines(self, ask: TraceAsk, result) -> None:
        from kernels.counters.lines import from_access
        from kernels.inspector.line_references import load

        predicted = {k.name: from_access(k) for k in result.kernels}
        try:
            found, refused = load(ask.target, ask.variant)
        except OSError as exc:
            found, refused = [], [describe(exc)]
        self.linesReady.emit(ask, predicted, found, refused)

    def _progress(self, value) -> None:
        kernel, done, total = value
        self.progress.emit(f"tracing {kernel}: block {done} of {total}")
