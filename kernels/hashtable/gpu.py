"""The chained hash table on the GPU: the seed's per-bucket spin locks, and a lock-free compare-and-swap on
the bucket's head; and a find that walks the chains (either table: they have the same layout)."""

from __future__ import annotations

import functools

import numpy as np
from kernels.backend import memory
from kernels.backend.compiler import cuda
from kernels.device_functions.callees import for_kernels
from kernels.device_functions.fences import threadfence
from kernels.harness.rows import Outcome
from kernels.hashtable import VARIANT_BY_NAME
from kernels.hashtable.chained import chained_skip
from kernels.hashtable.layout import EMPTY
from kernels.hashtable.probing import chain_answer
from kernels.timing import time_kernel


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
                    while cuda.atomic.cas(locks, b, np.int32(0), np.int32(1)) != 0:
                        pass
                    # numba's atomics are relaxed: fence so that no read or write of the chain moves
                    # out of the locked region (without the fences entries are lost, seen on an H200)
                    threadfence()
                    pool_next[i] = heads[b]
                    heads[b] = i
                    threadfence()
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
                threadfence()  # entry i's key and link are visible before the entry is published
                seen = cuda.atomic.cas(heads, b, head, np.int32(i))
                if seen == head:
                    break
                head = seen
            i += stride

    answer = for_kernels(chain_answer)

    @cuda.jit
    def find_in_chains(keys, pool_keys, pool_next, heads, answers):
        # the key's whole chain: with a key inserted twice the first occurrence answers, wherever the pushes
        # put it
        for i in range(cuda.grid(1), keys.size, cuda.gridsize(1)):
            answers[i] = answer(keys[i], pool_keys, pool_next, heads, EMPTY)

    return reset_table, insert_with_locks, insert_lock_free, find_in_chains


def _run_gpu(problem, launch, backend, repeats, locked: bool):
    name = "gpu-locks" if locked else "gpu-lockfree"
    skip = chained_skip(problem, name)
    if skip is not None:
        return skip
    backend.activate()
    reset_table, insert_with_locks, insert_lock_free, find_in_chains = table_kernels()
    resolved = VARIANT_BY_NAME[name].resolve(launch, backend.limits, problem.n)
    block, grid = resolved.block, resolved.grid
    finding = problem.op == "find"
    keys = problem.device_table_keys() if finding else problem.device_keys()
    pool_keys = memory.empty(keys.size, np.uint32)
    pool_next = memory.empty(keys.size, np.int32)
    heads = memory.empty(problem.buckets, np.int32)
    locks = memory.empty(problem.buckets, np.int32)
    reset = reset_table[-(-problem.buckets // 256), 256]

    def insert():
        if locked:
            insert_with_locks[grid, block](keys, pool_keys, pool_next, heads, locks)
        else:
            insert_lock_free[grid, block](keys, pool_keys, pool_next, heads)

    def empty_table():
        reset(heads, locks)

    if finding:
        empty_table()
        insert()  # the table the lookups search, built once
        queries = problem.device_keys()
        answers = memory.empty(problem.n, np.uint32)
        walk = find_in_chains[grid, block]
        timing = time_kernel(backend, lambda: walk(queries, pool_keys, pool_next, heads, answers), repeats)
        return Outcome(problem.check_found(memory.to_host(answers)), timing, block, grid, note=problem.describe())
    timing = time_kernel(backend, insert, repeats, before=empty_table)
    placed = problem.check_table(memory.to_host(pool_keys), memory.to_host(heads), memory.to_host(pool_next))
    return Outcome(placed, timing, block, grid)


def run_locks(problem, launch, backend, repeats):
    return _run_gpu(problem, launch, backend, repeats, locked=True)


def run_lockfree(problem, launch, backend, repeats):
    return _run_gpu(problem, launch, backend, repeats, locked=False)
