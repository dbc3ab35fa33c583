"""Running a lesson: every step through the benchmark harness, then the figures, evidence and verdicts.

On a GPU each step is timed as ``bench`` times it (CUDA events, the same size and repeats for every step,
verified against the problem's independent reference). Without one, each step is verified in the CUDA
simulator at the lesson's small size (in this process when it runs the simulator, else in the simulator's
child process) and no timing is reported: the simulator's say nothing about a GPU."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Callable

from kernels.harness.rows import ERROR, FAILED, PASSED, Row, SKIPPED, versions
from kernels.harness.peak import Peak, copy_peak
from kernels.lessons import evidence, measured as counters_of
from kernels.lessons.lesson import Lesson, Step

PAYS = 1.1  # a step speedup at or above this pays; at or below 1 / PAYS it costs
MEMORY_BOUND_PCT = 60.0  # a baseline at this share of the copy bandwidth leaves little to gain


@dataclass
class StepResult:
    index: int
    step: Step
    n: int
    row: Row | None
    measured: bool
    step_speedup: float | None = None
    cumulative: float | None = None
    pct_of_copy: float | None = None
    facts: dict = field(default_factory=dict)  # the static evidence of this step's kernel
    verdict: str = ""
    counters: object = None  # the step's Measured record (kernels.counters.metrics), when --counters read one
    counters_note: str = ""  # why a step asked for counters has none

    @property
    def verified(self) -> str:
        return self.row.verified if self.row is not None else SKIPPED

    @property
    def time_ms(self) -> float | None:
        return self.row.timing.median_ms if self.measured and self.row is not None and self.row.timing else None

    @property
    def gbps(self) -> float | None:
        return self.row.gbps if self.measured and self.row is not None else None

    @property
    def pct_of_spec(self) -> float | None:
        return self.row.pct_of_spec if self.measured and self.row is not None else None


@dataclass
class LessonRun:
    lesson: Lesson
    backend: str  # the backend's label
    device: str
    measured: bool  # timed on a GPU; False: verified in the simulator only
    how: str  # how the steps ran, in words
    arch: str  # the architecture of the static evidence
    peak: Peak | None
    results: list[StepResult]
    evidence_note: str = ""
    counters: str = ""  # how the counters were read ('' when they were not asked for)
    date: str = field(default_factory=lambda: datetime.datetime.now().isoformat(timespec="seconds"))
    versions: dict = field(default_factory=versions)
    device_info: dict = field(default_factory=dict)  # a result file's device header (kernels.harness.results)
    commit: str | None = None  # set when read back from a lesson result file
    command: list | None = None
    source: str = ""  # the lesson result file it was read from ('' when it ran here)

    @property
    def sizes(self) -> list[int]:
        return sorted({r.n for r in self.results}, key=[r.n for r in self.results].index)

    def at(self, n: int) -> list[StepResult]:
        return [r for r in self.results if r.n == n]

    @property
    def failed(self) -> list[StepResult]:
        return [r for r in self.results if r.verified in (FAILED, ERROR)]


def _algorithm(lesson: Lesson):
    from kernels.registry import by_name

    algorithm = by_name(lesson.target)
    known = {v.name for v in algorithm.variants}
    unknown = [s.variant for s in lesson.steps if s.variant not in known]
    if unknown:
        raise ValueError(f"lesson {lesson.name} names unknown {lesson.target} variants {unknown}")
    return algorithm


def sizes_for(lesson: Lesson, backend, sizes=None) -> list[int]:
    """The sizes a lesson runs at: the given ones (checked against the backend, or the simulator when the
    steps are verified there), else the lesson's own (its small size without a GPU)."""
    from kernels.backend import Backend

    algorithm = _algorithm(lesson)
    checker = backend if backend.is_gpu else Backend("sim")
    chosen = list(sizes) if sizes else (list(lesson.sizes) if backend.is_gpu else [lesson.sim_size])
    return [algorithm.size.check(n, checker) for n in chosen]


