"""The constant-memory lesson: the ray-traced spheres of *CUDA by Example* ch. 6 read from global memory, from
``__constant__`` memory and through shared-memory tiles, with warps reading the spheres in step (uniform) or
each thread starting at a different sphere (staggered), at 20, 200 and 2000 spheres."""

from __future__ import annotations

from kernels.lessons.lesson import Lesson, Step
from kernels.spheres import ALGORITHM as SPHERES

_GLOBAL_UNIFORM, _GLOBAL_STAGGERED = 0, 3

CONSTANT_MEMORY = Lesson(
    name="constant-memory", title="Constant memory: broadcast, serialisation and the 64 KiB limit",
    target=SPHERES.name,
    summary="spheres in global, constant and shared memory; constant memory broadcasts one address to a warp and "
            "serialises different ones; it holds 64 KiB (2340 spheres here); shared-memory tiles are the fix",
    sizes=(20, 200, 2000), sim_size=5,
    source="Jason Sanders and Edward Kandrot, CUDA by Example (Addison-Wesley, 2010), ch. 6; seed 001",
    evidence=("registers", "occupancy", "shared", "instructions", "constant load", "global load", "shared load",
              "barrier"),
    steps=(
        Step("spheres-global", "global memory, uniform reads",
             "Every thread tests every sphere, read from global memory through L1: the book's first kernel.",
             options={"pattern": "uniform"}, label="global uniform"),
        Step("spheres-constant", "constant memory, uniform reads",
             "All 32 threads of a warp read the same sphere at once: the constant cache broadcasts it in one "
             "transaction.", options={"pattern": "uniform"}, baseline=_GLOBAL_UNIFORM, label="constant uniform"),
        Step("spheres-shared", "shared-memory tiles, uniform reads",
             "Each block keeps only the spheres that can touch its tile, staged in shared memory: fewer spheres "
             "per pixel, whatever the read order.", options={"pattern": "uniform"}, baseline=_GLOBAL_UNIFORM,
             label="shared uniform"),
        Step("spheres-global", "global memory, staggered reads",
             "Each thread starts at a different sphere: global loads go through L1 and are cached either way.",
             options={"pattern": "staggered"}, baseline=_GLOBAL_UNIFORM, label="global staggered"),
        Step("spheres-constant", "constant memory, staggered reads",
             "The threads of a warp ask for different addresses: the constant cache serves them one after another "
             "(serialisation), and with many spheres its few KiB thrash.",
             options={"pattern": "staggered"}, baseline=_GLOBAL_STAGGERED, label="constant staggered"),
        Step("spheres-shared", "shared-memory tiles, staggered reads",
             "Shared memory serves different addresses in one go (one per bank): staggering costs it little.",
             options={"pattern": "staggered"}, baseline=_GLOBAL_STAGGERED, label="shared staggered"),
    ),
)
