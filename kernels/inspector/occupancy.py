"""Theoretical occupancy from an architecture's published limits, as CUDA's occupancy calculator
(``cuda_occupancy.h``) computes it with no cache preference set.

Registers are allocated per warp in units of 256, within each of the SM's 4 sub-partitions (a warp's
registers cannot straddle two); shared memory per block is rounded up to the allocation granularity
after adding the per-block reservation (1 KiB from sm_80 on), and limited by the largest carve-out.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.errors import InputError

WARP = 32
KIB = 1024


@dataclass(frozen=True)
class ArchLimits:
    arch: str
    registers_per_sm: int
    register_unit: int  # registers are allocated per warp in multiples of this
    sub_partitions: int  # the register file is split into this many parts, one per warp scheduler
    max_registers_per_thread: int
    max_registers_per_block: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    shared_per_sm: int  # bytes, the largest carve-out
    carveouts_kib: tuple[int, ...]  # the shared-memory sizes the SM can be configured to
    shared_reserved_per_block: int  # bytes the system keeps in every block's shared memory
    shared_granularity: int  # bytes
    max_shared_per_block: int  # bytes, with the opt-in attribute
    max_threads_per_block: int = 1024

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * WARP


def _limits(arch, warps, blocks, shared_kib, carveouts, reserved, gran, per_block_kib):
    return ArchLimits(arch, 65536, 256, 4, 255, 65536, warps, blocks, shared_kib * KIB, carveouts,
                      reserved, gran, per_block_kib * KIB)


_AMPERE_CARVEOUTS = (0, 8, 16, 32, 64, 100)
_BIG_CARVEOUTS = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)
# CUDA C++ Programming Guide, "Compute Capabilities" (features and technical specifications tables)
LIMITS: dict[str, ArchLimits] = {
    "sm_75": _limits("sm_75", 32, 16, 64, (32, 64), 0, 256, 64),
    "sm_80": _limits("sm_80", 64, 32, 164, (0, 8, 16, 32, 64, 100, 132, 164), KIB, 128, 163),
    "sm_86": _limits("sm_86", 48, 16, 100, _AMPERE_CARVEOUTS, KIB, 128, 99),
    "sm_89": _limits("sm_89", 48, 24, 100, _AMPERE_CARVEOUTS, KIB, 128, 99),
    "sm_90": _limits("sm_90", 64, 32, 228, _BIG_CARVEOUTS, KIB, 128, 227),
    "sm_100": _limits("sm_100", 64, 32, 228, _BIG_CARVEOUTS, KIB, 128, 227),
    "sm_120": _limits("sm_120", 48, 32, 100, _AMPERE_CARVEOUTS, KIB, 128, 99),
}
DEFAULT_ARCH = "sm_90"


def limits_for(arch: str) -> ArchLimits:
    try:
        return LIMITS[arch]
    except KeyError:
        raise InputError(f"architecture {arch!r} is not supported; allowed: {', '.join(LIMITS)}") from None


@dataclass(frozen=True)
class Occupancy:
    arch: str
    threads_per_block: int
    registers_per_thread: int
    shared_per_block: int  # static + dynamic bytes, as the kernel asks for them
    blocks_per_sm: int
    warps_per_sm: int
    max_warps_per_sm: int
    limiter: str  # 'registers', 'shared memory', 'warps', 'blocks' (or 'invalid launch')
    limits_by: dict  # resource -> blocks per SM it alone would allow (resources the kernel does not use: absent)
    carveout_kib: int | None  # the smallest carve-out that holds the resident blocks' shared memory

    @property
    def percent(self) -> float:
        return 100.0 * self.warps_per_sm / self.max_warps_per_sm


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def occupancy(arch: str, threads_per_block: int, registers_per_thread: int, shared_per_block: int = 0) -> Occupancy:
    """Resident blocks and warps per SM for a kernel with these resources at this block size."""
    lim = limits_for(arch)
    if not 1 <= threads_per_block <= lim.max_threads_per_block:
        raise InputError(f"block of {threads_per_block} threads is out of range; allowed 1..{lim.max_threads_per_block}")
    warps_per_block = -(-threads_per_block // WARP)
    by = {"warps": lim.max_warps_per_sm // warps_per_block, "blocks": lim.max_blocks_per_sm}
    if registers_per_thread > 0:
        regs_per_warp = _round_up(registers_per_thread * WARP, lim.register_unit)
        warps_per_part = (lim.registers_per_sm // lim.sub_partitions) // regs_per_warp
        fits = regs_per_warp * warps_per_block <= lim.max_registers_per_block
        by["registers"] = (warps_per_part * lim.sub_partitions) // warps_per_block if fits else 0
    if shared_per_block > 0:
        per_block = _round_up(shared_per_block + lim.shared_reserved_per_block, lim.shared_granularity)
        fits = shared_per_block <= lim.max_shared_per_block
        by["shared memory"] = lim.shared_per_sm // per_block if fits else 0
    blocks = min(by.values())
    # ties name the resource in this order: the one a learner can change most easily first
    limiter = next(r for r in ("registers", "shared memory", "warps", "blocks") if by.get(r) == blocks)
    if blocks == 0:
        limiter = f"invalid launch ({limiter})"
    return Occupancy(arch, threads_per_block, registers_per_thread, shared_per_block, blocks,
                     blocks * warps_per_block, lim.max_warps_per_sm, limiter, by,
                     _carveout(lim, blocks, shared_per_block))


def _carveout(lim: ArchLimits, blocks: int, shared_per_block: int) -> int | None:
    if blocks == 0:
        return None
    per_block = _round_up(shared_per_block + lim.shared_reserved_per_block, lim.shared_granularity) if shared_per_block else 0
    need = blocks * per_block
    return next((c for c in lim.carveouts_kib if c * KIB >= need), lim.carveouts_kib[-1])


def block_sizes(arch: str, step: int = WARP) -> list[int]:
    """Every block size the curve shows: multiples of the warp size up to the architecture's maximum."""
    lim = limits_for(arch)
    return list(range(step, lim.max_threads_per_block + 1, step))


def curve(arch: str, registers_per_thread: int, shared_for_block, sizes: list[int] | None = None) -> list[Occupancy]:
    """Occupancy at every block size; ``shared_for_block(threads)`` gives the shared bytes per block
    (static + dynamic) at that size."""
    return [occupancy(arch, t, registers_per_thread, shared_for_block(t)) for t in (sizes or block_sizes(arch))]
