"""The @cuda.jit kernels of the reduction variants; :mod:`kernels.reduction` says what each one teaches
and runs them.

Importing this module imports numba, so :mod:`kernels.reduction` imports it only when a GPU variant runs
(after the backend is chosen). Kernels name ``cuda`` as a module global on purpose: while a kernel runs,
the simulator swaps that global for its fake module, which it would not do for a captured variable.

Each kernel is built by a cached factory per (op, input dtype): the op's term (``a[i]``, ``a[i]**2`` or
``a[i]*b[i]``) and the accumulator type are constants of the closure, so every kernel is compiled once per
process. Accumulators are 64-bit: int64 for int32 input (exact; the seeds' int accumulators overflow),
float64 for float32 input. Every kernel takes ``(a, b, ...)``; sum and sumsq pass ``a`` twice, never read ``b``.
"""

from __future__ import annotations

import functools

import numpy as np

from kernels.backend import simulator_active
from kernels.backend.compiler import cuda
from kernels.device_functions.fences import threadfence
from kernels.device_functions.vector_loads import VECTOR_LANES, load_vector

# Input dtype -> accumulator type (numpy's scalar types: both compilers type them, docs/compilers.md). The
# 64-bit entries serve the second pass of two-kernel, which reduces the accumulator-typed partials alike.
ACCUMULATOR = {"int32": np.int64, "float32": np.float64, "int64": np.int64, "float64": np.float64}
WARP_SIZE = 32
FULL_WARP = 0xFFFFFFFF


@functools.lru_cache(maxsize=None)
def term_function(op: str, dtype: str):
    """Device function ``term(a, b, i)``: element i's contribution, already widened to 64 bits (widening
    before squaring or multiplying keeps int32 products exact)."""
    acc = ACCUMULATOR[dtype]
    index = np.uint64  # an unsigned index spares each load numba's negative-index wraparound code
    if op == "sum":

        def term(a, b, i):
            return acc(a[index(i)])

    elif op == "sumsq":

        def term(a, b, i):
            x = acc(a[index(i)])
            return x * x

    elif op == "dot":

        def term(a, b, i):
            j = index(i)
            return acc(a[j]) * acc(b[j])

    else:
        raise ValueError(f"unknown op {op!r}")
    return cuda.jit(device=True)(term)


@functools.lru_cache(maxsize=None)
def thread_partial_function(op: str, dtype: str):
    """Device function: this thread's sum over its grid-stride share of the input (every seed's first loop)."""
    acc = ACCUMULATOR[dtype]
    term = term_function(op, dtype)

    @cuda.jit(device=True)
    def thread_partial(a, b):
        total = acc(0)
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        n = a.size
        while i < n:
            total += term(a, b, i)
            i += stride
        return total

    return thread_partial


@cuda.jit(device=True)
def block_tree_sum(shared, t, nthreads):
    """Sequential-addressing tree over ``shared[0:nthreads]``, total left in ``shared[0]``. Any block
    size works: the tree starts at the largest power of two below ``nthreads`` and skips partners past the
    end (as if the block were padded with zeros). Every thread of the block must call it."""
    half = 1
    while half * 2 < nthreads:
        half *= 2
    while half > 0:
        if t < half and t + half < nthreads:
            shared[t] += shared[t + half]
        cuda.syncthreads()
        half //= 2


if simulator_active():

    @cuda.jit(device=True)
    def load_from_l2(array, i):
        return array[i]  # the simulator has one coherent memory and no cache-hinted loads

else:

    @cuda.jit(device=True)
    def load_from_l2(array, i):
        """``array[i]`` read past the SM's L1 (ld.global.cg), which is not coherent across SMs: for data
        other blocks wrote during this launch (CUDA C would declare the pointer volatile)."""
        return cuda.ldcg(array, i)


@cuda.jit(device=True)
def warp_sum(value):
    """Sum over the 32 lanes of a full warp in registers; lane 0 gets the total."""
    offset = WARP_SIZE // 2
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_WARP, value, offset)
        offset //= 2
    return value


# --- seed 000 (a): every thread writes its own partial; the host adds them -------------------------------


@functools.lru_cache(maxsize=None)
def per_thread_partials_kernel(op: str, dtype: str):
    thread_partial = thread_partial_function(op, dtype)

    @cuda.jit
    def per_thread_partials(a, b, partials):
        partials[cuda.grid(1)] = thread_partial(a, b)

    return per_thread_partials


# --- seed 000 (b) and (c), seed 002, seed 003: one partial per block in shared memory ---------------------
# Launch with dynamic shared memory of block * 8 bytes (the seeds' ``extern __shared__``).


