"""The chained hash table on the GPU: the seed's per-bucket spin locks, and a lock-free compare-and-swap on
the bucket's head."""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda

from kernels.harness.bench import Outcome
from kernels.hashtable import VARIANTS
from kernels.hashtable.layout import EMPTY
from kernels.launch import resident_blocks
from kernels.timing import time_kernel

_VARIANT_BY_NAME = {v.name: v for v in VARIANTS}


@functools.lru_cache(maxsize=None)
def table_kernels():
    @cuda.jit
    def reset_table(heads, locks):
        # a table filled by the previous launch would get every entry twice: empty it first
        b = cuda.grid(1)
        if b < heads.size:
            heads[b] = EMPTY
            locks[b] = 0

    @cuda.jit
    def insert_with_locks(keys, pool_keys, pool_next, heads, locks):
        # seed 003's GPU add_to_table: one spin lock per bucket around the two writes that link entry i
        buckets = heads.size
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < keys.size:
            key = keys[i]
            b = key % buckets
            pool_keys[i] = key
            # the lanes of a warp take turns: on GPUs before Volta a lane spinning on a lock held by
            # another lane of its own warp would spin forever, since the warp runs in lockstep
            for lane in range(32):
                if i % 32 == lane:
                    while cuda.atomic.cas(locks, b, 0, 1) != 0:
                        pass
                    # numba's atomics are relaxed: fence so that no read or write of the chain moves
                    # out of the locked region (without the fences entries are lost, seen on an H200)
                    cuda.threadfence()
                    pool_next[i] = heads[b]
                    heads[b] = i
                    cuda.threadfence()
                    cuda.atomic.exch(locks, b, 0)
            i += stride

    @cuda.jit
    def insert_lock_free(keys, pool_keys, pool_next, heads):
        # push entry i at the head of its chain with one compare-and-swap: it succeeds only if no other
        # thread changed the head since we read it, and otherwise hands us the new head to retry with
        buckets = heads.size
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < keys.size:
            key = keys[i]
            b = key % buckets
            pool_keys[i] = key
            head = heads[b]
            while True:
                pool_next[i] = head
                cuda.threadfence()  # entry i's key and link are visible before the entry is published
                seen = cuda.atomic.cas(heads, b, head, i)
                if seen == head:
                    break
                head = seen
            i += stride

    return reset_table, insert_with_locks, insert_lock_free


def _run_gpu(problem, launch, backend, repeats, locked: bool):
    backend.activate()
    reset_table, insert_with_locks, insert_lock_free = table_kernels()
    resolved = _VARIANT_BY_NAME["gpu-locks" if locked else "gpu-lockfree"].resolve(launch, backend.limits, problem.n)
    block, grid = resolved.block, resolved.grid
    keys = problem.device_keys()
    pool_keys = cuda.device_array(problem.n, np.uint32)
    pool_next = cuda.device_array(problem.n, np.int32)
    heads = cuda.device_array(problem.buckets, np.int32)
    locks = cuda.device_array(problem.buckets, np.int32)
    reset_grid = -(-problem.buckets // 256)

    def insert_once():
        reset_table[reset_grid, 256](heads, locks)
        if locked:
            insert_with_locks[grid, block](keys, pool_keys, pool_next, heads, locks)
        else:
            insert_lock_free[grid, block](keys, pool_keys, pool_next, heads)

    timing = time_kernel(backend, insert_once, repeats)
    placed = problem.check_table(pool_keys.copy_to_host(), heads.copy_to_host(), pool_next.copy_to_host())
    return Outcome(placed, timing, block, grid)


def run_locks(problem, launch, backend, repeats):
    return _run_gpu(problem, launch, backend, repeats, locked=True)


def run_lockfree(problem, launch, backend, repeats):
    return _run_gpu(problem, launch, backend, repeats, locked=False)
