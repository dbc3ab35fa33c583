"""Worker threads: the render worker (owns the renderers, coalesces requests) and the benchmark worker.

Both live in their own QThread and talk to the GUI through queued signals only. One lock serialises
compute calls across workers: the CUDA simulator swaps module globals while a kernel runs, so two
threads must never launch at once (and on the CPU two parallel kernels would only slow each other).
"""

from __future__ import annotations

import threading
import traceback
from collections import deque
from dataclasses import dataclass

from PyQt6.QtCore import QObject, Qt, QThread, pyqtSignal, pyqtSlot

from kernels import bench
from kernels.errors import InputError
from raytracer_app.gui.child_process import (Cancelled, ChildFailed, ChildProcess, first_frame_by_driver, render_frame,
                                             run_bench, warm_renderers)

COMPUTE_LOCK = threading.RLock()
ORPHANS: list = []  # worker threads still inside a kernel when their window closed (see run_gui)


def describe(exc: BaseException) -> str:
    """One line for the user: InputError messages as they are, anything else with its type."""
    if isinstance(exc, (InputError, ChildFailed)):  # a child's message is already one line
        return str(exc)
    return bench.one_line(exc)  # numba's errors span many lines, with terminal colours


class RenderWorker(QObject):
    """Renders RenderRequests and runs CompareRequests in its own thread.

    Coalescing: ``submit`` overwrites one pending slot, so only the newest request is rendered. At most
    one result is in flight to the GUI: after emitting, the worker waits for ``ack()`` (the GUI calls it
    once the frame is shown), so the GUI never has a queue of frames to work through."""

    frameReady = pyqtSignal(object, object)  # Frame, RenderRequest
    renderFailed = pyqtSignal(str, object)  # message, request
    compareReady = pyqtSignal(object, object)  # (global Frame, constant Frame), CompareRequest
    compareFailed = pyqtSignal(str, object)
    started = pyqtSignal(object)  # the RenderRequest or CompareRequest now running
    cancelled = pyqtSignal(object)  # the request or job whose run was cancelled
    _wake = pyqtSignal()
    _prewarm = pyqtSignal(object)

    def __init__(self, first_frame_child: ChildProcess | None = None):
        super().__init__()
        self._lock = threading.Lock()
        self._pending = None
        self._jobs: deque = deque()
        self._busy = False  # a drain is scheduled or running, or a result awaits ack()
        self._renderers: dict = {}
        self._cancel = threading.Event()  # set: end the running request (at once on the simulator)
        self.sim = ChildProcess(simulator=True)  # simulator renders run in this child, so they can be ended
        # the CPU backend's first frame comes from this child, started before the window was built (see
        # child_process); it is ended after that frame
        self.first_frame_child = first_frame_child
        self._wake.connect(self._drain, Qt.ConnectionType.QueuedConnection)
        self._prewarm.connect(self._warm, Qt.ConnectionType.QueuedConnection)

    # ------------------------------------------------------------------ called from the GUI thread
    def submit(self, request) -> None:
        """Render ``request`` next, dropping any older request still waiting."""
        with self._lock:
            self._pending = request
            self._schedule_locked()

    def submit_job(self, job) -> None:
        """Queue a job that must not be dropped (a memory comparison)."""
        with self._lock:
            self._jobs.append(job)
            self._schedule_locked()

    def ack(self) -> None:
        """The GUI has handled the last result: the next request may run."""
        with self._lock:
            self._busy = False
            self._schedule_locked()

    def prewarm(self, request) -> None:
        """Get the kernel of RenderRequest ``request`` ready now, on the worker thread, by rendering a tiny
        copy of it: the CPU twin loads from numba's cache (about 0.3 s), a GPU kernel compiles or loads,
        while the GUI thread builds the window, and the first frame then only runs the kernel. Skipped when
        that first frame will launch a saved kernel image through the driver instead (loading numba.cuda
        now would only slow it down), or will come from the first-frame child: the window asks again after
        its first frame. Not on the simulator, whose renders run in a child process."""
        if not request.backend.is_simulator:
            self._prewarm.emit(request)

    def idle(self) -> bool:
        with self._lock:
            return not self._busy and self._pending is None and not self._jobs

    def cancel(self) -> None:
        """Drop waiting requests and end the running one (a simulator render at once; a CPU or GPU kernel
        cannot be interrupted, its result is dropped)."""
        with self._lock:
            self._pending = None
            self._jobs.clear()
            if self._busy:
                self._cancel.set()

    def _schedule_locked(self) -> None:
        if not self._busy and (self._pending is not None or self._jobs):
            self._busy = True
            self._wake.emit()

    # ------------------------------------------------------------------ worker thread
    @pyqtSlot(object)
    def _warm(self, request) -> None:
        if self.first_frame_child is not None and request.backend.is_host:
            return  # the child is loading the twins: doing it here too would hold the GIL the window needs
        with COMPUTE_LOCK:
            try:
                if first_frame_by_driver(self._renderers, request):
                    return
            except Exception:  # noqa: BLE001 - only a head start: the real frame reports any failure
                return
            warm_renderers(self._renderers, request)

    @pyqtSlot()
    def _drain(self) -> None:
        with self._lock:
            job = self._jobs.popleft() if self._jobs else None
            request = None if job else self._pending
            if job is None:
                self._pending = None
            if job is None and request is None:
                self._busy = False
                return
            self._cancel.clear()
        self.started.emit(job or request)
        if job is not None:
            self._compare(job)
        else:
            self._render(request)

    def _render_frame(self, r, memory=None, repeats=None):
        if r.backend.is_simulator:
            return self.sim.call("render", (r, memory, repeats), self._cancel.is_set)
        if self.first_frame_child is not None and r.backend.is_host:
            frame = self._render_in_first_frame_child(r, memory, repeats)
            if frame is not None:
                return frame
        with COMPUTE_LOCK:
            frame = render_frame(self._renderers, r, memory, repeats)
        if self._cancel.is_set():
            raise Cancelled()
        return frame

    def _render_in_first_frame_child(self, r, memory, repeats):
        """The first CPU frame, from the child that loaded the twins while the window was built; None when
        the child failed (this thread then renders it). The child is ended either way."""
        child, self.first_frame_child = self.first_frame_child, None
        try:
            return child.call("render", (r, memory, repeats), self._cancel.is_set)
        except ChildFailed:
            return None
        finally:
            child.end()

    def _render(self, request) -> None:
        try:
            frame = self._render_frame(request)
        except Cancelled:
            self.cancelled.emit(request)
            return
        except Exception as exc:  # reported to the GUI; the next request renders normally
            if not isinstance(exc, InputError):
                traceback.print_exc()
            self.renderFailed.emit(describe(exc), request)
            return
        self.frameReady.emit(frame, request)

    def _compare(self, job) -> None:
        try:
            frames = tuple(self._render_frame(job.render, memory=m, repeats=job.repeats) for m in ("global", "constant"))
        except Cancelled:
            self.cancelled.emit(job)
            return
        except Exception as exc:
            if not isinstance(exc, InputError):
                traceback.print_exc()
            self.compareFailed.emit(describe(exc), job)
            return
        self.compareReady.emit(frames, job)


