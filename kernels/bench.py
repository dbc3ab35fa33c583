"""Benchmark machinery written once: run variants over problems and launches, verify, time, and turn
every result into a row with the CSV columns the CLI, the GUI and the tests share.

An algorithm module (reduction, histogram, hashtable, render benchmarks) provides
- ``VARIANTS``: its :class:`kernels.variants.Variant` list, each with ``run(problem, launch, backend,
  repeats) -> Outcome``;
- problems: objects with ``algorithm, op, dtype, n, bytes_read, expected`` and ``verify(result) -> (ok,
  note)``.
A failing variant becomes a row that says so; it never stops the others.
"""

from __future__ import annotations

import csv
import datetime
import functools
import io
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from kernels.timing import Timing

CSV_COLUMNS = (
    "variant", "op", "dtype", "n", "block", "grid", "backend", "device", "repeats",
    "median_ms", "min_ms", "max_ms", "gbps", "pct_of_peak", "result", "expected", "verified",
    "app_version", "numba_version", "numba_cuda_version", "timestamp", "note",
)

# verified column values
PASSED, FAILED, SKIPPED, ERROR = "yes", "FAILED", "skipped", "error"


@dataclass(frozen=True)
class Launch:
    """A launch configuration. ``None`` means the variant's own default (e.g. the seed's launch)."""

    block: int | None = None
    grid: int | None = None
    grid_sm: float | None = None  # grid as a multiple of the SM count (used when grid is None)
    items_per_thread: int | None = None

    def resolved_grid(self, sm_count: int) -> int | None:
        if self.grid is not None:
            return self.grid
        if self.grid_sm is not None:
            return max(1, int(round(self.grid_sm * sm_count)))
        return None


def check_launch_ranges(launch: Launch, backend) -> None:
    """The checks every GPU variant's launch needs: block 1..max threads per block, grid and grid_sm
    positive. Raises InputError naming the value."""
    from kernels.devices import limits_for
    from kernels.errors import InputError

    limit = limits_for(backend).max_threads_per_block
    if launch.block is not None and not 1 <= launch.block <= limit:
        raise InputError(f"block size {launch.block} must be between 1 and {limit} threads")
    if launch.grid is not None and launch.grid < 1:
        raise InputError(f"grid {launch.grid} must be at least 1 block")
    if launch.grid_sm is not None and launch.grid_sm <= 0:
        raise InputError(f"grid_sm {launch.grid_sm} must be a positive multiple of the SM count")


@dataclass(frozen=True)
class Outcome:
    """What a variant's run returns: its result, its timing and the launch it actually used."""

    result: object
    timing: Timing
    block: object = ""
    grid: object = ""


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
    result: object = ""
    expected: object = ""
    verified: str = SKIPPED
    note: str = ""
    timestamp: str = field(default_factory=lambda: datetime.datetime.now().isoformat(timespec="seconds"))

    @property
    def ok(self) -> bool:
        return self.verified == PASSED

    def as_dict(self) -> dict:
        t = self.timing
        v = versions()
        return {
            "variant": self.variant, "op": self.op, "dtype": self.dtype, "n": self.n,
            "block": self.block, "grid": self.grid, "backend": self.backend, "device": self.device,
            "repeats": t.repeats if t else self.repeats,
            "median_ms": _num(t.median_ms if t else None), "min_ms": _num(t.min_ms if t else None),
            "max_ms": _num(t.max_ms if t else None), "gbps": _num(self.gbps), "pct_of_peak": _num(self.pct_of_peak, 1),
            "result": self.result, "expected": self.expected, "verified": self.verified,
            "app_version": v["app"], "numba_version": v["numba"], "numba_cuda_version": v["numba_cuda"],
            "timestamp": self.timestamp, "note": self.note,
        }


def _num(x, digits: int = 6):
    return "" if x is None else round(float(x), digits)


