"""The ceiling micro-kernels on CUDA (:mod:`kernels.harness.ceilings` says what each ceiling is) and their
measurement on a GPU, each best of several launches timed with CUDA events:

- ``read_sectors``: each thread reads ``rounds`` random 32-byte sectors of a uint64 table (two 16-byte loads,
  as the hash map reads a bucket) and keeps the XOR of what it read;
- ``swap_slots``: each thread compare-and-swaps ``rounds`` random 8-byte slots from empty (0) to a key of its
  own, counting the swaps it won (an insert's one CAS per key); the table is emptied before every launch,
  outside the timing;
- ``fma_chains``: each thread runs ``FMA_CHAINS`` independent chains x = x * m + c, ``steps`` times, in
  registers, in the precision of its values, and writes them back.

Imported on the first measurement (numba); the simulator runs the same kernels on small inputs."""

from __future__ import annotations

import numpy as np

from kernels.backend.compiler import cuda
from kernels.device_functions.callees import for_kernels
from kernels.device_functions.slot_loads import load_pair
from kernels.harness.ceiling_math import FMA_CHAINS, SLOTS_PER_SECTOR, scatter_index

_scatter_index = for_kernels(scatter_index, takes_arrays=False)

THREADS = 256
SECTOR_ROUNDS = 16  # sectors per thread: 16 x 2048 threads per SM keep every SM's loads busy for a millisecond
CAS_ROUNDS = 8
FMA_STEPS = 4096
TIMED = 10  # launches; the best is the ceiling


@cuda.jit
def read_sectors(slots, sectors, rounds, out):
    i = cuda.grid(1)
    if i >= out.size:
        return
    acc = np.uint64(0)
    for r in range(rounds):
        s = _scatter_index(i, r, sectors) * np.uint64(SLOTS_PER_SECTOR)
        a, b = load_pair(slots, s)
        c, d = load_pair(slots, s + np.uint64(2))
        acc ^= a ^ b ^ c ^ d
    out[i] = acc


@cuda.jit
def swap_slots(slots, rounds, won):
    i = cuda.grid(1)
    if i >= won.size:
        return
    count = 0
    for r in range(rounds):
        s = _scatter_index(i, r, slots.size)
        key = np.uint64(i) * np.uint64(rounds) + np.uint64(r) + np.uint64(1)
        if cuda.atomic.cas(slots, s, np.uint64(0), key) == np.uint64(0):
            count += 1
    won[i] = count


@cuda.jit
def fma_chains(values, steps, m, c):
    i = cuda.grid(1)
    if (i + 1) * FMA_CHAINS > values.size:
        return
    j = i * FMA_CHAINS
    x0, x1, x2, x3 = values[j], values[j + 1], values[j + 2], values[j + 3]
    x4, x5, x6, x7 = values[j + 4], values[j + 5], values[j + 6], values[j + 7]
    for _ in range(steps):
        x0 = x0 * m + c
        x1 = x1 * m + c
        x2 = x2 * m + c
        x3 = x3 * m + c
        x4 = x4 * m + c
        x5 = x5 * m + c
        x6 = x6 * m + c
        x7 = x7 * m + c
    values[j], values[j + 1], values[j + 2], values[j + 3] = x0, x1, x2, x3
    values[j + 4], values[j + 5], values[j + 6], values[j + 7] = x4, x5, x6, x7


@cuda.jit
def empty_slots(slots):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < slots.size:
        slots[i] = np.uint64(0)
        i += stride


def _threads() -> int:
    """Enough threads to fill every SM eight times over."""
    return cuda.get_current_device().MULTIPROCESSOR_COUNT * 2048 * 8


def _best_ms(launch, before=None) -> float:
    from kernels.timing import time_cuda_events

    return time_cuda_events(launch, TIMED, before=before).min_ms


def measure_sector_reads(backend, table_bytes: int) -> tuple[float, str]:
    """(sectors per second, how) over a table of ``table_bytes`` (whole sectors)."""
    from kernels.backend import memory

    sectors = max(1, table_bytes // 32)
    slots = memory.zeros(sectors * SLOTS_PER_SECTOR, np.uint64)
    threads = _threads()
    out = memory.empty(threads, np.uint64)
    grid = -(-threads // THREADS)
    ms = _best_ms(lambda: read_sectors[grid, THREADS](slots, np.uint64(sectors), SECTOR_ROUNDS, out))
    return (threads * SECTOR_ROUNDS / (ms * 1e-3),
            f"{threads:,} threads x {SECTOR_ROUNDS} random 32-byte sectors (two 16-byte loads each) over "
            f"{sectors * 32 / 2**20:.0f} MiB, best of {TIMED} (CUDA events)")


def measure_cas(backend, table_bytes: int) -> tuple[float, str]:
    """(compare-and-swaps per second, how) over ``table_bytes // 8`` slots emptied before each launch."""
    from kernels.backend import memory

    count = max(1, table_bytes // 8)
    slots = memory.zeros(count, np.uint64)
    threads = _threads()
    won = memory.empty(threads, np.int64)
    grid = -(-threads // THREADS)
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    ms = _best_ms(lambda: swap_slots[grid, THREADS](slots, CAS_ROUNDS, won),
                  before=lambda: empty_slots[sms * 8, 512](slots))
    return (threads * CAS_ROUNDS / (ms * 1e-3),
            f"{threads:,} threads x {CAS_ROUNDS} random 8-byte CAS from empty over {count * 8 / 2**20:.0f} MiB "
            f"(emptied before each launch, outside the timing), best of {TIMED} (CUDA events)")


def measure_fma(dtype) -> tuple[float, str]:
    """(FMAs per second, how) in ``dtype`` (float32 or float64)."""
    from kernels.backend import memory

    dtype = np.dtype(dtype)
    threads = _threads()
    values = memory.to_device(np.ones(threads * FMA_CHAINS, dtype))
    grid = -(-threads // THREADS)
    m, c = dtype.type(0.999), dtype.type(0.001)  # x stays near 1: no overflow, no denormals
    ms = _best_ms(lambda: fma_chains[grid, THREADS](values, FMA_STEPS, m, c))
    return (threads * FMA_CHAINS * FMA_STEPS / (ms * 1e-3),
            f"{threads:,} threads x {FMA_CHAINS} independent {dtype.name} FMA chains x {FMA_STEPS} steps in "
            f"registers, best of {TIMED} (CUDA events)")


def measure_fma_float32(backend, table_bytes: int = 0) -> tuple[float, str]:
    return measure_fma(np.float32)


def measure_fma_float64(backend, table_bytes: int = 0) -> tuple[float, str]:
    return measure_fma(np.float64)
