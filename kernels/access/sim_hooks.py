"""Every private name of numba-cuda's CUDA simulator that the traced run touches, in this one module, for the
numba-cuda series it was written against (0.30.x, as pyproject pins): another version is refused in one line
before anything is patched.

:func:`installed` patches, for the duration of a traced run in the simulator's child process, and undoes:

- ``FakeCUDAKernel.__call__``: a launch asks the tracer whether to run (a repeat of a kernel already traced
  does not run) and is framed by it;
- ``BlockManager``: only the sampled blocks run (kernels/backend/sim_blocks.py, as every simulator launch
  runs), and the tracer rebuilds the warp requests at every barrier;
- ``FakeWithinKernelCUDAArray.__getitem__`` / ``__setitem__``: global loads and stores;
- ``FakeCUDAShared.array``: shared arrays become :class:`~.recorder.RecordingShared` (local arrays stay numpy
  and are not recorded), through kernels.backend.numba_private.simulator_shared_array, which reads the
  simulator's storage of them; ``FakeCUDAConst.array_like``: constant arrays are recorded as such;
- ``FakeCUDAAtomic``: each atomic is one access (global, or shared on a shared array), its inner read and
  write not recorded.
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from kernels.access import model as M
from kernels.access import notes, recorder
from kernels.backend import numba_private, sim_blocks
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


def _run_block(tracer: recorder.Tracer, fn, grid_point, block_dim, args, dim3) -> None:
    states: list = [None] * int(np.prod(block_dim))  # by linear thread index, made before any thread runs

    def state_for(tid: int, threads: int):
        states[tid] = tracer.thread_state(tid, threads)
        return states[tid]

    sim_blocks.run_block(fn, grid_point, block_dim, args, dim3, state_for=state_for,
                         on_release=lambda: tracer.flush(states, grid_point))
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
    return numba_private.simulator_shared_array(self, shape, dtype, sys._getframe(1), recorder.RecordingShared)


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