@dataclass
class BenchJob:
    """One Run of a benchmark panel: problems are built in the worker (they can be large)."""

    spec: object  # kernels.descriptor.Algorithm
    backend: object
    sizes: list[int]
    options: dict
    launches: list[bench.Launch]
    variant_names: list[str]
    repeats: int
    want_peak: bool = True


def _locked(run):
    def locked_run(*args, **kwargs):
        with COMPUTE_LOCK:
            return run(*args, **kwargs)

    return locked_run


class BenchWorker(QObject):
    """Runs BenchJobs through ``kernels.bench.run`` in its own thread, streaming rows as they come."""

    started = pyqtSignal(object)  # the job
    peakReady = pyqtSignal(object)  # bench.Peak
    rowReady = pyqtSignal(object)  # bench.Row
    progress = pyqtSignal(int, int)  # done, total
    finished = pyqtSignal(object, bool)  # rows, stopped
    failed = pyqtSignal(str)
    _start = pyqtSignal(object)

    def __init__(self):
        super().__init__()
        self._stop = threading.Event()
        self._running = threading.Event()
        self.sim = ChildProcess(simulator=True)  # simulator runs happen in this child: Stop ends it at once
        self._start.connect(self._run, Qt.ConnectionType.QueuedConnection)

    def start(self, job: BenchJob) -> None:
        self._stop.clear()
        self._running.set()
        self._start.emit(job)

    def stop(self) -> None:
        self._stop.set()

    def running(self) -> bool:
        return self._running.is_set()

    def _relay(self, kind: str, value) -> None:
        if kind == "peak":
            self.peakReady.emit(value)
        elif kind == "row":
            self.rowReady.emit(value)
        elif kind == "progress":
            self.progress.emit(*value)

    @pyqtSlot(object)
    def _run(self, job: BenchJob) -> None:
        rows: list = []
        try:
            self.started.emit(job)
            fields = dict(algorithm=job.spec.name, backend=job.backend, sizes=job.sizes, options=job.options,
                          launches=job.launches, variant_names=job.variant_names, repeats=job.repeats,
                          want_peak=job.want_peak)
            if job.backend.is_simulator:
                rows = self.sim.call("bench", fields, self._stop.is_set, self._relay)
            else:
                rows = run_bench({**fields, "wrap_run": _locked}, self._relay, self._stop.is_set)
        except Cancelled:
            pass
        except Exception as exc:  # a bad value (InputError naming the constraint) or a broken module
            if not isinstance(exc, InputError):
                traceback.print_exc()
            self.failed.emit(describe(exc))
        finally:
            stopped = self._stop.is_set()
            self._running.clear()
            self.finished.emit(rows, stopped)


class WorkerThread(QThread):
    """A QThread running one worker object's event loop; ``shutdown`` quits and joins it."""

    def __init__(self, worker: QObject, name: str):
        super().__init__()
        self.setObjectName(name)
        self.worker = worker
        worker.moveToThread(self)

    def shutdown(self, timeout_ms: int = 30000) -> bool:
        self.quit()
        done = self.wait(timeout_ms)
        if done:
            for child in (getattr(self.worker, "sim", None), getattr(self.worker, "first_frame_child", None)):
                if child is not None:
                    child.end()
        return done
