"""One ncu run for a batch of variants: the command, the child it profiles, progress, Stop, the report.

``measure(...)`` returns {variant name: Measured or the reason it has none}. With ``lines`` (the default) the
run also reads Nsight Compute's source counters (sections SourceCounters and WarpStateStats: PC sampling of
stall reasons, instructions executed, sectors and wavefronts per instruction), the child compiles every
kernel and device function with line information (its own numba cache folder, so that neither kind of
compile is served for the other), and each kernel's record carries them folded onto its Python lines
(:mod:`kernels.counters.fold`). It raises
:class:`~kernels.counters.tool.CannotMeasure` (one line: what is missing and the fix) when counters cannot be
read here, and :class:`~kernels.counters.tool.MeasureFailed` when ncu broke otherwise."""

from __future__ import annotations

import collections
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from kernels.backend import watchdog
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
        done = watchdog.run([ncu, "--query-metrics", "--devices", str(device)], 120, capture_output=True,
                            text=True)
    except (OSError, subprocess.SubprocessError):
        return None
    problem = permission_problem(done.stdout + done.stderr)
    if problem:
        raise CannotMeasure(problem)
    names = M.parse_query(done.stdout)
    return frozenset(names) if names else None


# per-line figures: ncu's source counters and warp-state sampling; the Python sources are imported into the
# report too (small), as some ncu versions place PCs on lines only for imported files
LINE_SECTIONS = ("--section", "SourceCounters", "--section", "WarpStateStats", "--import-source", "yes")
LINEINFO_FLAG = "--lineinfo"  # the child's: compile with line information
LINEINFO_CACHE = "numba-lineinfo"  # the child's numba cache folder then, under the app's cache folder


def command(ncu: str, metrics: list[str], clock_control: str, report: str, spec: dict,
            lines: bool = False) -> list[str]:
    """The ncu command line: every metric at once, only inside the child's profiler windows; with ``lines``
    the source counters too, and the child compiling with line information."""
    return [ncu, "--metrics", ",".join(metrics), *(LINE_SECTIONS if lines else ()), "--clock-control", clock_control,
            "--profile-from-start", "off", "--export", report, "--force-overwrite", "--print-summary", "none",
            sys.executable, "-m", CHILD_MODULE, *([LINEINFO_FLAG] if lines else []), json.dumps(spec)]


def lineinfo_cache(fallback: str) -> str:
    """numba's cache folder for a child compiling with line information: the app's cache folder's
    ``numba-lineinfo`` (or ``$NUMBA_CACHE_DIR/lineinfo``), else ``fallback`` when that cannot be used. numba
    keys its cache by signature and source, not by line information, so the two kinds of compile never
    share a folder."""
    from kernels.io.cache import cache_root, usable_dir

    base = os.environ.get("NUMBA_CACHE_DIR")
    folder = usable_dir(Path(base) / "lineinfo" if base else cache_root() / LINEINFO_CACHE,
                        "numba line-information cache")
    return str(folder) if folder is not None else fallback


def _env(extra_path: str | None = None, numba_cache: str | None = None) -> dict:
    env = dict(os.environ)
    if numba_cache:
        env["NUMBA_CACHE_DIR"] = numba_cache
    parts = [str(ROOT)] + ([extra_path] if extra_path else []) + \
        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _stop(proc: subprocess.Popen) -> None:
    """Ends the ncu process group this module started (ncu and the child it runs)."""
    from kernels.backend import watchdog

    watchdog.end_group(proc, 3.0)


# ncu's deadline (kernels/backend/watchdog.py): its start and the profiled child's first progress line, then
# each variant profiled (ncu replays a kernel once per group of counters) at most this long
NCU_START_S = 300.0
NCU_SILENCE_S = 600.0


def run_ncu(cmd: list[str], on_progress=None, should_stop=None, total: int = 0, numba_cache: str | None = None
            ) -> tuple[int | None, str, dict]:
    """Runs ncu; returns (exit status or None when stopped, its output's tail, {variant index: skip reason}).
    Stops at once when ncu says counters cannot be read."""
    from kernels.backend import watchdog

    proc = watchdog.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=_env(numba_cache=numba_cache), cwd=str(ROOT))
    deadline = watchdog.Deadline(NCU_START_S, NCU_SILENCE_S)
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
                deadline.heard()
                idx, _, why = line[len(PREFIX) + 6:].partition(" ")
                skips[int(idx)] = why
            elif line.startswith(PREFIX + " "):
                deadline.heard()  # a variant's turn: the profiled child progresses
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
        if deadline.overdue():
            _stop(proc)
            raise deadline.stalled("ncu")
        time.sleep(0.05)
    proc.wait()
    return (None if stopped else proc.returncode), "\n".join(tail), skips


