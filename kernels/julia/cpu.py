"""The Julia set's CPU twin: the same per-pixel function (:mod:`.shading`) in Numba's parallel loop."""

from __future__ import annotations

import numba

from kernels.julia.shading import julia_pixel
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run


@numba.jit(nopython=True, nogil=True, parallel=True, cache=True)
def render_julia_cpu(pixels, cr, ci, cx, cy, scale, half, iterations, colormap):
    """The CPU twin: the same per-pixel function over all pixels, rows in parallel."""
    for y in numba.prange(pixels.shape[0]):
        for x in range(pixels.shape[1]):
            julia_pixel(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap)
