"""How many ray-sphere tests a frame of each variant performs (numpy, from the scene alone): every pixel
against every sphere without culling; with it, what the variant's cull keeps, counted per sphere from the
same conservative bounds the kernels use:

- ``tiles`` (``spheres-shared``): every thread of a block tests each sphere whose square touches the block's
  rectangle, a pixel's margin around it (threads past the image's edge included);
- ``bins`` (``spheres-binned``): every thread of a tile tests its tile's list (``shading.tile_span``'s squares);
  ``spheres-sorted`` too, as an upper bound: its list sorted nearest first, a pixel stops at the first sphere
  that cannot be nearer, which only the frame knows;
- ``rows`` (``spheres-cpu``, ``spheres-cpu-serial``): every pixel of a row tests the spheres the row crosses;
- ``bins-at-most`` (``spheres-cpu-tiles``): its 16x16 bins, an upper bound (a pixel stops at the first sphere
  that cannot be nearer).

A variant named nowhere here is counted without culling (pixels x spheres)."""

from __future__ import annotations

import numpy as np

CULLING = {"spheres-shared": "tiles", "spheres-binned": "bins", "spheres-sorted": "bins", "spheres-cpu": "rows",
           "spheres-cpu-serial": "rows", "spheres-cpu-tiles": "bins-at-most"}
CPU_TILE = (16, 16)


def block_shape(block, default=(16, 16)) -> tuple[int, int]:
    """A row's block ('16x16', (16, 16) or '') as (width, height)."""
    if isinstance(block, tuple) and len(block) == 2:
        return int(block[0]), int(block[1])
    if isinstance(block, str) and "x" in block:
        w, h = block.split("x")
        return int(w), int(h)
    return default


def all_tests(spheres: np.ndarray, size) -> int:
    return int(size[0]) * int(size[1]) * int(spheres.shape[0])


def tests_performed(spheres: np.ndarray, size, variant: str, block="") -> int:
    """Ray-sphere tests one frame of ``variant`` performs on the scene's (N, 7) records at ``size`` (W, H)."""
    kind = CULLING.get(variant)
    if kind is None:
        return all_tests(spheres, size)
    width, height = int(size[0]), int(size[1])
    sx, sy, radius = (spheres[:, k].astype(np.float64) for k in (4, 5, 3))
    if kind == "rows":  # rows y with (y - H/2 - sy)^2 < r^2
        lo = np.maximum(np.floor(sy - radius + height // 2) + 1, 0)
        hi = np.minimum(np.ceil(sy + radius + height // 2) - 1, height - 1)
        return int(width * np.maximum(hi - lo + 1, 0).sum())
    tw, th = CPU_TILE if kind == "bins-at-most" else block_shape(block)
    if kind == "tiles":
        nx, ny = -(-width // tw), -(-height // th)
        x0 = np.ceil((sx - radius + width // 2 - tw) / tw)
        x1 = np.floor((sx + radius + width // 2 + 1) / tw)
        y0 = np.ceil((sy - radius + height // 2 - th) / th)
        y1 = np.floor((sy + radius + height // 2 + 1) / th)
    else:  # shading.tile_span's squares, clamped to the image
        left, right = np.floor(sx - radius + width // 2 - 1), np.ceil(sx + radius + width // 2 + 1)
        bottom, top = np.floor(sy - radius + height // 2 - 1), np.ceil(sy + radius + height // 2 + 1)
        on = (right >= 0) & (top >= 0) & (left <= width - 1) & (bottom <= height - 1)
        x0, x1 = np.maximum(left, 0) // tw, np.minimum(right, width - 1) // tw
        y0, y1 = np.maximum(bottom, 0) // th, np.minimum(top, height - 1) // th
        x1, y1 = np.where(on, x1, x0 - 1), np.where(on, y1, y0 - 1)
        nx, ny = -(-width // tw), -(-height // th)
    x0, y0 = np.maximum(x0, 0), np.maximum(y0, 0)
    x1, y1 = np.minimum(x1, nx - 1), np.minimum(y1, ny - 1)
    tiles = np.maximum(x1 - x0 + 1, 0) * np.maximum(y1 - y0 + 1, 0)
    return int(tw * th * tiles.sum())
