"""Benchmark result files (`bench --json`, the GUI's saved runs): every row with its raw per-repeat times,
and a header saying where, when and with what the rows were measured. The schema is in docs/results.md.

``to_json(result)`` writes a :class:`Result`; :mod:`kernels.harness.results_read` reads one back and refuses,
in one line naming the file, anything else."""

from __future__ import annotations

import datetime
import json
import math
import re
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kernels.backend import watchdog
from kernels.harness.peak import Peak
from kernels.harness.rows import Row, package_version, versions

SCHEMA, VERSION = "raytracer-app/bench-result", 1
# the row fields beyond the key, timing and verdict: (name, accepted types, default when reading)
_TEXT, _NUM = (str,), (int, float)
ROW_OPTIONAL = (
    ("backend", _TEXT, ""), ("device", _TEXT, ""), ("timing_method", _TEXT, "wall"), ("gbps", _NUM, None),
    ("pct_of_peak", _NUM, None), ("pct_of_spec", _NUM, None), ("spec_gbps", _NUM, None), ("rate", _NUM, None),
    ("rate_unit", _TEXT, ""), ("note", _TEXT, ""), ("timestamp", _TEXT, ""), ("cache_resident", _TEXT, ""),
    ("result", (str, int, float), ""), ("expected", (str, int, float), ""),
    ("registers", (int, str), ""), ("shared_bytes", (int, str), ""), ("occupancy_pct", (int, float, str), ""),
    ("counters", (dict,), None), ("counters_note", _TEXT, ""), ("clocks", (dict,), None), ("axes", (dict,), None),
    ("worker", _TEXT, ""), ("ceiling", _TEXT, ""), ("ceiling_rate", _NUM, None), ("pct_of_ceiling", _NUM, None),
    ("figures", (dict,), None),
)


@dataclass
class Result:
    """One benchmark run: its rows (:class:`kernels.harness.rows.Row`, timings with every sample) and
    its header. ``device``: name, backend, sms / cores where known, clock_mhz and memory_clock_mhz where
    the driver says them, spec_gbps, copy_peak_gbps and copy_peak_how."""

    target: str
    rows: list
    device: dict
    date: str = ""
    versions: dict = field(default_factory=dict)
    commit: str | None = None
    dirty: bool | None = None  # tracked files changed since the commit
    command: list | None = None
    options: dict = field(default_factory=dict)  # files before the request was recorded: the CLI's options
    request: dict | None = None  # the run's request (kernels/service/bench_request.py), as its JSON
    partial: bool = False  # the run was interrupted: the rows that finished

    @property
    def label(self) -> str:
        """'NVIDIA H100 80GB HBM3 @ 1a2b3c4d' for charts and headers ('+' after a commit with changes)."""
        commit = (self.commit or "no commit")[:8] + ("+" if self.dirty else "")
        return f"{self.device.get('name', '?')} @ {commit}"


