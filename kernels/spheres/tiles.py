"""The sphere ray tracer's tiled CPU twin: the binned-tiles idea of :mod:`.binned` on the host.

The row twin (:mod:`.cpu`) tests every pixel of a row against every sphere that crosses the row. Here the
spheres are first sorted into screen tiles of ``TILE`` x ``TILE`` pixels, then every tile is shaded from
its own short list, tiles in parallel. A frame:

1. order: the spheres nearest first by the largest depth a hit on them can reach, ``reach = z + sqrt(r*r)``:
   a counting sort into 4096 depth buckets (O(n): 8 ms at a million spheres, where a full argsort took
   130 ms), each sphere remembering ``top``, the largest reach in its bucket; the count pass below gathers
   the spheres into that order as it goes, so every later pass reads them in sequence;
2. count: each sphere's bounding square, with a pixel of margin (:func:`.shading.tile_span`, the GPU's
   own), adds one to every tile it covers, in the counters of its chunk of spheres (chunks in
   parallel, so no two threads write one counter);
3. scan: an exclusive prefix sum gives every (tile, chunk) its place in one list;
4. fill: each chunk writes its spheres there, so every tile's list keeps the nearest-first order;
5. shade: each tile copies its listed spheres next to each other (hot and cold records, as in the GPU's
   shared memory) and each of its pixels takes :func:`.shading.sphere_step` over the list, until it
   meets a sphere whose ``top`` is below the depth it already has: that sphere and all after it
   cannot be nearer.

The early stop changes no pixel: a hit's depth is ``dz + z`` with ``dz = sqrt(r*r - dx*dx - dy*dy)``
rounded, never above ``sqrt(r*r)`` rounded (each rounding is monotonic), so never above ``reach``, and
no sphere after one in the order reaches above that one's ``top``; a sphere below the pixel's depth could
not even tie with it. Ties in depth go to the lower scene index inside ``sphere_step``, whatever the
visiting order, so the image is the row twin's and the definition's, pixel for pixel. (The
``staggered`` access pattern is a GPU memory experiment: this twin always visits nearest first.)

The cost then follows what is visible, not what is listed: a pixel behind dozens of overlapping spheres
stops after the few nearest. Binning and ordering are part of every frame, as in ``spheres-binned``.
"""

from __future__ import annotations

import numba
import numpy as np

from kernels.spheres.layout import COLD, HOT, MISS
from kernels.spheres.shading import sphere_reach, sphere_step, store_pixel, tile_span
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run

TILE = 16  # pixels on a tile's side, as a 16x16 block of the GPU's binned kernel (8 and 32: slower here)
CHUNKS = 16  # chunks of spheres binned in parallel, each with its own counters
DEPTH_BUCKETS = 4096  # the nearest-first order is a counting sort into this many depth buckets
STRIPES = 64  # interleaved groups of tiles shared among the threads


@numba.njit(nogil=True, cache=True)
def order_by_reach(spheres, count):
    """(order, bucket, top_of_bucket): the scene indices nearest reach first, by a counting sort into
    DEPTH_BUCKETS depth buckets (stable: by index inside a bucket); each sphere's bucket, and each bucket's
    largest reach. Every sphere after one in the order reaches at most that one's bucket's top. Serial:
    a few milliseconds at a million spheres, and each parallel loop costs about a second of compile."""
    reach = np.empty(count, np.float32)
    for i in range(count):
        reach[i] = sphere_reach(spheres, i)  # never below dz + z
    hi = np.float64(reach.max())
    span = hi - np.float64(reach.min())
    scale = (DEPTH_BUCKETS - 1) / span if span > 0 else 0.0
    bucket = np.empty(count, np.int32)
    starts = np.zeros(DEPTH_BUCKETS + 1, np.int64)
    top_of_bucket = np.full(DEPTH_BUCKETS, -np.inf, np.float32)
    for i in range(count):
        k = min(int((hi - reach[i]) * scale), DEPTH_BUCKETS - 1)  # monotonic: nearer, never a later bucket
        bucket[i] = k
        starts[k + 1] += 1
        top_of_bucket[k] = max(top_of_bucket[k], reach[i])
    for k in range(DEPTH_BUCKETS):  # prefix sum: where each bucket starts
        starts[k + 1] += starts[k]
    order = np.empty(count, np.int32)
    for i in range(count):
        order[starts[bucket[i]]] = i
        starts[bucket[i]] += 1
    return order, bucket, top_of_bucket


