"""The run loop written once: every variant of a request on every problem and launch, each verified and
timed under the request's measurement policy (rounds interleaved, a cooldown between measurements, a cold
run with L2 flushed), each result a :class:`kernels.harness.rows.Row` streamed as it is done. A failing
variant becomes a row that says so; it never stops the others. The rows as text are in
:mod:`kernels.harness.table`, the copy peak in :mod:`kernels.harness.peak`, the closing sentences in
:mod:`kernels.harness.summary`."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Sequence

from kernels.backend import Skip
from kernels.errors import one_line
from kernels.harness import estimate
from kernels.harness import rounds as interleave
from kernels.harness.ceilings import judge_row
from kernels.harness.peak import Peak
from kernels.harness.rows import ERROR, FAILED, PASSED, SKIPPED, Problem, Row, Unit, show_block, show_value
from kernels.launch import Launch
from kernels.timing.policy import Stopped, stopping


def run(request, variants: Sequence, problems: Iterable[Problem] | None = None, *, peak: Peak | None = None,
        on_row: Callable[[Row], None] | None = None, on_progress: Callable[[int, int], None] | None = None,
        should_stop: Callable[[], bool] | None = None, problem_cache=None) -> list[Row]:
    """Run ``variants`` on every problem and launch of ``request``; returns the rows (also streamed to
    ``on_row`` as each is done), those finished so far when ``should_stop()`` turns true.

    ``request``: a :class:`kernels.service.bench_request.BenchRequest` (validated when it was made), or any
    object with its ``backend``, ``launches``, ``repeats``, ``rounds``, ``cold``, ``policy``, ``unit``,
    ``problems()`` and ``problem_count``. ``problems`` (default: the request's, each built when its turn
    comes) may be given instead. ``policy`` says how long each timing repeats and its warm-up; ``cold``: on
    a GPU each timed variant runs a second time with L2 flushed before every repeat (the row keeps both
    medians); ``rounds``: each row's repeats spread over this many rounds through the problem's rows
    (:mod:`kernels.harness.rounds`), a problem's rows reported once its last round is done (a stop between
    rounds keeps only the rows of earlier problems). ``problem_cache``: the request's problems are taken from
    it where it keeps them (a cluster worker's, between the pieces of one sweep)."""
    backend, launches, repeats, rounds = request.backend, request.launches, request.repeats, request.rounds
    policy, cold = request.policy, request.cold
    spec = getattr(request, "spec", None)
    rates = Rates(peak, request.unit, getattr(spec, "judge", None), backend, bool(getattr(request, "wants_ceiling", False)))
    device = backend.device_name
    rows: list[Row] = []
    if problems is None:
        problems = request.problems() if problem_cache is None else request.problems(problem_cache)
        problem_count = request.problem_count
    else:
        problems = list(problems)
        problem_count = len(problems)
    pairs = [(launch, v) for launch in launches for v in variants]
    total, done = problem_count * len(pairs) * rounds, 0
    shares = interleave.split_repeats(repeats, rounds)
    cooldown = getattr(request, "cooldown", 0.0)
    too_long = estimate.Guard(policy.max_seconds)

    def measure(problem, launch, v, share) -> Row:
        nonlocal done
        if cooldown and done:  # rest between measurements (not before the first)
            rest(cooldown, should_stop)
        skip = too_long.skip(v.name, launch, problem.n)
        if skip is not None:  # a row that would take minutes: said with its estimate, not run
            row = _run_one(problem, v, launch, backend, share, device, rates, skip)
        else:
            row = _run_measured(problem, v, launch, backend, share, device, rates, policy, cold)
            too_long.record(row, launch)
        done += 1
        if on_progress:
            on_progress(done, total)
        return row

    def report(row: Row) -> None:
        rows.append(row)
        if on_row:
            on_row(row)

    try:
        with stopping(should_stop):  # Stop is heard between samples, not only between rows
            _measure_all(problems, pairs, rounds, shares, repeats, measure, report, should_stop, rates)
    except Stopped:  # the row in progress is dropped; the finished ones are kept
        pass
    return rows


def _measure_all(problems, pairs, rounds, shares, repeats, measure, report, should_stop, rates) -> None:
    """Every row of :func:`run` in its order (rounds interleaved), each reported once whole."""
    for problem in problems:
        if rounds == 1:  # each row is whole as soon as it is measured
            for pair in pairs:
                if should_stop and should_stop():
                    return
                report(measure(problem, *pair, repeats))
            continue
        taken: list[list[Row]] = [[] for _ in pairs]  # per pair, its rows in round order
        for r, share in enumerate(shares):
            for i in interleave.round_order(len(pairs), r):
                if should_stop and should_stop():
                    return  # a row is whole only once its rounds are all done
                taken[i].append(measure(problem, *pairs[i], share))
        for parts in taken:
            row = join_rows(parts)
            if row.ok:
                _set_rates(row, problem, rates)
            report(row)


REST_SLICE_S = 0.1  # a rest looks at Stop this often


def rest(seconds: float, should_stop: Callable[[], bool] | None = None) -> None:
    """Sleep ``seconds`` (a request's cooldown), ending early when ``should_stop()`` turns true."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if should_stop and should_stop():
            return
        time.sleep(min(left, REST_SLICE_S))


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


def _run_measured(problem, variant, launch, backend, repeats, device, rates, policy, cold: bool) -> Row:
    """One row under the timing ``policy``, plus the cold run's timing when asked (real GPU only)."""
    from kernels import timing
    from kernels.counters import clocks

    gpu = backend.is_gpu and not variant.runs_on_host
    before = clocks.snapshot(backend.device) if gpu else None
    with timing.measurement(replace(policy, cold=False)):
        row = _run_one(problem, variant, launch, backend, repeats, device, rates)
    after = clocks.snapshot(backend.device) if before is not None else None
    if after is not None and row.timing is not None:
        row.clocks = clocks.Clocks(before, after)
    mark_memory_facts(row, problem, backend, host=variant.runs_on_host)
    if cold and backend.is_gpu and row.timing is not None and not variant.runs_on_host:
        with timing.measurement(replace(policy, cold=True)):
            again = _run_one(problem, variant, launch, backend, repeats, device, rates)
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


def _run_one(problem, variant, launch: Launch, backend, repeats: int, device: str, rates: Rates,
             skip: Skip | None = None) -> Row:
    row = Row(
        variant=variant.name, op=problem.op, dtype=problem.dtype, n=problem.n, backend=backend.kind,
        device=device, block=show_block(launch.block), repeats=repeats, expected=show_value(problem.expected),
        axes=dict(getattr(problem, "axes", None) or {}) or None,
    )
    reason = variant.skip_reason(backend) or skip
    if reason is not None:
        row.verified, row.note, row.skip = SKIPPED, reason.text, reason
        return row
    try:
        out = variant.run(problem, launch, backend, repeats)
    except Exception as exc:  # noqa: BLE001 - a broken variant is reported, never allowed to stop the others
        row.verified, row.note = ERROR, one_line(exc)
        return row
    if isinstance(out, Skip):  # the variant declined (an optional library is missing, an op it lacks)
        row.verified, row.note, row.skip = SKIPPED, out.text, out
        return row
    row.timing, row.block, row.grid = out.timing, show_block(out.block), out.grid
    row.result = show_value(out.result)
    ok, note = problem.verify(out.result)
    row.verified = PASSED if ok else FAILED
    row.note = "; ".join(x for x in (out.note, note, backend.timing_note) if x)
    _set_rates(row, problem, rates)
    return row


@dataclass(frozen=True)
class Rates:
    """What a row's rates are figured against: the copy ``peak``, the algorithm's ``unit``, its ``judge``
    (kernels/harness/ceilings.py) and whether its ceiling is measured (``ceilings``: else only the figures)."""

    peak: Peak | None = None
    unit: Unit | None = None
    judge: object = None
    backend: object = None
    ceilings: bool = False


def _set_rates(row: Row, problem, rates: Rates) -> None:
    """GB/s, % of the copy peak (and of the spec figure, once known), the unit's rate and % of the ceiling
    (kernels/harness/ceilings.py) from the median."""
    peak, unit = rates.peak, rates.unit
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
    if rates.judge is not None:
        judge_row(row, problem, rates.judge, rates.backend, rates.ceilings)
