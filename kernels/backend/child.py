"""Render and benchmark work in a child process running numba's CUDA simulator, and users' variant files
in a child process on the simulator or the GPU.

The simulator runs every GPU thread in Python: one kernel launch can take minutes and a thread cannot be
interrupted inside it. A process can: ``terminate()`` ends it within ``POLL_S``. The child is started with
the 'spawn' context (a fresh interpreter, no copied Qt state), switches numba to the simulator (unless it
serves a real GPU) before anything imports numba, and serves jobs until it is ended. Results (Frames,
benchmark rows, a user variant's outcome) come back pickled. A job may stream 'tick' messages: with a
watchdog (``call(..., watchdog_s=...)``) a job silent for longer than that is ended, as a user's kernel
that never finishes must be.

Every exchange is under a deadline, so a child that stalls anywhere is ended and reported (Stalled): its
start-up, the sending of the job (from a thread, so a child that never reads cannot block the caller on a
full pipe) and the child's word that it took the job all count against the watchdog's time (START_S
without one); the app's own jobs (JOBS: render, bench, access) then send a heartbeat every HEARTBEAT_S
while they run, so one that goes silent for START_S is ended too. This module imports neither Qt nor numba.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time

from kernels import signals
from kernels.backend.simulator import SIM_ENV

POLL_S = 0.05  # how often the parent checks for Stop while the child works
START_S = 60.0  # a child's start-up, its taking the job, and any silence of the app's own jobs, at most
HEARTBEAT_S = 1.0  # how often the app's own jobs say they are alive


class Cancelled(Exception):
    """The job was stopped; its child process has been ended."""


class ChildFailed(RuntimeError):
    """The job raised in the child; the message is the one line to show."""


class Stalled(RuntimeError):
    """The job sent nothing for longer than its watchdog allowed; its child process has been ended.
    ``started``: whether the child had taken the job (False: it stalled starting, or never read it)."""

    def __init__(self, seconds: float, what: str = "", started: bool = True):
        why = ("nothing finished within {s:g} s (a kernel that never ends?)" if started else
               "its process did not start and take the job within {s:g} s")
        super().__init__(f"{what + ': ' if what else ''}stopped by the watchdog: {why.format(s=seconds)}; "
                         f"its process was ended")
        self.seconds, self.started = seconds, started


def _one_line(exc: BaseException) -> str:
    from kernels.errors import InputError, one_line

    return str(exc) if isinstance(exc, InputError) else one_line(exc)


# the jobs a child serves, by the name a caller gives (any other name is 'module:function' itself): each is
# called as function(payload, send) in the child and returns the job's result
JOBS = {"render": "kernels.service.render:render_job", "bench": "kernels.service.bench:bench_job",
        "access": "kernels.access.job:serve"}  # a traced run (kernels/access): its hooks live only for the job


def _handler(kind: str):
    import importlib

    module, _, name = JOBS.get(kind, kind).partition(":")
    return getattr(importlib.import_module(module), name)


def _child_main(conn, simulate: bool = True) -> None:
    if simulate:
        os.environ[SIM_ENV] = "1"  # before anything imports numba
    else:
        os.environ.pop(SIM_ENV, None)
    lock = threading.Lock()

    def send(kind, value):
        with lock:  # the heartbeat's thread sends too
            conn.send((kind, value))

    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):  # the parent has gone
            return
        try:
            send("started", None)
            if kind in JOBS:
                with _heartbeat(send):
                    result = _handler(kind)(payload, send)
            else:  # a variant file's job: its own ticks say it progresses, no heartbeat over them
                result = _handler(kind)(payload, send)
            send("result", result)
        except (EOFError, OSError):  # the parent has gone
            return
        except Exception as exc:  # noqa: BLE001
            send("error", _one_line(exc))


class _heartbeat:
    """While one of the app's own jobs runs: a 'tick' every HEARTBEAT_S from a thread of the child."""

    def __init__(self, send):
        self._send, self._done = send, threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self):
        while not self._done.wait(HEARTBEAT_S):
            try:
                self._send("tick", None)
            except (OSError, ValueError):
                return

    def __enter__(self):
        self._thread.start()

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()


# ---------------------------------------------------------------------------------------------- parent side
def _send_quietly(conn, message) -> None:
    """Send ``message`` (from a thread: a large job blocks on a full pipe until the child reads it); a child
    that ends meanwhile makes the write fail, which the caller's loop reports."""
    try:
        conn.send(message)
    except (OSError, ValueError):
        pass


class SimulatorProcess:
    """One simulator child process serving render and benchmark jobs, started on first use (or by
    ``start``) and again after it was ended. ``call`` blocks the calling (worker) thread, never the GUI
    thread. ``simulate=False``: the child uses the real GPU (for user variant files)."""

    def __init__(self, simulate: bool = True, name: str = "cuda-simulator"):
        self._simulate = simulate
        self._name = name
        self._proc = None
        self._conn = None
        self._sender = None  # the thread sending the current job
        self._ended_on_exit = None  # the token of its clean-up on a forced exit (kernels.signals)
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
        self._ended_on_exit = signals.on_forced_exit(self._proc.kill)  # Ctrl-C inside a kernel: not left behind

    def call(self, kind: str, payload, should_stop, on_message=None, watchdog_s: float | None = None):
        """Run one job ('render': (request, memory, repeats); 'bench': a BenchRequest's JSON; or any
        'module:function' the child can import, e.g. a variant file's job) and return its result. Messages the job streams go to ``on_message(kind, value)``. When
        ``should_stop()`` turns true the child is ended and Cancelled is raised; when the child stays silent
        for longer than ``watchdog_s`` (START_S without one), counting from the call's start, so its
        start-up and the sending of the job count too, the child is ended and Stalled is raised."""
        limit = watchdog_s if watchdog_s is not None else START_S
        with self._lock:
            heard = time.monotonic()  # start-up, the send and the child's first word: one deadline
            self._ensure_started()
            conn, proc = self._conn, self._proc
            process_name = proc.name
            self._sender = threading.Thread(target=_send_quietly, args=(conn, (kind, payload)),
                                            name=f"{process_name}-send", daemon=True)
            self._sender.start()
            started = False
            while True:
                if should_stop():
                    self.end()
                    raise Cancelled()
                if time.monotonic() - heard > limit:
                    self.end()
                    raise Stalled(limit, started=started)
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
                if what in ("tick", "started"):
                    started = True
                    continue
                if what == "result":
                    return value
                if what == "error":
                    raise ChildFailed(value)
                if on_message is not None:
                    on_message(what, value)

    def end(self) -> None:
        """End the child now (a no-op when none runs); the next call starts a fresh one. The process goes
        first, so that a send still blocked on its pipe fails at once and its thread ends."""
        proc, conn, sender = self._proc, self._conn, self._sender
        self._proc, self._conn, self._sender = None, None, None
        if self._ended_on_exit is not None:
            signals.forget(self._ended_on_exit)
            self._ended_on_exit = None
        if proc is not None and proc.is_alive():
            proc.terminate()
            proc.join(0.5)
            if proc.is_alive():
                proc.kill()
                proc.join(0.5)
        if sender is not None:
            sender.join(1.0)
        if conn is not None:
            conn.close()

    def running(self) -> bool:
        return self._proc is not None and self._proc.is_alive()

    @property
    def pid(self) -> int | None:
        """The running child's process id (None when none runs): a new one after a restart."""
        proc = self._proc
        return proc.pid if proc is not None and proc.is_alive() else None
