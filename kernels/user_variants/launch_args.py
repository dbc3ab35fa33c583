"""What a variant file's ``run`` receives as its launch, and how many calls a timing makes (each call gets
its own zeroed result). Imports no numba."""

from __future__ import annotations

from typing import NamedTuple

from kernels import timing


class UserLaunch(NamedTuple):
    """The resolved launch: threads per block, blocks, and items per thread (None when the rule has none)."""

    block: int
    grid: int | None
    items: int | None


def calls_needed(repeats: int, warmup: int = 1) -> int:
    """Calls of ``run`` one timing makes at most under the current measurement policy."""
    policy = timing.current_policy()
    samples = repeats
    if policy.tolerance is not None:
        samples = max(repeats, policy.max_repeats or 10 * repeats)
    return warmup + samples + 1
