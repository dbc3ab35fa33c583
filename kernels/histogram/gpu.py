"""The histogram's CUDA kernels and their launches: the seed's global-atomic and shared-atomic kernels, and
best (per-lane shared sub-histograms, 16-byte loads)."""

from __future__ import annotations

import functools

import numpy as np
from numpy import uint32  # numpy's, not numba's: both compilers type it (docs/compilers.md)

from kernels.backend.compiler import cuda

from kernels.backend import memory
from kernels.device_functions.vector_loads import VECTOR_LANES, check_aligned, load_vector
from kernels.harness.rows import Outcome
from kernels.histogram import VARIANTS
from kernels.histogram.problem import BINS
from kernels.timing import time_kernel

_VARIANT_BY_NAME = {v.name: v for v in VARIANTS}


@functools.lru_cache(maxsize=None)
def seed_kernels():
    @cuda.jit
    def zero_counts(counts):
        i = cuda.grid(1)
        if i < counts.size:
            counts[i] = 0

    @cuda.jit
    def histo_global_atomics(buffer, size, histo):
        # seed 003, first kernel: thousands of threads contend for 256 global counters
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < size:
            cuda.atomic.add(histo, buffer[i], 1)
            i += stride

    @cuda.jit
    def histo_shared_atomics(buffer, size, histo):
        # seed 003, second kernel: a block's threads contend only for the block's shared counters;
        # the loops over bins let any block size work (the seed's 256 threads own one bin each)
        tmp = cuda.shared.array(BINS, uint32)
        for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
            tmp[b] = 0
        cuda.syncthreads()
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < size:
            cuda.atomic.add(tmp, buffer[i], 1)
            i += stride
        cuda.syncthreads()
        for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
            cuda.atomic.add(histo, b, tmp[b])

    return zero_counts, histo_global_atomics, histo_shared_atomics


@functools.lru_cache(maxsize=None)
def best_kernel(words_per_thread: int):
    """The tuned kernel for one unroll depth (unrolled loops need a compile-time trip count)."""
    lanes = 32
    sub_size = BINS * lanes  # 32 KiB of shared counters per block, whatever the block size
    vectors_per_thread = words_per_thread // VECTOR_LANES

    @cuda.jit(device=True)
    def count_byte(sub, byte, lane):
        # lane l's counter for bin b is sub[b * 32 + l], in bank l: the 32 atomics of a warp never hit
        # the same bank or address, even when every lane sees the same byte (low-entropy data).
        # Unsigned indices also spare numba's negative-index wraparound code.
        cuda.atomic.add(sub, (uint32(byte) << uint32(5)) | lane, 1)

    @cuda.jit(device=True)
    def count_word(sub, w, lane):
        count_byte(sub, w & 0xFF, lane)
        count_byte(sub, (w >> 8) & 0xFF, lane)
        count_byte(sub, (w >> 16) & 0xFF, lane)
        count_byte(sub, w >> 24, lane)

    @cuda.jit
    def histo_best(words, buffer, size, histo):
        sub = cuda.shared.array(sub_size, uint32)
        t = cuda.threadIdx.x
        for j in range(t, sub_size, cuda.blockDim.x):
            sub[j] = 0
        cuda.syncthreads()
        lane = uint32(t & 31)
        n_words = size // 4
        n_vectors = n_words // VECTOR_LANES
        stride = cuda.gridsize(1)
        i = cuda.grid(1)
        # main loop: vectors_per_thread 16-byte loads in flight before their 16 atomics each
        w0 = cuda.local.array(vectors_per_thread, uint32)
        w1 = cuda.local.array(vectors_per_thread, uint32)
        w2 = cuda.local.array(vectors_per_thread, uint32)
        w3 = cuda.local.array(vectors_per_thread, uint32)
        while i + (vectors_per_thread - 1) * stride < n_vectors:
            for k in range(vectors_per_thread):
                v = load_vector(words, i + k * stride)
                w0[k], w1[k], w2[k], w3[k] = v[0], v[1], v[2], v[3]
            for k in range(vectors_per_thread):
                count_word(sub, w0[k], lane)
                count_word(sub, w1[k], lane)
                count_word(sub, w2[k], lane)
                count_word(sub, w3[k], lane)
            i += vectors_per_thread * stride
        while i < n_vectors:
            v = load_vector(words, i)
            for k in range(VECTOR_LANES):
                count_word(sub, v[k], lane)
            i += stride
        # the 0..3 words after the last whole vector, then the 0..3 bytes after the last whole word
        word = n_vectors * VECTOR_LANES + cuda.grid(1)
        if word < n_words:
            count_word(sub, words[word], lane)
        tail = n_words * 4 + cuda.grid(1)
        if tail < size:
            count_byte(sub, buffer[tail], lane)
        cuda.syncthreads()
        # one global atomic per bin per block; each thread starts its 32 reads at a different lane so
        # that a warp's reads fall in 32 different banks
        for b in range(t, BINS, cuda.blockDim.x):
            total = uint32(0)
            for k in range(lanes):
                total += sub[b * lanes + ((k + b) & 31)]
            if total:
                cuda.atomic.add(histo, b, total)

    return histo_best


def _time_gpu(problem, backend, repeats, block, grid, count_into):
    """Times zeroing the counters plus ``count_into(counts)`` (what a real run needs), then scores.
    The caller has activated the backend and copied the data to the GPU (outside the timing)."""
    zero_counts = seed_kernels()[0]
    counts, guard = problem.device_counts(), problem.device_guard()

    def launch_once():
        zero_counts[1, BINS](counts)
        count_into(counts)

    if backend.is_gpu:  # outside the timing: what this variant writes below the counters (none in the simulator,
        zero_counts[1, BINS](guard)  # whose arrays refuse an index out of bounds)
    timing = time_kernel(backend, launch_once, repeats)
    score = problem.score(memory.to_host(counts))
    if backend.is_gpu:
        problem.note_stray_counts(memory.to_host(guard))
    return Outcome(score, timing, block, grid)


def _seed_runner(name: str, which: int):
    """Runner for the seed's kernel number ``which`` (1: global atomics, 2: shared atomics) at the
    seed's launch unless the Launch says otherwise."""

    def run(problem, launch, backend, repeats):
        backend.activate()
        resolved = _VARIANT_BY_NAME[name].resolve(launch, backend.limits, problem.n)
        block, grid = resolved.block, resolved.grid
        kernel, data = seed_kernels()[which], problem.device_bytes()

        def count_into(counts):
            kernel[grid, block](data, problem.n, counts)

        return _time_gpu(problem, backend, repeats, block, grid, count_into)

    return run


run_global_atomics, run_shared_atomics = _seed_runner("global-atomics", 1), _seed_runner("shared-atomics", 2)


def run_best(problem, launch, backend, repeats):
    backend.activate()
    resolved = _VARIANT_BY_NAME["best"].resolve(launch, backend.limits, problem.n)
    block, grid = resolved.block, resolved.grid
    kernel = best_kernel(resolved.items)
    data = problem.device_bytes()
    words = data.view(np.uint32)  # same memory; the padding to a multiple of 4 makes the view legal
    if backend.is_gpu:
        check_aligned((words,), "best")

    def count_into(counts):
        kernel[grid, block](words, data, problem.n, counts)

    return _time_gpu(problem, backend, repeats, block, grid, count_into)
