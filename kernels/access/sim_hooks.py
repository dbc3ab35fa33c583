"""Every private name of numba-cuda's CUDA simulator that the traced run touches, in this one module, for the
numba-cuda series it was written against (0.30.x, as pyproject pins): another version is refused in one line
before anything is patched.

:func:`installed` patches, for the duration of a traced run in the simulator's child process, and undoes:

- ``FakeCUDAKernel.__call__``: a launch asks the tracer whether to run (a repeat of a kernel already traced
  does not run) and is framed by it;
- ``BlockManager``: only the sampled blocks run, on a barrier that wakes waiting threads instead of polling
  (the simulator's loop spins on the GIL), and the tracer rebuilds the warp requests at every barrier;
- ``FakeWithinKernelCUDAArray.__getitem__`` / ``__setitem__``: global loads and stores;
- ``FakeCUDAShared.array``: shared arrays become :class:`~.recorder.RecordingShared` (local arrays stay numpy
  and are not recorded); ``FakeCUDAConst.array_like``: constant arrays are recorded as such;
- ``FakeCUDAAtomic``: each atomic is one access (global, or shared on a shared array), its inner read and
  write not recorded.
"""

from __future__ import annotations

import contextlib
import sys
import threading

import numpy as np

from kernels.access import model as M
from kernels.access import notes, recorder
from kernels.errors import InputError

WRITTEN_FOR = "0.30"  # numba-cuda's minor series whose simulator this module patches
ATOMICS = ("add", "sub", "and_", "or_", "xor", "inc", "dec", "exch", "max", "min", "nanmax", "nanmin",
           "compare_and_swap", "cas")


def numba_cuda_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("numba-cuda")
    except metadata.PackageNotFoundError:
        return "not installed"


def check_version(version: str | None = None) -> None:
    """InputError (one line) unless numba-cuda is of the series these hooks were written for."""
    version = numba_cuda_version() if version is None else version
    if not version.startswith(WRITTEN_FOR + "."):
        raise InputError(f"the access trace hooks into numba-cuda {WRITTEN_FOR}.x's simulator, but numba-cuda "
                         f"{version} is installed; install numba-cuda>={WRITTEN_FOR},<0.31 as pyproject pins")


@contextlib.contextmanager
def installed(tracer: recorder.Tracer):
    """The simulator patched to report to ``tracer``; everything is restored on leaving, error or not."""
    check_version()
    from numba.cuda.simulator import kernel as sim_kernel
    from numba.cuda.simulator import kernelapi
    from numba.cuda.simulator.cudadrv import devicearray

    within = devicearray.FakeWithinKernelCUDAArray
    patches = [
        (sim_kernel.FakeCUDAKernel, "__call__", _traced_call(sim_kernel.FakeCUDAKernel.__call__)),
        (sim_kernel, "BlockManager", _block_manager(sim_kernel.BlockManager, kernelapi.Dim3)),
        (within, "__getitem__", _traced_getitem(within)),
        (within, "__setitem__", _traced_setitem(within)),
        (kernelapi.FakeCUDAShared, "array", _shared_array),
        (kernelapi.FakeCUDAConst, "array_like", _const_array_like),
    ]
    patches += [(kernelapi.FakeCUDAAtomic, name, _traced_atomic(name, getattr(kernelapi.FakeCUDAAtomic, name), within))
                for name in ATOMICS]
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in patches]
    try:
        for owner, name, value in patches:
            setattr(owner, name, value)
        with recorder.recording(tracer):
            yield tracer
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)
        notes.restore_constant_arrays()


# --- launches and blocks ----------------------------------------------------------------------------------


def _traced_call(original):
    def __call__(self, *args):
        tracer = recorder.active()
        if self._device or tracer is None:
            return original(self, *args)
        from numba.cuda.errors import normalize_kernel_dimensions

        grid, block = normalize_kernel_dimensions(self.grid_dim, self.block_dim)
        if not tracer.begin_launch(self.fn, grid, block, self.dynshared_size, args):
            return None
        try:
            return original(self, *args)
        finally:
            tracer.end_launch()

    return __call__


