"""A thread block of Numba's CUDA simulator, run on a barrier that wakes its threads.

The simulator runs each CUDA thread of a block as a Python thread. Its own block runner learns that every
thread reached ``syncthreads`` by polling them all in a loop, which takes the GIL from the threads doing the
work thousands of times a second. Here each thread waiting at a barrier sleeps on a lock of its own and the
last one to arrive wakes them, so the block's runner only waits for its threads to end. The simulator's
semantics are kept: threads that returned count as arrived at a barrier, the first failing thread ends the
block and its error names the thread (``tid=[x, y, z] ctaid=[x, y, z]: ...``), and ``debug`` launches raise
on division by zero.

Used by every simulator launch (:func:`kernels.backend.numba_private.waking_blocks` puts it in place of the
simulator's runner) and by the access trace (kernels/access/sim_hooks.py), which adds a hook at every barrier
and a state per thread. Touches no private name of numba-cuda: the caller passes the simulator's ``Dim3``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import numpy as np

from kernels.backend.watchdog import beat
from kernels.errors import InputError


class Aborted(Exception):
    """Unwinds the threads of a block after one of them failed."""


class Barrier:
    """syncthreads for one block: releases when every thread still running has arrived (threads that returned
    count as arrived, as in the simulator), after ``on_release`` ran. Each waiting thread sleeps on a lock of
    its own, so a release wakes them without their queueing on one shared lock again (a Condition's
    notify_all does that, slowly for a block of 1024)."""

    def __init__(self, total: int, on_release: Callable[[], None] | None = None):
        self._lock = threading.Lock()
        self._total, self._arrived, self._left = total, 0, 0
        self._values: list = []
        self._last: list = []
        self._waiting: list = []
        self._on_release = on_release
        self.aborted = False
        self.error: BaseException | None = None
        self.ended = threading.Lock()
        self.ended.acquire()  # released when the last thread has left

    def wait(self, gate: threading.Lock, value=None) -> list:
        """The values every thread brought to this barrier. ``gate``: the calling thread's own lock, held
        (acquired) while it is not waiting."""
        with self._lock:
            if self.aborted:
                raise Aborted()
            self._arrived += 1
            self._values.append(value)
            if self._arrived + self._left == self._total:
                self._release()
                return self._last
            self._waiting.append(gate)
        gate.acquire()  # released by the thread that completes the barrier
        if self.aborted:
            raise Aborted()
        return self._last

    def leave(self) -> None:
        with self._lock:
            self._left += 1
            if self._left == self._total:
                self.ended.release()
            elif self._arrived and self._arrived + self._left == self._total:
                self._release()

    def abort(self) -> None:
        with self._lock:
            self.aborted = True
            self._open()

    def _release(self) -> None:
        if self._on_release is not None:
            try:
                self._on_release()
            except BaseException as exc:  # noqa: BLE001 - ends the block; run_block raises it after
                self.error, self.aborted = exc, True
        self._last, self._values = self._values, []
        self._arrived = 0
        self._open()

    def _open(self) -> None:
        waiting, self._waiting = self._waiting, []
        for gate in waiting:
            gate.release()


class SimThread(threading.Thread):
    """One simulated CUDA thread: what the simulator's kernel API asks of ``threading.current_thread()``
    (``threadIdx``, ``blockIdx``, ``thread_id`` and the syncthreads family); ``_barrier`` is its block
    (kernels.backend.numba_private.simulator_lane) and ``access_state`` what a trace keeps for it.

    A thread runs one CUDA thread after another: :func:`run_block` takes idle ones from a pool and gives them
    back when the block has ended, since starting an OS thread costs more than a small kernel's thread does."""

    def __init__(self):
        super().__init__(daemon=True, name="cuda-simulator")
        self._go = threading.Lock()
        self._go.acquire()  # released when a CUDA thread is assigned
        self._gate = threading.Lock()
        self._gate.acquire()  # held while not waiting at a barrier
        self._job: tuple | None = None
        self.exception: BaseException | None = None

    def assign(self, fn, args, barrier: Barrier, grid_point, block_point, thread_id: int, dim3, state,
               debug: bool):
        self._job = (fn, args, debug)
        self._barrier = barrier
        self.blockIdx, self.threadIdx = dim3(*grid_point), dim3(*block_point)
        self.thread_id = thread_id
        self.access_state = state

    def go(self) -> None:
        self._go.release()

    def run(self):
        while True:
            self._go.acquire()
            fn, args, debug = self._job
            barrier = self._barrier
            try:
                if debug:  # as the simulator's debug launches: a division by zero raises
                    with np.errstate(divide="raise"):
                        fn(*args)
                else:
                    fn(*args)
            except Aborted:
                pass
            except BaseException as exc:  # noqa: BLE001 - reported by the block's runner
                self.exception = exc
                barrier.abort()
            finally:
                self._job = None  # the launch's arrays are not kept alive by an idle thread
                self.access_state = None
                barrier.leave()

    def syncthreads(self):
        self._barrier.wait(self._gate)

    def syncthreads_count(self, value):
        return sum(1 for v in self._barrier.wait(self._gate, value) if v)

    def syncthreads_and(self, value):
        return 1 if all(self._barrier.wait(self._gate, value)) else 0

    def syncthreads_or(self, value):
        return 1 if any(self._barrier.wait(self._gate, value)) else 0


