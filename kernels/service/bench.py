"""The one entry for a benchmark run: ``run_bench(request, progress, stop)``, which the CLI's `bench`, every
benchmark panel, the lessons, the simulator's child process and the `--processes` children all call.

It decides once where the run happens (here; in the simulator's child process when this process cannot run
the simulator; in fresh processes with ``processes`` > 1), loads the request's variant files, measures the
copy bandwidth where the algorithm wants it, and streams what happens through ``progress(kind, value)``:
'peak' (a Peak), 'row' (each Row as it finishes), 'progress' ((done, total) steps) and 'message' (a line
for the user). Stopping keeps the rows that finished."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from dataclasses import dataclass, field

from kernels.harness import bench, ceilings
from kernels.harness.peak import Peak, copy_peak
from kernels.service.bench_request import BenchRequest

BENCH_JOB = "kernels.service.bench:bench_job"  # the simulator child's entry for a run


@dataclass
class BenchRun:
    """What a run leaves: its rows (those finished, when it was stopped), the copy peak it measured, the
    ceilings its rows are judged against (where several processes measured, each says which: ``Figure.by``),
    and the variant files that loaded but failed to compile (bad input the CLI exits 2 on)."""

    rows: list = field(default_factory=list)
    peak: Peak | None = None
    ceilings: list = field(default_factory=list)  # the ceilings measured for its rows (kernels.harness.ceilings)
    stopped: bool = False
    bad_files: list = field(default_factory=list)


def run_bench(request: BenchRequest, progress=None, stop=None, *, simulator=None, lock=None,
              known_peak: Peak | None = None, problem_cache=None) -> BenchRun:
    """Run ``request``. A simulator run goes to the simulator's child process ``simulator`` when one is given
    (so that a Stop ends it at once), and to one started and ended here when this process cannot run the
    simulator. ``lock``: held around each compute call (the window's, so its renders and runs never launch
    at once). ``known_peak``: the copy bandwidth this process measured before (a cluster worker's pieces of
    one sweep), used instead of measuring it again; ``problem_cache``: its problems built before, kept for the
    sweep's next pieces (kernels/cluster/problem_cache.py)."""
    from kernels.backend import simulator_active

    send = progress or (lambda kind, value: None)
    should_stop = stop or (lambda: False)
    if request.processes > 1:
        from kernels.service.bench_processes import run_in_processes

        rows, peak, measured, stopped = run_in_processes(request, send, should_stop)
        return BenchRun(rows, peak, measured, stopped=stopped)
    if request.backend.is_simulator and (simulator is not None or not simulator_active()):
        return _in_simulator_child(request, send, should_stop, simulator)
    return _run_here(request, send, should_stop, lock, known_peak, problem_cache)


def bench_job(payload: dict, send) -> BenchRun:
    """The simulator child's side: the request arrives as JSON and runs in this (simulator) process."""
    from kernels.backend import Backend

    return _run_here(BenchRequest.from_json(payload, Backend("sim")), send, lambda: False, None)


def _in_simulator_child(request, send, should_stop, simulator) -> BenchRun:
    from kernels.backend.child import Cancelled, SimulatorProcess

    own = simulator is None
    child = SimulatorProcess() if own else simulator
    finished = BenchRun()

    def relay(kind, value):  # kept here too, so that a Stop (which ends the child) keeps them
        if kind == "row":
            finished.rows.append(value)
        elif kind == "peak":
            finished.peak = value
        send(kind, value)

    try:
        return child.call("bench", request.to_json(), should_stop, relay)
    except Cancelled:
        finished.stopped = True
        return finished
    finally:
        if own:
            child.end()


def _run_here(request, send, should_stop, lock, known_peak=None, problem_cache=None) -> BenchRun:
    from kernels.launch import tuning

    backend = request.backend
    backend.activate()
    guard = lock if lock is not None else contextlib.nullcontext()
    users = load_variant_files(request, should_stop)
    try:
        variants = request.selected([*request.spec.variants, *users])
        for launch in request.launches:  # the files' rules, now that they are known
            for v in users:
                if v in variants:
                    v.check(launch, backend)
        variants = [dataclasses.replace(v, run=_guarded(v.run, guard)) for v in variants] if lock else variants
        out = BenchRun()
        if request.wants_peak and not should_stop():
            if known_peak is None:
                with guard:
                    known_peak = copy_peak(backend)
            out.peak = known_peak
            send("peak", out.peak)
        with tuning.retuning(request.retune):
            out.rows = bench.run(request, variants, peak=out.peak, on_row=lambda row: send("row", row),
                                 on_progress=lambda done, total: send("progress", (done, total)),
                                 should_stop=should_stop, problem_cache=problem_cache)
        out.ceilings = ceilings.used_by(ceilings.measured_on(backend), out.rows)
        out.stopped = should_stop()
        out.bad_files = [u.run.bad_file for u in users if u.run.bad_file]
        return out
    finally:
        if users:
            from kernels.user_variants import loader

            loader.end_children()


def load_variant_files(request, should_stop=lambda: False) -> list:
    """The request's variant files as Variants (each loaded in the user-variant child process); a file
    that does not load, declares another TARGET or repeats a NAME is one InputError, before anything runs."""
    if not request.variant_files:
        return []
    from kernels.errors import InputError
    from kernels.user_variants import loader

    users, built_in = [], {v.name for v in request.spec.variants}
    for path in request.variant_files:
        v = loader.load(path, request.backend, request.variant_timeout, should_stop)
        if v.run.target != request.algorithm:
            raise InputError(f"--variant-file {path} declares TARGET {v.run.target!r}; this is `bench "
                             f"{request.algorithm}`")
        clash = next((u.run.file.path for u in users if u.name == v.name), None)
        if clash is not None or v.name in built_in:
            raise InputError(f"--variant-file {path}: NAME {v.name!r} is also the NAME of "
                             f"{clash or 'a built-in variant'}")
        v.run.should_stop = should_stop
        users.append(v)
    return users


def _guarded(run, guard):
    def guarded_run(*args, **kwargs):
        with guard:
            return run(*args, **kwargs)
    return guarded_run


def main(argv: list[str]) -> int:
    """A `--processes` child (kernels/service/bench_processes.py): ``REQUEST.json RESULT.json``."""
    from kernels.errors import InputError, one_line, printable
    from kernels.harness import results
    from kernels.harness.rows import ERROR, FAILED
    from kernels.io.reader import read_json

    request_path, result_path = argv
    try:
        request = BenchRequest.from_json(read_json(request_path, "request", 1 << 20, "a bench request is small"))
        from kernels.backend import watchdog

        watchdog.ignore_interrupts()  # Ctrl-C is the parent's, which ends this process
        watchdog.say_started()  # the parent's start-up deadline ends here
        with watchdog.beats_to(watchdog.beat_on_stderr):  # from the work: each timed call, row, simulated block
            run = run_bench(request, lambda kind, value: watchdog.beat())
        results.write_result(result_path, results.make_result(request, run.rows, run.peak, ceilings=run.ceilings),
                             "--json")
    except InputError as exc:
        print(f"raytracer-app: error: {printable(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - one line for the parent to report
        print(f"raytracer-app: failed: {printable(one_line(exc))}", file=sys.stderr)
        return 1
    if run.bad_files:
        print(f"raytracer-app: error: {run.bad_files[0]}", file=sys.stderr)
        return 2
    return 1 if any(r.verified in (FAILED, ERROR) for r in run.rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
