"""The render worker: owns the renderers, coalesces requests, hands frames to the GUI one at a time (its
own QThread, queued signals only)."""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections import deque

from PyQt6.QtCore import QObject, Qt, QTimer, pyqtSignal, pyqtSlot

from kernels.backend.child import Cancelled, SimulatorProcess
from kernels.errors import InputError
from kernels.harness.frames import Queued
from kernels.service.first_frame import first_frame
from kernels.service.render import (compile_gpu_kernel, default_twin, gpu_kernel_key, quick_twin, shipped_image_for,
                                    start_frame, twin_cached, warm_renderers)
from raytracer_app.gui.common.run_on import resources_for, run_on
from raytracer_app.gui.common.workers import COMPUTE_LOCK, describe

COMPILE_AFTER_IDLE_S = 0.3  # numba's background compile starts once no frame came for this long
IDLE_POLL_S = 0.05


class RenderWorker(QObject):
    """Renders RenderRequests and runs CompareRequests in its own thread.

    Coalescing: ``submit`` overwrites one pending slot, so only the newest request is rendered. At most
    one result is in flight to the GUI, which calls ``ack()`` once the frame is shown, so the GUI never has
    a queue of frames to work through. The worker may render one frame ahead meanwhile: a result that
    finishes while another awaits its ack is held and delivered on that ack, and nothing more is rendered
    until then. So the GPU renders frame N+1 while the GUI paints frame N (the renderers keep three host
    buffers for this: shown, held and rendering).

    Handing over: when a finished frame may go to the GUI and another request waits, the worker first
    queues that request's GPU work (an untimed frame is launched and copied back asynchronously, see
    ``start_frame``) and only then hands the finished frame over. Both threads need the GIL, and the GUI
    holds it through a whole repaint (PyQt keeps it in C++ calls): a launch started after the hand-over
    would wait for the repaint, and the GPU would idle through it."""

    frameReady = pyqtSignal(object, object)  # Frame, RenderRequest
    renderFailed = pyqtSignal(str, object)  # message, request
    compareReady = pyqtSignal(object, object)  # (global Frame, constant Frame), CompareRequest
    compareFailed = pyqtSignal(str, object)
    started = pyqtSignal(object)  # the RenderRequest or CompareRequest now running (not a queued GPU frame)
    cancelled = pyqtSignal(object)  # the request or job whose run was cancelled
    _wake = pyqtSignal()
    _prewarm = pyqtSignal(object)

    def __init__(self):
        super().__init__()
        self._lock = threading.Lock()
        self._pending = None
        self._jobs: deque = deque()
        self._remote_worker = None  # (client, [address]) drawing this window's frames on a cluster
        self._running = False  # a drain is scheduled or running
        self._unacked = False  # a result was delivered to the GUI and awaits ack()
        self._held = None  # (signal, args): a result finished while another awaited its ack
        self._handoff = None  # (signal, args): to emit as soon as the next request's GPU work is queued
        self._renderers: dict = {}
        self._cancel = threading.Event()  # set: end the running request (at once on the simulator)
        self.sim = SimulatorProcess()  # simulator renders run in this child, so they can be ended
        # a cold start on the host: each kind's first frames take its quickest twin while its default twin
        # compiles in this child (kernels/service/render.py); kinds whose default twin is ready
        self.warmer = SimulatorProcess(simulate=False, name="kernel-warm-up")
        self._ready: set[str] = set()
        self._drawn: set[tuple] = set()  # (kind, backend) with a kernel frame drawn: no more loading to say
        self._warming = False
        # a cold start on a GPU: (kind, memory or precision, backend) whose numba kernel is compiled here, or
        # compiling while the kernel's shipped image draws (kernels/service/render.py)
        self._gpu_ready: set[tuple] = set()
        self._gpu_compiling: set[tuple] = set()
        self._last_frame_at = 0.0  # when the last local frame completed: numba's background compile waits for a pause
        self._stopped = threading.Event()
        self._preview_first = True  # the first request is answered by the fast start's preview first
        # what the first frame needed (numba, numba.cuda), noted before the next frame, rendered ahead,
        # starts loading more
        self.first_frame_loaded: tuple | None = None
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
        """The GUI has handled the last result: a held one is delivered, and the next request may run."""
        with self._lock:
            held, self._held = self._held, None
            self._unacked = held is not None
            if held is not None:
                held = self._hand_over_locked(held)
            self._schedule_locked()
        if held is not None:  # from the event loop, not from inside the caller's slot
            signal, args = held
            QTimer.singleShot(0, lambda: signal.emit(*args))

    def prewarm(self, request) -> None:
        """Get the kernel of RenderRequest ``request`` ready now, on the worker thread, by rendering a tiny
        copy of it (the CPU twin loads from numba's cache, a GPU kernel compiles or loads). Not on the
        simulator, whose renders run in a child process."""
        if not request.backend.is_simulator:
            self._prewarm.emit(request)

    def idle(self) -> bool:
        with self._lock:
            return not (self._running or self._unacked or self._held or self._pending is not None or self._jobs)

    def cancel(self) -> None:
        """Drop waiting requests and end the running one (a simulator render at once; a CPU or GPU kernel
        cannot be interrupted, its result is dropped)."""
        with self._lock:
            self._pending = None
            self._jobs.clear()
            if self._running:
                self._cancel.set()

    def _schedule_locked(self) -> None:
        if not self._running and self._held is None and (self._pending is not None or self._jobs):
            self._running = True
            self._wake.emit()

    def _hand_over_locked(self, result):
        """``result`` may go to the GUI now: returns it to emit at once, or None when the worker is about to
        take the next request and will emit it once that request's GPU work is queued."""
        if self._running or (self._pending is None and not self._jobs):
            return result
        self._handoff = result
        return None

    def _deliver(self, signal, *args) -> None:
        """Report a finished request: to the GUI now, or held until the GUI acks the result before it."""
        with self._lock:
            self._running = False
            now = None
            if not self._unacked:
                self._unacked = True
                now = self._hand_over_locked((signal, args))
            else:
                self._held = (signal, args)
            self._schedule_locked()
        if now is not None:
            now[0].emit(*now[1])

    def _emit_handoff(self) -> None:
        with self._lock:
            handoff, self._handoff = self._handoff, None
        if handoff is not None:
            handoff[0].emit(*handoff[1])

    # ------------------------------------------------------------------ worker thread
    @pyqtSlot(object)
    def _warm(self, request) -> None:
        with COMPUTE_LOCK:
            warm_renderers(self._renderers, request)

    @pyqtSlot()
    def _drain(self) -> None:
        with self._lock:
            job = self._jobs.popleft() if self._jobs else None
            request = None if job else self._pending
            if job is None:
                self._pending = None
            if job is None and request is None:
                self._running = False
            else:
                self._cancel.clear()
        if job is None and request is None:
            self._emit_handoff()
            return
        if job is not None:
            self._emit_handoff()
            self.started.emit(job)
            self._compare(job)
        else:
            self._render(request)

    def _render_frame(self, r, repeats=None, shipped=None):
        return self._start_frame(r, repeats, shipped)()

    # ------------------------------------------------------------------ a cold start on the host
    def _twin(self, r):
        """The host twin to draw ``r`` with: the quick one while the default one is neither compiled here nor in
        numba's cache (None: the renderer's default; a GPU's kernels have no twins)."""
        if not r.backend.is_host or r.kind in self._ready:
            return None
        if twin_cached(r.kind, default_twin(r.kind)):
            self._ready.add(r.kind)
            return None
        return quick_twin(r.kind)

    # ------------------------------------------------------------------ a cold start on a GPU
    def _shipped_image(self, r) -> bool:
        """Whether ``r``'s frame comes from its kernel's shipped image: numba's kernel is not ready in this
        process yet, and an image runs on this GPU."""
        if not r.backend.is_gpu or (*gpu_kernel_key(r), r.backend) in self._gpu_ready:
            return False
        return shipped_image_for(r) is not None

    def _compile_in_background(self, r) -> None:
        """In a thread, once a frame came from the shipped image: numba compiles (or loads) the kernel, which
        draws from the next frame on. A failure is left to that frame to report."""
        key = (*gpu_kernel_key(r), r.backend)
        if key in self._gpu_compiling or key in self._gpu_ready:
            return
        self._gpu_compiling.add(key)

        def compile_kernel():
            # numba's compile holds the GIL for seconds: under Render Continuously it starved the image's
            # frames (70-90 a second against the bare loop's 560-640 on an H200), so it waits for a pause
            while time.monotonic() - self._last_frame_at < COMPILE_AFTER_IDLE_S:
                time.sleep(IDLE_POLL_S)  # sleeping lets the frames have the GIL
            try:
                compile_gpu_kernel(r)
            except Exception:  # noqa: BLE001 - numba's own frame reports it
                pass
            self._gpu_ready.add(key)

        threading.Thread(target=compile_kernel, name="kernel-compile", daemon=True).start()

    @property
    def gpu_kernels_ready(self) -> frozenset:
        """(kind, memory or precision, backend) whose numba kernel this process has compiled or loaded: from
        the next frame on, numba's kernel draws them rather than a shipped image."""
        return frozenset(self._gpu_ready)

    def loading(self, r) -> str:
        """What the first frame of ``r``'s kind waits for, in words for the status line ('' once a kernel frame
        of it was drawn): compiling, with "first run only" when numba's cache does not hold it, or loading."""
        if r.backend.is_simulator or (r.kind, r.backend) in self._drawn:
            return ""
        if not r.backend.is_host:
            if self._shipped_image(r):
                return f"loading the {r.kind} kernel's shipped image (numba compiles it meanwhile)"
            return f"compiling or loading the {r.kind} CUDA kernel (first frame only)"
        twin = self._twin(r) or default_twin(r.kind)
        if twin_cached(r.kind, twin):
            return f"loading the {r.kind} CPU kernel from numba's cache"
        return f"compiling the {r.kind} CPU kernel (first run only: numba's cache does not hold it yet)"

    def _warm_the_rest(self, first: str) -> None:
        """In a thread, once a quick twin's frame is shown: compile the default twins in the warm-up child,
        ``first``'s kind first; each is used from its next frame on."""
        if self._warming:
            return
        self._warming = True
        from kernels.registry import RENDERABLES

        kinds = [first] + [k.name for k in RENDERABLES if k.name != first]

        def warm():
            for kind in kinds:
                if kind in self._ready or self._stopped.is_set():
                    continue
                try:
                    self.warmer.call("kernels.service.render:warm_twin_job", (kind, default_twin(kind)),
                                     self._stopped.is_set)
                    self._ready.add(kind)
                except Exception:  # noqa: BLE001 - ended, or failed: the quick twin keeps drawing
                    return
            self.warmer.end()  # its work is in numba's cache now

        threading.Thread(target=warm, name="kernel-warm-up", daemon=True).start()

    def end_children(self) -> None:
        """End the simulator's and the warm-up's child processes (closing)."""
        self._stopped.set()
        self.sim.end()
        self.warmer.end()

    def _start_frame(self, r, repeats=None, shipped=None):
        """Begin ``r`` (an untimed GPU frame is queued at once); the returned call completes it, and is a
        ``Queued`` when the frame's GPU work is queued already. ``shipped=False``: numba's kernel draws it
        (a comparison), else the kernel's shipped image where numba's is not ready. With *Run on* a cluster,
        the frame is drawn on one of its workers."""
        client = run_on().client
        if client is not None:
            return lambda: self._remote_frame(client, r, repeats)
        if r.backend.is_simulator:
            return lambda: self.sim.call("render", (r, repeats), self._cancel.is_set)
        twin = self._twin(r)
        shipped = shipped is not False and self._shipped_image(r)
        with COMPUTE_LOCK:
            finish = start_frame(self._renderers, r, repeats, twin, shipped)

        def complete():
            with COMPUTE_LOCK:
                frame = finish()
            if self._cancel.is_set():
                raise Cancelled()
            self._drawn.add((r.kind, r.backend))
            self._last_frame_at = time.monotonic()
            if twin is not None:  # drawn with the quick twin: the default one compiles meanwhile
                self._warm_the_rest(r.kind)
            if shipped:  # drawn from the shipped image (or by numba where it could not): numba compiles
                self._compile_in_background(r)
            return frame

        return Queued(complete) if isinstance(finish, Queued) else complete

    def _remote_frame(self, client, r, repeats):
        """``r`` drawn on the cluster, always by the same worker (it keeps its compiled kernels and buffers):
        the frame's time is the round trip seen here, so the status line's time outside the kernel counts
        the transfer; its ``meta`` names the worker."""
        import dataclasses

        from kernels.cluster import remote

        if repeats is not None:
            r = dataclasses.replace(r, repeats=repeats)
        resources = resources_for(client, r.backend)
        if self._remote_worker is None or self._remote_worker[0] is not client:
            chosen = [w.address for w in remote.workers(client)
                      if all(w.resources.get(k, 0) >= n for k, n in (resources or {}).items())]
            self._remote_worker = (client, chosen[:1] or None)
        drawn = remote.render(client, r, resources, self._remote_worker[1])
        if self._cancel.is_set():
            raise Cancelled()
        frame = drawn.frame
        frame.meta = {**frame.meta, "drawn on": drawn.worker}
        return dataclasses.replace(frame, frame_ms=max(frame.frame_ms, drawn.round_trip_ms), frame_timing=None)

    def _render(self, request) -> None:
        complete = None
        try:
            if not self._preview_first:
                complete = self._start_frame(request)
        except Exception as exc:  # noqa: BLE001 - a value refused before the launch: reported as the render's failure
            complete = _raiser(exc)
        finally:  # the frame before this one goes to the GUI while the GPU draws this one,
            self._emit_handoff()  # and before this request's `started`
            if not isinstance(complete, Queued):  # a queued frame is done within a frame's time: one
                self.started.emit(request)  # signal less to the GUI on every continuous frame
        if self._preview_first:
            self._preview_first = False
            preview = self._preview(request)
            if preview is not None:
                with self._lock:  # the kernel's own frame follows, unless a newer request replaced it
                    if self._pending is None:
                        self._pending = request
                self._note_first_frame()
                self._deliver(self.frameReady, preview, request)
                return
        try:
            frame = (complete or self._start_frame(request))()
        except Cancelled:
            self._deliver(self.cancelled, request)
            return
        except Exception as exc:  # noqa: BLE001 - reported to the GUI; the next request renders normally
            if not isinstance(exc, InputError):
                traceback.print_exc()
            self._deliver(self.renderFailed, describe(exc), request)
            return
        self._note_first_frame()
        self._deliver(self.frameReady, frame, request)

    def _note_first_frame(self) -> None:
        if self.first_frame_loaded is None:
            self.first_frame_loaded = tuple(m for m in ("numba", "numba.cuda") if m in sys.modules)

    def _preview(self, request):
        """The fast start's preview of the first request (kernels/service/first_frame.py), or None."""
        try:
            return first_frame(request)
        except Exception:  # noqa: BLE001 - only a head start: the kernel's frame reports any problem
            traceback.print_exc()
            return None

    def _compare(self, job) -> None:
        try:
            frames = tuple(self._render_frame(job.with_memory(m), job.repeats, shipped=False) for m in job.memories)
        except Cancelled:
            self._deliver(self.cancelled, job)
            return
        except Exception as exc:  # noqa: BLE001
            if not isinstance(exc, InputError):
                traceback.print_exc()
            self._deliver(self.compareFailed, describe(exc), job)
            return
        self._deliver(self.compareReady, frames, job)


def _raiser(exc: BaseException):
    def complete():
        raise exc

    return complete