def run_lesson(lesson: Lesson, backend, sizes=None, repeats: int | None = None, arch: str | None = None,
               on_step: Callable[[StepResult], None] | None = None, should_stop: Callable[[], bool] | None = None,
               simulator=None, evidence_cache=None, counters: bool = False,
               on_counters: Callable[[str], None] | None = None, place=None) -> LessonRun:
    """Run ``lesson`` on ``backend``. ``simulator``: a :class:`kernels.backend.child.SimulatorProcess` for the
    cpu backend's verification (one is started and ended here when not given). ``arch``: the architecture of
    the static evidence (default sm_90, or the GPU's own). ``counters``: read every step's counters with
    Nsight Compute first (:mod:`.measured`; raises CannotMeasure, an InputError, before anything runs when
    they cannot be read here); ``on_counters`` receives its progress lines. ``place``: where the steps run
    when not here (a cluster: kernels/cluster/remote.py's LessonPlace), with ``run(request, stop) -> rows``
    and ``copy_peak(backend)``."""
    from kernels.backend import Backend
    from kernels.inspector.bench_columns import device_arch
    from kernels.inspector.compiler import check_arch

    algorithm = _algorithm(lesson)
    sizes = sizes_for(lesson, backend, sizes)
    run_backend = backend if backend.runs_cuda_kernels else Backend("sim")
    # without a GPU a step is verified, not timed: one call after the warm-up says all its repeats would
    repeats = run_backend.caps.check_repeats(repeats if repeats is not None or backend.is_gpu else 1)
    arch = check_arch(arch or device_arch(backend))
    remote_counters = place is not None and hasattr(place, "measure_steps")  # ncu on the cluster's workers
    if counters and not remote_counters:
        counters_of.check(backend)
    measured = backend.is_gpu
    peak = (place.copy_peak if place is not None else copy_peak)(backend) \
        if measured and algorithm.measures_copy_peak else None
    own_child = simulator is None and not backend.runs_cuda_kernels and place is None
    if own_child:
        from kernels.backend.child import SimulatorProcess

        simulator = SimulatorProcess()
    stop = should_stop or (lambda: False)
    # before the timed runs, as `bench --counters` does: ncu's replays must not heat the GPU between them
    read = (place.measure_steps if remote_counters else counters_of.measure_steps)(
        lesson, sizes, backend, on_counters, stop) if counters else {}
    results: list[StepResult] = []

    def done(result: StepResult) -> None:
        results.append(result)
        _figures(lesson, results, result, peak)
        if on_step:
            on_step(result)

    try:
        if place is not None and hasattr(place, "run_steps"):  # every step at once over a cluster's workers
            _run_all_steps(algorithm, lesson, sizes, run_backend, repeats, peak, stop, place, done, measured)
        else:
            _run_each_step(algorithm, lesson, sizes, run_backend, repeats, peak, simulator, stop, place, done,
                           measured)
    finally:
        if own_child:
            simulator.end()
    wanted = {(r.step.variant, evidence.block_of(r.step.launch(r.n))) for r in results}
    if stop():  # a compile cannot be interrupted: a stopped lesson does not start one
        facts, note = {}, "stopped before the evidence was compiled"
    else:
        facts, note = evidence.collect(lesson.target, wanted, arch, evidence_cache) if results else ({}, "")
    for r in results:
        r.facts = facts.get((r.step.variant, evidence.block_of(r.step.launch(r.n))), {})
        if counters:
            got = read.get((r.n, r.index), "not measured: stopped")
            r.counters, r.counters_note = (None, got) if isinstance(got, str) else (got, "")
    for r in results:
        r.verdict = verdict(lesson, r, _baseline(results, r))
    how = ("timed on the GPU (CUDA events), verified" if measured else
           "verified in the CUDA simulator; not timed: the simulator's timings say nothing about a GPU")
    how_counters = f"Nsight Compute (ncu --clock-control {counters_of.CLOCK_CONTROL})" if counters else ""
    from kernels.harness.ceilings import measured_on, used_by
    from kernels.harness.results import device_info

    out = LessonRun(lesson, backend.label, backend.device_name, measured, how, arch, peak, results, note,
                    how_counters)
    try:  # the ceilings its steps are judged against, not those of the window's earlier runs
        rows = [r.row for r in results if r.row is not None]
        out.device_info = device_info(backend, peak, used_by(measured_on(backend), rows))
    except AttributeError:  # a backend stand-in without the driver's figures: the name alone (result files)
        out.device_info = {"name": backend.device_name, "backend": backend.kind}
    return out


def _step_request(algorithm, lesson, step, n, backend, repeats, peak):
    from kernels.service.bench_request import BenchRequest

    return BenchRequest(algorithm.name, backend, sizes=(n,), options={**lesson.options, **step.options},
                        launches=(step.launch(n),), variants=(step.variant,), repeats=repeats,
                        peak=peak is not None)


def _run_each_step(algorithm, lesson, sizes, backend, repeats, peak, simulator, stop, place, done, measured) -> None:
    """The steps one after another, here (or each at ``place``), until Stop or a step without a row."""
    for n in sizes:
        for i, step in enumerate(lesson.steps):
            if stop():
                return
            step_args = (algorithm, lesson, step, n, backend, repeats, peak, simulator, stop)
            row = _run_step(*step_args) if place is None else _run_step(*step_args, place=place)
            if row is None:
                return
            done(StepResult(i, step, n, row, measured and row.ok))