def _block_manager(original_class, dim3):
    class TracedBlockManager:
        """The simulator's BlockManager for a traced launch: sampled blocks only, a waking barrier."""

        def __init__(self, f, grid_dim, block_dim, debug):
            self._f, self._grid, self._block, self._debug = f, grid_dim, block_dim, debug

        def run(self, grid_point, *args):
            tracer = recorder.active()
            if tracer is None:
                return original_class(self._f, self._grid, self._block, self._debug).run(grid_point, *args)
            if tracer.wants(grid_point, self._grid):
                _run_block(tracer, self._f, grid_point, self._block, args, dim3)

    return TracedBlockManager


class _Aborted(Exception):
    """Unwinds the threads of a block after one of them failed."""


class _Barrier:
    """syncthreads for one block: releases when every thread still running has arrived (threads that
    returned count as arrived, as in the simulator), after the tracer has rebuilt the requests made so far.
    Each waiting thread sleeps on a lock of its own, so a release wakes them without their queueing on one
    shared lock again (a Condition's notify_all does that, slowly for a block of 1024)."""

    def __init__(self, total: int, on_release):
        self._lock = threading.Lock()
        self._total, self._arrived, self._left = total, 0, 0
        self._values: list = []
        self._last: list = []
        self._waiting: list = []
        self._on_release = on_release
        self.aborted = False
        self.error: BaseException | None = None

    def wait(self, gate: threading.Lock, value=None) -> list:
        """``gate``: the calling thread's own lock, held (acquired) while it is not waiting."""
        with self._lock:
            if self.aborted:
                raise _Aborted()
            self._arrived += 1
            self._values.append(value)
            if self._arrived + self._left == self._total:
                self._release()
                return self._last
            self._waiting.append(gate)
        gate.acquire()  # released by the thread that completes the barrier
        if self.aborted:
            raise _Aborted()
        return self._last

    def leave(self) -> None:
        with self._lock:
            self._left += 1
            if self._arrived and self._arrived + self._left == self._total:
                self._release()

    def abort(self) -> None:
        with self._lock:
            self.aborted = True
            self._open()

    def _release(self) -> None:
        try:
            self._on_release()
        except BaseException as exc:  # noqa: BLE001 - a trace too large: ends the block, reported after
            self.error, self.aborted = exc, True
        self._last, self._values = self._values, []
        self._arrived = 0
        self._open()

    def _open(self) -> None:
        waiting, self._waiting = self._waiting, []
        for gate in waiting:
            gate.release()


class _Thread(threading.Thread):
    """One simulated CUDA thread: what the simulator's kernel API asks of ``threading.current_thread()``."""

    def __init__(self, fn, args, barrier: _Barrier, grid_point, block_point, block_dim, state, dim3):
        super().__init__(daemon=True)
        self._fn, self._args, self._barrier = fn, args, barrier
        self.blockIdx, self.threadIdx = dim3(*grid_point), dim3(*block_point)
        x, y, z = block_point
        self.thread_id = x + block_dim[0] * (y + block_dim[1] * z)
        self.access_state = state
        self.exception: BaseException | None = None
        self._gate = threading.Lock()
        self._gate.acquire()  # held while not waiting at a barrier
        self.go = threading.Lock()
        self.go.acquire()  # released once every thread of the block has started

    def run(self):
        self.go.acquire()  # started threads wait here: starting the rest is not slowed by their running
        try:
            self._fn(*self._args)
        except _Aborted:
            pass
        except BaseException as exc:  # noqa: BLE001 - reported by the block's runner
            self.exception = exc
            self._barrier.abort()
        finally:
            self._barrier.leave()

    def syncthreads(self):
        self._barrier.wait(self._gate)

    def syncthreads_count(self, value):
        return sum(1 for v in self._barrier.wait(self._gate, value) if v)

    def syncthreads_and(self, value):
        return 1 if all(self._barrier.wait(self._gate, value)) else 0

    def syncthreads_or(self, value):
        return 1 if any(self._barrier.wait(self._gate, value)) else 0