def read_report(ncu: Path, report: str, extra=(), pcs: bool = False) -> list[dict]:
    """The report's kernels through NVIDIA's ncu_report module, in a child process (``extra``: metric names
    to read beside the counters' own; ``pcs``: the per-PC source counters too)."""
    folder = report_module_dir(ncu)
    done = watchdog.run([sys.executable, "-m", "kernels.counters.report", report, *(["--pcs"] if pcs else []),
                         *extra], 600, capture_output=True, text=True, env=_env(str(folder)), cwd=str(ROOT))
    if done.returncode != 0:
        raise MeasureFailed(f"reading the ncu report failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(done.stdout)


def _lines(action: dict, kernel: str, label: str):
    """A report kernel's per-PC source counters folded onto its lines (None when it was read without them)."""
    from kernels.counters.fold import fold
    from kernels.counters.lines import fill_sources

    if "pcs" not in action:
        return None
    totals = {**action.get("pc_totals", {}), **action.get("metrics", {})}
    return fill_sources(fold(action["pcs"], kernel, totals, label))


def to_measured(actions: list[dict], names: list[str], skips: dict, clock_control: str, line_label: str = ""
                ) -> dict:
    """{variant: Measured, or the reason it has none} from the report's kernels in launch order; a kernel
    read with its per-PC source counters carries them folded onto lines (``line_label``: where they were
    measured, in words)."""
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
                kernels.append(M.kernel_counters(label, a["metrics"], _lines(a, label, line_label)))
            out[name] = M.Measured(tuple(kernels), clock_control)
    return out


def measure(request: dict, backend, clock_control: str = "none", on_progress=None, should_stop=None,
            raw_out: list | None = None, extra_metrics=(), lines: bool = True) -> dict:
    """Counters for every variant of ``request`` in one ncu run (see the module's doc). ``request``: the JSON
    of a BenchRequest of one problem and one launch (kernels/service/bench_request.py), its variants named;
    the profiled child builds the same problem from it. ``raw_out``: receives the report's kernels (with their
    per-PC tables when ``lines``). ``extra_metrics``: more ncu metrics to collect (those this ncu lists),
    found in ``raw_out``. ``lines``: also the source counters per line (each kernel record's ``lines``)."""
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
        cache = lineinfo_cache(os.path.join(tmp, "numba")) if lines else None
        status, tail, skips = run_ncu(command(str(ncu), wanted, clock_control, report, spec, lines), on_progress,
                                      should_stop, len(variants), cache)
        problem = permission_problem(tail)
        if problem:
            raise CannotMeasure(problem)
        if status is None:
            return {}
        if not os.path.exists(report):
            last = [ln for ln in tail.splitlines() if ln.strip()][-3:]
            raise MeasureFailed(f"ncu wrote no report (exit status {status}): {' | '.join(last) or 'no output'}")
        actions = read_report(ncu, report, extra, lines)
    if raw_out is not None:
        raw_out.extend(actions)
    label = line_label(backend, str(ncu), request) if lines else ""
    return to_measured(actions, list(variants), skips, clock_control, label)


def line_label(backend, ncu: str, request: dict) -> str:
    """'measured on NVIDIA H100 80GB HBM3 with ncu 2025.3.1 (n = 16,777,216)': where per-line figures come from."""
    import re

    from kernels.counters.tool import ncu_version

    sizes = request.get("sizes") or []
    size = f" (n = {sizes[0]:,})" if len(sizes) == 1 and isinstance(sizes[0], int) and sizes[0] else ""
    name = getattr(backend, "device_name", "") or "this GPU"
    found = re.search(r"\d{4}\.\d+(?:\.\d+)*", ncu_version(ncu))
    return f"measured on {name} with ncu {found.group(0) if found else ncu_version(ncu)}{size}"
