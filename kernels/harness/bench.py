"""Benchmark machinery written once: run variants over problems and launches, verify, time, and turn
every result into a row with the CSV columns the CLI, the GUI and the tests share.

An algorithm module (reduction, histogram, hashtable, render benchmarks) provides
- ``VARIANTS``: its :class:`kernels.harness.variants.Variant` list, each with ``run(problem, launch, backend,
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
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Protocol, Sequence

from kernels.backend import Skip, SkipKind
from kernels.errors import one_line
from kernels.counters.columns import CLOCK_COLUMNS, COUNTER_COLUMNS
from kernels.harness import rounds as interleave
from kernels.launch import Launch  # noqa: F401  (re-exported: callers build Launch objects from here)
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
)

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
    from kernels.io.writer import write_output

    return write_output(path, csv_text(rows), option, inputs)


def table_header() -> str:
    return f"{'variant':<24} {'n':>11} {'block':>7} {'grid':>7} {'median ms':>10} {'min':>9} {'max':>9} {'GB/s':>9} {'%peak':>6} {'%spec':>6} {'noise':>6}  verified"


def table_line(r: Row) -> str:
    t = r.timing
    f = lambda x, w, p: f"{x:>{w}.{p}f}" if x is not None else f"{'-':>{w}}"  # noqa: E731
    line = (
        f"{r.variant:<24} {r.n:>11} {str(r.block):>7} {str(r.grid):>7} {f(t and t.median_ms, 10, 4)} "
        f"{f(t and t.min_ms, 9, 4)} {f(t and t.max_ms, 9, 4)} {f(r.gbps, 9, 1)} {f(r.pct_of_peak, 6, 1)} {f(r.pct_of_spec, 6, 1)} "
        f"{_noise_cell(t)}  {r.verified}"
    )
    if r.cold_timing is not None:
        line += f"  cold {r.cold_timing.median_ms:.4f} ms"
    if r.cache_resident == "yes":
        line += "  [input fits in cache]"
    if r.note:
        line += f"  ({r.note})"
    if r.clocks is not None and r.clocks.throttled:
        line += f"  [THROTTLED: {r.clocks.reason_text()}]"
    if r.rate is not None:
        line += f"  {rate_text(r.rate, r.rate_unit)}"
    return line


def _noise_cell(t: Timing | None) -> str:
    """The noise column: the repeats' relative spread in percent, '-' without a timing."""
    if t is None or t.noise is None:
        return f"{'-':>6}"
    return f"{100 * t.noise:>5.1f}%"


def rate_text(rate: float, unit: str) -> str:
    """E.g. '412.5 M inserts/s'; small rates keep their digits."""
    return f"{rate:.1f} {unit}" if rate >= 1 else f"{rate:.4g} {unit}"


@dataclass(frozen=True)
class Peak:
    gbps: float | None
    how: str


def copy_peak(backend) -> Peak:
    """This device's practical bandwidth limit (see :func:`measure_copy_peak`)."""
    return measure_copy_peak(backend.kind, backend.device)


