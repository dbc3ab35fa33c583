"""The sphere ray tracer in numpy: an independent rendering of seed 001's definition, written from the
book, not from the kernels. Each sphere touches only the pixels of its bounding square, so a 1024x1024
frame of 20 spheres takes milliseconds: fast enough to be the window's preview while numba loads
(:mod:`kernels.service.first_frame`)."""

from __future__ import annotations

import math

import numpy as np


def render(spheres: np.ndarray, width: int, height: int) -> np.ndarray:
    """(H, W, 4) RGBA bytes of the scene's (N, 7) records (r, g, b, radius, x, y, z): the nearest hit
    (largest dz + z; ties to the lower index) shades ``color * dz / radius``, each byte ``int(v * 255)``."""
    f32 = np.float32
    maxz = np.full((height, width), f32(-2e10), f32)
    rgb = np.zeros((height, width, 3), f32)
    cx, cy = width // 2, height // 2
    for r, g, b, rad, x, y, z in np.asarray(spheres, f32):
        if not rad > 0:
            continue
        # pixels whose ray can hit: |px - cx - x| < rad, with a pixel of margin against rounding
        x0, x1 = _span(x, rad, cx, width)
        y0, y1 = _span(y, rad, cy, height)
        if x0 >= x1 or y0 >= y1:
            continue
        ox = (np.arange(x0, x1) - cx).astype(f32)[None, :]
        oy = (np.arange(y0, y1) - cy).astype(f32)[:, None]
        dx, dy = ox - x, oy - y
        d2 = dx * dx + dy * dy
        hit = d2 < rad * rad
        dz = np.sqrt(np.where(hit, rad * rad - d2, f32(0))).astype(f32)
        t = dz + z
        box = maxz[y0:y1, x0:x1]
        nearer = hit & (t > box)
        scale = dz / np.sqrt(rad * rad)
        shade = rgb[y0:y1, x0:x1]
        for k, colour in enumerate((r, g, b)):
            shade[..., k] = np.where(nearer, colour * scale, shade[..., k])
        box[...] = np.where(nearer, t, box)
    out = np.empty((height, width, 4), np.uint8)
    out[..., :3] = (rgb * f32(255)).astype(np.uint8)
    out[..., 3] = 255
    return out


def _span(centre: float, radius: float, offset: int, size: int) -> tuple[int, int]:
    lo = math.floor(float(centre) - float(radius)) + offset - 1
    hi = math.ceil(float(centre) + float(radius)) + offset + 2
    return max(lo, 0), min(hi, size)
