"""A lesson's measured counters: every step's variant read once by Nsight Compute through the counters
machinery (:func:`kernels.counters.measure.measure`, the same ncu batch ``bench --counters`` runs: one per
size, launch and problem options), and the words the report and the verdicts use for them.

The figures shown are those issue 23 names: DRAM % of peak, achieved occupancy, shared-memory bank conflicts
per request, executed instructions, branch efficiency, and the top warp-stall reason."""

from __future__ import annotations

import json

# the lesson CSV's measured columns: the names (and roundings) `bench --counters` gives them
CSV_COLUMNS = ("dram_pct", "achieved_occupancy_pct", "bank_conflicts_per_request", "instructions",
               "branch_efficiency_pct", "top_stall", "clock_control", "counters_note")
CLOCK_CONTROL = "none"  # the GPU boosts as in the timed runs, as `bench --counters` does by default

# a measured change is cited in a verdict only when it is this large (smaller ones are noise or beside the point)
CONFLICTS_MIN = 0.1  # per request, on either side
CONFLICTS_RATIO = 1.5
BRANCH_POINTS = 2.0
INSTRUCTIONS_RATIO = 1.1
DRAM_POINTS = 5.0
OCCUPANCY_POINTS = 5.0
MAX_CITED = 3  # the first changes in the order below: what the kernel does (conflicts, branches, instructions)
# before what follows from it (DRAM, occupancy); more would bury the reason


def check(backend) -> None:
    """Raises CannotMeasure (an InputError: exit status 2) with the counters module's one line when counters
    cannot be read here; nothing is run before."""
    from kernels.counters.tool import CannotMeasure, why_not

    reason = why_not(backend)
    if reason:
        raise CannotMeasure(reason)


def _launch_fields(launch) -> dict:
    return {"block": launch.block, "grid": launch.grid, "grid_sm": launch.grid_sm,
            "items_per_thread": launch.items_per_thread}


def batches(lesson, sizes, backend) -> list[tuple[int, dict, dict, list[int]]]:
    """(n, resolved options, launch fields, step indexes) per ncu run: the steps at one size that share their
    problem and launch, each variant once (a step repeating another's variant, options and launch shares its
    record)."""
    from kernels.registry import by_name

    algorithm = by_name(lesson.target)
    out: dict[tuple, tuple] = {}
    for n in sizes:
        for i, step in enumerate(lesson.steps):
            options = algorithm.options_for({**lesson.options, **step.options}, backend)
            fields = _launch_fields(step.launch(n))
            key = (n, json.dumps(options, sort_keys=True, default=str), json.dumps(fields, sort_keys=True, default=str))
            out.setdefault(key, (n, options, fields, []))[3].append(i)
    return list(out.values())


def batch_requests(lesson, sizes, backend) -> list[tuple[object, list[int]]]:
    """(BenchRequest of one problem, one launch and its variants; step indexes) per ncu run of :func:`batches`."""
    from kernels.launch import Launch
    from kernels.service.bench_request import BenchRequest

    return [(BenchRequest(lesson.target, backend, sizes=(n,), options=options, launches=(Launch(**fields),),
                          variants=tuple(dict.fromkeys(lesson.steps[i].variant for i in steps)), repeats=1), steps)
            for n, options, fields, steps in batches(lesson, sizes, backend)]


def measure_steps(lesson, sizes, backend, on_progress=None, should_stop=None) -> dict:
    """{(n, step index): Measured, or the reason it has none}; raises CannotMeasure when counters cannot be
    read here, MeasureFailed when ncu broke. Stopped: the steps not yet measured are left out."""
    from kernels.counters.measure import measure

    check(backend)
    out: dict = {}
    plan = batch_requests(lesson, sizes, backend)
    for b, (request, steps) in enumerate(plan):
        if should_stop and should_stop():
            break
        n = request.sizes[0]

        def progress(done, total, text, b=b, n=n):
            if on_progress:
                on_progress(f"{text} (ncu run {b + 1}/{len(plan)}, n = {n:,})")

        got = measure(request.to_json(), backend, clock_control=CLOCK_CONTROL, on_progress=progress,
                      should_stop=should_stop)
        take(out, lesson, n, steps, got)
    return out


def take(out: dict, lesson, n: int, steps: list[int], got: dict) -> None:
    """An ncu run's records ``got`` ({variant: Measured or reason}) as its steps' at size ``n``."""
    for i in steps:
        if lesson.steps[i].variant in got:
            out[(n, i)] = got[lesson.steps[i].variant]


def _count(x: float) -> str:
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k" if x >= 1e3 else f"{x:.0f}"


def figures(m) -> list[tuple[str, str]]:
    """(name, value) of the measured figures a record has, in the report's order."""
    out = []
    if m.dram_pct is not None:
        out.append(("DRAM", f"{m.dram_pct:.1f}% of peak"))
    if m.occupancy_pct is not None:
        out.append(("achieved occupancy", f"{m.occupancy_pct:.1f}%"))
    if m.conflicts_per_request is not None:
        out.append(("bank conflicts per request", f"{m.conflicts_per_request:.2f}"))
    if m.instructions is not None:
        out.append(("executed instructions", _count(m.instructions)))
    if m.branch_efficiency_pct is not None:
        out.append(("branch efficiency", f"{m.branch_efficiency_pct:.1f}%"))
    if m.top_stall:
        out.append(("top stall", m.top_stall))
    return out


def describe(m) -> str:
    """'DRAM 12.3% of peak, achieved occupancy 85.0%, bank conflicts per request 0.52, ...'."""
    return ", ".join(f"{name} {value}" for name, value in figures(m))


def difference(step, base) -> str:
    """The measured changes from a baseline's record to a step's that are large enough to explain it, e.g.
    'bank conflicts per request 2.10 -> 0.05, executed instructions 9.40M -> 4.20M'; '' when none is. At most
    MAX_CITED of them."""
    changed = []
    c0, c1 = base.conflicts_per_request, step.conflicts_per_request
    if c0 is not None and c1 is not None and max(c0, c1) >= CONFLICTS_MIN and \
            max(c0, c1) >= CONFLICTS_RATIO * max(min(c0, c1), 1e-9):
        changed.append(f"bank conflicts per request {c0:.2f} -> {c1:.2f}")
    b0, b1 = base.branch_efficiency_pct, step.branch_efficiency_pct
    if b0 is not None and b1 is not None and abs(b1 - b0) >= BRANCH_POINTS:
        changed.append(f"branch efficiency {b0:.1f}% -> {b1:.1f}%")
    i0, i1 = base.instructions, step.instructions
    if i0 and i1 and max(i0, i1) >= INSTRUCTIONS_RATIO * min(i0, i1):
        changed.append(f"executed instructions {_count(i0)} -> {_count(i1)}")
    d0, d1 = base.dram_pct, step.dram_pct
    if d0 is not None and d1 is not None and abs(d1 - d0) >= DRAM_POINTS:
        changed.append(f"DRAM {d0:.1f}% -> {d1:.1f}% of peak")
    o0, o1 = base.occupancy_pct, step.occupancy_pct
    if o0 is not None and o1 is not None and abs(o1 - o0) >= OCCUPANCY_POINTS:
        changed.append(f"achieved occupancy {o0:.1f}% -> {o1:.1f}%")
    return ", ".join(changed[:MAX_CITED])


def csv_cells(m, note: str) -> dict:
    """The measured CSV columns of one step (empty when it was not measured)."""
    from kernels.counters.columns import cells

    got = cells(m, note, None)
    return {k: got[k] for k in CSV_COLUMNS}
