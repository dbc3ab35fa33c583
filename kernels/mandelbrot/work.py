"""How many iterations a Mandelbrot view takes: every pixel's escape-time loop trips, summed, counted by a CPU
twin running the same per-pixel function (:func:`kernels.mandelbrot.shading.mandelbrot_escape`) over the same
pixels in the row's precision (as :mod:`kernels.julia.work` counts the Julia set's, for the same reasons)."""

from __future__ import annotations

import functools

import numba
import numpy as np

from kernels.io.numba_cache import heal
from kernels.mandelbrot.shading import mandelbrot_escape

heal()  # a damaged entry of numba's cache is compiled again, not a failed run


@numba.jit(nopython=True, nogil=True, parallel=True, cache=True)
def count_iterations(width, height, cx, cy, scale, half, iterations):
    per_row = np.zeros(height, np.int64)
    for y in numba.prange(height):
        total = 0
        for x in range(width):
            x0 = cx + scale * np.float32(x - (width >> 1)) / half
            y0 = cy + scale * np.float32((height >> 1) - 1 - y) / half
            total += min(mandelbrot_escape(x0, y0, iterations) + 1, iterations)
        per_row[y] = total
    return per_row.sum()


@functools.lru_cache(maxsize=32)
def iterations(params, size, precision: str) -> int:
    """Loop trips of every pixel of ``params`` at ``size`` (W, H) in ``precision``, summed."""
    from dataclasses import replace

    width, height = int(size[0]), int(size[1])
    return int(count_iterations(width, height, *replace(params, precision=precision).kernel_args(width, height)))
