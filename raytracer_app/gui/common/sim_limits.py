"""The CUDA simulator's caps and defaults in the GUI. It runs every GPU thread in Python (a 64x64 frame of
20 spheres takes seconds), so values sized for a CPU or a GPU would keep it busy for hours. The caps are
the simulator backend's own (:class:`kernels.backend.Caps`) and each algorithm's size axis; the GUI adds
its smaller starting values."""

from __future__ import annotations

from kernels.backend import SIM_TIMING_NOTE, Backend

SIM = Backend("sim")
SIM_MAX_SPHERES = SIM.caps.max_spheres
SIM_DEFAULT_SPHERES = 8
SIM_MAX_SIDE = SIM.caps.max_image_side
SIM_DEFAULT_SIDE = 64  # default image side on the simulator (SIM_MAX_SIDE is the cap)
SIM_MAX_REPEATS = SIM.caps.max_repeats
SIM_DEFAULT_REPEATS = SIM.caps.default_repeats

__all__ = ["SIM_TIMING_NOTE", "SIM_MAX_SPHERES", "SIM_MAX_SIDE", "SIM_DEFAULT_SPHERES", "SIM_DEFAULT_SIDE", "SIM_MAX_REPEATS",
           "SIM_DEFAULT_REPEATS", "sim_max_n", "sim_default_n"]


def sim_max_n(spec) -> int:
    """A benchmark panel's largest N on the simulator: its algorithm's own simulator limit."""
    return spec.size.maximum[SIM.kind]


def sim_default_n(spec) -> int:
    return spec.size.default_for(SIM, gui=True)
