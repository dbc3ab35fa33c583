"""The histogram's CPU variants: numpy's bincount (the seed's CPU histogram), a Numba parallel twin, and
per-thread sub-histograms read eight bytes at a time."""

from __future__ import annotations

import functools

import numba
import numpy as np

from kernels.harness.rows import Outcome
from kernels.histogram.problem import BINS
from kernels.timing import time_wall
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run


@functools.lru_cache(maxsize=None)
def _cpu_parallel_kernel():
    @numba.njit(nogil=True, parallel=True, cache=False)
    def histogram_private_bins(data, chunks):
        # each chunk counts into its own row, so threads never write the same counter
        per_chunk = np.zeros((chunks, BINS), np.int64)
        size = data.size
        step = (size + chunks - 1) // chunks
        for c in numba.prange(chunks):
            row = per_chunk[c]
            for i in range(c * step, min(size, (c + 1) * step)):
                row[data[i]] += 1
        return per_chunk.sum(axis=0)

    return histogram_private_bins


SUB_HISTOGRAMS = 16  # interleaved tables per chunk: one per byte of two consecutive 8-byte words


@numba.njit(nogil=True, parallel=True, cache=True)
def histogram_sub_histograms(data, chunks):
    """The bytes of ``data`` counted in ``chunks`` chunks in parallel, each into SUB_HISTOGRAMS private
    tables of 32-bit counters: byte k of a pair of 8-byte words goes to table k. A run of equal bytes then
    lands on 16 different counters in turn, so no increment waits for the previous one's store (the
    store-to-load stall that makes one table three times slower on low-entropy data). The tables are
    summed at the end; the last bytes, after the last whole pair of words, are counted one by one."""
    n = data.size
    whole = n - n % 16
    words = data[:whole].view(np.uint64)
    pairs = words.size // 2
    tables = np.zeros((chunks, SUB_HISTOGRAMS * BINS), np.uint32)  # at most 2**32 - 1 bytes: no overflow
    per = (pairs + chunks - 1) // chunks
    for c in numba.prange(chunks):
        table = tables[c]
        for p in range(c * per, min(pairs, (c + 1) * per)):
            for q in range(2):
                w = words[2 * p + q]
                for k in range(8):
                    table[(8 * q + k) * BINS + ((w >> np.uint64(8 * k)) & np.uint64(0xFF))] += 1
    counts = np.zeros(BINS, np.int64)
    for c in range(chunks):
        for t in range(SUB_HISTOGRAMS):
            for b in range(BINS):
                counts[b] += tables[c, t * BINS + b]
    for i in range(whole, n):
        counts[data[i]] += 1
    return counts


def run_numpy(problem, launch, backend, repeats):
    result = {}

    def count():
        result["counts"] = np.bincount(problem.data, minlength=BINS)

    timing = time_wall(count, repeats)
    return Outcome(problem.score(result["counts"]), timing)


def _run_chunked(problem, kernel, repeats):
    """Times ``kernel(data, chunks)`` over a few chunks per thread (which evens out the load), then scores."""
    chunks = 4 * numba.get_num_threads()
    result = {}

    def count():
        result["counts"] = kernel(problem.data, chunks)

    timing = time_wall(count, repeats)
    return Outcome(problem.score(result["counts"]), timing)


def run_parallel(problem, launch, backend, repeats):
    return _run_chunked(problem, _cpu_parallel_kernel(), repeats)


def run_sub_histograms(problem, launch, backend, repeats):
    return _run_chunked(problem, histogram_sub_histograms, repeats)
