"""The benchmark panels' algorithms, described as data: which kernels module, which problem options, how
to build a problem. The panel (bench_panel.py) is generic over these specs; no widgets here."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Option:
    """A choice the problem needs (op, dtype, pattern, buckets); ``values`` is read from the module."""

    key: str
    label: str
    values: Callable[[object], tuple]  # module -> allowed values
    default: object = None


@dataclass(frozen=True)
class AlgorithmSpec:
    title: str
    module_name: str
    n_label: str
    default_n: int
    sim_n: int  # default size in a simulator process (every GPU thread runs in Python there)
    max_n: int
    options: tuple[Option, ...] = field(default_factory=tuple)
    make: Callable[..., object] | None = None  # (module, n, options dict) -> problem
    rate_unit: str = "GB/s"  # throughput shown in the chart and the table (charts.RATE_UNITS)

    def module(self):
        return importlib.import_module(self.module_name)

    def variants(self) -> list:
        return list(self.module().VARIANTS)

    def option_values(self, option: Option) -> tuple:
        return tuple(option.values(self.module()))

    def make_problem(self, n: int, options: dict):
        return self.make(self.module(), n, options)


def _const(*values):
    return lambda module: values


REDUCTION = AlgorithmSpec(
    "Reduction", "kernels.reduction", "N elements", default_n=1 << 22, sim_n=4096, max_n=1 << 30,
    options=(
        Option("op", "op", lambda m: tuple(m.OPS)),
        Option("dtype", "dtype", lambda m: tuple(m.DTYPES)),
    ),
    make=lambda m, n, o: m.make_problem(o["op"], o["dtype"], n, seed=0),
)

HISTOGRAM = AlgorithmSpec(
    "Histogram", "kernels.histogram", "N bytes", default_n=1 << 24, sim_n=4096, max_n=1 << 30,
    options=(Option("pattern", "data", lambda m: tuple(m.PATTERNS)),),
    make=lambda m, n, o: m.make_problem(n, seed=0, pattern=o["pattern"]),
)

HASHTABLE = AlgorithmSpec(
    "Hash table", "kernels.hashtable", "N keys", default_n=1 << 20, sim_n=1024, max_n=1 << 28,
    options=(Option("buckets", "buckets", _const(1024, 256, 4096, 16384, 65536, 1 << 20), default=1024),),
    make=lambda m, n, o: m.make_problem(n, buckets=int(o["buckets"]), seed=0),
    rate_unit="M inserts/s",
)

ALGORITHMS = (REDUCTION, HISTOGRAM, HASHTABLE)


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
