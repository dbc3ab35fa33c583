"""A kernel launch with its arguments converted once.

``kernel[grid, block](*args)`` makes numba type every argument, find the compiled overload and convert each
argument for the driver on every call; for a launch repeated with the same arguments (a viewer's frames, a
benchmark timing whole calls) that Python is most of the launch's host time (docs/measurements.md). Here
it is done once, and each call goes straight to numba-cuda's own launch."""

from __future__ import annotations

from typing import Callable

import numpy as np


def packed_launch(kernel, grid, block, args: tuple) -> Callable[[], None] | None:
    """A call launching ``kernel[grid, block](*args)`` on the default stream, the arguments converted once;
    None where numba-cuda's internals are not the ones this was written for (checked on the version
    kernels/backend/numba_private.py names), kernels do not run on a real GPU (the simulator) or are
    numba-cuda-mlir's (its own launch, with its own argument layout: a 1-D array is 5 parameters, not 7). The call
    keeps ``args`` alive: device arrays among them must not be resized or replaced while it is used."""
    from kernels.backend import simulator_active
    from kernels.backend.compiler import uses_mlir

    if simulator_active() or uses_mlir():
        return None
    try:
        from kernels.backend.numba_private import packed_call

        return packed_call(kernel, grid, block, args)
    except Exception:  # noqa: BLE001 - the caller's plain launch still works, only slower
        return None


class LastLaunch:
    """The last launch asked for, kept as a packed call while the same kernel, launch and arguments come
    again (a viewer's continuous frames); numba's own launch where packing is not available. Scalars are
    compared by value, anything else (arrays) by identity: the kept call holds them, so no new array can
    take an old one's id."""

    def __init__(self):
        self._last = None  # (key, call)

    def __call__(self, kernel, grid, block, args: tuple) -> Callable[[], None]:
        key = (kernel, grid, block, *(a if isinstance(a, (bool, int, float, np.generic)) else id(a) for a in args))
        if self._last is None or self._last[0] != key:
            call = packed_launch(kernel, grid, block, args)
            self._last = (key, call or (lambda: kernel[grid, block](*args)))
        return self._last[1]


class FrameLaunches:
    """A frame of several launches, each packed (:func:`packed_launch`) and kept while the same kernels, launches
    and arguments come again: the binned renderer's four kernels a frame cost four of numba's launches
    (each tens of microseconds of Python) otherwise, which a timed frame's head start must also cover."""

    def __init__(self):
        self._last = None  # (key, call)

    def frame(self, steps) -> Callable[[], None]:
        """One call launching each of ``steps`` ((kernel, grid, block, args), in order) on the default
        stream."""
        key = tuple((k, g, b, *(a if isinstance(a, (bool, int, float, np.generic)) else id(a) for a in args))
                    for k, g, b, args in steps)
        if self._last is None or self._last[0] != key:
            calls = [packed_launch(k, g, b, args) or _plain(k, g, b, args) for k, g, b, args in steps]

            def launch(calls=calls):
                for call in calls:
                    call()

            self._last = (key, launch)
        return self._last[1]


def _plain(kernel, grid, block, args):
    return lambda: kernel[grid, block](*args)
