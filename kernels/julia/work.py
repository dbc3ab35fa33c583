"""How many iterations a Julia view takes: every pixel's escape-time loop trips, summed, counted by a CPU twin
that runs the same per-pixel function (:func:`kernels.julia.shading.julia_escape`) over the same pixels, in the
row's precision. A counting twin, not a counting kernel: the timed kernels stay as they are, and the count is
exact for the CPU's arithmetic (a GPU that fuses multiply-adds may let a boundary pixel escape one step
sooner or later: a difference of a few trips in millions)."""

from __future__ import annotations

import functools

import numba
import numpy as np

from kernels.io.numba_cache import heal
from kernels.julia.shading import julia_escape

heal()  # a damaged entry of numba's cache is compiled again, not a failed run


@numba.jit(nopython=True, nogil=True, parallel=True, cache=True)
def count_iterations(width, height, cr, ci, cx, cy, scale, half, iterations):
    per_row = np.zeros(height, np.int64)
    for y in numba.prange(height):
        total = 0
        for x in range(width):
            jx = cx + scale * np.float32(x - (width >> 1)) / half
            jy = cy + scale * np.float32((height >> 1) - 1 - y) / half
            n, mag2 = julia_escape(jx, jy, cr, ci, iterations)
            total += min(n + 1, iterations)
        per_row[y] = total
    return per_row.sum()


@functools.lru_cache(maxsize=32)
def iterations(params, size, precision: str) -> int:
    """Loop trips of every pixel of ``params`` at ``size`` (W, H) in ``precision``, summed."""
    from dataclasses import replace

    from kernels.julia.renderer import kernel_args

    width, height = int(size[0]), int(size[1])
    *args, _colormap = kernel_args(replace(params, precision=precision), width, height)  # the count needs no colours
    return int(count_iterations(width, height, *args))