@functools.lru_cache(maxsize=None)
def block_serial_kernel(op: str, dtype: str):
    acc = ACCUMULATOR[dtype]
    thread_partial = thread_partial_function(op, dtype)

    @cuda.jit
    def block_serial(a, b, block_partials):
        shared = cuda.shared.array(0, acc)
        t = cuda.threadIdx.x
        shared[t] = thread_partial(a, b)
        cuda.syncthreads()
        if t == 0:  # one thread adds the whole block while the others wait: the point of this variant
            total = shared[0]
            for j in range(1, cuda.blockDim.x):
                total += shared[j]
            block_partials[cuda.blockIdx.x] = total

    return block_serial


@functools.lru_cache(maxsize=None)
def tree_mask_kernel(op: str, dtype: str):
    acc = ACCUMULATOR[dtype]
    thread_partial = thread_partial_function(op, dtype)

    @cuda.jit
    def tree_mask(a, b, block_partials):
        shared = cuda.shared.array(0, acc)
        t = cuda.threadIdx.x
        shared[t] = thread_partial(a, b)
        cuda.syncthreads()
        offset = 1
        mask = 1
        while offset < cuda.blockDim.x:
            if (t & mask) == 0:  # the threads whose low bits are clear add their right neighbour
                shared[t] += shared[t + offset]
            offset += offset
            mask = offset + mask
            cuda.syncthreads()
        if t == 0:
            block_partials[cuda.blockIdx.x] = shared[0]

    return tree_mask


@functools.lru_cache(maxsize=None)
def interleaved_divergent_kernel(op: str, dtype: str):
    acc = ACCUMULATOR[dtype]
    thread_partial = thread_partial_function(op, dtype)

    @cuda.jit
    def interleaved_divergent(a, b, block_partials):
        shared = cuda.shared.array(0, acc)
        t = cuda.threadIdx.x
        shared[t] = thread_partial(a, b)
        stride = 1
        while stride < cuda.blockDim.x:
            cuda.syncthreads()
            if t % (2 * stride) == 0:  # active threads are spread out: every warp diverges
                shared[t] += shared[t + stride]
            stride *= 2
        # thread 0 made the last addition itself, so it reads its own write: no barrier needed
        if t == 0:
            block_partials[cuda.blockIdx.x] = shared[0]

    return interleaved_divergent


@functools.lru_cache(maxsize=None)
def sequential_kernel(op: str, dtype: str):
    acc = ACCUMULATOR[dtype]
    thread_partial = thread_partial_function(op, dtype)

    @cuda.jit
    def sequential(a, b, block_partials):
        shared = cuda.shared.array(0, acc)
        t = cuda.threadIdx.x
        shared[t] = thread_partial(a, b)
        cuda.syncthreads()
        stride = cuda.blockDim.x // 2
        while stride > 0:
            if t < stride:  # active threads are contiguous: whole warps retire together
                shared[t] += shared[t + stride]
            cuda.syncthreads()
            stride //= 2
        if t == 0:
            block_partials[cuda.blockIdx.x] = shared[0]

    return sequential


# --- seed 004 (a): partials per block, then the same kernel on one block reduces the partials ------------


@functools.lru_cache(maxsize=None)
def block_sums_kernel(op: str, dtype: str):
    """Per-block sums of any block size. Run with op 'sum' on the 64-bit partials for the second pass."""
    acc = ACCUMULATOR[dtype]
    thread_partial = thread_partial_function(op, dtype)

    @cuda.jit
    def block_sums(a, b, block_partials):
        shared = cuda.shared.array(0, acc)
        t = cuda.threadIdx.x
        shared[t] = thread_partial(a, b)
        cuda.syncthreads()
        block_tree_sum(shared, t, cuda.blockDim.x)
        if t == 0:
            block_partials[cuda.blockIdx.x] = shared[0]

    return block_sums


# --- seed 004 (b): one kernel; the last block to finish adds every block's partial -----------------------


@functools.lru_cache(maxsize=None)
def last_block_kernel(op: str, dtype: str):
    acc = ACCUMULATOR[dtype]
    thread_partial = thread_partial_function(op, dtype)

    @cuda.jit
    def last_block(a, b, block_partials, out, tickets):
        shared = cuda.shared.array(0, acc)
        t = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        shared[t] = thread_partial(a, b)
        cuda.syncthreads()
        block_tree_sum(shared, t, nthreads)
        # An int predicate: the GPU's syncthreads_or does not type a bool, and the simulator stores
        # the value into a bool array, so an int works in both.
        is_last = np.int32(0)
        if t == 0:
            block_partials[cuda.blockIdx.x] = shared[0]
            threadfence()  # our partial is visible to every block before we take a ticket
            ticket = cuda.atomic.add(tickets, 0, 1)
            if ticket == cuda.gridDim.x - 1:
                is_last = np.int32(1)
        if cuda.syncthreads_or(is_last):  # uniform: the whole block enters, or none of it
            threadfence()
            # Unlike the seed, stride over the partials: the grid may have more blocks than we have threads.
            total = acc(0)
            j = t
            while j < cuda.gridDim.x:
                total += load_from_l2(block_partials, j)
                j += nthreads
            shared[t] = total
            cuda.syncthreads()
            block_tree_sum(shared, t, nthreads)
            if t == 0:
                out[0] = shared[0]
                tickets[0] = 0  # ready for the next launch; nothing else touches it any more in this one

    return last_block


