"""The benchmark panels' algorithms: the descriptors from :mod:`kernels.registry` (one panel each), and
the sweeps a panel offers. No widgets here."""

from __future__ import annotations

from kernels.registry import with_panels

ALGORITHMS = with_panels()


def n_sweep(n: int, start: int = 1024, factor: int = 4) -> list[int]:
    """Sizes for a sweep over N: start, start * factor, ... up to and including ``n``."""
    sizes, v = [], min(start, n)
    while v < n:
        sizes.append(v)
        v *= factor
    sizes.append(n)
    return sizes


def block_sweep(max_threads: int, start: int = 32) -> list[int]:
    """Block sizes for a sweep: powers of two from ``start`` to the device's max threads per block."""
    sizes, b = [], start
    while b <= max_threads:
        sizes.append(b)
        b *= 2
    return sizes or [max_threads]
