"""The CUDA simulator's caps and defaults in the GUI. It runs every GPU thread in Python (a 64x64 frame of
20 spheres takes seconds), so values sized for a CPU or a GPU would keep it busy for hours."""

from __future__ import annotations

SIM_MAX_SPHERES = 64
SIM_DEFAULT_SPHERES = 8
SIM_DEFAULT_SIDE = 64  # default image side on the simulator (SIM_MAX_SIDE in state.py is the cap)
SIM_MAX_REPEATS = 5
SIM_DEFAULT_REPEATS = 2
SIM_N_FACTOR = 16  # a benchmark panel's N is capped at its spec's sim_n times this

SIM_TIMING_NOTE = ("simulator timings: every GPU thread runs in Python, so these numbers say nothing about "
                   "a GPU (orders of variants can even be reversed)")


def sim_max_n(spec) -> int:
    return spec.sim_n * SIM_N_FACTOR
