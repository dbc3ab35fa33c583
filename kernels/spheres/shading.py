"""The per-sphere and per-pixel math of seed 001, written once as ``@numba.jit`` functions that every sphere
kernel (global, constant, shared tiles, binned tiles) and the CPU twins call."""

from __future__ import annotations

import math

import numpy as np

from kernels.backend.simulator import shared_jit
from kernels.spheres.layout import COLD, HOT, MISS, TILE_CHUNK


@shared_jit
def sphere_step(spheres, cold_at, i, index, ox, oy, r, g, b, maxz, nearest):
    """The book's Sphere::hit for sphere row ``i`` (whose scene index is ``index``) and the ray through
    (ox, oy); returns the updated nearest-hit state. Ties in depth go to the lower scene index, so every
    visiting order gives the same pixel."""
    h = HOT * i
    dx = ox - spheres[h]
    dy = oy - spheres[h + 1]
    radius = spheres[h + 2]
    if dx * dx + dy * dy < radius * radius:
        dz = np.float32(math.sqrt(radius * radius - dx * dx - dy * dy))
        t = dz + spheres[h + 3]
        if t > maxz or (t == maxz and index < nearest):
            fscale = dz / np.float32(math.sqrt(radius * radius))
            c = cold_at + COLD * i
            return spheres[c] * fscale, spheres[c + 1] * fscale, spheres[c + 2] * fscale, t, index
    return r, g, b, maxz, nearest


@shared_jit
def sphere_reach(spheres, i):
    """The largest depth a hit on sphere row ``i`` can reach, ``z + sqrt(r*r)``: never below the ``dz + z`` that
    :func:`sphere_step` computes for any ray (``r*r - dx*dx - dy*dy`` never rounds above ``r*r``, however the
    compiler fuses it, and square root and addition round monotonically). The nearest-first kernels and twins
    sort by it and stop a pixel at the first sphere whose reach lies below the depth it already has."""
    radius = spheres[HOT * i + 2]
    return spheres[HOT * i + 3] + np.float32(math.sqrt(radius * radius))


@shared_jit
def visit_spheres(spheres, cold_at, n, start, indices, ox, oy, r, g, b, maxz, nearest):
    """``sphere_step`` over rows 0..n-1 of ``spheres``, from row ``start`` on and wrapping around, a row's
    scene index being ``indices[row]``: the tiled kernels' loop over the spheres they staged."""
    for k in range(n):
        i = start + k
        if i >= n:
            i -= n
        index = np.int64(indices[i])  # 64-bit, as the row index is: one sphere_step for both loops
        r, g, b, maxz, nearest = sphere_step(spheres, cold_at, i, index, ox, oy, r, g, b, maxz, nearest)
    return r, g, b, maxz, nearest


@shared_jit
def visit_all_spheres(spheres, cold_at, n, start, ox, oy, r, g, b, maxz, nearest):
    """:func:`visit_spheres` over the scene itself (a row's index is the row): the global and constant
    kernels and the CPU. Two functions, not an ``indices is None`` test: numba-cuda-mlir does not compile
    that test on a value that may be an array (docs/compilers.md)."""
    for k in range(n):
        i = start + k
        if i >= n:
            i -= n
        r, g, b, maxz, nearest = sphere_step(spheres, cold_at, i, i, ox, oy, r, g, b, maxz, nearest)
    return r, g, b, maxz, nearest


@shared_jit
def shade_pixel(spheres, cold_at, count, start, ox, oy):
    """Colour of the ray through (ox, oy) over all spheres, visiting them from ``start`` on."""
    r = g = b = np.float32(0.0)
    r, g, b, maxz, nearest = visit_all_spheres(spheres, cold_at, count, start, ox, oy, r, g, b, MISS, count)
    return r, g, b


@shared_jit
def store_pixel(pixels, x, y, r, g, b):
    """Write int(value * 255) per channel as one 32-bit RGBA word: one store per pixel, not four."""
    red = np.uint32(np.uint8(r * np.float32(255.0)))
    green = np.uint32(np.uint8(g * np.float32(255.0)))
    blue = np.uint32(np.uint8(b * np.float32(255.0)))
    pixels[y, x] = red | (green << np.uint32(8)) | (blue << np.uint32(16)) | np.uint32(0xFF000000)


@shared_jit
def pattern_start(lane, count, staggered):
    return lane % count if staggered else 0


@shared_jit
def trace_pixel(pixels, spheres, cold_at, count, staggered, x, y, lane):
    """One kernel thread's work for pixel (x, y), ``lane`` being its index in the block."""
    if x < pixels.shape[1] and y < pixels.shape[0]:
        start = pattern_start(lane, count, staggered)
        ox = np.float32(x - pixels.shape[1] // 2)
        oy = np.float32(y - pixels.shape[0] // 2)
        r, g, b = shade_pixel(spheres, cold_at, count, start, ox, oy)
        store_pixel(pixels, x, y, r, g, b)


@shared_jit
def stage_sphere(tile, tile_index, slot, spheres, count, j):
    """Copy sphere ``j``'s hot and cold records into row ``slot`` of a shared-memory tile laid out like the
    sphere buffer (TILE_CHUNK rows: hot records, then cold ones), and remember its scene index."""
    for f in range(HOT):
        tile[HOT * slot + f] = spheres[HOT * j + f]
    for f in range(COLD):
        tile[TILE_CHUNK * HOT + COLD * slot + f] = spheres[count * HOT + COLD * j + f]
    tile_index[slot] = j


@shared_jit
def tile_span(spheres, i, width, height, tile_w, tile_h):
    """Tiles (tx0, tx1, ty0, ty1, inclusive) that the bounding square of sphere ``i`` covers; tx0 > tx1
    when it lies off screen. Pixel x has ox = x - width // 2, and a hit needs |ox - sx| < radius; the
    extra pixel each side keeps the test conservative under rounding. Clamped in float first, so
    coordinates far off screen never overflow the integer conversion."""
    sx = spheres[HOT * i]
    sy = spheres[HOT * i + 1]
    radius = spheres[HOT * i + 2]
    left = min(max(sx - radius + np.float32(width // 2 - 1), np.float32(-2.0)), np.float32(width + 1))
    right = min(max(sx + radius + np.float32(width // 2 + 1), np.float32(-2.0)), np.float32(width + 1))
    bottom = min(max(sy - radius + np.float32(height // 2 - 1), np.float32(-2.0)), np.float32(height + 1))
    top = min(max(sy + radius + np.float32(height // 2 + 1), np.float32(-2.0)), np.float32(height + 1))
    x0, x1 = int(math.floor(left)), int(math.ceil(right))
    y0, y1 = int(math.floor(bottom)), int(math.ceil(top))
    if x1 < 0 or y1 < 0 or x0 > width - 1 or y0 > height - 1:
        return 1, 0, 1, 0
    return max(x0, 0) // tile_w, min(x1, width - 1) // tile_w, max(y0, 0) // tile_h, min(y1, height - 1) // tile_h