@functools.lru_cache(maxsize=None)
def versions() -> dict:
    from importlib import metadata

    def ver(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    return {"app": ver("raytracer-app"), "numba": ver("numba"), "numba_cuda": ver("numba-cuda")}


def csv_text(rows: Iterable[Row]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(r.as_dict())
    return buf.getvalue()


def write_csv(rows: Iterable[Row], path, option: str = "--csv", inputs=()):
    """Write rows to ``path`` through the one output writer (atomic: no partial file; an existing
    file is replaced). Returns the file written."""
    from kernels.files import write_output

    return write_output(path, csv_text(rows), option, inputs)


def table_header() -> str:
    return f"{'variant':<24} {'n':>11} {'block':>7} {'grid':>7} {'median ms':>10} {'min':>9} {'max':>9} {'GB/s':>9} {'%peak':>6}  verified"


def table_line(r: Row) -> str:
    t = r.timing
    f = lambda x, w, p: f"{x:>{w}.{p}f}" if x is not None else f"{'-':>{w}}"  # noqa: E731
    line = (
        f"{r.variant:<24} {r.n:>11} {str(r.block):>7} {str(r.grid):>7} {f(t and t.median_ms, 10, 4)} "
        f"{f(t and t.min_ms, 9, 4)} {f(t and t.max_ms, 9, 4)} {f(r.gbps, 9, 1)} {f(r.pct_of_peak, 6, 1)}  {r.verified}"
    )
    if r.note:
        line += f"  ({r.note})"
    return line


@dataclass(frozen=True)
class Peak:
    gbps: float | None
    how: str


@functools.lru_cache(maxsize=None)
def copy_peak(kind: str, device: int = 0) -> Peak:
    """This device's practical bandwidth limit, measured once per process: a device-to-device copy
    (the faster of a grid-stride copy kernel and the driver's memcpy), or numpy's copy on the CPU."""
    import numpy as np

    if kind == "sim":
        return Peak(None, "the simulator has no meaningful bandwidth")
    nbytes = 256 * 2**20
    if kind == "cpu":
        a = np.ones(nbytes // 8, np.int64)
        b = np.empty_like(a)
        best = min(_timed(lambda: np.copyto(b, a)) for _ in range(5))
        return Peak(2 * nbytes / best / 1e9, "numpy copy of 256 MiB (read + write)")
    from numba import cuda

    from kernels.timing import time_cuda_events

    kernel = _copy_kernel()
    a = cuda.to_device(np.ones(nbytes // 8, np.int64))
    b = cuda.device_array_like(a)
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    t_kernel = time_cuda_events(lambda: kernel[sms * 8, 512](a, b), 10).min_ms
    t_memcpy = time_cuda_events(lambda: b.copy_to_device(a), 10).min_ms
    best = min(t_kernel, t_memcpy)
    how = "copy kernel" if t_kernel <= t_memcpy else "cudaMemcpy device-to-device"
    return Peak(2 * nbytes / (best * 1e-3) / 1e9, f"{how}, 256 MiB read + write, best of 10 (CUDA events)")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


@functools.lru_cache(maxsize=None)
def _copy_kernel():
    from numba import cuda

    @cuda.jit
    def copy_int64(src, dst):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < src.size:
            dst[i] = src[i]
            i += stride

    return copy_int64


def run(
    problems: Sequence,
    variants: Sequence,
    launches: Sequence[Launch],
    backend,
    repeats: int,
    *,
    peak: Peak | None = None,
    on_row: Callable[[Row], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[Row]:
    """Run every variant on every problem and launch; returns the rows (also streamed to ``on_row``).

    Checks each variant's constraints against each launch first, so a bad launch value is one clear
    error (InputError naming the constraint) before anything runs."""
    from kernels.devices import device_name

    for launch in launches:
        for v in variants:
            if v.check and not v.skip_reason(backend.kind):
                v.check(launch, backend)
    device = device_name(backend)
    rows: list[Row] = []
    total, done = len(problems) * len(launches) * len(variants), 0
    for problem in problems:
        for launch in launches:
            for v in variants:
                if should_stop and should_stop():
                    return rows
                row = _run_one(problem, v, launch, backend, repeats, device, peak)
                rows.append(row)
                done += 1
                if on_row:
                    on_row(row)
                if on_progress:
                    on_progress(done, total)
    return rows


def _run_one(problem, variant, launch: Launch, backend, repeats: int, device: str, peak: Peak | None) -> Row:
    row = Row(
        variant=variant.name, op=problem.op, dtype=problem.dtype, n=problem.n, backend=backend.kind,
        device=device, block=launch.block if launch.block is not None else "", repeats=repeats,
        expected=_show(problem.expected),
    )
    reason = variant.skip_reason(backend.kind)
    if reason:
        row.verified, row.note = SKIPPED, reason
        return row
    try:
        out = variant.run(problem, launch, backend, repeats)
    except Exception as exc:  # a broken variant is reported, never allowed to stop the others
        row.verified, row.note = ERROR, one_line(exc)
        return row
    if out is None:  # the variant declined (e.g. an optional library is not installed)
        row.verified, row.note = SKIPPED, "not available"
        return row
    if isinstance(out, str):
        row.verified, row.note = SKIPPED, out
        return row
    row.timing, row.block, row.grid = out.timing, out.block, out.grid
    row.result = _show(out.result)
    ok, note = problem.verify(out.result)
    row.verified = PASSED if ok else FAILED
    row.note = note
    if out.timing.median_ms > 0 and problem.bytes_read:
        row.gbps = problem.bytes_read / (out.timing.median_ms * 1e-3) / 1e9
        if peak and peak.gbps:
            row.pct_of_peak = 100.0 * row.gbps / peak.gbps
    return row


def one_line(exc: BaseException) -> str:
    """An exception as one readable line (numba's typing errors span many, with terminal colours)."""
    import re

    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    detail = next((ln for ln in lines[1:] if not ln.startswith(("File", "<source", "During"))), "")
    first = lines[0] if lines else ""
    return f"{type(exc).__name__}: {first}" + (f" {detail}" if detail and len(first) < 80 else "")


def _show(value):
    """Values as they go into the CSV: floats with full precision, everything else as is."""
    import numpy as np

    if isinstance(value, (np.floating, float)):
        return repr(float(value))
    if isinstance(value, np.integer):
        return int(value)
    return value


def summary_lines(rows: Sequence[Row], peak: Peak | None, variants: Sequence) -> list[str]:
    """For each problem, how each `best` row compares with the fastest library peer (the variants of
    kind 'peer') and the copy peak."""
    peer_names = {v.name for v in variants if v.kind == "peer"}
    lines = []
    by_problem: dict[tuple, list[Row]] = {}
    for r in rows:
        by_problem.setdefault((r.op, r.dtype, r.n), []).append(r)
    for (op, dtype, n), group in by_problem.items():
        bests = [r for r in group if r.variant == "best" and r.ok and r.timing]
        peers = [r for r in group if r.variant in peer_names and r.ok and r.timing]
        missing = sorted({r.variant for r in group if r.note == "CuPy is not installed"})
        for b in bests:
            parts = [f"best ({op}, {dtype}, n={n}): {b.timing.median_ms:.4f} ms"]
            if b.gbps and peak and peak.gbps:
                parts.append(f"{b.gbps / peak.gbps:.0%} of copy bandwidth")
            if peers:
                fastest = min(peers, key=lambda r: r.timing.median_ms)
                parts.append(f"{fastest.timing.median_ms / b.timing.median_ms:.2f}x the speed of {fastest.variant}")
            for name in missing:
                parts.append(f"{name}: not installed")
            lines.append("; ".join(parts))
    return lines
