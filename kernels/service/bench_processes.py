"""A run in several fresh processes (a request with ``processes`` P): each process runs the same request with
its share of the repeats, one after another, and their rows are joined into one run
(:mod:`kernels.harness.processes` says why and how).

Each child is ``python -m kernels.service.bench REQUEST.json RESULT.json``: it reads the request, runs it
through :func:`kernels.service.bench.run_bench` and writes a result file, which the parent reads back. A child
refusing its input exits 2 (the parent raises InputError), one failing otherwise exits 1 (RuntimeError)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from kernels.backend import watchdog

# a child says STARTED on stderr once it has read its request: one that has not within this many seconds
# (interpreter, numba and the driver started) stalled at start; after that it beats on stderr from its work
# (every timed call and row, every simulated block: kernels/backend/watchdog.py), and one silent for longer
# than SILENCE_S stalled in its work. Either way it is ended with its process group, as every child is.
START_DEADLINE_S = 120.0
SILENCE_S = watchdog.SILENCE_S
STARTED = watchdog.STARTED


CHILD_MODULE = "kernels.service.bench"


def run_in_processes(request, send, should_stop) -> tuple[list, object, list, bool]:
    """(the joined rows, the first process's copy peak, the ceilings measured, whether it was stopped): a
    stopped run keeps no rows, since those of some processes only would be judged as if they were the whole
    run. The first process alone measures the peak and the ceilings (as a run in one process does, once), and
    the joined rows are judged against them; each ceiling says so ('measured by process 1')."""
    from kernels.backend.simulator import SIM_ENV
    from kernels.errors import InputError
    from kernels.harness.ceilings import Figure, gathered
    from kernels.harness.peak import Peak
    from kernels.harness.processes import check_processes, merge_processes
    from kernels.harness.results_read import read_result

    shares = check_processes(request.processes, request.repeats, request.rounds)
    runs, peak, stopped, measured = [], None, False, []
    env = dict(os.environ)
    if request.backend.is_simulator:
        env[SIM_ENV] = "1"  # before the child imports numba
    from kernels import signals

    with tempfile.TemporaryDirectory(prefix="raytracer-processes-") as folder, \
            signals.cleaned_up(lambda: shutil.rmtree(folder, ignore_errors=True)):  # a forced exit too
        for i, share in enumerate(shares, start=1):
            if should_stop():
                stopped = True
                break
            one = request.with_changes(repeats=share, processes=1, peak=request.peak and i == 1)
            request_path = os.path.join(folder, f"request-{i}.json")
            result_path = os.path.join(folder, f"process-{i}.json")
            with open(request_path, "w", encoding="utf-8") as f:
                json.dump(one.to_json(), f)
            start = time.perf_counter()
            try:
                code, err = _run_child([sys.executable, "-m", CHILD_MODULE, request_path, result_path], env,
                                       should_stop, request.variant_timeout)
            except watchdog.Stalled as exc:
                raise RuntimeError(f"process {i} of {len(shares)} " + (
                    f"went {exc.seconds:g} s without progress (stalled in its work)" if exc.started else
                    f"did not start within {exc.seconds:g} s (it stalled before reading its request)") +
                    "; it was ended with its process group") from None
            if code is None:
                stopped = True
                break
            if not (code in (0, 1) and os.path.exists(result_path)):  # 1 with rows: a variant failed verification
                lines = [x for x in err.splitlines() if x.strip() and x.strip() != STARTED]
                last = lines[-1].removeprefix("raytracer-app: ") if lines else "no message"
                text = f"process {i} of {len(shares)} exited with {code}: {last}"
                raise InputError(text) if code == 2 else RuntimeError(text)
            result = read_result(result_path, f"process {i}'s result file")
            runs.append(result.rows)
            try:
                measured.append((f"process {i}", [Figure.from_json(d, f"process {i}'s ceiling")
                                                  for d in result.device.get("ceilings") or []]))
            except ValueError as exc:
                raise RuntimeError(str(exc)) from None
            if i == 1 and result.device.get("copy_peak_gbps"):
                peak = Peak(result.device["copy_peak_gbps"], result.device.get("copy_peak_how", ""))
                send("peak", peak)
            send("message", f"process {i}/{len(shares)}: {len(runs[-1])} rows, {share} repeats each, "
                            f"{time.perf_counter() - start:.1f} s")
            send("progress", (i, len(shares)))
    if stopped:
        return [], peak, [], True
    rows = merge_processes(runs, peak.gbps if peak else None)
    for row in rows:
        send("row", row)
    return rows, peak, gathered(measured), False


LOG_TAIL_BYTES = watchdog.LOG_TAIL_BYTES  # what is kept of a child's stderr: its last lines


def _run_child(command, env, should_stop, variant_timeout: float = 0.0) -> tuple[int | None, str]:
    """(exit status, the last LOG_TAIL_BYTES of its stderr) of the child; (None, tail) when stopped; Stalled
    when it missed its deadline (START_DEADLINE_S to say STARTED, then SILENCE_S between beats). Its stdout
    goes nowhere and of its stderr a thread keeps only the tail, so a child (a variant file) printing
    hundreds of MB costs neither memory nor disk here; Ctrl-C, or the signal watchdog's forced exit, ends it
    with the parent. All of it is the one watchdog's (kernels/backend/watchdog.py)."""
    proc = watchdog.popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env=env)
    # a variant file's call may run up to its own --variant-timeout, beating only when it finishes
    silence = max(SILENCE_S, 2 * variant_timeout)
    return watchdog.watch(proc, watchdog.Deadline(START_DEADLINE_S, silence), should_stop, what="bench process")
