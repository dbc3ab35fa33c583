"""The peers' bucket-grouped table (CSR) built by a counting sort in our own kernels: count the keys per
bucket, scan the counts into offsets, scatter each key to its bucket's offset plus a rank. Order within a
bucket is whatever the atomics hand out."""

from __future__ import annotations

import functools

import numpy as np
from numpy import int32, uint32  # numpy's, not numba's: both compilers type them (docs/compilers.md)

from kernels.backend.compiler import cuda

from kernels.backend import memory, not_applicable
from kernels.harness.rows import Outcome
from kernels.hashtable.chained import repeats_skip
from kernels.hashtable import (COUNTING_MAX_BUCKETS, HELPER_BLOCKS_PER_SM, HELPER_THREADS, SCAN_ITEMS,
                               SCAN_THREADS, SCAN_TILE, SHARED_BUCKETS, SORT_ITEMS, VARIANT_BY_NAME)
from kernels.launch import resident_blocks
from kernels.timing import time_kernel

@functools.lru_cache(maxsize=None)
def counting_sort_kernels():
    """(zero, count_shared, count_global, scan_tiles, add_bases, scatter_shared, scatter_global)."""

    # Key indices are cut to uint32 (n < 2^31) and the shared kernels' bucket loops run in int32 (at most
    # SHARED_BUCKETS): numba would do both in int64, with negative-index checks, which cost registers (96
    # instead of 56 in the scatter, too many for 1024-thread blocks) and instructions in the hot loops.

    @cuda.jit(device=True)
    def load_tile(keys, start, held):
        """Loads the thread's SORT_ITEMS keys of the tile at ``start`` into ``held``, all loads issued before
        any key is used, and returns how many it holds (the last tile may be short); for each k a warp reads
        32 neighbouring keys. Callers loop over all SORT_ITEMS and test k against the count: a constant trip
        count is unrolled, and only then does ``held`` live in registers instead of local memory."""
        threads = cuda.blockDim.x
        first = start + cuda.threadIdx.x
        mine = 0
        for k in range(SORT_ITEMS):
            i = uint32(first + k * threads)
            if i < keys.size:
                held[k] = keys[i]
                mine = k + 1
        return mine

    @cuda.jit
    def zero(counts):
        for b in range(cuda.grid(1), counts.size, cuda.gridsize(1)):
            counts[b] = 0

    def block_keys_function(place: bool):
        """This block's keys, tile by tile, one atomic add per key on its bucket's counter in ``counters``;
        with ``place`` (a constant of the closure, so each compiles alone) each key also goes to the place its
        add reserved there in ``sorted_keys``. Two functions, not a ``sorted_keys is None`` test:
        numba-cuda-mlir does not compile that test on a value that may be an array (docs/compilers.md)."""

        @cuda.jit(device=True)
        def reserve_block_keys(keys, counters, buckets, sorted_keys):
            tile = cuda.blockDim.x * SORT_ITEMS
            held = cuda.local.array(SORT_ITEMS, uint32)
            for start in range(cuda.blockIdx.x * tile, keys.size, cuda.gridDim.x * tile):
                mine = load_tile(keys, start, held)
                for k in range(SORT_ITEMS):
                    if k < mine:
                        slot = cuda.atomic.add(counters, held[k] % buckets, 1)
                        if place:
                            sorted_keys[uint32(slot)] = held[k]

        return reserve_block_keys

    count_block_keys, reserve_block_keys = block_keys_function(False), block_keys_function(True)

    @cuda.jit
    def count_shared(keys, counts, buckets):
        # a block counts all its keys in shared memory, then adds each non-zero count to the global one:
        # one global atomic per (block, bucket) instead of one per key
        per_bucket = cuda.shared.array(0, int32)  # dynamic: 4 bytes x buckets
        t = cuda.threadIdx.x
        threads = cuda.blockDim.x
        for b in range(t, int32(buckets), threads):
            per_bucket[b] = 0
        cuda.syncthreads()
        count_block_keys(keys, per_bucket, buckets, keys)
        cuda.syncthreads()
        for b in range(t, int32(buckets), threads):
            c = per_bucket[b]
            if c:
                cuda.atomic.add(counts, b, c)

    @cuda.jit
    def count_global(keys, counts, buckets):
        # too many buckets for shared memory: one global atomic per key, spread over many counters
        count_block_keys(keys, counts, buckets, keys)

    @cuda.jit
    def scan_tiles(src, dst, also, totals):
        # exclusive prefix sum of each tile of SCAN_TILE counts into dst (and the same values into also),
        # and each tile's total into totals[tile]. src may be dst: a thread reads its items before writing them
        # dynamic (SCAN_THREADS x 4 bytes at launch), as the other shared arrays here: the simulator hands
        # every thread one buffer for it, where it sets up a static one racily when threads switch often
        partial = cuda.shared.array(0, int32)
        mine = cuda.local.array(SCAN_ITEMS, int32)
        t = cuda.threadIdx.x
        m = src.size
        for tile in range(cuda.blockIdx.x, (m + SCAN_TILE - 1) // SCAN_TILE, cuda.gridDim.x):
            first = tile * SCAN_TILE + t * SCAN_ITEMS
            run = 0
            for k in range(SCAN_ITEMS):
                mine[k] = run
                if first + k < m:
                    run += src[first + k]
            partial[t] = run
            cuda.syncthreads()
            if t == 0:
                # the threads' sums in turn: SCAN_THREADS adds, cheaper than log2(SCAN_THREADS) rounds of
                # barriers (and no warp shuffles, which the simulator lacks)
                total = 0
                for j in range(SCAN_THREADS):
                    v = partial[j]
                    partial[j] = total
                    total += v
                totals[tile] = total
            cuda.syncthreads()
            base = partial[t]
            for k in range(SCAN_ITEMS):
                if first + k < m:
                    dst[first + k] = base + mine[k]
                    also[first + k] = base + mine[k]
            cuda.syncthreads()  # partial is reused by the next tile

    @cuda.jit
    def add_bases(dst, also, bases):
        # a lower level's tiles were scanned on their own: add each tile's offset from the level above
        for i in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
            v = dst[i] + bases[i // SCAN_TILE]
            dst[i] = v
            also[i] = v

    @cuda.jit
    def scatter_shared(keys, sorted_keys, cursors, buckets):
        # per tile: each key's rank among the tile's keys of its bucket from a shared atomic, then one global
        # atomic per non-empty bucket reserves the tile's range there, then each key goes to base + rank
        per_bucket = cuda.shared.array(0, int32)  # dynamic: the tile's count per bucket, then its base
        t = cuda.threadIdx.x
        threads = cuda.blockDim.x
        tile = threads * SORT_ITEMS
        held = cuda.local.array(SORT_ITEMS, uint32)
        # bucket << 16 | rank: one register per key instead of two (buckets <= 8192, rank < 16 x 1024 threads)
        placed = cuda.local.array(SORT_ITEMS, uint32)
        for start in range(cuda.blockIdx.x * tile, keys.size, cuda.gridDim.x * tile):
            for b in range(t, int32(buckets), threads):
                per_bucket[b] = 0
            cuda.syncthreads()
            mine = load_tile(keys, start, held)
            for k in range(SORT_ITEMS):
                if k < mine:
                    b = uint32(held[k] % buckets)
                    placed[k] = (b << 16) | uint32(cuda.atomic.add(per_bucket, b, 1))
            cuda.syncthreads()
            for b in range(t, int32(buckets), threads):
                c = per_bucket[b]
                if c:
                    per_bucket[b] = cuda.atomic.add(cursors, b, c)
            cuda.syncthreads()
            for k in range(SORT_ITEMS):
                if k < mine:
                    sorted_keys[uint32(per_bucket[placed[k] >> 16] + (placed[k] & 0xFFFF))] = held[k]
            cuda.syncthreads()  # the next tile zeroes per_bucket

    @cuda.jit
    def scatter_global(keys, sorted_keys, cursors, buckets):
        # too many buckets for shared memory: each key reserves its own place with one global atomic
        reserve_block_keys(keys, cursors, buckets, sorted_keys)

    return zero, count_shared, count_global, scan_tiles, add_bases, scatter_shared, scatter_global


def _helper_grid(items: int, per_block: int, limits) -> int:
    return max(1, min(-(-items // per_block), HELPER_BLOCKS_PER_SM * limits.sm_count))


def _scan_launches(scan_tiles, add_bases, counts, offsets, cursors, limits) -> list:
    """The launches that turn ``counts`` into CSR ``offsets`` (exclusive prefix sum, the total last) and
    the same offsets into ``cursors``: each level's tiles scanned on their own, their totals scanned as
    the next level until one tile holds them, then each level's tile bases added back on the way down."""
    buckets = counts.size
    levels = [offsets[:buckets]]
    while levels[-1].size > SCAN_TILE:
        levels.append(memory.empty(-(-levels[-1].size // SCAN_TILE), np.int32))
    top = len(levels) - 1
    launches = []
    for j, level in enumerate(levels):
        # the top level's one tile total is every key: it lands in offsets[buckets]
        totals = levels[j + 1] if j < top else offsets[buckets:]
        also = cursors if j == top == 0 else level
        grid = _helper_grid(level.size, SCAN_TILE, limits)
        launches.append(functools.partial(scan_tiles[grid, SCAN_THREADS, 0, 4 * SCAN_THREADS],
                                          counts if j == 0 else level, level, also, totals))
    for j in range(top - 1, -1, -1):
        grid = _helper_grid(levels[j].size, HELPER_THREADS, limits)
        launches.append(functools.partial(add_bases[grid, HELPER_THREADS], levels[j],
                                          cursors if j == 0 else levels[j], levels[j + 1]))
    return launches


def run_counting_sort(problem, launch, backend, repeats):
    if problem.op != "insert":
        return not_applicable("gpu-counting-sort builds a static table grouped by bucket in one batch: insert only")
    if repeats_skip(problem, "gpu-counting-sort") is not None:
        return repeats_skip(problem, "gpu-counting-sort")
    if problem.buckets > COUNTING_MAX_BUCKETS:
        return not_applicable(f"gpu-counting-sort keeps bucket ids, counts and offsets in 32 bits: at most "
                              f"{COUNTING_MAX_BUCKETS} buckets")
    backend.activate()
    zero, count_shared, count_global, scan_tiles, add_bases, scatter_shared, scatter_global = counting_sort_kernels()
    resolved = VARIANT_BY_NAME["gpu-counting-sort"].resolve(launch, backend.limits, problem.n)
    block, grid = resolved.block, resolved.grid
    buckets = problem.buckets
    in_shared = buckets <= SHARED_BUCKETS
    count, scatter = (count_shared, scatter_shared) if in_shared else (count_global, scatter_global)
    dynamic_shared = 4 * buckets if in_shared else 0
    keys = problem.device_keys()
    divisor = np.uint32(buckets)  # key % divisor in 32 bits (a 64-bit remainder costs several times more)
    sorted_keys = memory.empty(problem.n, np.uint32)
    offsets = memory.empty(buckets + 1, np.int32)
    cursors = memory.empty(buckets, np.int32)
    counts = memory.empty(buckets, np.int32)
    if backend.is_gpu and launch.resolved_grid(backend.limits.sm_count) is None:
        grid = resident_blocks(scatter, (keys, sorted_keys, cursors, divisor), block, dynamic_shared) or grid
    zero_counts = functools.partial(zero[_helper_grid(buckets, HELPER_THREADS, backend.limits), HELPER_THREADS],
                                    counts)
    count_keys = functools.partial(count[grid, block, 0, dynamic_shared], keys, counts, divisor)
    scan = _scan_launches(scan_tiles, add_bases, counts, offsets, cursors, backend.limits)
    place_keys = functools.partial(scatter[grid, block, 0, dynamic_shared], keys, sorted_keys, cursors, divisor)

    def build():
        for step in (zero_counts, count_keys, *scan, place_keys):
            step()

    timing = time_kernel(backend, build, repeats)
    placed = problem.check_grouped(memory.to_host(sorted_keys), memory.to_host(offsets))
    return Outcome(placed, timing, block, grid)