def _run_block(tracer: recorder.Tracer, fn, grid_point, block_dim, args, dim3) -> None:
    points = list(np.ndindex(*block_dim))
    threads: list[_Thread] = []
    states = [None] * len(points)
    barrier = _Barrier(len(points), lambda: tracer.flush(states, grid_point))
    for point in points:
        x, y, z = point
        tid = x + block_dim[0] * (y + block_dim[1] * z)
        states[tid] = state = tracer.thread_state(tid, len(points))
        threads.append(_Thread(fn, args, barrier, grid_point, point, block_dim, state, dim3))
    for t in threads:
        t.start()
    for t in threads:
        t.go.release()
    for t in threads:
        t.join()
    if barrier.error is not None:
        raise barrier.error
    for t in threads:
        if t.exception is not None:
            exc = t.exception
            if isinstance(exc, InputError):
                raise exc
            where = f"tid={list(t.threadIdx)} ctaid={list(t.blockIdx)}"
            try:
                located = type(exc)(f"{where}: {exc}" if str(exc) else where)
            except Exception:  # noqa: BLE001 - an exception class that takes other arguments
                located = RuntimeError(f"{where}: {type(exc).__name__}: {exc}")
            raise located.with_traceback(exc.__traceback__)
    tracer.block_done(states, grid_point)


# --- accesses -----------------------------------------------------------------------------------------------


def _traced_getitem(within):
    original = within.__getitem__

    def __getitem__(self, idx):
        value = original(self, idx)
        tracer = recorder.active()
        if tracer is not None and not isinstance(value, within):
            tracer.record(self._item._ary, idx, M.LD, M.GLOBAL)
        return value

    return __getitem__


def _traced_setitem(within):
    original = within.__setitem__

    def __setitem__(self, idx, value):
        original(self, idx, value)
        tracer = recorder.active()
        if tracer is not None:
            ary = self._item._ary
            if recorder.is_element(idx, ary.ndim):
                tracer.record(ary, idx, M.ST, M.GLOBAL)

    return __setitem__


def _shared_array(self, shape, dtype):
    """FakeCUDAShared.array of numba-cuda 0.30, its arrays recording: dynamic shared memory (shape 0) is one
    buffer every call views; a static array is one per source line (as the simulator keys them)."""
    from numba.core import types
    from numba.np import numpy_support

    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    dtype = np.dtype(dtype)
    if isinstance(shape, int) and shape == 0:
        count = self._dynshared_size // dtype.itemsize
        return self._dynshared[:count * dtype.itemsize].view(dtype).view(recorder.RecordingShared)
    caller = sys._getframe(1)
    key = (caller.f_code.co_filename, caller.f_lineno)
    found = self._allocations.get(key)
    if found is None:
        found = self._allocations[key] = np.empty(shape, dtype).view(recorder.RecordingShared)
    return found


def _const_array_like(self, ary):
    return np.asarray(ary).view(recorder.RecordingConst)


def _traced_atomic(name: str, original, within):
    whole_array = name == "compare_and_swap"  # it works on element 0
    compare_and_swap = name in ("cas", "compare_and_swap")

    def atomic(self, array, *rest):
        tracer = recorder.active()
        if isinstance(array, within):
            raw = seen = array._item._ary
            space = M.GLOBAL
        elif isinstance(array, recorder.RecordingShared):
            raw, seen, space = array.view(np.ndarray), array, array._space
        else:
            return original(self, array, *rest)
        if tracer is not None:
            tracer.record(seen, (0,) * raw.ndim if whole_array else rest[0], M.ATOM, space,
                          compare_and_swap=compare_and_swap)
        return original(self, raw, *rest)

    atomic.__name__ = name
    return atomic
