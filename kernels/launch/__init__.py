"""Launches: what a user asks for (:class:`Launch`), the rule each GPU variant declares next to itself
(:class:`LaunchRule`: its default block and grid, which block sizes it accepts, its items per thread), and
the one resolver that turns the first into the configuration a kernel runs with, or one clear error.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from typing import Callable

from kernels.errors import InputError, shown, whole

MAX_GRID = 2**31 - 1
DEFAULT_BLOCK_2D = (16, 16)  # the book's 16x16 threads per block for images

# block rules: name -> (test, what the error says is needed)
BLOCK_ANY, BLOCK_POWER_OF_TWO, BLOCK_WHOLE_WARPS = "any", "power of two", "whole warps"


@dataclass(frozen=True)
class Launch:
    """A launch configuration a user asks for; ``None`` means the variant's own default (e.g. the
    seed's launch). ``block`` is a thread count, or a (BX, BY) shape for image kernels."""

    block: int | tuple[int, int] | None = None
    grid: int | None = None
    grid_sm: float | None = None  # grid as a multiple of the SM count (used when grid is None)
    items_per_thread: int | None = None

    def resolved_grid(self, sm_count: int) -> int | None:
        if self.grid is not None:
            return self.grid
        if self.grid_sm is not None:
            return max(1, int(round(self.grid_sm * sm_count)))
        return None

    @property
    def is_default(self) -> bool:
        return self == Launch()


@dataclass(frozen=True)
class Resolved:
    """The configuration a kernel runs with. ``grid`` is None for image kernels (it follows the image)."""

    block: int | tuple[int, int]
    grid: int | None
    items: int | None = None


@dataclass(frozen=True)
class LaunchRule:
    """A GPU variant's launch rules, declared next to the variant.

    The default grid is, in this order of preference: with ``tiles``, one block per tile of block x items
    elements when the input size is known; ``grid_for_n(n, block)`` when it is known; ``grid`` blocks, or
    ``grid_sm`` x the SM count, at most ``grid_cap_for_n(n, block)`` when the input size is known (blocks
    with no element to add are not launched). ``resident_grid``: on a real GPU the default grid is as many blocks as the
    whole GPU holds at once (asked of the driver for the compiled kernel). ``items``: (default, min, max)
    elements per thread for variants that have that knob, a multiple of ``items_multiple``.
    ``shape_2d``: an image kernel, block BXxBY."""

    block: int | tuple[int, int] = 256
    grid: int | None = None
    grid_sm: float | None = None
    grid_for_n: Callable[[int, int], int] | None = None
    grid_cap_for_n: Callable[[int, int], int] | None = None
    block_rule: str = BLOCK_ANY
    min_block: int = 1
    items: tuple[int, int, int] | None = None
    items_multiple: int = 1
    tiles: bool = False
    resident_grid: bool = False
    shape_2d: bool = False
    fixed: bool = False  # the block is part of what the variant teaches (the book's 1x1): a user's is ignored
    note: str = ""  # where the default comes from, e.g. "as in the seed"
    grid_text: str = ""  # the default grid in words where ``grid_for_n`` alone computes it, e.g. "n / block"

    def describe(self) -> str:
        """The rule in words, for --list, tooltips and the README."""
        if self.shape_2d and self.fixed:
            return f"block always {self.block[0]}x{self.block[1]}" + (f" ({self.note})" if self.note else "")
        if self.shape_2d:
            return f"block BXxBY, BX*BY <= max threads per block (default {self.block[0]}x{self.block[1]})"
        parts = [{BLOCK_ANY: f"block {self.min_block}..max threads per block",
                  BLOCK_POWER_OF_TWO: f"block a power of two, at least {self.min_block}",
                  BLOCK_WHOLE_WARPS: "block a multiple of the warp size (32)"}[self.block_rule]]
        grid = (f"{self.grid}" if self.grid else f"{self.grid_sm:g} x SM count" if self.grid_sm else "")
        if self.tiles:
            grid = "one per tile of block x items_per_thread elements"
        if self.resident_grid:
            # the driver answers only on a real GPU; the simulator and a failed query take the SM-count grid
            grid = "as many as the GPU holds at once" + (f" ({grid} without a GPU)" if grid else "")
        if (self.grid_for_n and self.grid) or self.grid_cap_for_n:
            grid += " (fewer when the input fills fewer)"
        if self.grid_text:
            grid = self.grid_text
        parts.append(f"default {self.block} threads x {grid} blocks" + (f", {self.note}" if self.note else ""))
        if self.items:
            multiple = f", a multiple of {self.items_multiple}" if self.items_multiple > 1 else ""
            parts.append(f"items_per_thread {self.items[1]}..{self.items[2]}{multiple} (default {self.items[0]})")
        return "; ".join(parts)


