"""The sphere ray tracer's CPU twin: the same per-pixel code (:mod:`.shading`) in Numba's parallel loop."""

from __future__ import annotations

import numba
import numpy as np

from kernels.spheres.layout import COLD, HOT
from kernels.spheres.shading import pattern_start, shade_pixel, store_pixel
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run


@numba.jit(nopython=True, nogil=True, cache=True)
def draw_row(spheres, count, staggered, pixels, y):
    """Row ``y`` of the picture. The row first keeps only the spheres it crosses (dy^2 < r^2, the hit test's
    own condition, in index order), which cuts the per-pixel work several-fold without changing a pixel.
    The staggered pattern uses the pixel's lane in a row of 32, as a warp of a 32-wide block would."""
    h, w = pixels.shape[0], pixels.shape[1]
    oy = np.float32(y - h // 2)
    row = np.empty(count * (HOT + COLD), np.float32)  # the same layout, cold part from count * HOT
    crossing = 0
    for i in range(count):
        dy = oy - spheres[HOT * i + 1]
        if dy * dy < spheres[HOT * i + 2] * spheres[HOT * i + 2]:
            for f in range(HOT):
                row[HOT * crossing + f] = spheres[HOT * i + f]
            for f in range(COLD):
                row[count * HOT + COLD * crossing + f] = spheres[count * HOT + COLD * i + f]
            crossing += 1
    for x in range(w):
        start = pattern_start(x % 32, crossing, staggered) if crossing > 0 else 0
        r, g, b = shade_pixel(row, count * HOT, crossing, start, np.float32(x - w // 2), oy)
        store_pixel(pixels, x, y, r, g, b)


@numba.jit(nopython=True, nogil=True, parallel=True, cache=True)
def render_spheres_cpu(spheres, count, staggered, pixels):
    """The CPU twin: the same per-pixel math (:func:`draw_row`) with Numba's parallel loop over rows."""
    for y in numba.prange(pixels.shape[0]):
        draw_row(spheres, count, staggered, pixels, y)


# numba compiles a parallel loop about a second longer (its parallel passes and the threading layer): a cold
# window draws its first frames with this one while the default twin compiles (docs/measurements.md, start-up)
@numba.jit(nopython=True, nogil=True, cache=True)
def render_spheres_cpu_serial(spheres, count, staggered, pixels):
    """The row twin in one thread: the same rows, one after another."""
    for y in range(pixels.shape[0]):
        draw_row(spheres, count, staggered, pixels, y)
