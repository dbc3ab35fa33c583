"""Benchmark result files (`bench --json`, the GUI's saved runs): every row with its raw per-repeat times,
and a header saying where, when and with what the rows were measured. The schema is in docs/results.md.

``to_json(result)`` writes a :class:`Result`; ``from_json(doc, label)`` reads one back and refuses, in one
line naming the file, anything else: another schema or version, a missing field, a value of the wrong
type, a NaN or an infinity."""

from __future__ import annotations

import datetime
import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kernels.errors import InputError
from kernels.harness import bench
from kernels.timing import Timing

SCHEMA, VERSION = "raytracer-app/bench-result", 1
# the largest result file read: 10,000 samples (the repeats' cap) of ~20 bytes each for ~300 rows
MAX_BYTES = 64 * 2**20
MAX_WHY = "the largest result file raytracer-app reads"
HEADER_FIELDS = ("target", "date", "device", "versions", "commit", "command", "options", "rows")
ROW_FIELDS = ("variant", "op", "dtype", "n", "block", "grid", "samples_ms", "median_ms", "noise", "verified")
# optional row fields: (name, accepted types, default)
_TEXT, _NUM = (str,), (int, float)
ROW_OPTIONAL = (
    ("backend", _TEXT, ""), ("device", _TEXT, ""), ("timing_method", _TEXT, "wall"), ("gbps", _NUM, None),
    ("pct_of_peak", _NUM, None), ("pct_of_spec", _NUM, None), ("spec_gbps", _NUM, None), ("rate", _NUM, None),
    ("rate_unit", _TEXT, ""), ("note", _TEXT, ""), ("timestamp", _TEXT, ""), ("cache_resident", _TEXT, ""),
    ("result", (str, int, float), ""), ("expected", (str, int, float), ""),
    ("registers", (int, str), ""), ("shared_bytes", (int, str), ""), ("occupancy_pct", (int, float, str), ""),
)


@dataclass
class Result:
    """One benchmark run: its rows (:class:`kernels.harness.bench.Row`, timings with every sample) and
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
    options: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        """'NVIDIA H100 80GB HBM3 @ 1a2b3c4d' for charts and headers ('+' after a commit with changes)."""
        commit = (self.commit or "no commit")[:8] + ("+" if self.dirty else "")
        return f"{self.device.get('name', '?')} @ {commit}"


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
        done = subprocess.run([git, "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
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
        done = subprocess.run([git, "-C", str(root), "diff", "--quiet", "HEAD", "--"], capture_output=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return {0: False, 1: True}.get(done.returncode)


def device_info(backend, peak: bench.Peak | None) -> dict:
    """The header's device: what is cheap to know; a clock the driver does not give is left out."""
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
    return info


def make_result(target: str, rows, backend, peak: bench.Peak | None, command=None, options=None) -> Result:
    v = bench.versions()
    versions = {**v, "python": sys.version.split()[0], "numpy": bench.package_version("numpy")}
    return Result(target=target, rows=list(rows), device=device_info(backend, peak), date=now_utc(),
                  versions=versions, commit=project_commit(), dirty=project_dirty(),
                  command=list(command) if command else None,
                  options={k: _plain(v) for k, v in (options or {}).items()})


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


def row_dict(r: bench.Row) -> dict:
    t, cold = r.timing, r.cold_timing
    d = {
        "variant": r.variant, "op": r.op, "dtype": r.dtype, "n": r.n, "block": r.block, "grid": r.grid,
        "backend": r.backend, "device": r.device, "repeats": t.repeats if t else r.repeats,
        "samples_ms": list(t.samples_ms) if t else [], "timing_method": t.method if t else "",
        "median_ms": t.median_ms if t else None, "min_ms": t.min_ms if t else None,
        "max_ms": t.max_ms if t else None, "noise": t.noise if t else None,
        "cold_samples_ms": list(cold.samples_ms) if cold else None, "verified": r.verified,
    }
    d.update((name, getattr(r, name)) for name, _, _ in ROW_OPTIONAL if name not in d)
    return {k: _plain(v) for k, v in d.items()}


def to_json(result: Result) -> str:
    doc = {"schema": SCHEMA, "version": VERSION, "target": result.target, "date": result.date,
           "device": result.device, "versions": result.versions, "commit": result.commit, "dirty": result.dirty,
           "command": result.command, "options": result.options, "rows": []}
    # the header indented, each row on one line: small files that diff row by row
    rows = ",\n".join("  " + json.dumps(_plain(row_dict(r)), allow_nan=False) for r in result.rows)
    text = json.dumps(_plain(doc), indent=1, allow_nan=False)
    return text.replace('"rows": []', '"rows": [\n' + rows + "\n ]" if rows else '"rows": []') + "\n"


def write_result(path, result: Result, option: str, inputs=()) -> Path:
    """Through the one output writer: atomic, refusing what it must not replace."""
    from kernels.io.writer import write_output

    return write_output(path, to_json(result), option, inputs)