def _run_all_steps(algorithm, lesson, sizes, backend, repeats, peak, stop, place, done, measured) -> None:
    """The lesson's steps at every size handed to ``place`` at once (a cluster splits them over its workers);
    each result is taken in the lesson's order (size by size, step by step) as soon as it and every one
    before it came, so the figures and ``done`` see them as a run here gives them. A step that never came
    (Stop) ends the results there, as here."""
    plan = [(n, i, step) for n in sizes for i, step in enumerate(lesson.steps)]
    came: dict = {}
    taken = [0]  # the results taken so far: a prefix of the plan

    def arrived(k, row):
        came[k] = row
        while taken[0] < len(plan) and taken[0] in came:
            (n, i, step), row = plan[taken[0]], came[taken[0]]
            taken[0] += 1
            done(StepResult(i, step, n, row, measured and row.ok))

    place.run_steps([_step_request(algorithm, lesson, step, n, backend, repeats, peak) for n, _, step in plan],
                    stop, arrived)


def _run_step(algorithm, lesson, step, n, backend, repeats, peak, simulator, stop, place=None) -> Row | None:
    """The step's one row, through the service's one door (in the simulator's child without a GPU); None
    when the lesson was stopped first."""
    from kernels.service.bench import run_bench

    request = _step_request(algorithm, lesson, step, n, backend, repeats, peak)
    rows = place.run(request, stop) if place is not None else run_bench(request, stop=stop, simulator=simulator).rows
    return rows[0] if rows else None


def _baseline(results: list[StepResult], r: StepResult) -> StepResult | None:
    index = r.step.baseline if r.step.baseline is not None else r.index - 1
    if index < 0 or index == r.index:
        return None
    return next((b for b in results if b.n == r.n and b.index == index), None)


def _figures(lesson: Lesson, results: list[StepResult], r: StepResult, peak) -> None:
    if r.time_ms is None:
        return
    if peak is not None and peak.gbps and r.gbps:
        r.pct_of_copy = 100.0 * r.gbps / peak.gbps
    base = _baseline(results, r)
    if base is not None and base.time_ms:
        r.step_speedup = base.time_ms / r.time_ms
    first = next((b for b in results if b.n == r.n and b.index == lesson.cumulative_from), None)
    if first is not None and first.time_ms:
        r.cumulative = first.time_ms / r.time_ms


OUTCOMES = ("faster", "about the same", "slower")


def outcome(r: StepResult) -> tuple[str, str] | None:
    """What a step did, as a learner guesses it ('faster', 'about the same', 'slower'), and against what:
    this GPU's measurement, else the published figure (labelled so); None when neither exists."""
    if r.step_speedup is not None:
        speedup, source = r.step_speedup, "this GPU"
    elif not r.measured and r.step.published is not None and r.step.published.step is not None:
        speedup, source = r.step.published.step, "the published figure (not measured here)"
    else:
        return None
    kind = OUTCOMES[0] if speedup >= PAYS else OUTCOMES[2] if speedup <= 1 / PAYS else OUTCOMES[1]
    return kind, source


def verdict(lesson: Lesson, r: StepResult, base: StepResult | None) -> str:
    """One sentence: whether the step paid here and the evidence's reason."""
    published = r.step.published
    paper = f" (the paper: {published.step:.2f}x)" if published and published.step else ""
    if r.verified != PASSED:
        return f"{r.verified}: {r.row.note if r.row is not None else 'not run'}"
    diff = evidence.difference(r.facts, base.facts, lesson.evidence) if base is not None and r.facts and base.facts else ""
    static = f"; static evidence: {diff}" if diff else ""
    changed = counters_of.difference(r.counters, base.counters) if base is not None and r.counters and base.counters else ""
    if changed:  # the measured change explains the step better than what the compiler emitted
        static = f"; measured: {changed}"
    if base is None:
        return "the baseline the next steps are compared with"
    if not r.measured or r.step_speedup is None:
        return f"verified, not measured here{paper}{static}"
    s = r.step_speedup
    if s >= PAYS:
        return f"pays here: {s:.2f}x over {base.step.name}{paper}{static}"
    reason = static
    dram = base.counters.dram_pct if base.counters is not None else None
    if dram is not None and dram >= MEMORY_BOUND_PCT:
        reason = (f"; {base.step.name} already moved data at {dram:.0f}% of DRAM peak (measured), "
                  f"so memory, not this idea, sets the time{static}")
    elif base.pct_of_copy is not None and base.pct_of_copy >= MEMORY_BOUND_PCT:
        reason = (f"; {base.step.name} already moved data at {base.pct_of_copy:.0f}% of the measured copy bandwidth, "
                  f"so memory, not this idea, sets the time{static}")
    if s > 1 / PAYS:
        return f"no longer pays here: {s:.2f}x over {base.step.name}{paper}{reason}"
    return f"costs here: {s:.2f}x over {base.step.name}{paper}{reason}"
