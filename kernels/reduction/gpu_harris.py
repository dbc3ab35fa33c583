"""The kernels of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007) that the seeds lack:
kernels 2, 4, 5, 6 and 7 (kernels 1 and 3 are :mod:`kernels.reduction.gpu`'s ``interleaved_divergent`` and
``sequential``). Built like gpu.py's kernels: a cached factory per (op, input dtype), 64-bit accumulators,
one partial per block for the host to add.

Each kernel keeps a grid-stride loop, so any grid is correct; at its default grid (n / block, or n / 2 block
from kernel 4 on) each thread makes exactly one pass, as the paper's kernels do.
"""

from __future__ import annotations

import functools

# cuda is the compiler seam's (kernels/backend/compiler.py): numba-cuda's, or numba-cuda-mlir's
from kernels.backend import simulator_active
from kernels.backend.compiler import cuda
from kernels.reduction.gpu import ACCUMULATOR, FULL_WARP, WARP_SIZE, term_function, thread_partial_function


@functools.lru_cache(maxsize=None)
def interleaved_strided_kernel(op: str, dtype: str):
    """Kernel 2: contiguous active threads (no divergence) but a strided shared-memory index, 2*s*t."""
    acc = ACCUMULATOR[dtype]
    thread_partial = thread_partial_function(op, dtype)

    @cuda.jit
    def interleaved_strided(a, b, block_partials):
        shared = cuda.shared.array(0, acc)
        t = cuda.threadIdx.x
        shared[t] = thread_partial(a, b)
        cuda.syncthreads()
        stride = 1
        while stride < cuda.blockDim.x:
            index = 2 * stride * t  # threads 0..k stay active, but their addresses spread: bank conflicts
            if index < cuda.blockDim.x:
                shared[index] += shared[index + stride]
            cuda.syncthreads()
            stride *= 2
        if t == 0:
            block_partials[cuda.blockIdx.x] = shared[0]

    return interleaved_strided


@functools.lru_cache(maxsize=None)
def pair_partial_function(op: str, dtype: str):
    """Device function: kernel 4's first add during the global load. Block b's threads read elements
    i = 2 b B + t and i + B (B threads per block), then stride by 2 B x grid: with n / 2B blocks, one pass."""
    acc = ACCUMULATOR[dtype]
    term = term_function(op, dtype)

    @cuda.jit(device=True)
    def pair_partial(a, b):
        block = cuda.blockDim.x
        i = cuda.blockIdx.x * 2 * block + cuda.threadIdx.x
        stride = 2 * block * cuda.gridDim.x
        n = a.size
        total = acc(0)
        while i < n:
            total += term(a, b, i)
            if i + block < n:
                total += term(a, b, i + block)
            i += stride
        return total

    return pair_partial


@functools.lru_cache(maxsize=None)
def first_add_load_kernel(op: str, dtype: str):
    """Kernel 4: kernel 3's tree, half the blocks, each thread adds two elements as it loads them."""
    acc = ACCUMULATOR[dtype]
    pair_partial = pair_partial_function(op, dtype)

    @cuda.jit
    def first_add_load(a, b, block_partials):
        shared = cuda.shared.array(0, acc)
        t = cuda.threadIdx.x
        shared[t] = pair_partial(a, b)
        cuda.syncthreads()
        stride = cuda.blockDim.x // 2
        while stride > 0:
            if t < stride:
                shared[t] += shared[t + stride]
            cuda.syncthreads()
            stride //= 2
        if t == 0:
            block_partials[cuda.blockIdx.x] = shared[0]

    return first_add_load


if simulator_active():

    @cuda.jit(device=True)
    def warp_barrier():
        # The simulator has no syncwarp. Its syncthreads waits for the threads still alive, and only warp 0
        # is alive in the last-warp stages, so here it is that warp's barrier.
        cuda.syncthreads()

else:

    @cuda.jit(device=True)
    def warp_barrier():
        cuda.syncwarp(FULL_WARP)


@cuda.jit(device=True)
def warp_step(shared, t, offset):
    """One step of the last warp's tree, safe since Volta: every lane reads before any lane writes, and
    every write lands before the next read. The paper's volatile, barrier-free version relied on the 32
    lanes running in lockstep, which independent thread scheduling (Volta on) no longer promises. Lanes
    past the live half write back their own value, so no slot past the block is read."""
    value = shared[t]
    if t < offset:
        value += shared[t + offset]
    warp_barrier()
    shared[t] = value
    warp_barrier()


@cuda.jit(device=True)
def last_warp_sum(shared, t, nthreads):
    """The last steps by warp 0 alone, unrolled, with no syncthreads (kernel 5's idea); 32..1024 threads."""
    if nthreads >= 64:
        warp_step(shared, t, 32)
    warp_step(shared, t, 16)
    warp_step(shared, t, 8)
    warp_step(shared, t, 4)
    warp_step(shared, t, 2)
    warp_step(shared, t, 1)


@functools.lru_cache(maxsize=None)
def unroll_last_warp_kernel(op: str, dtype: str):
    """Kernel 5: kernel 4 with the tree stopping at 32 live threads; warp 0 finishes without syncthreads."""
    acc = ACCUMULATOR[dtype]
    pair_partial = pair_partial_function(op, dtype)

    @cuda.jit
    def unroll_last_warp(a, b, block_partials):
        shared = cuda.shared.array(0, acc)
        t = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        shared[t] = pair_partial(a, b)
        cuda.syncthreads()
        stride = nthreads // 2
        while stride > WARP_SIZE:
            if t < stride:
                shared[t] += shared[t + stride]
            cuda.syncthreads()
            stride //= 2
        if t < WARP_SIZE:
            last_warp_sum(shared, t, nthreads)
        if t == 0:
            block_partials[cuda.blockIdx.x] = shared[0]

    return unroll_last_warp


@functools.lru_cache(maxsize=None)
def complete_unroll_kernel(op: str, dtype: str, block: int):
    """Kernel 6: the block size is a constant of the compiled kernel (the paper's C++ template), so every
    test on it folds away and the tree is straight-line code; one kernel is compiled per block size.
    Launch it with exactly ``block`` threads. Kernel 7 is this kernel at a small fixed grid."""
    if block < WARP_SIZE or block > 1024 or block & (block - 1):
        raise ValueError(f"complete-unroll is compiled for a power-of-two block of 32..1024, not {block}")
    acc = ACCUMULATOR[dtype]
    pair_partial = pair_partial_function(op, dtype)

    @cuda.jit
    def complete_unroll(a, b, block_partials):
        shared = cuda.shared.array(block, acc)  # static: its size is known when compiling
        t = cuda.threadIdx.x
        shared[t] = pair_partial(a, b)
        cuda.syncthreads()
        if block >= 1024:
            if t < 512:
                shared[t] += shared[t + 512]
            cuda.syncthreads()
        if block >= 512:
            if t < 256:
                shared[t] += shared[t + 256]
            cuda.syncthreads()
        if block >= 256:
            if t < 128:
                shared[t] += shared[t + 128]
            cuda.syncthreads()
        if block >= 128:
            if t < 64:
                shared[t] += shared[t + 64]
            cuda.syncthreads()
        if t < WARP_SIZE:
            last_warp_sum(shared, t, block)
        if t == 0:
            block_partials[cuda.blockIdx.x] = shared[0]

    return complete_unroll
