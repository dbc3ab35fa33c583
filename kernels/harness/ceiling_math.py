"""The per-thread math the ceiling micro-kernels (:mod:`.ceiling_kernels`) and their CPU twins
(:mod:`.ceiling_host`) share, as a ``@numba.jit`` function: where thread ``i``'s ``r``-th access lands. Scalars only, so the
simulator calls it compiled (integer products wrap there as on a GPU)."""

from __future__ import annotations

import numba
from numpy import uint64

MASK32 = uint64(0xFFFFFFFF)
FMA_CHAINS = 8  # independent chains per thread: more FMAs in flight than the pipe's latency needs
SLOTS_PER_SECTOR = 4  # 8-byte slots in a 32-byte sector


@numba.jit(nopython=True)  # with its CPython wrapper: the simulator calls it compiled (callees.for_kernels)
def scatter_index(i, r, count):
    """A cheap hash of (thread i, access r) mapped onto 0..count-1 by a multiply-shift (count < 2^32): the
    random index a thread reads or swaps at. Every product stays below 2^64."""
    h = (uint64(i) * uint64(0x9E3779B1)) & MASK32
    h = (h + ((uint64(r) * uint64(0x85EBCA77)) & MASK32)) & MASK32
    h ^= h >> uint64(15)
    h = (h * uint64(0x2C1B3C6D)) & MASK32
    h ^= h >> uint64(12)
    return (h * uint64(count)) >> uint64(32)