def short_device(name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'H100', 'NVIDIA H200' -> 'H200'; the whole name when no model is found."""
    found = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Za-z]?)\b", name)
    return found.group(1) if found else name


def device_slug(name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3': how shipped result files are named by device."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "device"


def now_utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def project_commit(root: Path | None = None) -> str | None:
    """``git rev-parse HEAD`` of the project folder when it is a git checkout; None otherwise, and None
    when git is missing, slow or fails (a result file never depends on it)."""
    root = root or Path(__file__).resolve().parents[2]
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        return None
    try:
        done = watchdog.run([git, "-C", str(root), "rev-parse", "HEAD"], 5, capture_output=True, text=True)
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.strip()
    return text if done.returncode == 0 and len(text) in (40, 64) else None


def project_dirty(root: Path | None = None) -> bool | None:
    """Whether the checkout's tracked files differ from its commit (None when that cannot be told)."""
    root = root or Path(__file__).resolve().parents[2]
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        return None
    try:
        done = watchdog.run([git, "-C", str(root), "diff", "--quiet", "HEAD", "--"], 5, capture_output=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return {0: False, 1: True}.get(done.returncode)


def device_info(backend, peak: Peak | None, ceilings=None) -> dict:
    """The header's device: what is cheap to know; a clock the driver does not give is left out. ``ceilings``:
    the run's measured ceilings (Figures; by default every one this process measured on ``backend``)."""
    from kernels.backend import devices, driver

    info = {"name": backend.device_name, "backend": backend.kind}
    if backend.is_gpu:
        info["sms"] = backend.limits.sm_count
        for key, attr in (("clock_mhz", "CLOCK_RATE"), ("memory_clock_mhz", "MEMORY_CLOCK_RATE")):
            try:
                info[key] = round(driver.attribute(backend.device, attr) / 1e3)  # kHz
            except Exception:  # noqa: BLE001 - an attribute this driver lacks: omitted, never a failure
                pass
    elif backend.is_host:
        info["cores"] = devices.cpu_cores()
    info["spec_gbps"] = devices.spec_bandwidth_gbps(backend.device_name) if backend.is_gpu else None
    info["copy_peak_gbps"] = peak.gbps if peak else None
    info["copy_peak_how"] = peak.how if peak else ""
    if ceilings is None:
        from kernels.harness.ceilings import measured_on

        ceilings = measured_on(backend)
    info["ceilings"] = [f.to_json() for f in ceilings]  # each row's ceiling, measured in the run
    return info


def provenance(command=None) -> dict:
    """What every result file's header says of when and with what it was made: date, versions, commit
    (and whether the checkout had changes), the command line."""
    from kernels.backend.compiler import NUMBA_CUDA_MLIR, active

    known = {**versions(), "python": sys.version.split()[0], "numpy": package_version("numpy"),
             "compiler": active()}  # which compiler built the CUDA kernels (kernels/backend/compiler.py)
    if known["compiler"] == NUMBA_CUDA_MLIR:
        known["numba_cuda_mlir"] = package_version("numba-cuda-mlir")
    return {"date": now_utc(), "versions": known, "commit": project_commit(), "dirty": project_dirty(),
            "command": list(command) if command else None}


def make_result(request, rows, peak: Peak | None, command=None, ceilings=None) -> Result:
    """The result of ``request`` (a BenchRequest: its algorithm, backend and JSON go into the header);
    ``ceilings``: the run's measured ceilings (:func:`device_info`); by default those this process measured
    that its rows are judged against (a window's or a lesson's earlier runs measured others)."""
    if ceilings is None:
        from kernels.harness.ceilings import measured_on, used_by

        ceilings = used_by(measured_on(request.backend), rows)
    return Result(target=request.algorithm, rows=list(rows), device=device_info(request.backend, peak, ceilings),
                  request=_plain(request.to_json()), **provenance(command))


# --- writing ------------------------------------------------------------------------------------------------


def _plain(value):
    """A JSON value: finite numbers, text, lists and dicts of them; anything else as its text."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    try:  # numpy scalars
        return _plain(value.item())
    except AttributeError:
        return str(value)


def row_dict(r: Row) -> dict:
    t, cold = r.timing, r.cold_timing
    d = {
        "variant": r.variant, "op": r.op, "dtype": r.dtype, "n": r.n, "block": r.block, "grid": r.grid,
        "backend": r.backend, "device": r.device, "repeats": t.repeats if t else r.repeats,
        "samples_ms": list(t.samples_ms) if t else [], "timing_method": t.method if t else "",
        "median_ms": t.median_ms if t else None, "min_ms": t.min_ms if t else None,
        "max_ms": t.max_ms if t else None, "noise": t.noise if t else None,
        "cold_samples_ms": list(cold.samples_ms) if cold else None, "verified": r.verified,
        "sample_processes": list(t.processes) if t and t.processes else None,
    }
    d.update((name, getattr(r, name)) for name, _, _ in ROW_OPTIONAL if name not in d)
    d["counters"] = _record(r.counters)
    d["clocks"] = _record(r.clocks)
    if not d["worker"]:  # a row run in this process: files stay as they were before clusters
        del d["worker"]
    return {k: _plain(v) for k, v in d.items()}


def _record(value):
    """A counters or clocks record as a JSON object (already one when read back from a file), or None."""
    import dataclasses

    if value is None or isinstance(value, dict):
        return value
    if hasattr(value, "as_dict"):
        return value.as_dict()
    return dataclasses.asdict(value)


def to_json(result: Result) -> str:
    doc = {"schema": SCHEMA, "version": VERSION, "target": result.target, "date": result.date,
           "device": result.device, "versions": result.versions, "commit": result.commit, "dirty": result.dirty,
           "command": result.command, "rows": _PLACE}
    if result.partial:
        doc["partial"] = True
    if result.request is not None:
        doc["request"] = result.request
    else:
        doc["options"] = result.options
    # the header indented, each row on one line: small files that diff row by row
    rows = ",\n".join("  " + json.dumps(_plain(row_dict(r)), allow_nan=False) for r in result.rows)
    text = json.dumps(_plain(doc), indent=1, allow_nan=False)
    return put_list(text, "rows", rows) + "\n"


# where a file's one-line-per-item list goes in its indented header: a token no value of the header holds
_PLACE = f"@list-{secrets.token_hex(16)}"


def put_list(text: str, key: str, items: str) -> str:
    """The header ``text`` (dumped with ``key``: ``_PLACE``) with ``items`` (JSON values joined by ',\\n')
    as that list, one item a line; replaced at that key only, whatever the header's values hold."""
    return text.replace(f'"{key}": "{_PLACE}"', f'"{key}": [\n{items}\n ]' if items else f'"{key}": []', 1)


def write_result(path, result: Result, option: str, inputs=()) -> Path:
    """Through the one output writer: atomic, refusing what it must not replace."""
    from kernels.io.writer import write_output

    return write_output(path, to_json(result), option, inputs)


def saved_runs_folder() -> Path:
    """Where the GUI keeps every benchmark panel run: the cache folder's results/."""
    from kernels.io.cache import cache_root

    return cache_root() / "results"


def new_saved_run_path(target: str) -> Path:
    """A new file name in :func:`saved_runs_folder` (created) by UTC date, a number for runs that end within
    the same second, and target, e.g. 20261123T221200Z-01-reduction.json: names sort as the runs ended."""
    from kernels.io.cache import make_private_dir

    folder = saved_runs_folder()
    make_private_dir(folder)  # the cache folder, if created here, is private (0700) as every cache's
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    k = 1
    while (folder / f"{stamp}-{k:02d}-{target}.json").exists():
        k += 1
    return folder / f"{stamp}-{k:02d}-{target}.json"