_idle: list[SimThread] = []
_idle_lock = threading.Lock()


def _take(count: int) -> list[SimThread]:
    with _idle_lock:
        taken = _idle[len(_idle) - min(count, len(_idle)):]
        del _idle[len(_idle) - len(taken):]
    while len(taken) < count:
        thread = SimThread()
        thread.start()
        taken.append(thread)
    return taken


def _forget_idle_threads() -> None:  # a forked child has none of its parent's threads
    global _idle_lock
    _idle.clear()
    _idle_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_idle_threads)


def run_block(fn, grid_point, block_dim, args, dim3, *, on_release: Callable[[], None] | None = None,
              state_for: Callable[[int, int], object] | None = None, debug: bool = False) -> None:
    """Runs ``fn(*args)`` once per thread of the block at ``grid_point`` and returns when all have ended;
    raises the first failing thread's error, located. ``state_for(tid, threads)`` gives each thread its
    ``access_state``; ``on_release`` runs at every barrier before its threads go on."""
    points = list(np.ndindex(*block_dim))
    barrier = Barrier(len(points), on_release)
    threads = _take(len(points))
    for thread, point in zip(threads, points):
        x, y, z = point
        tid = x + block_dim[0] * (y + block_dim[1] * z)
        state = state_for(tid, len(points)) if state_for is not None else None
        thread.assign(fn, args, barrier, grid_point, point, tid, dim3, state, debug)
    for thread in threads:
        thread.go()
    barrier.ended.acquire()
    failed = next((t for t in threads if t.exception is not None), None)
    error = _located(failed.exception, failed) if failed is not None else None
    for thread in threads:
        thread.exception = None  # an idle thread keeps no traceback (and the arrays its frames hold) alive
    with _idle_lock:
        _idle.extend(threads)
    beat()  # a block done: the work progresses (a kernel looping forever inside one never beats)
    if barrier.error is not None:  # on_release failed (a trace too large)
        raise barrier.error
    if error is not None:
        raise error


def _located(exc: BaseException, thread: SimThread) -> BaseException:
    if isinstance(exc, InputError):  # the project's own refusal (a trace too large), already in its words
        return exc
    where = f"tid={list(thread.threadIdx)} ctaid={list(thread.blockIdx)}"
    try:
        located = type(exc)(f"{where}: {exc}" if str(exc) else where)
    except Exception:  # noqa: BLE001 - an exception class that takes other arguments
        located = RuntimeError(f"{where}: {type(exc).__name__}: {exc}")
    return located.with_traceback(exc.__traceback__)


class WakingBlockManager:
    """In place of the simulator's ``BlockManager``, one per block and launch: the same constructor (the
    simulator's ``Dim3`` bound as ``dim3``, :func:`kernels.backend.numba_private.waking_blocks`) and ``run``."""

    def __init__(self, f, grid_dim, block_dim, debug, *, dim3):
        self._f, self._block_dim, self._debug, self._dim3 = f, block_dim, debug, dim3

    def run(self, grid_point, *args):
        run_block(self._f, grid_point, self._block_dim, args, self._dim3, debug=self._debug)
