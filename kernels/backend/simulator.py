"""Numba's CUDA simulator as a process-wide switch, and shared per-pixel functions as its kernels call them.

numba reads ``NUMBA_ENABLE_CUDASIM`` once, when it is first imported, so a process is either a real-CUDA
process or a simulator process (:func:`kernels.backend.prepare` chooses before numba loads)."""

from __future__ import annotations

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


def for_kernels(fn):
    """A shared ``@numba.jit`` function as a CUDA kernel should call it: the compiled function on a GPU
    (numba-cuda compiles it for the device), plain Python all the way down in the simulator, whose arrays
    are wrappers that compiled CPU code cannot take."""
    return _plain_python(fn, {}) if simulator_active() else fn


def _plain_python(fn, done: dict):
    """``fn.py_func`` with every jit function it calls (through its module globals) made plain too."""
    from numba.core.dispatcher import Dispatcher

    if fn in done:
        return done[fn]
    py = fn.py_func
    globs = dict(py.__globals__)
    clone = types.FunctionType(py.__code__, globs, py.__name__, py.__defaults__, py.__closure__)
    done[fn] = clone
    for name in py.__code__.co_names:
        value = globs.get(name)
        if isinstance(value, Dispatcher):
            globs[name] = _plain_python(value, done)
    return clone
