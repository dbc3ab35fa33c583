"""Binned tiles sorted nearest first: the shading kernel of ``spheres-best``.

The frame bins the spheres into screen tiles exactly as :mod:`.binned` does (count, scan, fill: the same
kernels). Its shading kernel then differs in one thing: before shading, each block sorts its tile's list by
the largest depth a hit on each sphere can reach (:func:`.shading.sphere_reach`), nearest first, with a
bitonic sort in shared memory, and each pixel walks that order only until the next sphere's reach lies
below the depth it already has: that sphere and every later one cannot be nearer (the argument of
:mod:`.tiles`, the CPU twin that does the same with depth buckets). A block stages the next chunk of
sorted spheres only while one of its pixels still needs it (``syncthreads_or``).

Why: at a million spheres a 16x16 tile lists about 550 of them and every pixel of ``spheres-binned`` tests
all 550, while a pixel is covered by about 36 and the nearest of those is among the first few dozen in
depth order. The cost then follows what is visible, not what is listed; pixels no sphere covers still
test their whole list.

A list longer than ``SORT_CAP`` is sorted and walked in segments of ``SORT_CAP`` entries, each pixel
stopping early within each segment: still exact, only slower. The image is the one of every other
kernel, pixel for pixel (``sphere_step`` breaks ties in depth by scene index, whatever the order).
"""

from __future__ import annotations

import functools

import numpy as np

from kernels.backend.compiler import cuda
from kernels.device_functions.callees import for_kernels
from kernels.spheres.layout import HOT, MISS, TILE_CHUNK, TILE_FLOATS
from kernels.spheres.shading import sphere_reach, sphere_step, stage_sphere, store_pixel

SORT_CAP = 1024  # list entries sorted at once (a power of two): 8 KiB of keys and indices in shared memory
SHADE_SIGNATURE = "void(float32[::1], int32, boolean, int64[::1], int32[::1], int32[::1], uint32[:, ::1])"

_sphere_reach, _sphere_step, _stage_sphere, _store_pixel = (
    for_kernels(f) for f in (sphere_reach, sphere_step, stage_sphere, store_pixel))


@cuda.jit(device=True)
def _sort_nearest_first(keys, order, size, tid, threads):
    """Bitonic sort of keys[0..size) (``size`` a power of two), largest first, carrying ``order`` along; every
    thread of the block takes part. Each stage pairs element ``lo`` with ``lo + j``; a thread takes the pairs
    tid, tid + threads, ... of the size / 2 pairs."""
    k = 2
    while k <= size:
        j = k // 2
        while j > 0:
            for p in range(tid, size // 2, threads):
                lo = ((p & ~(j - 1)) << 1) | (p & (j - 1))
                hi = lo + j
                a = keys[lo]
                b = keys[hi]
                # descending inside blocks whose k-bit is clear, ascending where it is set: after the last
                # stage (k = size) the whole array is descending
                if (a < b) if (lo & k) == 0 else (a > b):
                    keys[lo] = b
                    keys[hi] = a
                    t = order[lo]
                    order[lo] = order[hi]
                    order[hi] = t
            cuda.syncthreads()
            j //= 2
        k *= 2


def shade_sorted(spheres, count, staggered, tile_offsets, tile_list, tile_cursor, pixels):
    """One block per tile (the launch's block is the tile, as in :func:`.binned.shade_tiles`); ``staggered``
    is accepted for the frame's common signature and ignored: the order is nearest first."""
    keys = cuda.shared.array(SORT_CAP, np.float32)  # reach of each listed sphere, sorted largest first
    order = cuda.shared.array(SORT_CAP, np.int32)  # its scene index
    tile = cuda.shared.array(TILE_FLOATS, np.float32)  # hot records, then cold ones
    tile_index = cuda.shared.array(TILE_CHUNK, np.int32)
    tid = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    threads = cuda.blockDim.x * cuda.blockDim.y
    t = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x
    first = tile_offsets[t]
    n = tile_offsets[t + 1] - first
    if tid == 0:
        tile_cursor[t] = 0  # the fill pass's cursor, zero again for the next frame's count pass
    x, y = cuda.grid(2)
    width, height = pixels.shape[1], pixels.shape[0]
    inside = x < width and y < height
    ox = np.float32(x - width // 2)
    oy = np.float32(y - height // 2)
    r = g = b = np.float32(0.0)
    maxz = MISS
    nearest = count
    for segment in range(0, n, SORT_CAP):
        m = min(SORT_CAP, n - segment)
        size = 1
        while size < m:
            size *= 2
        for j in range(tid, size, threads):
            if j < m:
                i = tile_list[first + segment + j]
                keys[j] = _sphere_reach(spheres, i)
                order[j] = i
            else:
                keys[j] = -np.inf  # padding sorts last and is never visited
                order[j] = 0
        cuda.syncthreads()
        _sort_nearest_first(keys, order, size, tid, threads)
        for base in range(0, m, TILE_CHUNK):
            # the chunk's first key is its largest reach: stage it only if some pixel could still meet it
            wants = 1 if inside and keys[base] >= maxz else 0  # an int: syncthreads_or does not type a bool
            if cuda.syncthreads_or(wants) == 0:
                break  # uniform: no pixel of the block needs this chunk or any later one of the segment
            c = min(TILE_CHUNK, m - base)
            for j in range(tid, c, threads):
                _stage_sphere(tile, tile_index, j, spheres, count, order[base + j])
            cuda.syncthreads()
            for j in range(c):
                if keys[base + j] < maxz:
                    break  # this sphere and every later one of the segment lie behind the hit
                r, g, b, maxz, nearest = _sphere_step(tile, TILE_CHUNK * HOT, j, np.int64(tile_index[j]), ox, oy,
                                                      r, g, b, maxz, nearest)
            cuda.syncthreads()  # the next chunk overwrites the tile
        cuda.syncthreads()  # the next segment overwrites the keys
    if inside:
        _store_pixel(pixels, x, y, r, g, b)


@functools.lru_cache(maxsize=None)
def shade_kernel():
    """The compiled shading kernel, once per process."""
    return cuda.jit(SHADE_SIGNATURE)(shade_sorted)