def resolve(rule: LaunchRule, launch: Launch, limits, *, n: int | None = None, variant: str = "") -> Resolved:
    """The launch a variant runs with: the user's values, else the rule's defaults. Raises InputError
    naming the variant and the rule a value breaks."""
    who = f"{variant}: " if variant else ""
    if rule.shape_2d:
        block = rule.block if launch.block is None or rule.fixed else launch.block
        if not isinstance(block, tuple):
            raise InputError(f"{who}block {block!r} must be a shape BXxBY, e.g. 16x16")
        return Resolved(check_block(block, limits), None)
    max_block = limits.max_threads_per_block
    if launch.block is None:
        block = min(rule.block, max_block)
    else:
        block = _whole(launch.block, f"{who}block size")
    if not rule.min_block <= block <= max_block:
        raise InputError(f"{who}block size {block} is out of range; allowed {rule.min_block}..{max_block} "
                         "(this device's max threads per block)")
    if rule.block_rule == BLOCK_POWER_OF_TWO and block & (block - 1):
        raise InputError(f"{variant} needs a power-of-two block size, got {block}")
    if rule.block_rule == BLOCK_WHOLE_WARPS and block % limits.warp_size:
        raise InputError(f"{variant} needs a block size that is a multiple of the warp size {limits.warp_size}, "
                         f"got {block}")
    if launch.grid_sm is not None and not (isinstance(launch.grid_sm, numbers.Real)
                                           and math.isfinite(launch.grid_sm) and launch.grid_sm > 0):
        raise InputError(f"{who}grid_sm {launch.grid_sm} must be a positive multiple of the SM count")
    items = launch.items_per_thread
    if rule.items is None:
        items = None  # a sweep's items_per_thread applies to the variants that have one
    elif items is None:
        items = rule.items[0]
    else:
        items = _whole(items, f"{who}items_per_thread")
        if not rule.items[1] <= items <= rule.items[2]:
            raise InputError(f"{who}items_per_thread {items} is out of range; allowed {rule.items[1]}..{rule.items[2]}")
        if items % rule.items_multiple:
            raise InputError(f"{who}items_per_thread {items} must be a multiple of {rule.items_multiple}")
    grid = launch.resolved_grid(limits.sm_count)
    if grid is None:
        grid = default_grid(rule, limits, block, n, items)
    else:
        grid = _whole(grid, f"{who}grid")
    if not 1 <= grid <= MAX_GRID:
        raise InputError(f"{who}grid {grid} is out of range; allowed 1..{MAX_GRID} blocks")
    return Resolved(block, grid, items)


def clamp_block(block: tuple[int, int], limits, keep: int = 0) -> tuple[int, int]:
    """A BXxBY image-kernel block brought into the device's ``limits`` (where
    :func:`check_block` refuses one outside them): each side into 1..max_block_dim, the kept
    side (``keep``: 0 for BX, 1 for BY) also into 1..max_threads_per_block, then, when BX * BY is still
    more than max_threads_per_block, the other side shrinks to max_threads_per_block // kept side. So the
    side the user set keeps its value: moving the BX slider passes ``keep=0``, the BY slider ``keep=1``."""
    if keep not in (0, 1):
        raise ValueError(f"keep must be 0 (BX) or 1 (BY), got {keep!r}")
    mt, dims = limits.max_threads_per_block, limits.max_block_dim
    sides = [max(1, min(int(block[i]), dims[i])) for i in (0, 1)]
    other = 1 - keep
    sides[keep] = min(sides[keep], mt)
    sides[other] = max(1, min(sides[other], mt // sides[keep]))
    return sides[0], sides[1]


def default_grid(rule: LaunchRule, limits, block: int, n: int | None, items: int | None = None) -> int:
    if rule.tiles and n is not None and items:
        return max(1, min(MAX_GRID, -(-n // (block * items))))
    if rule.grid_for_n is not None and n is not None:
        return max(1, rule.grid_for_n(n, block))
    grid = rule.grid if rule.grid is not None else max(1, int(round((rule.grid_sm or 1) * limits.sm_count)))
    if rule.grid_cap_for_n is not None and n is not None:
        grid = max(1, min(grid, rule.grid_cap_for_n(n, block)))
    return grid


def resident_blocks(kernel, args, block: int, dynamic_shared: int = 0) -> int | None:
    """Blocks of this kernel the whole GPU holds at once (blocks per SM at this block size, register use
    and ``dynamic_shared`` bytes per block, times the SM count): the grid for a grid-stride loop, one full
    wave with no straggling second. None when the driver cannot say."""
    import numba

    try:
        compiled = kernel.compile(tuple(numba.typeof(a) for a in args))  # the overload the launch will use
        return int(compiled.max_cooperative_grid_blocks(block, dynamic_shared))
    except Exception:  # noqa: BLE001 - only a default is lost; the caller keeps its SM-count based grid
        return None


def _whole(value, what: str) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):  # numpy ints are Integral too
        raise InputError(f"{what} {value!r} must be a whole number")
    return int(value)


# --- image kernels: BXxBY blocks ------------------------------------------------------------------------------


def parse_block(text: str) -> tuple[int, int]:
    """'BXxBY' -> (BX, BY); limits are checked by :func:`check_block` against the device."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", str(text))
    if not m:
        raise InputError(f"block {shown(text)} is malformed; use BXxBY, e.g. 16x16")
    return whole(m.group(1), "block x"), whole(m.group(2), "block y")


def check_block(block: tuple[int, int], limits) -> tuple[int, int]:
    bx, by = block
    if bx < 1 or by < 1:
        raise InputError(f"block {bx}x{by} has a zero dimension; each must be at least 1")
    if bx > limits.max_block_dim[0] or by > limits.max_block_dim[1]:
        raise InputError(
            f"block {bx}x{by} exceeds the device's max block dims {limits.max_block_dim[0]}x{limits.max_block_dim[1]}"
        )
    if bx * by > limits.max_threads_per_block:
        raise InputError(
            f"block {bx}x{by} has {bx * by} threads; the device allows at most {limits.max_threads_per_block} per block"
        )
    return bx, by


def grid_for(width: int, height: int, block: tuple[int, int]) -> tuple[int, int]:
    return (width + block[0] - 1) // block[0], (height + block[1] - 1) // block[1]
