"""The reduction's CPU variants: numpy, and a Numba parallel twin on all cores (wall time)."""

from __future__ import annotations

import functools

import numba
import numpy as np

from kernels.harness.rows import Outcome
from kernels.reduction.problem import ACCUMULATOR_DTYPE
from kernels.timing import time_wall


def run_numpy(problem, launch, backend, repeats):
    a, b = problem.host_inputs
    acc = problem.accumulator
    if problem.op == "sum":
        fn = lambda: np.sum(a, dtype=acc)  # noqa: E731
    else:  # einsum widens in buffered chunks: no full-size int64/float64 copies
        fn = lambda: np.einsum("i,i->", a, b, dtype=acc)  # noqa: E731
    timing = time_wall(fn, repeats)
    return Outcome(problem.as_result(fn()), timing)


@functools.lru_cache(maxsize=None)
def _cpu_parallel_function(op: str, dtype: str):
    acc = numba.from_dtype(ACCUMULATOR_DTYPE[dtype])
    prange = numba.prange
    if op == "sum":

        def reduce(a, b):
            total = acc(0)
            for i in prange(a.size):
                total += acc(a[i])
            return total

    elif op == "sumsq":

        def reduce(a, b):
            total = acc(0)
            for i in prange(a.size):
                x = acc(a[i])
                total += x * x
            return total

    else:

        def reduce(a, b):
            total = acc(0)
            for i in prange(a.size):
                total += acc(a[i]) * acc(b[i])
            return total

    return numba.njit(parallel=True, nogil=True)(reduce)


def run_cpu_parallel(problem, launch, backend, repeats):
    a, b = problem.host_inputs
    fn = _cpu_parallel_function(problem.op, problem.dtype)
    timing = time_wall(lambda: fn(a, b), repeats)  # the warmup call compiles
    return Outcome(problem.as_result(fn(a, b)), timing)
