"""What a traced run is asked to do: :class:`TraceJob`, plain data that crosses to the simulator's child
process, and the test of a built-in variant the trace can run. Imports no numba."""

from __future__ import annotations

from dataclasses import dataclass, field

from kernels.access.recorder import MAX_SEGMENT_RECORDS
from kernels.backend.devices import DeviceLimits
from kernels.errors import InputError, shown
from kernels.launch import Launch

# Grids that a variant sizes from the SM count are resolved as on an H100 (132 SMs), as the inspector models
# them, unless a GPU is given (``--measured`` resolves them for that GPU, and ncu measures the same launch).
MODEL_LIMITS = DeviceLimits(name="an H100's 132 SMs (as the inspector models them)", sm_count=132)
DEFAULT_BLOCKS = 8


@dataclass(frozen=True)
class TraceJob:
    """One traced run: a built-in variant (``variant``), a user's file (``variant_file`` = (path, text);
    ``variant`` then optional, checked against its NAME) or, for tests and lessons, a function that
    launches kernels (``entry`` = (module, name))."""

    target: str
    variant: str | None = None
    n: int | None = None
    options: dict = field(default_factory=dict)
    seed: int = 0
    launch: Launch = Launch()
    limits: DeviceLimits = MODEL_LIMITS
    blocks: int = DEFAULT_BLOCKS
    variant_file: tuple | None = None
    entry: tuple | None = None
    segment_records: int = MAX_SEGMENT_RECORDS
    # a variant file's watchdog, as bench's --variant-timeout: once its code runs, the trace's child is ended
    # after this many seconds without a block done or a call of its run finished
    variant_timeout: float = 10.0

    @property
    def label(self) -> str:
        if self.entry:
            return f"{self.entry[0]}:{self.entry[1]}"
        return f"{self.target} {self.variant or self.variant_file[0]}"


def gpu_variant(spec, name: str | None):
    """The built-in variant ``name`` of ``spec`` if the simulator can trace it, else InputError."""
    if name is None:
        raise InputError(f"name a variant of {spec.name} to trace (see bench {spec.name} --list), or give "
                         "--variant-file")
    by_name = {v.name: v for v in spec.variants}
    v = by_name.get(name)
    if v is None:
        known = ", ".join(x.name for x in spec.variants if x.kind == "gpu")
        raise InputError(f"unknown variant {shown(name)} of {spec.name}; its GPU variants: {known}")
    if v.runs_on_host:
        raise InputError(f"{name} is CPU code (a Numba twin on the host): it makes no GPU memory requests to trace; "
                         "name a GPU variant")
    if v.kind != "gpu":
        raise InputError(f"{name} is a library peer: its kernels are not Python, so the simulator cannot run them; "
                         "name a GPU variant of the lab")
    if v.sim_skip:
        raise InputError(f"{name}: the simulator cannot run it ({v.sim_skip}), so it cannot be traced")
    return v
