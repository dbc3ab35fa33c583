"""The ceiling each algorithm's rows are judged against, measured once per process, backend and table size,
in the same run as the rows (as the copy bandwidth of :mod:`.peak` is):

- ``copy``: the copy bandwidth (bytes per second), the reductions' and histograms' ceiling;
- ``sector-reads``: random 32-byte sector reads over a table of the row's size (the hash map's find);
- ``cas``: random 8-byte compare-and-swaps over a table of the row's size (the hash map's insert, erase,
  insert-or-add);
- ``fma-float32`` / ``fma-float64``: the FMA issue rate in registers (the escape-time renderers);
- ``ray-sphere``: the spheres' own hit test in a tight loop (declared by :mod:`kernels.spheres`, whose math
  it runs).

An algorithm declares a :class:`Judge` (which ceiling a row is judged against, the work a row does in that
ceiling's units, and what else its rows report); :func:`judge_row` fills a row's ``pct_of_ceiling`` and
figures. The kernels are :mod:`.ceiling_kernels` (CUDA) and :mod:`.ceiling_host` (their CPU twins), imported
on the first measurement. The simulator measures nothing (its rates mean nothing)."""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from typing import Callable

from kernels.lazy import entry


@dataclass(frozen=True)
class Ceiling:
    name: str
    title: str  # what it measures, in words
    unit: str  # its rate as tables say it, e.g. 'G sectors/s' (rates are stored per second, this is for text)
    scale: float  # the rate in ``unit``: rate / scale
    # (backend, table_bytes) -> (rate per second, how), on a GPU and on the CPU (lazy entries: numba)
    gpu: object = field(compare=False, repr=False)
    cpu: object = field(compare=False, repr=False)
    sized: bool = False  # measured over a table of the row's size


@dataclass(frozen=True)
class Figure:
    """A measured ceiling: ``rate`` per second (None where not measured) and how it was measured."""

    ceiling: str
    rate: float | None
    unit: str
    scale: float
    how: str
    table_bytes: int = 0
    by: str = ""  # who measured it, in a run of several processes or workers ('process 1', 'worker gpu-0')

    def text(self) -> str:
        how = f"{self.how}; measured by {self.by}" if self.by else self.how
        if self.rate is None:
            return f"{self.ceiling}: not measured ({how})"
        return f"{self.ceiling}: {self.rate / self.scale:.4g} {self.unit} ({how})"

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, doc, label: str = "a ceiling") -> "Figure":
        """A figure as :meth:`to_json` wrote it (a child's result file, a worker's answer); ValueError naming
        ``label`` for anything else."""
        try:
            rate = doc["rate"]
            if rate is not None:
                rate = float(rate)
            return cls(str(doc["ceiling"]), rate, str(doc["unit"]), float(doc["scale"]), str(doc["how"]),
                       int(doc.get("table_bytes", 0)), str(doc.get("by", "")))
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise ValueError(f"{label} is not a measured ceiling: {exc}") from None


_GPU = "kernels.harness.ceiling_kernels"
_CPU = "kernels.harness.ceiling_host"

COPY = Ceiling("copy", "copy bandwidth", "GB/s", 1e9, None, None)
SECTOR_READS = Ceiling("sector-reads", "random 32-byte sector reads over a table of the row's size", "G sectors/s",
                       1e9, entry(_GPU, "measure_sector_reads"), entry(_CPU, "measure_sector_reads"), sized=True)
CAS = Ceiling("cas", "random 8-byte compare-and-swaps over a table of the row's size", "G CAS/s", 1e9,
              entry(_GPU, "measure_cas"), entry(_CPU, "measure_cas"), sized=True)


def _fma(precision: str) -> Ceiling:
    own = f"measure_fma_{precision}"
    return Ceiling(f"fma-{precision}", f"{precision} FMA issue rate (independent chains in registers)", "G FMA/s",
                   1e9, entry(_GPU, own), entry(_CPU, own))


FMA32, FMA64 = _fma("float32"), _fma("float64")
BUILT_IN = (COPY, SECTOR_READS, CAS, FMA32, FMA64)  # the ray-sphere ceiling is the spheres' own


@dataclass(frozen=True)
class Judge:
    """What an algorithm's rows are judged against: ``ceiling(problem, row)`` the Ceiling, ``work(problem,
    row)`` the units of that ceiling one run does (bytes for ``copy``), ``table_bytes(problem)`` the table
    a sized ceiling is measured over, and ``figures(problem, row)`` the other work a row reports, {column:
    units per run} (``rays``, ``tests``, ``all_tests``, ``iterations``: the rates are units / the median)."""

    ceiling: Callable
    work: Callable
    table_bytes: Callable | None = None
    figures: Callable | None = None


