"""Binned tiles: the sphere ray tracer for scenes of up to a million spheres, the way tiled GPU
rasterisers work. A frame is four kernels on one stream:

1. count: ``lanes`` threads per sphere find the screen tiles its bounding square covers (a pixel of
   margin each side, so the square is conservative) and add one to each tile's counter, each thread every
   ``lanes``-th tile of the square;
2. scan: one block turns the counters into each tile's offset in one list (an exclusive prefix sum) and
   zeroes the counters again;
3. fill: the same threads append the sphere's index to each tile it covers, using the counter as the
   tile's cursor (an atomic add returns its slot);
4. shade: one block per tile stages its list, chunk by chunk, in shared memory and each thread shades
   its pixel from that list with the same per-sphere step as every other kernel (``sphere_step``).

The list of a tile is in no particular order, but ``sphere_step`` breaks ties in depth by scene index, so
the image is pixel-identical to global memory's. Counts and offsets are exact (two passes over the
spheres), so no list overflows; the atomics spread over the tiles (consecutive spheres lie anywhere on
screen), with no global hot spot. A tile is the launch's block, so ``block`` also sets the tile size.
Each fill atomic waits for its slot before the next, so one thread walking a large sphere's hundreds of
tiles would be the frame; ``lanes`` (:func:`lanes_for`) gives a sphere as many threads as it covers tiles on
average, up to a warp, and one thread each to a million small ones.
After the shade kernel the counters are zero again (each block zeroes its own), ready for the next frame.
"""

from __future__ import annotations

import functools

import numpy as np
from kernels.backend import memory
from kernels.backend.compiler import cuda
from kernels.device_functions.callees import for_kernels
from kernels.errors import InputError
from kernels.launch import grid_for
from kernels.launch.packed import FrameLaunches
from kernels.spheres.layout import HOT, MISS, TILE_CHUNK, TILE_FLOATS
from kernels.spheres.shading import pattern_start, stage_sphere, store_pixel, tile_span, visit_spheres

BIN_THREADS = 128  # threads per block of the count and fill kernels (``lanes`` of them per sphere)
MAX_LANES = 32  # threads per sphere at most: a warp
SIZING_WARPS = 1 << 16  # up to this many spheres the sizing pass gives each a warp
SCAN_THREADS = 128  # the scan's one block; each thread first sums a run of tiles
SCAN_SUMS = 2 * SCAN_THREADS  # two buffers of run sums (a shared array's size is one constant)
MAX_ENTRIES = 1 << 28  # tile-list entries (1 GiB of int32): a denser scene is refused, not half drawn


_tile_span, _visit_spheres, _store_pixel, _pattern_start, _stage_sphere = (
    for_kernels(f) for f in (tile_span, visit_spheres, store_pixel, pattern_start, stage_sphere))


