"""The Julia set's per-pixel math, written once as ``@numba.jit`` functions that the CUDA kernel and the CPU
twin both call (the book's cuComplex operations, in the precision of the arguments)."""

from __future__ import annotations

import math

import numpy as np

from kernels.backend.simulator import shared_jit
from kernels.julia.params import ESCAPE


@shared_jit
def julia_escape(jx, jy, cr, ci, iterations):
    """Iterations until |z|^2 > 1000 (``iterations`` when the point stays bounded), and the final |z|^2.
    Written as the book's cuComplex operations, in the precision of its arguments."""
    ar = jx
    ai = jy
    for i in range(iterations):
        nr = ar * ar - ai * ai + cr
        ni = ai * ar + ar * ai + ci
        ar = nr
        ai = ni
        mag2 = ar * ar + ai * ai
        if mag2 > ESCAPE:
            return i, mag2
    return iterations, ar * ar + ai * ai


@shared_jit
def julia_colour(n, mag2, iterations, colormap):
    """The RGBA word of a point that escaped after ``n`` iterations with |z|^2 = ``mag2`` (``n`` equal to
    ``iterations``: bounded): the classic red on black, or the smooth palette."""
    r = g = b = np.uint8(0)
    if colormap == 0:  # classic: the book's red where bounded
        if n == iterations:
            r = np.uint8(255)
    elif n < iterations:  # smooth: normalised iteration count through a cosine palette
        mu = np.float32(n + 1) - np.float32(math.log2(math.log(mag2) * 0.5 / math.log(2.0) + 1e-9))
        v = np.float32(3.0) * np.float32(math.sqrt(max(mu, np.float32(0.0)) / np.float32(iterations)))
        r = np.uint8(255.0 * (0.5 + 0.5 * math.cos(6.2831853 * (v + 0.00))))
        g = np.uint8(255.0 * (0.5 + 0.5 * math.cos(6.2831853 * (v + 0.10))))
        b = np.uint8(255.0 * (0.5 + 0.5 * math.cos(6.2831853 * (v + 0.20))))
    return np.uint32(r) | (np.uint32(g) << np.uint32(8)) | (np.uint32(b) << np.uint32(16)) | np.uint32(0xFF000000)


@shared_jit
def julia_pixel(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap):
    """Map pixel (x, y) to the plane, iterate, and write its RGBA bytes as one 32-bit word."""
    # the standard orientation (see the module's docstring); pixel offsets are exact in float32
    jx = cx + scale * np.float32(x - (pixels.shape[1] >> 1)) / half
    jy = cy + scale * np.float32((pixels.shape[0] >> 1) - 1 - y) / half
    n, mag2 = julia_escape(jx, jy, cr, ci, iterations)
    pixels[y, x] = julia_colour(n, mag2, iterations, colormap)