def copy_judge() -> Judge:
    """The copy bandwidth: a bandwidth-bound algorithm's ceiling, its work the bytes it reads."""
    return Judge(lambda problem, row: COPY, lambda problem, row: problem.bytes_read)


_LOCK = threading.Lock()
_MEASURED: dict = {}  # (ceiling, kind, device, table bytes) -> Figure: once per process


def measure(ceiling: Ceiling, backend, table_bytes: int = 0) -> Figure:
    """``ceiling`` on ``backend`` (over ``table_bytes`` when it is sized), measured once per process."""
    key = (ceiling, backend.kind, backend.device, table_bytes if ceiling.sized else 0)
    with _LOCK:  # one measurement at a time: two would share the device
        if key not in _MEASURED:
            _MEASURED[key] = _measure(ceiling, backend, key[-1])
        return _MEASURED[key]


def measured_on(backend) -> list[Figure]:
    """Every ceiling this process measured on ``backend``, in the order measured (a result file's header)."""
    with _LOCK:
        return [f for (c, kind, device, _), f in _MEASURED.items() if (kind, device) == (backend.kind, backend.device)]


def used_by(figures, rows) -> list[Figure]:
    """Those of ``figures`` that some row of ``rows`` is judged against (a process measures once for all its
    runs: a window's or a cluster worker's later runs are judged against what it measured before)."""
    wanted = {(r.ceiling, r.ceiling_rate) for r in rows if getattr(r, "ceiling", "")}
    return [f for f in figures if (f.ceiling, f.rate) in wanted]


def gathered(sources) -> list[Figure]:
    """The figures of a run measured in several places: ``sources`` is [(who, [Figure])] ('process 1',
    'worker gpu-0'), in order. Each distinct figure is kept once, ``by`` naming every place that measured it
    (equal figures are one); figures of one ceiling and table size stay together, so a spread shows as
    adjacent lines. Nothing is averaged: each row was judged against its own place's figure."""
    groups: dict = {}  # (ceiling, table bytes) -> {the figure without who: [who]}
    for who, figures in sources:
        for f in figures:
            whos = groups.setdefault((f.ceiling, f.table_bytes), {}).setdefault(dataclasses.replace(f, by=""), [])
            if who not in whos:
                whos.append(who)
    return [dataclasses.replace(f, by=", ".join(whos)) for group in groups.values() for f, whos in group.items()]


def _measure(ceiling: Ceiling, backend, table_bytes: int) -> Figure:
    def figure(rate, how):
        return Figure(ceiling.name, rate, ceiling.unit, ceiling.scale, how, table_bytes)

    if ceiling == COPY:
        from kernels.harness.peak import copy_peak

        peak = copy_peak(backend)
        return figure(peak.gbps * 1e9 if peak.gbps else None, peak.how)
    if backend.is_simulator:
        return figure(None, "the simulator has no meaningful rates")
    rate, how = (ceiling.cpu if backend.is_host else ceiling.gpu)(backend, table_bytes)
    return figure(rate, how)


def judge_row(row, problem, judge: Judge | None, backend, measured: bool = True) -> Figure | None:
    """Fill ``row``'s figures (its work per second) and, with ``measured``, its ceiling columns from its
    median; returns the ceiling's figure (None when none is measured). A copy-bound row's % of its ceiling is
    its % of the copy peak, set before."""
    if judge is None or row.timing is None or row.timing.median_ms <= 0 or backend.is_simulator:
        return None  # the simulator's times say nothing of a GPU: no figures, no ceiling
    seconds = row.timing.median_ms * 1e-3
    if judge.figures is not None:
        row.figures = {name: units / seconds for name, units in judge.figures(problem, row).items()}
    if not measured:
        return None
    ceiling = judge.ceiling(problem, row)
    if ceiling == COPY:
        row.ceiling, row.pct_of_ceiling = COPY.name, row.pct_of_peak
        row.ceiling_rate = row.gbps * 1e9 * 100.0 / row.pct_of_peak if row.pct_of_peak else None
        return None
    fig = measure(ceiling, backend, judge.table_bytes(problem) if judge.table_bytes else 0)
    row.ceiling, row.ceiling_rate = fig.ceiling, fig.rate
    work = judge.work(problem, row)
    if fig.rate and work:
        row.pct_of_ceiling = 100.0 * work / seconds / fig.rate
    return fig
