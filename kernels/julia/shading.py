"""The Julia set's per-pixel math, written once as ``@numba.jit`` functions that the CUDA kernel and the CPU
twin both call (the book's cuComplex operations, in the precision of the arguments)."""

from __future__ import annotations

import math

import numpy as np

from kernels.backend.simulator import shared_jit
from kernels.julia.params import ESCAPE


@shared_jit
def product(a, b):
    """``a * b``. The grouped kernel compiles its math with this product rounded on its own (no compiler fuses it
    into an FMA with the addition after it: kernels/device_functions/unfused.py), so its z is the CPU's, bit for
    bit; everywhere else it is the plain product it says."""
    return a * b


@shared_jit
def julia_escape(jx, jy, cr, ci, iterations):
    """Iterations until |z|^2 > 1000 (``iterations`` when the point stays bounded), and the final |z|^2.
    Written as the book's cuComplex operations, in the precision of its arguments."""
    ar = jx
    ai = jy
    for i in range(iterations):
        nr = product(ar, ar) - product(ai, ai) + cr
        ni = product(ai, ar) + product(ar, ai) + ci
        ar = nr
        ai = ni
        mag2 = product(ar, ar) + product(ai, ai)
        if mag2 > ESCAPE:
            return i, mag2
    return iterations, product(ar, ar) + product(ai, ai)


GROUP = 4  # iterations between two escape tests in julia_escape_grouped


@shared_jit
def julia_escape_grouped(jx, jy, cr, ci, iterations):
    """:func:`julia_escape`'s result with an escape test every GROUP iterations instead of every one: the loop
    is then the iteration's seven operations and a quarter of a test, where the test, the counter and the
    branch per iteration made it nearly three times as long. Escaping points grow fast (|z|^2 > 1000, then
    ~10^6, ~10^12, ...: infinite or NaN within a few iterations, which the test ``not <=`` also takes for an
    escape, while a bounded point never overflows), so a group that escaped anywhere ends outside the bound.
    The group it escaped in is then run again from its start by :func:`julia_escape` itself, testing every
    iteration, as are the last ``iterations % GROUP`` iterations: the count and |z|^2 are its own. (Should a
    compiler fuse the group's last |z|^2 differently from :func:`julia_escape`'s, a value within a rounding of
    the bound could be tested apart; the count would then say the next iteration. The grouped kernel rounds
every product on its own, as the CPU does, so it cannot.)"""
    ar = jx
    ai = jy
    br = ar
    bi = ai
    i = 0
    while i + GROUP <= iterations:
        br = ar
        bi = ai
        for _ in range(GROUP):  # the same operations as julia_escape's, in the same order
            nr = product(ar, ar) - product(ai, ai) + cr
            ni = product(ai, ar) + product(ar, ai) + ci
            ar = nr
            ai = ni
        if not product(ar, ar) + product(ai, ai) <= ESCAPE:
            break  # escaped in this group (or overflowed after escaping)
        i += GROUP
    if i + GROUP <= iterations:  # left by the break: replay the group from its start
        n, mag2 = julia_escape(br, bi, cr, ci, GROUP)
    else:  # bounded so far: the last iterations, fewer than a group
        n, mag2 = julia_escape(ar, ai, cr, ci, iterations - i)
    return i + n, mag2


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
def julia_point(pixels, x, y, cx, cy, scale, half):
    """The point of the plane at pixel (x, y), in the standard orientation (see the package's docstring); pixel
    offsets are exact in float32."""
    jx = cx + scale * np.float32(x - (pixels.shape[1] >> 1)) / half
    jy = cy + scale * np.float32((pixels.shape[0] >> 1) - 1 - y) / half
    return jx, jy


@shared_jit
def julia_pixel(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap):
    """Map pixel (x, y) to the plane, iterate, and write its RGBA bytes as one 32-bit word."""
    jx, jy = julia_point(pixels, x, y, cx, cy, scale, half)
    n, mag2 = julia_escape(jx, jy, cr, ci, iterations)
    pixels[y, x] = julia_colour(n, mag2, iterations, colormap)


@shared_jit
def julia_pixel_grouped(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap):
    """:func:`julia_pixel` with the escape tested every GROUP iterations (:func:`julia_escape_grouped`)."""
    jx, jy = julia_point(pixels, x, y, cx, cy, scale, half)
    n, mag2 = julia_escape_grouped(jx, jy, cr, ci, iterations)
    pixels[y, x] = julia_colour(n, mag2, iterations, colormap)
