"""A benchmark's rows: what a run of one variant on one problem and launch gives (:class:`Row`), with the CSV
columns the CLI, the GUI, result files and the tests share, and what the harness asks of a problem
(:class:`Problem`), of a rate unit (:class:`Unit`) and of a variant's run (:class:`Outcome`)."""

from __future__ import annotations

import datetime
import functools
from dataclasses import dataclass, field
from typing import Callable, Protocol

from kernels.backend import Skip
from kernels.counters.columns import CLOCK_COLUMNS, COUNTER_COLUMNS
from kernels.timing import Timing

CSV_COLUMNS = (
    "variant", "op", "dtype", "n", "block", "grid", "backend", "device", "repeats",
    "median_ms", "min_ms", "max_ms", "gbps", "pct_of_peak", "result", "expected", "verified",
    "app_version", "numba_version", "numba_cuda_version", "timestamp", "note", "rate", "rate_unit",
    # honest measurement: relative spread of the repeats, whether the input fits in the last-level cache,
    # the bandwidth against the device's spec figure, and the median of a cold (L2 flushed) run
    "noise", "cache_resident", "pct_of_spec", "cold_median_ms", "spec_gbps",
    "registers", "shared_bytes", "occupancy_pct",
    # bench --counters (Nsight Compute, kernels/counters) and NVML's clocks around every GPU row
) + COUNTER_COLUMNS + CLOCK_COLUMNS + (
    "axes",  # the swept options' values (e.g. load=0.9), empty when nothing is swept
    # the ceiling the row is judged against (kernels/harness/ceilings.py), its measured rate per second and the
    # row's percent of it; the renderers' work per second (primary rays, sphere tests performed and all pixel x
    # sphere tests, escape-time iterations)
    "ceiling", "ceiling_rate", "pct_of_ceiling",
) + tuple(f"{name}_per_s" for name in ("rays", "tests", "all_tests", "iterations"))

FIGURES = ("rays", "tests", "all_tests", "iterations")  # Row.figures' keys, each a '<name>_per_s' column

# verified column values
PASSED, FAILED, SKIPPED, ERROR = "yes", "FAILED", "skipped", "error"


class Problem(Protocol):
    """What the harness needs of a problem; each algorithm module builds its own."""

    algorithm: str
    op: str  # what the row's op column says: the reduction op, the histogram pattern, ...
    dtype: str
    n: int  # the row's size: elements, bytes, keys, spheres or pixels (the descriptor's size axis says)
    bytes_read: int  # bytes a run must read at least: the GB/s figure (0: none)

    @property
    def expected(self) -> object: ...

    def verify(self, result) -> tuple[bool, str]: ...


@dataclass(frozen=True)
class Unit:
    """The rate an algorithm reports beside GB/s: ``work(problem)`` units per run, e.g. keys / 1e6 for
    'M inserts/s'. GB/s itself comes from ``bytes_read``."""

    label: str
    work: Callable[[object], float]


@dataclass(frozen=True)
class Outcome:
    """What a variant's run returns: its result, its timing and the launch it actually used."""

    result: object
    timing: Timing
    block: object = ""
    grid: object = ""
    note: str = ""  # how the launch was chosen, e.g. "tuned: items 4, block 512 (cached)"


@dataclass
class Row:
    variant: str
    op: str
    dtype: str
    n: int
    backend: str
    device: str
    block: object = ""
    grid: object = ""
    repeats: int = 0
    timing: Timing | None = None
    gbps: float | None = None
    pct_of_peak: float | None = None
    rate: float | None = None
    rate_unit: str = ""
    result: object = ""
    expected: object = ""
    verified: str = SKIPPED
    note: str = ""
    timestamp: str = field(default_factory=lambda: datetime.datetime.now().isoformat(timespec="seconds"))
    skip: Skip | None = None  # why it was skipped, typed (the note says it in words)
    # bench --resources: the compiled kernel at the launch used (registers per thread, shared memory per
    # block, theoretical occupancy), from the inspector
    registers: int | str = ""
    shared_bytes: int | str = ""
    occupancy_pct: float | str = ""
    cache_resident: str = ""  # 'yes' / 'no': the input fits in L2 (the CPU's last-level cache); '' unknown
    pct_of_spec: float | None = None
    spec_gbps: float | None = None
    cold_timing: Timing | None = None  # the same run with L2 flushed before every repeat (--cold)
    counters: object = None  # bench --counters: a kernels.counters Measured record
    counters_note: str = ""  # why a GPU row has no counters
    clocks: object = None  # NVML's clocks, power and throttle reasons before and after the timed repeats
    axes: dict | None = None  # the swept options' values that identify the row beyond n, e.g. {'load': 0.9}
    ceiling: str = ""  # the name of the ceiling it is judged against ('' before it is measured)
    ceiling_rate: float | None = None  # that ceiling's measured rate, per second
    pct_of_ceiling: float | None = None
    figures: dict | None = None  # {FIGURES name: units per second}: a renderer's rays, tests, iterations
    worker: str = ""  # the cluster worker (HOST-gpuI) that ran the row; '' for a row run in this process

    @property
    def ok(self) -> bool:
        return self.verified == PASSED

    def as_dict(self) -> dict:
        """The row as the CSV has it, column by column in CSV_COLUMNS' order."""
        t = self.timing
        v = versions()
        computed = {
            "repeats": t.repeats if t else self.repeats,
            "median_ms": _num(t.median_ms if t else None), "min_ms": _num(t.min_ms if t else None),
            "max_ms": _num(t.max_ms if t else None), "gbps": _num(self.gbps), "pct_of_peak": _num(self.pct_of_peak, 1),
            "rate": _num(self.rate, 4), "app_version": v["app"], "numba_version": v["numba"],
            "numba_cuda_version": v["numba_cuda"],
            "noise": _num(t.noise if t else None, 4), "pct_of_spec": _num(self.pct_of_spec, 1),
            "cold_median_ms": _num(self.cold_timing.median_ms if self.cold_timing else None),
            "spec_gbps": _num(self.spec_gbps, 1), "axes": axes_text(self.axes),
            "ceiling_rate": _num(self.ceiling_rate, 1), "pct_of_ceiling": _num(self.pct_of_ceiling, 1),
            **{f"{k}_per_s": _num((self.figures or {}).get(k), 1) for k in FIGURES},
        }
        from kernels.counters.columns import cells

        computed.update(cells(self.counters, self.counters_note, self.clocks))
        return {c: computed[c] if c in computed else getattr(self, c) for c in CSV_COLUMNS}


def axes_text(axes: dict | None) -> str:
    """A row's swept values as the CSV and tables show them: 'load=0.9', '' for none."""
    return " ".join(f"{k}={v}" for k, v in (axes or {}).items())


def _num(x, digits: int = 6):
    return "" if x is None else round(float(x), digits)


def package_version(dist: str) -> str:
    """An installed distribution's version, or 'not installed'."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


@functools.lru_cache(maxsize=None)
def versions() -> dict:
    return {"app": package_version("raytracer-app"), "numba": package_version("numba"),
            "numba_cuda": package_version("numba-cuda")}


def show_block(block):
    """A block as rows show it: 256, or 16x16 for an image kernel's shape."""
    if isinstance(block, tuple):
        return f"{block[0]}x{block[1]}"
    return "" if block is None else block


def show_value(value):
    """Values as they go into the CSV: floats with full precision, everything else as is."""
    import numpy as np

    if isinstance(value, (np.floating, float)):
        return repr(float(value))
    if isinstance(value, np.integer):
        return int(value)
    return value
