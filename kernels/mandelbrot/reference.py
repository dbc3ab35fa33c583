"""The Mandelbrot set in numpy: an independent rendering of the view's definition (:mod:`.params`), written
from the definition, not from the kernels. ``render(params, size, step)`` evaluates every ``step``-th pixel
of the full-size mapping and repeats it into ``step`` x ``step`` blocks: the window's preview while numba
loads. Only the points still iterating are iterated, so bounded points pay."""

from __future__ import annotations

import numpy as np

from kernels.mandelbrot.params import DTYPES, ESCAPE, MandelbrotParams


def escape_counts(params: MandelbrotParams, size: tuple[int, int], step: int = 1) -> np.ndarray:
    """(rows, columns) escape counts of every ``step``-th pixel (``params.iterations``: bounded)."""
    width, height = size
    real = DTYPES[params.precision]
    scale, half = real(params.scale / params.zoom), real(min(width, height) // 2)
    xs, ys = np.arange(step // 2, width, step), np.arange(step // 2, height, step)
    re = real(params.center[0]) + scale * (xs - (width >> 1)).astype(np.float32).astype(real) / half
    im = real(params.center[1]) + scale * ((height >> 1) - 1 - ys).astype(np.float32).astype(real) / half
    x0 = np.broadcast_to(re[None, :], (ys.size, xs.size)).ravel().copy()
    y0 = np.broadcast_to(im[:, None], (ys.size, xs.size)).ravel().copy()
    count = np.full(x0.size, params.iterations, np.int64)
    alive = np.arange(x0.size)
    zr, zi = np.zeros_like(x0), np.zeros_like(y0)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(params.iterations):
            zr2, zi2 = zr * zr, zi * zi
            out = zr2 + zi2 > real(ESCAPE)
            if out.any():
                count[alive[out]] = i
                keep = ~out
                alive, zr, zi, zr2, zi2, x0, y0 = (a[keep] for a in (alive, zr, zi, zr2, zi2, x0, y0))
                if not alive.size:
                    break
            zi = zr * zi + zr * zi + y0
            zr = zr2 - zi2 + x0
    return count.reshape(ys.size, xs.size)


def colours(count: np.ndarray, iterations: int) -> np.ndarray:
    """(..., 4) RGBA bytes of escape counts: black where bounded, Bernstein polynomials of the count else."""
    t = count.astype(np.int64) * 256 // iterations
    u = 256 - t
    rgba = np.zeros((*count.shape, 4), np.uint8)
    escaped = count < iterations
    rgba[..., 0] = np.where(escaped, (9 * u * t ** 3 * 255) >> 32, 0)
    rgba[..., 1] = np.where(escaped, (15 * u ** 2 * t ** 2 * 255) >> 32, 0)
    rgba[..., 2] = np.where(escaped, (17 * u ** 3 * t * 255) >> 33, 0)
    rgba[..., 3] = 255
    return rgba


def render(params: MandelbrotParams, size: tuple[int, int], step: int = 1) -> np.ndarray:
    """(H, W, 4) RGBA bytes of the view at ``size``, every ``step``-th pixel computed."""
    width, height = size
    rgba = colours(escape_counts(params, size, step), params.iterations)
    return np.ascontiguousarray(np.repeat(np.repeat(rgba, step, axis=0), step, axis=1)[:height, :width])
