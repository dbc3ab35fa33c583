"""How the sphere kernels and the CPU twin read a scene: one flat float32 buffer, first a hot record per
sphere read at every step (x, y, radius, z: 16 bytes, four to a 64-byte line), then a cold one read only
for a nearer hit (r, g, b) from element ``cold_at`` on. Whole 28-byte records would stream 56 KB through
each SM's small constant cache for 2000 spheres and thrash it when many blocks sit at different spheres;
hot records halve that. One buffer, not two arrays: a second array argument makes the CPU twin 20x
slower. Scenes keep the book's whole records (:mod:`.scene`)."""

from __future__ import annotations

import numpy as np

from kernels.errors import one_of
from kernels.spheres.scene import CONSTANT_CAPACITY, MEMORIES

PATTERNS = ("uniform", "staggered")
HOST_TWINS = ("tiles", "rows", "rows-serial")  # the CPU code that draws on the host; the first is the default
MISS = np.float32(-2e10)  # the book's -INF
HOT, COLD = 4, 3
TILE_CHUNK = 256  # spheres culled and staged in shared memory per pass
TILE_FLOATS = TILE_CHUNK * (HOT + COLD)  # a shared array's size must be one compile-time constant
CONSTANT_FLOATS = CONSTANT_CAPACITY * (HOT + COLD)
CONSTANT_COLD_AT = CONSTANT_CAPACITY * HOT
CONSTANT_SYMBOL = "raytracer_constant_spheres"  # the constant kernel's __constant__ array, as the PTX names it


def pack_spheres(spheres: np.ndarray, slots: int | None = None) -> np.ndarray:
    """The scene's (N, 7) records (r, g, b, radius, x, y, z) as the flat hot-then-cold buffer, with room
    for ``slots`` spheres (default N): hot x, y, radius, z at 4*i, cold r, g, b at 4*slots + 3*i."""
    n = spheres.shape[0]
    slots = n if slots is None else slots
    flat = np.zeros(slots * (HOT + COLD), np.float32)
    flat[: n * HOT] = spheres[:, [4, 5, 3, 6]].ravel()
    flat[slots * HOT: slots * HOT + n * COLD] = spheres[:, 0:3].ravel()
    return flat


def constant_values(spheres: np.ndarray) -> tuple[tuple[int, np.ndarray], ...]:
    """(element offset, values) to copy into the constant array for a scene: its hot records from 0, its
    cold ones from CONSTANT_COLD_AT (the constant kernel reads them there, whatever the count)."""
    packed = pack_spheres(spheres)
    hot_end = spheres.shape[0] * HOT
    return (0, packed[:hot_end]), (CONSTANT_COLD_AT, packed[hot_end:])


def check_memory(memory: str) -> str:
    return one_of(memory, MEMORIES, "memory")


def check_twin(twin: str) -> str:
    return one_of(twin, HOST_TWINS, "CPU twin")


def check_pattern(pattern: str) -> str:
    return one_of(pattern, PATTERNS, "pattern")