@numba.njit(nogil=True, parallel=True, cache=True)
def bin_spheres(spheres, count, width, height, tile):
    """(ordered, order, top, offsets, tile_list, longest): ``ordered`` is the sphere buffer nearest first
    (:func:`order_by_reach`; row k is scene index ``order[k]``, ``top[k]`` bounds the reach of rows k on),
    and tile t lists rows tile_list[offsets[t]:offsets[t+1]] of it, in increasing row order; ``longest``
    is the longest list."""
    chunks = max(1, min(CHUNKS, count // 4096))  # a small scene is one chunk: fewer counters to scan
    order, bucket, top_of_bucket = order_by_reach(spheres, count)
    ordered = np.empty(count * (HOT + COLD), np.float32)
    top = np.empty(count, np.float32)
    tiles_x = (width + tile - 1) // tile
    tiles = tiles_x * ((height + tile - 1) // tile)
    per = (count + chunks - 1) // chunks
    counts = np.zeros((chunks, tiles), np.int64)
    for c in numba.prange(chunks):
        for k in range(c * per, min(count, (c + 1) * per)):
            i = order[k]  # one gather into the order, then every pass reads the spheres in sequence
            for f in range(HOT):
                ordered[HOT * k + f] = spheres[HOT * i + f]
            for f in range(COLD):
                ordered[count * HOT + COLD * k + f] = spheres[count * HOT + COLD * i + f]
            top[k] = top_of_bucket[bucket[i]]
            tx0, tx1, ty0, ty1 = tile_span(ordered, k, width, height, tile, tile)
            for ty in range(ty0, ty1 + 1):
                for tx in range(tx0, tx1 + 1):
                    counts[c, ty * tiles_x + tx] += 1
    offsets = np.empty(tiles + 1, np.int64)
    total = 0
    longest = 0
    for t in range(tiles):  # exclusive prefix sum, tile by tile and, inside a tile, chunk by chunk
        offsets[t] = total
        for c in range(chunks):
            n = counts[c, t]
            counts[c, t] = total  # now the chunk's cursor into the list
            total += n
        longest = max(longest, total - offsets[t])
    offsets[tiles] = total
    tile_list = np.empty(total, np.int32)
    for c in numba.prange(chunks):
        for k in range(c * per, min(count, (c + 1) * per)):
            tx0, tx1, ty0, ty1 = tile_span(ordered, k, width, height, tile, tile)
            for ty in range(ty0, ty1 + 1):
                for tx in range(tx0, tx1 + 1):
                    t = ty * tiles_x + tx
                    tile_list[counts[c, t]] = k
                    counts[c, t] += 1
    return ordered, order, top, offsets, tile_list, longest


@numba.njit(nogil=True, parallel=True, cache=True)
def shade_tiles_cpu(ordered, order, top, offsets, tile_list, longest, tile, pixels):
    """Every tile from its own list, tiles in parallel (interleaved, so every thread gets a fair share)."""
    count = order.size
    h, w = pixels.shape[0], pixels.shape[1]
    tiles_x = (w + tile - 1) // tile
    tiles = tiles_x * ((h + tile - 1) // tile)
    for stripe in numba.prange(STRIPES):
        staged = np.empty(longest * (HOT + COLD), np.float32)  # hot records, then cold from longest * HOT
        staged_index = np.empty(longest, np.int32)
        staged_top = np.empty(longest, np.float32)
        cold_at = longest * HOT
        for t in range(stripe, tiles, STRIPES):
            first = offsets[t]
            n = offsets[t + 1] - first
            for j in range(n):  # stage the tile's spheres next to each other
                k = tile_list[first + j]
                for f in range(HOT):
                    staged[HOT * j + f] = ordered[HOT * k + f]
                for f in range(COLD):
                    staged[cold_at + COLD * j + f] = ordered[count * HOT + COLD * k + f]
                staged_index[j] = order[k]
                staged_top[j] = top[k]
            x0 = (t % tiles_x) * tile
            y0 = (t // tiles_x) * tile
            for y in range(y0, min(y0 + tile, h)):
                oy = np.float32(y - h // 2)
                for x in range(x0, min(x0 + tile, w)):
                    ox = np.float32(x - w // 2)
                    r = g = b = np.float32(0.0)
                    maxz = MISS
                    nearest = count
                    for j in range(n):
                        if staged_top[j] < maxz:  # this sphere and all after it lie behind the hit
                            break
                        r, g, b, maxz, nearest = sphere_step(staged, cold_at, j, staged_index[j], ox, oy,
                                                             r, g, b, maxz, nearest)
                    store_pixel(pixels, x, y, r, g, b)


def render_spheres_tiles(spheres, count, pixels, tile: int = TILE):
    """One frame: bin (order, count, scan, fill), then shade; ``spheres`` packed as :mod:`.layout` says."""
    h, w = pixels.shape
    ordered, order, top, offsets, tile_list, longest = bin_spheres(spheres, count, w, h, tile)
    shade_tiles_cpu(ordered, order, top, offsets, tile_list, longest, tile, pixels)
