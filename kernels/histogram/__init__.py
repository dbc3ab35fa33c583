"""256-bin histogram of bytes (seed 003): numpy and parallel CPU twins, the seed's global-atomic and
shared-atomic kernels, a tuned kernel, and library peers (CuPy, CUB, PyTorch).

This module declares everything about the algorithm and imports no numba; the code runs from
:mod:`.gpu`, :mod:`.cpu` and :mod:`.peers`, imported when a variant first runs. A run's result is the
number of bins (0..256) that match ``np.bincount`` of the data (:mod:`.problem`).
"""

from __future__ import annotations

import os

import numpy as np

from kernels.backend.mlir_wrong_code import SHARED_ATOMIC_IN_DEVICE_FUNCTION
from kernels.errors import InputError
from kernels.harness.ceilings import copy_judge
from kernels.harness.descriptor import Algorithm, Option, SizeAxis, UserTarget
from kernels.harness.kernel_decl import KernelDecl, Traffic, no_dynamic_shared
from kernels.harness.variants import Variant
from kernels.histogram.problem import (BINS, ENTROPY_ANDS, ENTROPY_ZERO, LOW_ENTROPY_SHARE, LOW_ENTROPY_VALUE,
                                       MAX_BYTES, PATTERNS, HistogramProblem, make_problem)
from kernels.launch import LaunchRule
from kernels.lazy import entry

SEED_LAUNCH = LaunchRule(block=256, grid_sm=2, note="as in the seed")  # 256 threads, blocks = 2 x SM count
# 1024 threads x 2 blocks per SM is one full wave at 2048 resident threads per SM (H100/H200): fewer,
# longer-lived blocks spread each block's zeroing and merging of its 8192 counters over more bytes. Words per
# thread per round come in 16-byte loads of 4 words: 8 words is two loads in flight. Both were the fastest
# choices measured (docs/measurements.md, the histogram's launch).
BEST_WORDS_PER_THREAD, MAX_WORDS_PER_THREAD = 8, 64
BEST_LAUNCH = LaunchRule(block=1024, grid_sm=2, items=(BEST_WORDS_PER_THREAD, 4, MAX_WORDS_PER_THREAD), items_multiple=4)


def load_input(path, option: str = "--input") -> np.ndarray:
    """Every byte of the regular file at ``path`` as a uint8 array, read through the one input reader
    (InputError if missing, not a regular file, empty, or larger than the counters or memory allow)."""
    from kernels.io.reader import memory_limit, read_bytes

    limit, why = memory_limit()
    if limit >= MAX_BYTES:
        limit, why = MAX_BYTES, "the histogram's 32-bit counters"
    raw = read_bytes(path, option, limit, why)
    if not raw:
        raise InputError(f"{option} {os.fspath(path)!r} is empty; a histogram needs at least 1 byte")
    return np.frombuffer(raw, dtype=np.uint8)


def _input_size(path, option: str) -> tuple[int, int]:
    """The file's bytes are the problem (its memory estimate counts them): (its size, nothing beside)."""
    from kernels.io.reader import input_size

    return input_size(path, option), 0


# --- what the inspector compiles for each GPU variant (100 MiB of bytes; grids modelled on an H100) --------

_SIG = "void(uint8[::1], int64, uint32[::1])"
_N = 100 * 2**20
_H100_SMS = 132
_BINS_BYTES = BINS * 4


def _traffic(per_byte_atomic: bool):
    def traffic(n, threads, blocks):
        atomics = n if per_byte_atomic else _BINS_BYTES * blocks // 4
        words = "one global atomic per byte" if per_byte_atomic else "256 global atomics per block"
        return Traffic(n + 4 * atomics, n, "int32", f"reads n bytes once, {words} (4 bytes each)")
    return traffic


def _seed_inspect(item: int, per_byte_atomic: bool) -> KernelDecl:
    return KernelDecl("kernels.histogram.gpu", "seed_kernels", (), _SIG, (256,), no_dynamic_shared,
                      _traffic(per_byte_atomic), _N, item=item, grid=2 * _H100_SMS)


# --- the variants -------------------------------------------------------------------------------------------