@functools.lru_cache(maxsize=None)
def measure_copy_peak(kind: str, device: int = 0) -> Peak:
    """Measured once per process and backend: a device-to-device copy (the faster of a grid-stride copy
    kernel and the driver's memcpy), or numpy's copy on the CPU."""
    import numpy as np

    from kernels.backend import Backend

    backend = Backend(kind, device)
    if backend.is_simulator:
        return Peak(None, "the simulator has no meaningful bandwidth")
    nbytes = 256 * 2**20
    if backend.is_host:
        a = np.ones(nbytes // 8, np.int64)
        b = np.empty_like(a)
        best = min(_timed(lambda: np.copyto(b, a)) for _ in range(5))
        return Peak(2 * nbytes / best / 1e9, "numpy copy of 256 MiB (read + write)")
    from numba import cuda

    from kernels.backend import memory
    from kernels.timing import time_cuda_events

    kernel = _copy_kernel()
    a = memory.to_device(np.ones(nbytes // 8, np.int64))
    b = memory.empty_like(a)
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    t_kernel = time_cuda_events(lambda: kernel[sms * 8, 512](a, b), 10).min_ms
    t_memcpy = time_cuda_events(lambda: memory.copy(b, a), 10).min_ms
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


def run(request, variants: Sequence, problems: Iterable[Problem] | None = None, *, peak: Peak | None = None,
        on_row: Callable[[Row], None] | None = None, on_progress: Callable[[int, int], None] | None = None,
        should_stop: Callable[[], bool] | None = None) -> list[Row]:
    """Run ``variants`` on every problem and launch of ``request``; returns the rows (also streamed to
    ``on_row`` as each is done), those finished so far when ``should_stop()`` turns true.

    ``request``: a :class:`kernels.service.bench_request.BenchRequest` (validated when it was made), or any
    object with its ``backend``, ``launches``, ``repeats``, ``rounds``, ``cold``, ``policy``, ``unit``,
    ``problems()`` and ``problem_count``. ``problems`` (default: the request's, each built when its turn
    comes) may be given instead. ``policy`` says how long each timing repeats and its warm-up; ``cold``: on
    a GPU each timed variant runs a second time with L2 flushed before every repeat (the row keeps both
    medians); ``rounds``: each row's repeats spread over this many rounds through the problem's rows
    (:mod:`kernels.harness.rounds`), a problem's rows reported once its last round is done (a stop between
    rounds keeps only the rows of earlier problems)."""
    backend, launches, repeats, rounds = request.backend, request.launches, request.repeats, request.rounds
    policy, cold, unit = request.policy, request.cold, request.unit
    device = backend.device_name
    rows: list[Row] = []
    if problems is None:
        problems, problem_count = request.problems(), request.problem_count
    else:
        problems = list(problems)
        problem_count = len(problems)
    pairs = [(launch, v) for launch in launches for v in variants]
    total, done = problem_count * len(pairs) * rounds, 0
    shares = interleave.split_repeats(repeats, rounds)

    def measure(problem, launch, v, share) -> Row:
        nonlocal done
        row = _run_measured(problem, v, launch, backend, share, device, peak, unit, policy, cold)
        done += 1
        if on_progress:
            on_progress(done, total)
        return row

    def report(row: Row) -> None:
        rows.append(row)
        if on_row:
            on_row(row)

    for problem in problems:
        if rounds == 1:  # each row is whole as soon as it is measured
            for pair in pairs:
                if should_stop and should_stop():
                    return rows
                report(measure(problem, *pair, repeats))
            continue
        taken: list[list[Row]] = [[] for _ in pairs]  # per pair, its rows in round order
        for r, share in enumerate(shares):
            for i in interleave.round_order(len(pairs), r):
                if should_stop and should_stop():
                    return rows  # a row is whole only once its rounds are all done
                taken[i].append(measure(problem, *pairs[i], share))
        for parts in taken:
            row = join_rows(parts)
            if row.ok:
                _set_rates(row, problem, peak, unit)
            report(row)
    return rows


def join_rows(parts: list[Row], by_process: bool = False) -> Row:
    """One row from the parts of the same row (its rounds, or its processes with ``by_process``): a part
    that was skipped, raised or failed verification decides it; else the first part with every part's
    samples joined in the order taken (:func:`kernels.timing.join_timings`) and the clocks from the first
    part's start to the last part's end (parts read back from result files hold them as dicts). The caller
    sets the rates from the joined median."""
    from kernels.counters.clocks import Clocks
    from kernels.counters.columns import clocks as as_clocks
    from kernels.timing import join_timings

    repeats = sum(r.repeats for r in parts)
    for verdict in (SKIPPED, ERROR, FAILED):
        bad = next((r for r in parts if r.verified == verdict), None)
        if bad is not None:
            return replace(bad, repeats=repeats)
    before, after = as_clocks(parts[0].clocks), as_clocks(parts[-1].clocks)
    return replace(parts[0], timing=join_timings([r.timing for r in parts], by_process), repeats=repeats,
                   cold_timing=join_timings([r.cold_timing for r in parts], by_process),
                   clocks=Clocks(before.before, after.after) if before is not None and after is not None else None)


def _run_measured(problem, variant, launch, backend, repeats, device, peak, unit, policy, cold: bool) -> Row:
    """One row under the timing ``policy``, plus the cold run's timing when asked (real GPU only)."""
    from kernels import timing
    from kernels.counters import clocks

    gpu = backend.is_gpu and not variant.runs_on_host
    before = clocks.snapshot(backend.device) if gpu else None
    with timing.measurement(replace(policy, cold=False)):
        row = _run_one(problem, variant, launch, backend, repeats, device, peak, unit)
    after = clocks.snapshot(backend.device) if before is not None else None
    if after is not None and row.timing is not None:
        row.clocks = clocks.Clocks(before, after)
    mark_memory_facts(row, problem, backend, host=variant.runs_on_host)
    if cold and backend.is_gpu and row.timing is not None and not variant.runs_on_host:
        with timing.measurement(replace(policy, cold=True)):
            again = _run_one(problem, variant, launch, backend, repeats, device, peak, unit)
        if again.timing is not None and again.ok:
            row.cold_timing = again.timing
    return row


def mark_memory_facts(row: Row, problem, backend, host: bool = False) -> None:
    """Fill ``cache_resident`` (input bytes vs the GPU's L2, or the CPU's last-level cache for host code)
    and ``pct_of_spec`` (GPU rows, against the device's spec bandwidth where the table knows it)."""
    from kernels.backend import devices

    cache = None
    if host or backend.is_host:
        cache = devices.cpu_last_level_cache_bytes()
    elif backend.is_gpu:
        cache = devices.gpu_l2_bytes(backend.device)
        row.spec_gbps = devices.spec_bandwidth_gbps(row.device)
    nbytes = getattr(problem, "bytes_read", 0)
    if cache and nbytes:
        row.cache_resident = "yes" if nbytes <= cache else "no"
    if row.spec_gbps and row.gbps:
        row.pct_of_spec = 100.0 * row.gbps / row.spec_gbps


def _run_one(problem, variant, launch: Launch, backend, repeats: int, device: str, peak: Peak | None,
             unit: Unit | None = None) -> Row:
    row = Row(
        variant=variant.name, op=problem.op, dtype=problem.dtype, n=problem.n, backend=backend.kind,
        device=device, block=_show_block(launch.block), repeats=repeats, expected=_show(problem.expected),
        axes=dict(getattr(problem, "axes", None) or {}) or None,
    )
    reason = variant.skip_reason(backend)
    if reason is not None:
        row.verified, row.note, row.skip = SKIPPED, reason.text, reason
        return row
    try:
        out = variant.run(problem, launch, backend, repeats)
    except Exception as exc:  # a broken variant is reported, never allowed to stop the others
        row.verified, row.note = ERROR, one_line(exc)
        return row
    if isinstance(out, Skip):  # the variant declined (an optional library is missing, an op it lacks)
        row.verified, row.note, row.skip = SKIPPED, out.text, out
        return row
    row.timing, row.block, row.grid = out.timing, _show_block(out.block), out.grid
    row.result = _show(out.result)
    ok, note = problem.verify(out.result)
    row.verified = PASSED if ok else FAILED
    row.note = "; ".join(x for x in (out.note, note, backend.timing_note) if x)
    _set_rates(row, problem, peak, unit)
    return row


def _set_rates(row: Row, problem, peak: Peak | None, unit: Unit | None) -> None:
    """GB/s, % of the copy peak (and of the spec figure, once known) and the unit's rate from the median."""
    seconds = row.timing.median_ms * 1e-3
    row.gbps = row.pct_of_peak = row.rate = row.pct_of_spec = None
    if seconds > 0 and problem.bytes_read:
        row.gbps = problem.bytes_read / seconds / 1e9
        if peak and peak.gbps:
            row.pct_of_peak = 100.0 * row.gbps / peak.gbps
        if row.spec_gbps:
            row.pct_of_spec = 100.0 * row.gbps / row.spec_gbps
    if seconds > 0 and unit is not None:
        row.rate, row.rate_unit = unit.work(problem) / seconds, unit.label


def _show_block(block):
    """A block as rows show it: 256, or 16x16 for an image kernel's shape."""
    if isinstance(block, tuple):
        return f"{block[0]}x{block[1]}"
    return "" if block is None else block


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
    kind 'peer'): the speed ratio with both rows' noise, and 'a loss' when best is slower; then the copy
    peak and spec percentages, and which peers are not installed."""
    peer_names = {v.name for v in variants if v.kind == "peer"}
    lines = []
    by_problem: dict[tuple, list[Row]] = {}
    for r in rows:
        by_problem.setdefault((r.op, r.dtype, r.n), []).append(r)
    for (op, dtype, n), group in by_problem.items():
        bests = [r for r in group if r.variant == "best" and r.ok and r.timing]
        peers = [r for r in group if r.variant in peer_names and r.ok and r.timing]
        missing = sorted({r.variant for r in group if r.skip and r.skip.kind is SkipKind.MISSING_LIBRARY})
        for b in bests:
            parts = [f"best ({op}, {dtype}, n={n}): {b.timing.median_ms:.4f} ms{_noise_text(b.timing)}"]
            if peers:
                fastest = min(peers, key=lambda r: r.timing.median_ms)
                parts.append(comparison_text(b.timing, fastest.timing, fastest.variant))
            cold_peers = [r for r in peers if r.cold_timing is not None]
            if b.cold_timing is not None and cold_peers:
                fastest = min(cold_peers, key=lambda r: r.cold_timing.median_ms)
                parts.append("cold (L2 flushed): " + comparison_text(b.cold_timing, fastest.cold_timing, fastest.variant))
            if b.gbps and peak and peak.gbps:
                parts.append(f"{b.gbps / peak.gbps:.0%} of copy bandwidth (measured, read + write)")
            if b.pct_of_spec is not None:
                parts.append(f"{b.pct_of_spec:.0f}% of the spec bandwidth ({b.spec_gbps:.0f} GB/s)")
            for name in missing:
                parts.append(f"{name}: not installed")
            lines.append("; ".join(parts))
    return lines


def _noise_text(t: Timing) -> str:
    return "" if t.noise is None else f" (noise {100 * t.noise:.1f}%)"


def comparison_text(best: Timing, peer: Timing, peer_name: str) -> str:
    """'best is 1.04x the speed of <peer> (...; noise 2.0% / 1.5%): a win', or '0.96x ...: a loss'; a gap smaller
    than the two noises together is still named, with 'within the noise'."""
    ratio = peer.median_ms / best.median_ms  # > 1: best is faster
    noise = (best.noise or 0.0) + (peer.noise or 0.0)
    verdict = "a win" if ratio > 1 else "a tie" if ratio == 1 else "a loss"
    if verdict != "a tie" and abs(ratio - 1) <= noise:
        verdict += " within the noise"
    return (f"best is {ratio:.2f}x the speed of {peer_name} ({peer.median_ms:.4f} ms; noise "
            f"{100 * (best.noise or 0):.1f}% / {100 * (peer.noise or 0):.1f}%): {verdict}")
