"""The histogram's CPU variants: numpy's bincount (the seed's CPU histogram) and a Numba parallel twin."""

from __future__ import annotations

import functools

import numba
import numpy as np

from kernels.harness.bench import Outcome
from kernels.histogram.problem import BINS
from kernels.timing import time_wall


@functools.lru_cache(maxsize=None)
def _cpu_parallel_kernel():
    @numba.njit(parallel=True, cache=False)
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


def run_numpy(problem, launch, backend, repeats):
    result = {}

    def count():
        result["counts"] = np.bincount(problem.data, minlength=BINS)

    timing = time_wall(count, repeats)
    return Outcome(problem.score(result["counts"]), timing)


def run_parallel(problem, launch, backend, repeats):
    kernel = _cpu_parallel_kernel()
    chunks = 4 * numba.get_num_threads()  # a few chunks per thread evens out the load
    result = {}

    def count():
        result["counts"] = kernel(problem.data, chunks)

    timing = time_wall(count, repeats)
    return Outcome(problem.score(result["counts"]), timing)