# --- reading ------------------------------------------------------------------------------------------------


def read_result(path, option: str) -> Result:
    """A result file through the one input reader (bounded by MAX_BYTES), validated."""
    from kernels.io.reader import read_json

    return from_json(read_json(path, option, MAX_BYTES, MAX_WHY), f"{option} {os.fspath(path)!r}")


def from_json(doc, label: str = "result") -> Result:
    if isinstance(doc, str):
        try:
            doc = json.loads(doc)
        except ValueError as exc:
            raise InputError(f"{label} is not valid JSON: {str(exc).splitlines()[0]}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(f"{label} is not a raytracer-app result file (schema {found!r}, expected {SCHEMA!r})")
    if doc.get("version") != VERSION:
        raise InputError(f"{label} is a result file of version {doc.get('version')!r}; this raytracer-app "
                         f"reads version {VERSION}")
    _finite(doc, label, "")
    missing = [k for k in HEADER_FIELDS if k not in doc]
    if missing:
        raise InputError(f"{label} lacks the header field(s) {', '.join(missing)}")
    _type(doc, "target", (str,), label)
    _type(doc, "date", (str,), label)
    _type(doc, "device", (dict,), label)
    _type(doc["device"], "name", (str,), label, "device.")
    for key, types in (("versions", (dict,)), ("options", (dict,)), ("rows", (list,))):
        _type(doc, key, types, label)
    for key, types in (("commit", (str,)), ("command", (list,)), ("dirty", (bool,))):
        if doc.get(key) is not None:
            _type(doc, key, types, label)
    rows = [_row(r, i, label) for i, r in enumerate(doc["rows"])]
    return Result(target=doc["target"], rows=rows, device=doc["device"], date=doc["date"],
                  versions=doc["versions"], commit=doc["commit"], dirty=doc.get("dirty"), command=doc["command"],
                  options=doc["options"])


def _finite(value, label: str, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{label} holds a non-finite number ({value}) at {where or 'the top'}")
    if isinstance(value, dict):
        for k, v in value.items():
            _finite(v, label, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _finite(v, label, f"{where}[{i}]")


def _type(d: dict, key: str, types: tuple, label: str, where: str = "") -> None:
    if key not in d:
        raise InputError(f"{label} lacks the field {where}{key}")
    value = d[key]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise InputError(f"{label}: {where}{key} is {json.dumps(value)[:40]}, not {_type_names(types)}")


def _type_names(types: tuple) -> str:
    """(int, float) -> 'a number'; (int, str) -> 'a whole number or text'."""
    names = {str: "text", int: "a whole number", float: "a number", dict: "an object", list: "a list"}
    kinds = [t for t in types if not (t is int and float in types)]
    return " or ".join(names.get(t, t.__name__) for t in kinds)


def _samples(d: dict, key: str, label: str, where: str) -> tuple[float, ...]:
    values = d.get(key) or []
    if not isinstance(values, list) or any(isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0
                                           for v in values):
        raise InputError(f"{label}: {where}{key} must be a list of times in ms (numbers of at least 0)")
    return tuple(float(v) for v in values)


def _row(d, i: int, label: str) -> bench.Row:
    where = f"rows[{i}]."
    if not isinstance(d, dict):
        raise InputError(f"{label}: rows[{i}] is not an object")
    missing = [k for k in ROW_FIELDS if k not in d]
    if missing:
        raise InputError(f"{label}: rows[{i}] lacks {', '.join(missing)}")
    for key in ("variant", "op", "dtype", "verified"):
        _type(d, key, (str,), label, where)
    _type(d, "n", (int,), label, where)
    if d["n"] < 0:
        raise InputError(f"{label}: {where}n is {d['n']}; sizes are at least 0")
    for key in ("block", "grid"):
        _type(d, key, (int, str), label, where)
    for key in ("median_ms", "noise"):
        if d[key] is not None:
            _type(d, key, (int, float), label, where)
    samples = _samples(d, "samples_ms", label, where)
    if d["median_ms"] is not None and not samples:
        raise InputError(f"{label}: {where}samples_ms is empty but the row has a median")
    extra = {}
    for name, types, default in ROW_OPTIONAL:
        if d.get(name) is not None:
            _type(d, name, types, label, where)
        extra[name] = d.get(name, default) if d.get(name) is not None else default
    method = extra.pop("timing_method") or "wall"
    cold = _samples(d, "cold_samples_ms", label, where)
    return bench.Row(variant=d["variant"], op=d["op"], dtype=d["dtype"], n=d["n"], block=d["block"], grid=d["grid"],
                     repeats=len(samples) or (d["repeats"] if isinstance(d.get("repeats"), int) else 0),
                     verified=d["verified"],
                     timing=Timing(samples, method) if samples else None,
                     cold_timing=Timing(cold, method) if cold else None, **extra)
