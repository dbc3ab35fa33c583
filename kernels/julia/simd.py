"""The Julia set's SIMD CPU twin: many pixels per vector register instead of one pixel at a time.

The scalar twin (:mod:`.cpu`) runs :func:`.shading.julia_escape` per pixel: its loop exits at a data
dependent iteration, so the compiler cannot put neighbouring pixels side by side in one register. Here
a block of pixels (two rows of ``LANES`` columns: 16 in float32, 8 in float64, one 512-bit register
per row where the CPU has AVX-512) iterates together in small arrays with a fixed length, and the
escape test becomes a per-lane mask instead of a branch:

- a lane is live while its count equals the iteration number (it has not escaped yet);
- every lane computes z = z*z + c, live or not (an escaped lane's z just runs off to inf, unused);
- a live lane that escapes keeps its |z|^2 (a select, not a branch) and its count stops growing;
- the block stops when no lane is live, or after ``iterations``.

The per-lane loops have a compile-time trip count and no branches, so LLVM turns each into a few vector
instructions and keeps z and the counts in registers for the whole iteration loop (check with
``render_julia_simd.inspect_asm(sig)``: packed ``vmulps``/``vmulpd`` on ``zmm`` or ``ymm`` registers).
The arithmetic is :func:`.shading.julia_escape`'s, operation for operation and in the same order, with
no fused multiply-adds (``fastmath=False``), so every lane rounds as the scalar twin does and the image
is the scalar twin's, pixel for pixel; the colours come from the same :func:`.shading.julia_colour`.

What it costs: a block runs until its slowest lane is done, so the lanes do about 1.8 times the
iterations the pixels need (the default view, float32); a 16x2 block wastes less than a 32x1 run of a
row would (neighbouring pixels in two directions escape at more similar counts). Rows are shared among
threads in interleaved stripes, so every thread gets a fair share of the slow (bounded) pixels whatever
the view.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import overload

from kernels.julia.params import ESCAPE
from kernels.julia.shading import julia_colour
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run

LANES = {"float32": 16, "float64": 8}  # columns per block: one 512-bit register of each type
ROWS = 2  # rows per block: two independent registers in flight hide the multiply's latency
STRIPES = 64  # interleaved row stripes shared among the threads


def lanes_for(x):
    """The columns of a block for the type of ``x`` (a compile-time constant inside numba)."""
    return LANES[np.asarray(x).dtype.name]


@overload(lanes_for)
def _lanes_for(x):
    n = LANES["float32"] if x == types.float32 else LANES["float64"]
    return lambda x: n


@numba.njit(nogil=True, parallel=True, fastmath=False, cache=True)
def render_julia_simd(pixels, cr, ci, cx, cy, scale, half, iterations, colormap):
    """The SIMD twin: the arguments and the image of :func:`kernels.julia.cpu.render_julia_cpu`."""
    h, w = pixels.shape[0], pixels.shape[1]
    for stripe in numba.prange(STRIPES):
        # constants inside the parallel body (values from outside it reach it as run-time arguments)
        lanes = lanes_for(cr)
        block = ROWS * lanes  # lane k is column k % lanes of row k // lanes
        zr = np.full(block, cr)  # arrays of the precision of the arguments
        zi = np.full(block, cr)
        mag2 = np.full(block, cr)
        count = np.empty(block, np.int32)
        for y0 in range(ROWS * stripe, h, ROWS * STRIPES):
            for x0 in range(0, w, lanes):
                for k in range(block):  # the plane's points, as julia_pixel maps them
                    x, y = x0 + k % lanes, y0 + k // lanes
                    zr[k] = cx + scale * np.float32(x - (w >> 1)) / half
                    zi[k] = cy + scale * np.float32((h >> 1) - 1 - y) / half
                    mag2[k] = 0
                    count[k] = 0 if x < w and y < h else -1  # lanes past the image's edge start done
                for i in range(iterations):
                    live_any = False
                    for k in range(block):  # no branches: LLVM makes this a few vector instructions
                        ar = zr[k]
                        ai = zi[k]
                        n = count[k]
                        nr = ar * ar - ai * ai + cr  # julia_escape's operations, in its order
                        ni = ai * ar + ar * ai + ci
                        m = nr * nr + ni * ni
                        live = n == i
                        escaped = m > ESCAPE
                        stays = live & (not escaped)
                        zr[k] = nr
                        zi[k] = ni
                        mag2[k] = m if live & escaped else mag2[k]
                        count[k] = n + np.int32(stays)
                        live_any = live_any | stays
                    if not live_any:
                        break
                for k in range(block):
                    x, y = x0 + k % lanes, y0 + k // lanes
                    if x < w and y < h:
                        pixels[y, x] = julia_colour(count[k], mag2[k], iterations, colormap)
