"""The CPU twins of the ceiling micro-kernels (:mod:`.ceiling_kernels`): the same accesses and chains in
Numba's parallel loop, so the CPU backend's rows have a ceiling too. A CPU has no compare-and-swap in Numba:
its twin reads, compares and writes the slot (what the CPU hash tables do, one thread per stretch of keys); the
FMA twin runs its chains as SIMD lanes (the SIMD twins fill vector registers too).
Each is timed best of a few calls, wall time."""

from __future__ import annotations

import time

import numba
import numpy as np

from kernels.harness.ceiling_math import SLOTS_PER_SECTOR, scatter_index
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run

LANES = 1 << 16  # "threads" of the twins
SECTOR_ROUNDS = 64
CAS_ROUNDS = 16
FMA_STEPS = 1 << 14  # long enough that the parallel loop's start is lost in it
FMA_LANES = 64  # chains per block: SIMD vectors of them, enough of them in flight for the FMA latency
TIMED = 5


@numba.jit(nopython=True, nogil=True, parallel=True, cache=True)
def read_sectors(slots, sectors, rounds, out):
    for i in numba.prange(out.size):
        acc = np.uint64(0)
        for r in range(rounds):
            s = scatter_index(i, r, sectors) * np.uint64(SLOTS_PER_SECTOR)
            acc ^= slots[s] ^ slots[s + 1] ^ slots[s + 2] ^ slots[s + 3]
        out[i] = acc


@numba.jit(nopython=True, nogil=True, parallel=True, cache=True)
def swap_slots(slots, rounds, won):
    for i in numba.prange(won.size):
        count = 0
        for r in range(rounds):
            s = scatter_index(i, r, slots.size)
            if slots[s] == np.uint64(0):
                slots[s] = np.uint64(i) * np.uint64(rounds) + np.uint64(r) + np.uint64(1)
                count += 1
        won[i] = count


@numba.jit(nopython=True, nogil=True, cache=True, fastmath={"contract"})
def fma_block(values, b, steps, m, c):
    """FMA_LANES chains of ``values`` from FMA_LANES * b on, ``steps`` times: a loop of a constant trip count
    over a small array, which LLVM keeps in vector registers (one vector FMA per 4-16 chains)."""
    x = np.empty(FMA_LANES, values.dtype)
    for k in range(FMA_LANES):
        x[k] = values[b * FMA_LANES + k]
    for _ in range(steps):
        for k in range(FMA_LANES):
            x[k] = x[k] * m + c
    for k in range(FMA_LANES):
        values[b * FMA_LANES + k] = x[k]


@numba.jit(nopython=True, nogil=True, parallel=True, cache=True)
def fma_chains(values, steps, m, c):
    for b in numba.prange(values.size // FMA_LANES):  # the block is its own function: its size stays a constant
        fma_block(values, b, steps, m, c)


def _best_s(call, before=None) -> float:
    best = float("inf")
    for k in range(TIMED + 1):  # the first call compiles or loads the twin: not timed
        if before is not None:
            before()
        t0 = time.perf_counter()
        call()
        if k:
            best = min(best, time.perf_counter() - t0)
    return best


def measure_sector_reads(backend, table_bytes: int) -> tuple[float, str]:
    sectors = max(1, table_bytes // 32)
    slots = np.zeros(sectors * SLOTS_PER_SECTOR, np.uint64)
    out = np.empty(LANES, np.uint64)
    s = _best_s(lambda: read_sectors(slots, np.uint64(sectors), SECTOR_ROUNDS, out))
    return (LANES * SECTOR_ROUNDS / s, f"{LANES:,} lanes x {SECTOR_ROUNDS} random 32-byte sectors over "
            f"{sectors * 32 / 2**20:.1f} MiB, Numba's parallel loop, best of {TIMED} (wall time)")


def measure_cas(backend, table_bytes: int) -> tuple[float, str]:
    slots = np.zeros(max(1, table_bytes // 8), np.uint64)
    won = np.empty(LANES, np.int64)
    s = _best_s(lambda: swap_slots(slots, CAS_ROUNDS, won), before=lambda: slots.fill(0))
    return (LANES * CAS_ROUNDS / s, f"{LANES:,} lanes x {CAS_ROUNDS} random 8-byte read-compare-writes (no CAS "
            f"in Numba's CPU code) over {slots.nbytes / 2**20:.1f} MiB, emptied before each call, outside the "
            f"timing, best of {TIMED} (wall time)")


def measure_fma(dtype) -> tuple[float, str]:
    dtype = np.dtype(dtype)
    values = np.ones(FMA_LANES * 64, dtype)  # 64 blocks: every core gets some, the chains stay in registers
    m, c = dtype.type(0.999), dtype.type(0.001)
    s = _best_s(lambda: fma_chains(values, FMA_STEPS, m, c))
    return (values.size * FMA_STEPS / s, f"{values.size // FMA_LANES} blocks x {FMA_LANES} {dtype.name} "
            f"multiply-add chains (SIMD lanes) x {FMA_STEPS} steps, Numba's parallel loop (contracted to FMA), "
            f"best of {TIMED} (wall time)")


def measure_fma_float32(backend, table_bytes: int = 0) -> tuple[float, str]:
    return measure_fma(np.float32)


def measure_fma_float64(backend, table_bytes: int = 0) -> tuple[float, str]:
    return measure_fma(np.float64)
