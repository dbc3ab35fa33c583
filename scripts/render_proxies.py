"""CPU-side proxies for the renderers' GPU work (issue 52): counts, not times, from the same scenes and views the
benchmarks draw. No GPU needed; the figures are design evidence for ``spheres-sorted`` and ``julia-grouped``
until a GPU measures them.

    python scripts/render_proxies.py [--spheres 100000,1000000] [--julia 1024,4096] [--size 1024]

Spheres (1024x1024, 16x16 tiles, the bench's scene of N spheres, seed 0): list entries per tile, and sphere
tests per pixel and per warp of 16x2 pixels (a warp runs as long as its slowest lane) for ``spheres-binned``
(every listed sphere) and ``spheres-sorted`` (nearest reach first, stopping at the first sphere whose reach
lies below the pixel's depth). Julia (the book's view, 200 iterations, float32): iterations per pixel, and per
warp of 16x2 pixels the slowest lane's iterations (``julia-2d``: one test each) and groups of four
(``julia-grouped``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def sphere_tests(n: int, size: int = 1024, tile: int = 16) -> dict:
    import numba

    from kernels.spheres.layout import HOT, MISS, pack_spheres
    from kernels.spheres.scene import generate_scene
    from kernels.spheres.shading import sphere_reach, sphere_step
    from kernels.spheres.tiles import bin_spheres

    @numba.njit(parallel=True)
    def count(ordered, order, offsets, tile_list, tile, w, h, binned, nearest_first):
        count = order.size
        tiles_x = (w + tile - 1) // tile
        for t in numba.prange(offsets.size - 1):
            first, m = offsets[t], offsets[t + 1] - offsets[t]
            rows = tile_list[first:first + m]
            reach = np.empty(m, np.float32)
            for j in range(m):
                reach[j] = sphere_reach(ordered, rows[j])
            rows = rows[np.argsort(-reach, kind="mergesort")]
            x0, y0 = (t % tiles_x) * tile, (t // tiles_x) * tile
            for y in range(y0, min(y0 + tile, h)):
                for x in range(x0, min(x0 + tile, w)):
                    ox, oy = np.float32(x - w // 2), np.float32(y - h // 2)
                    r = g = b = np.float32(0.0)
                    maxz, near = MISS, count
                    k = 0
                    for j in range(m):
                        if sphere_reach(ordered, rows[j]) < maxz:
                            break
                        r, g, b, maxz, near = sphere_step(ordered, count * HOT, rows[j], order[rows[j]], ox, oy,
                                                          r, g, b, maxz, near)
                        k += 1
                    binned[y, x] = m
                    nearest_first[y, x] = k

    scene = generate_scene(n, 0)
    packed = pack_spheres(scene.spheres)
    ordered, order, _, offsets, tile_list, _ = bin_spheres(packed, n, size, size, tile)
    binned = np.zeros((size, size), np.int64)
    nearest_first = np.zeros((size, size), np.int64)
    count(ordered, order, offsets, tile_list, tile, size, size, binned, nearest_first)
    lists = np.diff(offsets)

    def per_warp(a):
        return a.reshape(size // 2, 2, size // 16, 16).max(axis=(1, 3)).mean()

    return {"entries per tile (mean, max)": (lists.mean(), lists.max()),
            "binned tests per pixel / per warp lane": (binned.mean(), per_warp(binned)),
            "sorted tests per pixel / per warp lane": (nearest_first.mean(), per_warp(nearest_first))}


def julia_iterations(size: int, iterations: int = 200) -> dict:
    real = np.float32
    scale, half = real(1.5), real(size // 2)
    xs = np.arange(size)
    re = scale * (xs - (size >> 1)).astype(real) / half
    im = scale * ((size >> 1) - 1 - xs).astype(real) / half
    zr = np.broadcast_to(re[None, :], (size, size)).copy()
    zi = np.broadcast_to(im[:, None], (size, size)).copy()
    steps = np.full((size, size), iterations)
    alive = np.ones((size, size), bool)
    cr, ci = real(-0.8), real(0.156)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(iterations):
            zr, zi = zr * zr - zi * zi + cr, zi * zr + zr * zi + ci
            out = (zr * zr + zi * zi > 1000) & alive
            steps[out] = i + 1  # iterations run, the escaping one included
            alive &= ~out

    def per_warp(a):
        return a.reshape(size // 2, 2, size // 16, 16).max(axis=(1, 3)).mean()

    return {"iterations per pixel (mean; bounded share)": (steps.mean(), (steps == iterations).mean()),
            "slowest lane of a 16x2 warp: iterations / groups of 4": (per_warp(steps), per_warp(-(-steps // 4)))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spheres", default="100000,1000000")
    parser.add_argument("--julia", default="1024,4096", help="Julia image sides, multiples of 16")
    parser.add_argument("--size", type=int, default=1024, help="the spheres' image side, a multiple of 16")
    args = parser.parse_args(argv)
    for n in (int(v) for v in args.spheres.split(",") if v):
        for what, values in sphere_tests(n, args.size).items():
            print(f"spheres {n:>9,}: {what}: " + ", ".join(f"{v:.4g}" for v in values))
    for size in (int(v) for v in args.julia.split(",") if v):
        for what, values in julia_iterations(size).items():
            print(f"julia {size}x{size}: {what}: " + ", ".join(f"{v:.4g}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
