"""Render and benchmark work in a child process running numba's CUDA simulator, and users' variant files
in a child process on the simulator or the GPU.

The simulator runs every GPU thread in Python: one kernel launch can take minutes and a thread cannot be
interrupted inside it. A process can: ``terminate()`` ends it within ``POLL_S``. The child is started with
the 'spawn' context (a fresh interpreter, no copied Qt state), switches numba to the simulator (unless it
serves a real GPU) before anything imports numba, and serves jobs until it is ended. Results (Frames,
benchmark rows, a user variant's outcome) come back pickled. A job may stream 'tick' messages: with a
watchdog (``call(..., watchdog_s=...)``) a job silent for longer than that is ended, as a user's kernel
that never finishes must be.

Every exchange is under one deadline (kernels/backend/watchdog.py, the mechanism every child of the app
uses), so a child that stalls anywhere is ended with its process group and reported (Stalled): its start-up,
the sending of the job (from a thread, so a child that never reads cannot block the caller on a full pipe)
and the child's word that it took the job all count against the watchdog's time (START_S without one);
then each message counts once it has arrived whole (a thread reads them, so a half-written one is silence,
never a read that blocks), and the app's own jobs (JOBS: render, bench, access) beat from their work (every
simulated block, timed call and row: watchdog.beat), so one stuck in its work goes silent and is ended after
START_S. A variant file's job beats only by its own ticks (one per call of its ``run``). The child ignores
SIGINT: Ctrl-C is the parent's, which ends it (the child stays in its parent's process group, so a parent
that is itself a child, a `--processes` one, is ended with it). This module imports
neither Qt nor numba.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading

from kernels import signals
from kernels.backend import watchdog
from kernels.backend.simulator import SIM_ENV
from kernels.backend.watchdog import Stalled

__all__ = ["Cancelled", "ChildFailed", "SimulatorProcess", "Stalled"]

POLL_S = 0.05  # how often the parent checks for Stop while the child works
START_S = 60.0  # a child's start-up, its taking the job, and any silence of the app's own jobs, at most


class Cancelled(Exception):
    """The job was stopped; its child process has been ended."""


class ChildFailed(RuntimeError):
    """The job raised in the child; the message is the one line to show."""


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
    watchdog.ignore_interrupts()  # Ctrl-C is the parent's: it ends this process
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked while it started: now dropped
    if simulate:
        os.environ[SIM_ENV] = "1"  # before anything imports numba
    else:
        os.environ.pop(SIM_ENV, None)
    lock = threading.Lock()

    def send(kind, value):
        with lock:  # the work's beats may come from the simulator's block threads
            conn.send((kind, value))

    while True:
        try:
            kind, payload, beats = conn.recv()
        except (EOFError, OSError):  # the parent has gone
            return
        try:
            send("started", None)
            # the app's own jobs beat from their work; a variant file's job ticks per call of its run, no more
            with watchdog.beats_to((lambda: send("tick", None)) if beats else None):
                result = _handler(kind)(payload, send)
            send("result", result)
        except (EOFError, OSError):  # the parent has gone
            return
        except Exception as exc:  # noqa: BLE001
            send("error", _one_line(exc))


# ---------------------------------------------------------------------------------------------- parent side
def _send_quietly(conn, message) -> None:
    """Send ``message`` (from a thread: a large job blocks on a full pipe until the child reads it); a child
    that ends meanwhile makes the write fail, which the caller's loop reports."""
    try:
        conn.send(message)
    except (OSError, ValueError):
        pass


_EOF = object()  # the reader's word that the pipe has closed


def _read_messages(conn, inbox: queue.Queue) -> None:
    """The child's messages, each whole, into ``inbox`` (a thread per child: the waiting loop never reads,
    so a half-written message cannot block it past its deadline)."""
    while True:
        try:
            inbox.put(conn.recv())
        except (EOFError, OSError, ValueError):
            inbox.put(_EOF)
            return
        except Exception as exc:  # noqa: BLE001 - a message that does not unpickle
            inbox.put(("error", f"a message of the child could not be read: {_one_line(exc)}"))


