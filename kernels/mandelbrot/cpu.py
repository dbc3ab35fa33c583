"""The Mandelbrot set's CPU twin: the same per-pixel function (:mod:`.shading`) in Numba's parallel loop."""

from __future__ import annotations

import numba

from kernels.io.numba_cache import heal
from kernels.mandelbrot.shading import mandelbrot_pixel

heal()  # a damaged entry of numba's cache is compiled again, not a failed run


@numba.jit(nopython=True, nogil=True, parallel=True, cache=True)
def render_mandelbrot_cpu(pixels, cx, cy, scale, half, iterations):
    """The CPU twin: the same per-pixel function over all pixels, rows in parallel."""
    for y in numba.prange(pixels.shape[0]):
        for x in range(pixels.shape[1]):
            mandelbrot_pixel(pixels, x, y, cx, cy, scale, half, iterations)