VARIANTS = (
    Variant(
        "cpu-numpy", "np.bincount on the host: the seed's CPU histogram, and the reference to match",
        "cpu", seed="003", run=entry("kernels.histogram.cpu", "run_numpy"),
    ),
    Variant(
        "cpu-parallel", "Numba parallel loop: each chunk counts into private bins, summed at the end (no atomics)",
        "cpu", run=entry("kernels.histogram.cpu", "run_parallel"),
    ),
    Variant(
        "cpu-sub-histograms", "Numba parallel loop over 8-byte words: 16 interleaved sub-histograms per chunk, so runs "
        "of one byte value do not wait on their own stores; summed at the end", "cpu",
        run=entry("kernels.histogram.cpu", "run_sub_histograms"),
    ),
    Variant(
        "global-atomics", "seed's first kernel: an atomic add on 256 global counters per byte, so threads queue up",
        "gpu", seed="003", launch=SEED_LAUNCH, run=entry("kernels.histogram.gpu", "run_global_atomics"),
        inspect=_seed_inspect(1, True),
    ),
    Variant(
        "shared-atomics", "seed's second kernel: atomics on a block's shared histogram, then one global atomic per bin",
        "gpu", seed="003", constraints="any block size works: a loop covers the 256 bins",
        launch=SEED_LAUNCH, run=entry("kernels.histogram.gpu", "run_shared_atomics"), inspect=_seed_inspect(2, False),
    ),
    Variant(
        "best", "32 per-lane shared sub-histograms, one bank each (conflict-free atomics at any entropy); 16-byte loads "
        "in flight", "gpu", constraints="32 KiB shared memory per block; items_per_thread = 4-byte words per thread per "
        "round, read 4 at a time",
        launch=BEST_LAUNCH, run=entry("kernels.histogram.gpu", "run_best"),
        mlir_wrong_code=SHARED_ATOMIC_IN_DEVICE_FUNCTION.name,  # count_byte's atomics on the shared sub-histograms
        inspect=KernelDecl("kernels.histogram.gpu", "best_kernel", (BEST_WORDS_PER_THREAD,),
                           "void(uint32[::1], uint8[::1], int64, uint32[::1])", (1024,), no_dynamic_shared,
                           _traffic(False), _N, grid=2 * _H100_SMS),
    ),
    Variant(
        "cupy-histogram", "cupy.histogram(bins=256, range=(0, 256)): CuPy may hand it to CUB, but not to CUB's "
        "fast path here (compare it with cub-histogram; docs/measurements.md has the figures)", "peer",
        run=entry("kernels.histogram.peers", "run_cupy_histogram"),
    ),
    Variant(
        "cub-histogram", "CUB DeviceHistogram::HistogramEven (cuda.compute histogram_even): 257 levels 0..256, "
        "int32 counters, temp storage allocated once; CUB zeroes its counters itself", "peer",
        run=entry("kernels.histogram.peers", "run_cub_histogram"),
    ),
    Variant(
        "torch-bincount", "torch.bincount(x, minlength=256) on a zero-copy view of the bytes", "peer",
        run=entry("kernels.histogram.peers", "run_torch_bincount"),
    ),
)


def _memory(n: int, options: dict) -> tuple[int, int]:
    # the bytes, np.bincount's cast of them to intp for the reference, the pattern's temporaries
    return n * 11, n + BINS * 4


def _make(n, options, seed, data=None) -> HistogramProblem:
    if data is not None:
        return make_problem(data=data)
    return make_problem(n, seed, pattern=options["pattern"])


def _user_score(problem: HistogramProblem, counts) -> int:
    return problem.score(counts)  # remembers the first differing bin for verify's message


USER = UserTarget(
    time_run=entry("kernels.histogram.user_run", "time_run"), score=_user_score,
    arguments="run(data, n, bins, launch): data the device bytes (uint8, zero-padded to a multiple of 4 so "
              "data.view(np.uint32) is legal), n how many to count, bins 256 zeroed uint32 device counters, "
              "launch (block, grid, items)",
    default_launch=SEED_LAUNCH,
)

ALGORITHM = Algorithm(
    name="histogram", title="Histogram",
    summary="256-bin histogram of bytes: CPU, global and shared atomics (seed 003), per-lane sub-histograms",
    variants=VARIANTS, make_problem=_make,
    size=SizeAxis("N bytes", "bytes", default={"cuda": 100 * 2**20, "cpu": 16 * 2**20, "sim": 4096},
                  maximum={"cuda": MAX_BYTES, "cpu": MAX_BYTES, "sim": 65536},
                  gui_default={"cuda": 1 << 24, "cpu": 1 << 24, "sim": 4096}),
    options=(Option("pattern", "uniform random bytes (bit entropy 1.0), low-entropy (nine bytes in ten one value), or "
                               "CUB's benchmark inputs entropy-0.811 .. entropy-0.000 (bit entropy; AND of 1-4 "
                               "random bytes, 0.000 = one value)", choices=PATTERNS,
                    default="uniform"),),
    load_input=load_input, input_size=_input_size, input_help="any file: its bytes are counted instead of random data",
    memory=_memory, user=USER,
    judge=copy_judge(),  # bandwidth-bound: the copy bandwidth is its ceiling
)