class SimulatorProcess:
    """One simulator child process serving render and benchmark jobs, started on first use (or by
    ``start``) and again after it was ended. ``call`` blocks the calling (worker) thread, never the GUI
    thread. ``simulate=False``: the child uses the real GPU (for user variant files)."""

    def __init__(self, simulate: bool = True, name: str = "cuda-simulator"):
        self._simulate = simulate
        self._name = name
        self._proc = None
        self._conn = None
        self._inbox = None  # the child's messages, read whole by a thread
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
        with watchdog.interrupts_blocked():  # until the child has set SIGINT aside (_child_main)
            self._proc.start()
        child.close()
        self._conn = parent
        self._inbox = queue.Queue()
        threading.Thread(target=_read_messages, args=(parent, self._inbox), name=f"{self._name}-read",
                         daemon=True).start()
        proc = self._proc
        self._ended_on_exit = signals.on_forced_exit(lambda: watchdog.end_group(proc, 0.1))  # not left behind

    def call(self, kind: str, payload, should_stop, on_message=None, watchdog_s: float | None = None,
             beats: bool | None = None):
        """Run one job ('render': (request, memory, repeats); 'bench': a BenchRequest's JSON; or any
        'module:function' the child can import, e.g. a variant file's job) and return its result. Messages
        the job streams go to ``on_message(kind, value)``. When ``should_stop()`` turns true the child is
        ended and Cancelled is raised; when the child stays silent for longer than ``watchdog_s`` (START_S
        without one), counting from the call's start, so its start-up and the sending of the job count too,
        and a message counts only once it has arrived whole, the child is ended and Stalled is raised.
        ``beats``: whether the work's beats (watchdog.beat) count as progress (default: for the app's own
        JOBS; a variant file's job counts only its own ticks, one per call of its run). A job may send
        ('deadline', seconds) to bound its silence from then on (a traced run of a variant file: the
        file's own watchdog time once the file's code runs)."""
        beats = kind in JOBS if beats is None else beats
        deadline = watchdog.Deadline(watchdog_s if watchdog_s is not None else START_S)
        with self._lock:
            self._ensure_started()
            conn, proc, inbox = self._conn, self._proc, self._inbox
            process_name = proc.name
            while not inbox.empty():  # nothing of an earlier job counts for this one
                if inbox.get_nowait() is _EOF:
                    inbox.put(_EOF)
                    break
            self._sender = threading.Thread(target=_send_quietly, args=(conn, (kind, payload, beats)),
                                            name=f"{process_name}-send", daemon=True)
            self._sender.start()
            while True:
                if should_stop():
                    self.end()
                    raise Cancelled()
                if deadline.overdue():
                    self.end()
                    raise deadline.stalled()
                try:
                    message = inbox.get(timeout=POLL_S)
                except queue.Empty:
                    if not proc.is_alive() and inbox.empty():
                        self.end()
                        raise ChildFailed(f"the {process_name} process ended unexpectedly") from None
                    continue
                if message is _EOF:
                    self.end()
                    raise ChildFailed(f"the {process_name} process ended unexpectedly")
                what, value = message
                deadline.heard()
                watchdog.beat()  # a child of a child (a --processes one's variant files): its parent hears it too
                if what in ("tick", "started"):
                    continue
                if what == "deadline":  # the job's own word: from now on its silence may last this long
                    deadline.silence_s = float(value)
                    continue
                if what == "result":
                    return value
                if what == "error":
                    raise ChildFailed(value)
                if on_message is not None:
                    on_message(what, value)

    def end(self) -> None:
        """End the child now (a no-op when none runs), with its process group; the next call starts a fresh
        one. The process goes first, so that a send still blocked on its pipe fails at once and its thread
        ends, and the reader's pipe closes."""
        proc, conn, sender = self._proc, self._conn, self._sender
        self._proc, self._conn, self._sender, self._inbox = None, None, None, None
        if self._ended_on_exit is not None:
            signals.forget(self._ended_on_exit)
            self._ended_on_exit = None
        if proc is not None:
            watchdog.end_group(proc)
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
