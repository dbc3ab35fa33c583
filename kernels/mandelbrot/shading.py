"""The Mandelbrot set's per-pixel math, written once as ``@numba.jit`` functions that the CUDA kernel and the
CPU twin both call (as the Julia set's :mod:`kernels.julia.shading`): the escape time in the precision of the
arguments, and a colour from the count in integer arithmetic (so every backend paints a count alike)."""

from __future__ import annotations

import numpy as np

from kernels.backend.simulator import shared_jit
from kernels.mandelbrot.params import ESCAPE


@shared_jit
def mandelbrot_escape(x0, y0, iterations):
    """Iterations of z = z*z + c from z = 0 before |z|^2 > 4 (``iterations`` when the point stays bounded).
    2*zr*zi is written zr*zi + zr*zi: the same rounding in every precision, with no literal to widen it."""
    zr = x0 - x0  # zero in the precision of the arguments
    zi = zr
    for i in range(iterations):
        zr2 = zr * zr
        zi2 = zi * zi
        if zr2 + zi2 > ESCAPE:
            return i
        zi = zr * zi + zr * zi + y0
        zr = zr2 - zi2 + x0
    return iterations


@shared_jit
def mandelbrot_colour(n, iterations):
    """The RGBA word of a point that escaped after ``n`` iterations (black when bounded): Bernstein
    polynomials of t = n / iterations in 1/256 steps, as integers."""
    if n >= iterations:
        return np.uint32(0xFF000000)
    t = np.int64(n) * 256 // np.int64(iterations)
    u = 256 - t
    r = (9 * u * t * t * t * 255) >> 32
    g = (15 * u * u * t * t * 255) >> 32
    b = (17 * u * u * u * t * 255) >> 33
    return np.uint32(r) | (np.uint32(g) << np.uint32(8)) | (np.uint32(b) << np.uint32(16)) | np.uint32(0xFF000000)


@shared_jit
def mandelbrot_pixel(pixels, x, y, cx, cy, scale, half, iterations):
    """Map pixel (x, y) to the plane, iterate, and write its RGBA bytes as one 32-bit word."""
    x0 = cx + scale * np.float32(x - (pixels.shape[1] >> 1)) / half
    y0 = cy + scale * np.float32((pixels.shape[0] >> 1) - 1 - y) / half
    pixels[y, x] = mandelbrot_colour(mandelbrot_escape(x0, y0, iterations), iterations)