# --- warp shuffles and atomics into a two-slot result -----------------------------------------------------
# The result array has two slots. A launch adds into result[slot] and zeroes result[1 - slot], which
# the next launch (slot flipped) adds into: no memset launch between timed launches.


@functools.lru_cache(maxsize=None)
def warp_shuffle_kernel(op: str, dtype: str):
    thread_partial = thread_partial_function(op, dtype)

    @cuda.jit
    def warp_shuffle(a, b, result, slot):
        total = warp_sum(thread_partial(a, b))
        if cuda.laneid == 0:  # one atomic per warp
            cuda.atomic.add(result, slot, total)
        if cuda.grid(1) == 0:
            result[1 - slot] = 0

    return warp_shuffle


# --- best: tiles of 16-byte loads (kernels/vector_loads.py) ----------------------------------------------


@functools.lru_cache(maxsize=None)
def vector_term_function(op: str, dtype: str):
    """Device function ``vector_term(a, b, j)``: the op's terms of elements 4j..4j+3, added in the
    accumulator type (each widened before squaring or multiplying, as ``term_function`` does)."""
    acc = ACCUMULATOR[dtype]
    if op == "sum":

        def vector_term(a, b, j):
            v = load_vector(a, j)
            return acc(v[0]) + acc(v[1]) + acc(v[2]) + acc(v[3])

    elif op == "sumsq":

        def vector_term(a, b, j):
            v = load_vector(a, j)
            x0, x1, x2, x3 = acc(v[0]), acc(v[1]), acc(v[2]), acc(v[3])
            return x0 * x0 + x1 * x1 + x2 * x2 + x3 * x3

    elif op == "dot":

        def vector_term(a, b, j):
            u = load_vector(a, j)
            w = load_vector(b, j)
            return acc(u[0]) * acc(w[0]) + acc(u[1]) * acc(w[1]) + acc(u[2]) * acc(w[2]) + acc(u[3]) * acc(w[3])

    else:
        raise ValueError(f"unknown op {op!r}")
    return cuda.jit(device=True)(vector_term)


@functools.lru_cache(maxsize=None)
def best_kernel(op: str, dtype: str, items: int):
    """Tiles of ``block x items`` elements, one per block by default: each thread issues items / 4
    independent 16-byte loads at once (a warp's loads are adjacent, so each is a full 512-byte line), adds
    them in registers, then warp shuffles, shared memory across warps and one 64-bit atomic per block.
    A grid smaller than the tile count strides over the tiles. The last n % 4 elements are thread 0's."""
    if items % VECTOR_LANES:
        raise ValueError(f"best loads {VECTOR_LANES} elements at a time: items {items} is not a multiple")
    acc = ACCUMULATOR[dtype]
    term = term_function(op, dtype)
    vector_term = vector_term_function(op, dtype)
    loads = items // VECTOR_LANES

    @cuda.jit
    def best(a, b, result, slot):
        n = a.size
        vectors = n // VECTOR_LANES
        t = cuda.threadIdx.x
        block = cuda.blockDim.x
        tile = block * loads  # vectors per tile
        partial = cuda.local.array(loads, acc)  # fully unrolled below, so these live in registers
        total = acc(0)
        first = cuda.blockIdx.x * tile
        while first < vectors:
            j = first + t
            if first + tile <= vectors:  # a whole tile: every load of this thread in flight at once
                for k in range(loads):
                    partial[k] = vector_term(a, b, j + k * block)
                for k in range(loads):
                    total += partial[k]
            else:
                for k in range(loads):
                    if j + k * block < vectors:
                        total += vector_term(a, b, j + k * block)
            first += cuda.gridDim.x * tile
        if cuda.grid(1) == 0:
            for i in range(vectors * VECTOR_LANES, n):
                total += term(a, b, i)

        total = warp_sum(total)
        warp_totals = cuda.shared.array(WARP_SIZE, acc)
        lane = t % WARP_SIZE
        warp = t // WARP_SIZE
        if lane == 0:
            warp_totals[warp] = total
        cuda.syncthreads()
        if warp == 0:
            total = warp_totals[lane] if lane < block // WARP_SIZE else acc(0)
            total = warp_sum(total)
            if lane == 0:
                cuda.atomic.add(result, slot, total)  # one atomic per block, no second pass
                if cuda.blockIdx.x == 0:
                    result[1 - slot] = 0

    return best

