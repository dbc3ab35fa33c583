"""Render and benchmark work in a child process running numba's CUDA simulator, and users' variant files
in a child process on the simulator or the GPU.

The simulator runs every GPU thread in Python: one kernel launch can take minutes and a thread cannot be
interrupted inside it. A process can: ``terminate()`` ends it within ``POLL_S``. The child is started with
the 'spawn' context (a fresh interpreter, no copied Qt state), switches numba to the simulator (unless it
serves a real GPU) before anything imports numba, and serves jobs until it is ended. Results (Frames,
benchmark rows, a user variant's outcome) come back pickled. A job may stream 'tick' messages: with a
watchdog (``call(..., watchdog_s=...)``) a job silent for longer than that is ended, as a user's kernel
that never finishes must be. This module imports neither Qt nor numba.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time

from kernels.backend.simulator import SIM_ENV, quick_thread_switches

POLL_S = 0.05  # how often the parent checks for Stop while the child works


class Cancelled(Exception):
    """The job was stopped; its child process has been ended."""


class ChildFailed(RuntimeError):
    """The job raised in the child; the message is the one line to show."""


class Stalled(RuntimeError):
    """The job sent nothing for longer than its watchdog allowed; its child process has been ended."""

    def __init__(self, seconds: float, what: str = ""):
        super().__init__(f"{what + ': ' if what else ''}stopped by the watchdog: nothing finished within "
                         f"{seconds:g} s (a kernel that never ends?); its process was ended")
        self.seconds = seconds


def _one_line(exc: BaseException) -> str:
    from kernels.errors import InputError

    if isinstance(exc, InputError):
        return str(exc)
    from kernels.harness.bench import one_line

    return one_line(exc)


def _child_main(conn, simulate: bool = True) -> None:
    if simulate:
        os.environ[SIM_ENV] = "1"  # before anything imports numba
        quick_thread_switches()
    else:
        os.environ.pop(SIM_ENV, None)
    from kernels.service.bench import run_bench
    from kernels.service.render import render_frame
    from kernels.user_variants import child_side

    renderers: dict = {}
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):  # the parent has gone
            return
        try:
            if kind == "render":
                result = render_frame(renderers, *payload)
            elif kind == "user":
                result = child_side.serve(payload, lambda k, v: conn.send((k, v)))
            else:
                result = run_bench(payload, lambda k, v: conn.send((k, v)))
            conn.send(("result", result))
        except Exception as exc:
            conn.send(("error", _one_line(exc)))


# ---------------------------------------------------------------------------------------------- parent side
class SimulatorProcess:
    """One simulator child process serving render and benchmark jobs, started on first use (or by
    ``start``) and again after it was ended. ``call`` blocks the calling (worker) thread, never the GUI
    thread. ``simulate=False``: the child uses the real GPU (for user variant files)."""

    def __init__(self, simulate: bool = True, name: str = "cuda-simulator"):
        self._simulate = simulate
        self._name = name
        self._proc = None
        self._conn = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the child now (a no-op while it runs)."""
        with self._lock:
            self._ensure_started()

    def _ensure_started(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        self.end()
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_child_main, args=(child, self._simulate), name=self._name, daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent

    def call(self, kind: str, payload, should_stop, on_message=None, watchdog_s: float | None = None):
        """Run one job ('render': (request, memory, repeats); 'bench': fields; 'user': a variant file's
        job) and return its result. Messages the job streams go to ``on_message(kind, value)``. When
        ``should_stop()`` turns true the child is ended and Cancelled is raised; when ``watchdog_s`` is given
        and the job sends nothing for that long, the child is ended and Stalled is raised."""
        with self._lock:
            self._ensure_started()
            conn, proc = self._conn, self._proc
            process_name = proc.name
            conn.send((kind, payload))
            heard = time.monotonic()
            while True:
                if should_stop():
                    self.end()
                    raise Cancelled()
                if watchdog_s is not None and time.monotonic() - heard > watchdog_s:
                    self.end()
                    raise Stalled(watchdog_s)
                try:
                    ready = conn.poll(POLL_S)
                    message = conn.recv() if ready else None
                except (EOFError, OSError):
                    message = None
                    ready = True
                if message is None:
                    if ready or not proc.is_alive():
                        self.end()
                        raise ChildFailed(f"the {process_name} process ended unexpectedly")
                    continue
                what, value = message
                heard = time.monotonic()
                if what == "tick":
                    continue
                if what == "result":
                    return value
                if what == "error":
                    raise ChildFailed(value)
                if on_message is not None:
                    on_message(what, value)

    def end(self) -> None:
        """End the child now (a no-op when none runs); the next call starts a fresh one."""
        proc, conn, self._proc, self._conn = self._proc, self._conn, None, None
        if conn is not None:
            conn.close()
        if proc is not None and proc.is_alive():
            proc.terminate()
            proc.join(0.5)
            if proc.is_alive():
                proc.kill()
                proc.join(0.5)

    def running(self) -> bool:
        return self._proc is not None and self._proc.is_alive()

    @property
    def pid(self) -> int | None:
        """The running child's process id (None when none runs): a new one after a restart."""
        proc = self._proc
        return proc.pid if proc is not None and proc.is_alive() else None
