"""Numba's CUDA simulator as a process-wide switch, and shared per-pixel functions as its kernels call them.

numba reads ``NUMBA_ENABLE_CUDASIM`` once, when it is first imported, so a process is either a real-CUDA
process or a simulator process (:func:`kernels.backend.prepare` chooses before numba loads).

Importing this module also arranges that the simulator, whenever it loads, runs its thread blocks on
barriers that wake their threads instead of polling them (kernels/backend/sim_blocks.py): the same results,
in about half the time on the test suite's simulator runs."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types

SIM_ENV = "NUMBA_ENABLE_CUDASIM"


def simulator_active() -> bool:
    """True when this process runs CUDA kernels in Numba's simulator."""
    if "numba" in sys.modules:
        from numba import config

        return bool(config.ENABLE_CUDASIM)
    return os.environ.get(SIM_ENV, "0") not in ("", "0")


def shared_jit(fn):
    """``@numba.jit`` for the per-pixel and per-element math that a CUDA kernel and its CPU twins share and that
    only compiled code calls: without the CPython and C wrappers numba otherwise compiles and finalises for
    each such function, a quarter of a cold CPU twin's first compile (docs/measurements.md). Python reaches
    the math through ``py_func``, as the simulator's kernels do (kernels/device_functions/callees.py)."""
    import numba

    return numba.jit(nopython=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)(fn)


def rebuilt_callees(fn, wrap, done: dict | None = None):
    """``wrap`` of a copy of ``fn.py_func`` whose module globals name, for each ``@numba.jit`` function it
    calls, that function rebuilt the same way (recursively): plain Python for the simulator, or a device
    function of another compiler (kernels/device_functions/callees.py)."""
    from numba.core.dispatcher import Dispatcher

    done = {} if done is None else done
    if fn in done:
        return done[fn]
    py = fn.py_func
    globs = dict(py.__globals__)
    clone = types.FunctionType(py.__code__, globs, py.__name__, py.__defaults__, py.__closure__)
    for name in py.__code__.co_names:
        value = globs.get(name)
        if isinstance(value, Dispatcher):
            globs[name] = rebuilt_callees(value, wrap, done)
    done[fn] = wrapped = wrap(clone)
    return wrapped


# --- the simulator's block runner, replaced as the simulator loads ----------------------------------------

_BLOCKS_MODULE = "numba.cuda.simulator.kernel"


class _WakingBlocksOnLoad(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when the simulator's kernel module is imported, has the usual finder find it and
    wraps its loader, so that the module is patched (numba_private.waking_blocks) before anyone uses it."""

    def find_spec(self, name, path, target=None):
        if name != _BLOCKS_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader)
        return spec


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        from kernels.backend.numba_private import waking_blocks

        waking_blocks(module)

    def __getattr__(self, name):  # get_source, get_filename, ...: tracebacks and inspect read through these
        return getattr(self._loader, name)


def _waking_blocks_when_loaded() -> None:
    if _BLOCKS_MODULE in sys.modules:  # loaded before this module: patch it now
        from kernels.backend.numba_private import waking_blocks

        waking_blocks(sys.modules[_BLOCKS_MODULE])
    elif not any(isinstance(f, _WakingBlocksOnLoad) for f in sys.meta_path):
        sys.meta_path.insert(0, _WakingBlocksOnLoad())


_waking_blocks_when_loaded()
