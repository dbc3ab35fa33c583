"""What the inspector compiles for a GPU variant, declared next to the variant in its algorithm package:
the kernel (or the factory that builds it), its signature, its launch shape, its dynamic shared memory
and its traffic model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Traffic:
    """Bytes a launch moves to or from DRAM and the arithmetic operations it does, by the model."""

    bytes: float
    ops: float
    ops_kind: str  # 'int32', 'fp32' or 'fp64': which peak the operations count against
    model: str  # the model in words


def no_dynamic_shared(threads: int) -> int:
    return 0


@dataclass(frozen=True)
class KernelDecl:
    module: str  # where the kernel (or the factory that builds it) lives
    function: str  # the kernel's Python function, or a factory returning it
    args: tuple | None  # factory arguments; None: ``function`` is the kernel itself
    signature: str  # numba signature to compile
    default_block: tuple[int, ...]  # (x,) or (x, y) threads
    dynamic_shared: Callable[[int], int]  # bytes of dynamic shared memory for a block of that many threads
    traffic: Callable[[int, int, int], Traffic]  # (n, threads per block, blocks) -> Traffic
    default_n: int
    item: int | None = None  # the factory returns a tuple of kernels: this one
    fixed_block: bool = False  # the variant always launches default_block (the book's Julia launch)
    grid: int | None = None  # blocks the traffic model assumes (None: one thread per element or pixel)
    note: str = ""


def threads(block: tuple[int, ...]) -> int:
    total = 1
    for b in block:
        total *= b
    return total