def lanes_for(entries: int, count: int) -> int:
    """Threads per sphere for the count and fill kernels: the spheres' average tile count (``entries`` list
    entries over ``count`` spheres) rounded up to a power of two, from 1 to MAX_LANES."""
    average = -(-entries // max(count, 1))
    lanes = 1
    while lanes < min(average, MAX_LANES):
        lanes *= 2
    return lanes


@cuda.jit(device=True)
def _square(spheres, i, width, height, tile_w, tile_h):
    """(first column, first row, columns, tiles) of the square of tiles sphere ``i`` covers (``tile_span``),
    its tiles numbered 0, 1, ... row by row; no tiles off screen. The count and the fill pass both walk it,
    so both cover the same tiles."""
    tx0, tx1, ty0, ty1 = _tile_span(spheres, i, width, height, tile_w, tile_h)
    columns = tx1 - tx0 + 1
    return tx0, ty0, columns, (columns * (ty1 - ty0 + 1) if columns > 0 and ty1 >= ty0 else 0)


@cuda.jit(device=True)
def _tile_of(k, tx0, ty0, columns, tiles_x):
    """The screen tile of tile ``k`` of a square (:func:`_square`)."""
    return (ty0 + k // columns) * tiles_x + tx0 + k % columns


def _count_tiles(spheres, count, lanes, width, height, tile_w, tile_h, tiles_x, tile_counts):
    g = cuda.grid(1)
    i = g // lanes
    if i < count:
        tx0, ty0, columns, tiles = _square(spheres, i, width, height, tile_w, tile_h)
        for k in range(g % lanes, tiles, lanes):  # every lanes-th tile of the square
            cuda.atomic.add(tile_counts, _tile_of(k, tx0, ty0, columns, tiles_x), 1)


def _scan_tiles(tile_counts, tiles, tile_offsets):
    """Exclusive prefix sum of the counters into tile_offsets[0..tiles], the total at [tiles]; zeroes
    the counters. One block: thread t sums a run of tiles, the block scans the runs' sums in shared
    memory (Hillis-Steele, two buffers in turn), then each thread writes its run's offsets."""
    sums = cuda.shared.array(SCAN_SUMS, np.int64)
    t = cuda.threadIdx.x
    per = (tiles + SCAN_THREADS - 1) // SCAN_THREADS
    lo = min(t * per, tiles)
    hi = min(lo + per, tiles)
    own = np.int64(0)
    for k in range(lo, hi):
        own += tile_counts[k]
    sums[t] = own
    cuda.syncthreads()
    src = 0
    step = 1
    while step < SCAN_THREADS:
        value = sums[src + t]
        if t >= step:
            value += sums[src + t - step]
        sums[SCAN_THREADS - src + t] = value
        cuda.syncthreads()
        src = SCAN_THREADS - src
        step *= 2
    run = sums[src + t] - own
    for k in range(lo, hi):
        tile_offsets[k] = run
        run += tile_counts[k]
        tile_counts[k] = 0
    if t == SCAN_THREADS - 1:
        tile_offsets[tiles] = sums[src + t]


def _fill_tiles(spheres, count, lanes, width, height, tile_w, tile_h, tiles_x, tile_cursor, tile_offsets,
                tile_list):
    g = cuda.grid(1)
    i = g // lanes
    if i < count:
        tx0, ty0, columns, tiles = _square(spheres, i, width, height, tile_w, tile_h)
        for k in range(g % lanes, tiles, lanes):
            t = _tile_of(k, tx0, ty0, columns, tiles_x)
            at = tile_offsets[t] + cuda.atomic.add(tile_cursor, t, 1)
            if at < tile_offsets[t + 1]:  # always, as both passes cover the same tiles
                tile_list[at] = i


def shade_tiles(spheres, count, staggered, tile_offsets, tile_list, tile_cursor, pixels):
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
    ox = np.float32(x - width // 2)
    oy = np.float32(y - height // 2)
    r = g = b = np.float32(0.0)
    maxz = MISS
    nearest = count
    for base in range(0, n, TILE_CHUNK):
        m = min(TILE_CHUNK, n - base)
        for j in range(tid, m, threads):
            _stage_sphere(tile, tile_index, j, spheres, count, tile_list[first + base + j])
        cuda.syncthreads()
        start = _pattern_start(tid, m, staggered)
        r, g, b, maxz, nearest = _visit_spheres(tile, TILE_CHUNK * HOT, m, start, tile_index, ox, oy, r, g, b, maxz,
                                                nearest)
        cuda.syncthreads()  # the next chunk overwrites the tile
    if x < width and y < height:
        _store_pixel(pixels, x, y, r, g, b)


def _blocks(count: int, lanes: int) -> int:
    return max(1, -(-count * lanes // BIN_THREADS))


@functools.lru_cache(maxsize=None)
def gpu_kernels():
    """The four compiled kernels (count, scan, fill, shade), compiled once per process."""
    count = cuda.jit("void(float32[::1], int32, int32, int32, int32, int32, int32, int32, int32[::1])")(_count_tiles)
    scan = cuda.jit("void(int32[::1], int32, int64[::1])")(_scan_tiles)
    fill = cuda.jit("void(float32[::1], int32, int32, int32, int32, int32, int32, int32, int32[::1], int64[::1], "
                    "int32[::1])")(_fill_tiles)
    shade = cuda.jit("void(float32[::1], int32, boolean, int64[::1], int32[::1], int32[::1], uint32[:, ::1])")(shade_tiles)
    return count, scan, fill, shade


class BinnedTiles:
    """The tile counters, offsets and list of one renderer, kept between frames (grown, never shrunk).
    ``lanes``: threads per sphere in the count and fill kernels, or None for :func:`lanes_for`'s choice;
    ``nearest_first``: shade with :mod:`.sorted`'s kernel (each tile's list sorted nearest first, pixels
    stopping early) instead of :func:`shade_tiles`."""

    def __init__(self, lanes: int | None = None, nearest_first: bool = False):
        self.lanes = lanes
        self.nearest_first = nearest_first
        self.tile_counts = None  # int32 per tile; zero between frames
        self.tile_offsets = None  # int64, tiles + 1
        self.tile_list = None  # int32 sphere indices, tile after tile
        self.entries = 0  # list entries of the last scene prepared
        self.frame_lanes = 1  # threads per sphere of its frames
        self._prepared = None  # (spheres_dev, count, image shape, block) the list is sized for
        self._launches = FrameLaunches()  # the frame's four launches, their arguments converted once

    def prepare(self, spheres_dev, count: int, staggered: bool, image_dev, block: tuple[int, int]):
        """Bin once to learn the list's exact length (one small copy to the host), size the list, and
        return the launch of one whole frame: count, scan, fill, shade. The same uploaded scene at the
        same size and block needs no new sizing (the key holds the device array, so it stays unique)."""
        height, width = image_dev.shape
        tile_w, tile_h = block
        tiles_x, tiles_y = grid_for(width, height, block)
        tiles = tiles_x * tiles_y
        if self.tile_counts is None or self.tile_counts.size != tiles:
            self.tile_counts = memory.zeros(tiles, np.int32)
            self.tile_offsets = memory.empty(tiles + 1, np.int64)
        count_k, scan_k, fill_k, shade_k = gpu_kernels()
        if self.nearest_first:
            from kernels.spheres.sorted import shade_kernel

            shade_k = shade_kernel()
        counts, offsets = self.tile_counts, self.tile_offsets
        n = np.int32(count)
        shape = (np.int32(width), np.int32(height), np.int32(tile_w), np.int32(tile_h), np.int32(tiles_x))
        key = (count, (height, width), tuple(block))
        if self._prepared is None or self._prepared[0] is not spheres_dev or self._prepared[1:] != key:
            self._prepared = None
            # the sizing pass, before the spheres' sizes are known: a warp each unless they are many
            lanes = self.lanes or (MAX_LANES if count <= SIZING_WARPS else 1)
            count_k[_blocks(count, lanes), BIN_THREADS](spheres_dev, n, np.int32(lanes), *shape, counts)
            scan_k[1, SCAN_THREADS](counts, np.int32(tiles), offsets)  # leaves the counters zero
            entries = int(memory.to_host(offsets[tiles:])[0])
            if entries > MAX_ENTRIES:
                raise InputError(f"binned tiles: the spheres cover {entries:,} tile slots, more than {MAX_ENTRIES:,}; "
                                 f"use fewer or smaller spheres, or larger blocks")
            if self.tile_list is None or self.tile_list.size < entries:
                self.tile_list = memory.empty(max(entries + entries // 4, 1), np.int32)
            self.entries = entries
            self.frame_lanes = self.lanes or lanes_for(entries, count)
            self._prepared = (spheres_dev, *key)
        tile_list = self.tile_list
        lanes = np.int32(self.frame_lanes)
        bins = _blocks(count, self.frame_lanes)
        steps = ((count_k, bins, BIN_THREADS, (spheres_dev, n, lanes, *shape, counts)),
                 (scan_k, 1, SCAN_THREADS, (counts, np.int32(tiles), offsets)),
                 (fill_k, bins, BIN_THREADS, (spheres_dev, n, lanes, *shape, counts, offsets, tile_list)),
                 (shade_k, (tiles_x, tiles_y), tuple(block),
                  (spheres_dev, n, staggered, offsets, tile_list, counts, image_dev)))
        return self._launches.frame(steps)
