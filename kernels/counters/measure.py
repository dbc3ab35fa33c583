"""One ncu run for a batch of variants: the command, the child it profiles, progress, Stop, the report.

``measure(...)`` returns {variant name: Measured or the reason it has none}. It raises
:class:`~kernels.counters.tool.CannotMeasure` (one line: what is missing and the fix) when counters cannot be
read here, and :class:`~kernels.counters.tool.MeasureFailed` when ncu broke otherwise."""

from __future__ import annotations

import collections
import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from kernels.counters import metrics as M
from kernels.counters.report import short_name, split
from kernels.counters.tool import CannotMeasure, MeasureFailed, find_ncu, permission_problem, report_module_dir, why_not

CLOCK_CONTROLS = ("none", "base")
# the profiled child (kernels/service/counters_child.py) reports progress and skips on stderr behind this
PREFIX = "@counters"
CHILD_MODULE = "kernels.service.counters_child"
ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=None)
def available_metrics(ncu: str, device: int) -> frozenset | None:
    """The metric names this ncu lists for the device, None when it will not say."""
    try:
        done = subprocess.run([ncu, "--query-metrics", "--devices", str(device)], capture_output=True, text=True,
                              timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    problem = permission_problem(done.stdout + done.stderr)
    if problem:
        raise CannotMeasure(problem)
    names = M.parse_query(done.stdout)
    return frozenset(names) if names else None


def command(ncu: str, metrics: list[str], clock_control: str, report: str, spec: dict) -> list[str]:
    """The ncu command line: every metric at once, only inside the child's profiler windows."""
    return [ncu, "--metrics", ",".join(metrics), "--clock-control", clock_control, "--profile-from-start", "off",
            "--export", report, "--force-overwrite", "--print-summary", "none",
            sys.executable, "-m", CHILD_MODULE, json.dumps(spec)]


def _env(extra_path: str | None = None) -> dict:
    env = dict(os.environ)
    parts = [str(ROOT)] + ([extra_path] if extra_path else []) + \
        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _stop(proc: subprocess.Popen) -> None:
    """Ends the ncu process group this module started (ncu and the child it runs)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    try:
        proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_ncu(cmd: list[str], on_progress=None, should_stop=None, total: int = 0) -> tuple[int | None, str, dict]:
    """Runs ncu; returns (exit status or None when stopped, its output's tail, {variant index: skip reason}).
    Stops at once when ncu says counters cannot be read."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(),
                            start_new_session=True, cwd=str(ROOT))
    tail: collections.deque = collections.deque(maxlen=200)
    skips: dict[int, str] = {}
    lines: collections.deque = collections.deque()
    reader = threading.Thread(target=lambda: [lines.append(ln) for ln in proc.stdout], daemon=True)
    reader.start()
    stopped = False
    while reader.is_alive() or lines:
        while lines:
            line = lines.popleft().rstrip("\n")
            if line.startswith(PREFIX + "-skip "):
                idx, _, why = line[len(PREFIX) + 6:].partition(" ")
                skips[int(idx)] = why
            elif line.startswith(PREFIX + " "):
                done = line[len(PREFIX) + 1:].split("/", 1)[0]
                if on_progress and done.isdigit():
                    on_progress(int(done) - 1, total, line[len(PREFIX) + 1:])
            else:
                tail.append(line)
            if permission_problem(line):
                _stop(proc)
                return proc.returncode, "\n".join(tail), skips
        if should_stop and should_stop():
            stopped = True
            _stop(proc)
            break
        time.sleep(0.05)
    proc.wait()
    return (None if stopped else proc.returncode), "\n".join(tail), skips


def read_report(ncu: Path, report: str, extra=()) -> list[dict]:
    """The report's kernels through NVIDIA's ncu_report module, in a child process (``extra``: metric names
    to read beside the counters' own)."""
    folder = report_module_dir(ncu)
    done = subprocess.run([sys.executable, "-m", "kernels.counters.report", report, *extra], capture_output=True,
                          text=True, env=_env(str(folder)), cwd=str(ROOT), timeout=600)
    if done.returncode != 0:
        raise MeasureFailed(f"reading the ncu report failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(done.stdout)


def to_measured(actions: list[dict], names: list[str], skips: dict, clock_control: str) -> dict:
    """{variant: Measured, or the reason it has none} from the report's kernels in launch order."""
    windows = split(actions, len(names))
    out: dict[str, object] = {}
    for i, name in enumerate(names):
        if i in skips:
            out[name] = skips[i]
        elif not windows.get(i):
            out[name] = "no kernel was profiled for it"
        else:
            kernels = []
            seen: dict[str, int] = {}
            for a in windows[i]:
                short = short_name(a["name"])
                seen[short] = seen.get(short, 0) + 1
                label = short if seen[short] == 1 else f"{short}#{seen[short]}"
                kernels.append(M.kernel_counters(label, a["metrics"]))
            out[name] = M.Measured(tuple(kernels), clock_control)
    return out


def measure(request: dict, backend, clock_control: str = "none", on_progress=None, should_stop=None,
            raw_out: list | None = None, extra_metrics=()) -> dict:
    """Counters for every variant of ``request`` in one ncu run (see the module's doc). ``request``: the JSON
    of a BenchRequest of one problem and one launch (kernels/service/bench_request.py), its variants named;
    the profiled child builds the same problem from it. ``raw_out``: receives the report's kernels.
    ``extra_metrics``: more ncu metrics to collect (those this ncu lists), found in ``raw_out``."""
    variants = list(request["variants"])
    if clock_control not in CLOCK_CONTROLS:
        raise CannotMeasure(f"clock control {clock_control!r}: choose one of {', '.join(CLOCK_CONTROLS)}")
    reason = why_not(backend)
    if reason:
        raise CannotMeasure(reason)
    ncu = find_ncu()
    available = available_metrics(str(ncu), backend.device)
    wanted, _left = M.metric_list(available)
    extra = [m for m in extra_metrics if available is None or M.base_name(m) in available]
    wanted += [m for m in extra if m not in wanted]
    spec = request
    with tempfile.TemporaryDirectory(prefix="raytracer-counters-") as tmp:
        report = os.path.join(tmp, "counters.ncu-rep")
        status, tail, skips = run_ncu(command(str(ncu), wanted, clock_control, report, spec), on_progress,
                                      should_stop, len(variants))
        problem = permission_problem(tail)
        if problem:
            raise CannotMeasure(problem)
        if status is None:
            return {}
        if not os.path.exists(report):
            last = [ln for ln in tail.splitlines() if ln.strip()][-3:]
            raise MeasureFailed(f"ncu wrote no report (exit status {status}): {' | '.join(last) or 'no output'}")
        actions = read_report(ncu, report, extra)
    if raw_out is not None:
        raw_out.extend(actions)
    return to_measured(actions, list(variants), skips, clock_control)
