"""The Julia set in numpy: an independent rendering of the view's definition (:mod:`.params`), written from
the book, not from the kernels. ``render(params, size, step)`` evaluates every ``step``-th pixel of the
full-size mapping and repeats it into ``step`` x ``step`` blocks: the window's preview while numba loads
(:mod:`kernels.service.first_frame`). Only the points still iterating are iterated, so bounded points pay."""

from __future__ import annotations

import numpy as np

from kernels.julia.params import DTYPES, ESCAPE, JuliaParams


def render(params: JuliaParams, size: tuple[int, int], step: int = 1) -> np.ndarray:
    """(H, W, 4) RGBA bytes of the view at ``size``, every ``step``-th pixel computed."""
    width, height = size
    real = DTYPES[params.precision]
    scale, half = real(params.scale / params.zoom), real(min(width, height) // 2)
    xs = np.arange(step // 2, width, step)
    ys = np.arange(step // 2, height, step)
    re = real(params.center[0]) + scale * (xs - (width >> 1)).astype(real) / half
    im = real(params.center[1]) + scale * ((height >> 1) - 1 - ys).astype(real) / half
    zr = np.broadcast_to(re[None, :], (ys.size, xs.size)).ravel().copy()
    zi = np.broadcast_to(im[:, None], (ys.size, xs.size)).ravel().copy()
    count = np.full(zr.size, params.iterations, np.int64)  # iterations until escape; all = bounded
    mag2 = np.zeros(zr.size, real)
    alive = np.arange(zr.size)
    cr, ci = real(params.c.real), real(params.c.imag)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(params.iterations):
            ar, ai = zr, zi
            zr, zi = ar * ar - ai * ai + cr, ai * ar + ar * ai + ci
            m = zr * zr + zi * zi
            out = m > real(ESCAPE)
            if out.any():
                count[alive[out]], mag2[alive[out]] = i, m[out]
                keep = ~out
                alive, zr, zi = alive[keep], zr[keep], zi[keep]
                if not alive.size:
                    break
        mag2[alive] = zr * zr + zi * zi
    rgb = _colours(count, mag2, params).reshape(ys.size, xs.size, 3)
    full = np.repeat(np.repeat(rgb, step, axis=0), step, axis=1)[:height, :width]
    image = np.empty((height, width, 4), np.uint8)
    image[..., :3] = full
    image[..., 3] = 255
    return image


def _colours(count: np.ndarray, mag2: np.ndarray, params: JuliaParams) -> np.ndarray:
    rgb = np.zeros((count.size, 3), np.uint8)
    bounded = count == params.iterations
    if params.colormap == "classic":  # the book's red where bounded
        rgb[bounded, 0] = 255
        return rgb
    escaped = ~bounded  # smooth: normalised iteration count through a cosine palette
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = (count[escaped] + 1) - np.log2(np.log(mag2[escaped].astype(np.float64)) * 0.5 / np.log(2.0) + 1e-9)
    v = 3.0 * np.sqrt(np.maximum(mu, 0.0) / params.iterations)
    for k, phase in enumerate((0.0, 0.1, 0.2)):
        rgb[escaped, k] = (255.0 * (0.5 + 0.5 * np.cos(6.2831853 * (v + phase)))).astype(np.uint8)
    return rgb
