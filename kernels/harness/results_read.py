"""Reading result files (kernels.harness.results writes them): through the one input reader, bounded, and
validated, so that another schema or version, a missing field, a value of the wrong type, a negative time,
a NaN or an infinity is one InputError naming the file."""

from __future__ import annotations

import json
import math
import os

import numpy as np

from kernels.backend import MAX_REPEATS
from kernels.errors import InputError
from kernels.harness.rows import Row
from kernels.harness.results import ROW_OPTIONAL, SCHEMA, VERSION, Result
from kernels.timing import Timing

# the largest result file read: 10,000 samples (the repeats' cap) of ~20 bytes each for ~300 rows
MAX_BYTES = 64 * 2**20
MAX_WHY = "the largest result file raytracer-app reads"
# what a bench run writes at most: a row's samples are its repeats (MAX_REPEATS, split over processes or
# not), and rows are variants x sizes x launches; more is refused before rows are built, so that reading and
# comparing a file stays within seconds and a few hundred MB
MAX_SAMPLES = MAX_REPEATS
MAX_ROWS = 20_000
HEADER_FIELDS = ("target", "date", "device", "versions", "commit", "command", "rows")
TARGET_RENAMED = {"raytrace": "spheres"}  # files written before the ray tracer's target was named spheres
ROW_FIELDS = ("variant", "op", "dtype", "n", "block", "grid", "samples_ms", "median_ms", "noise", "verified")


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
    check_header(doc, label, "result file", SCHEMA, VERSION, HEADER_FIELDS)
    _type(doc, "target", (str,), label)
    _type(doc, "date", (str,), label)
    _type(doc, "device", (dict,), label)
    _type(doc["device"], "name", (str,), label, "device.")
    for key, types in (("versions", (dict,)), ("rows", (list,))):
        _type(doc, key, types, label)
    if "request" not in doc and "options" not in doc:  # files before the request was recorded hold the options
        raise InputError(f"{label} lacks the header field(s) request")
    for key in ("request", "options"):
        if key in doc:
            _type(doc, key, (dict,), label)
    for key, types in (("commit", (str,)), ("command", (list,)), ("dirty", (bool,))):
        if doc.get(key) is not None:
            _type(doc, key, types, label)
    if len(doc["rows"]) > MAX_ROWS:
        raise InputError(f"{label} has {len(doc['rows']):,} rows; at most {MAX_ROWS:,} are read (more than a "
                         "bench run writes)")
    rows = [_row(r, i, label) for i, r in enumerate(doc["rows"])]
    return Result(target=TARGET_RENAMED.get(doc["target"], doc["target"]), rows=rows, device=doc["device"], date=doc["date"],
                  versions=doc["versions"], commit=doc["commit"], dirty=doc.get("dirty"), command=doc["command"],
                  options=doc.get("options", {}), request=doc.get("request"), partial=doc.get("partial") is True)


def check_header(doc, label: str, kind: str, schema: str, version: int, fields: tuple) -> None:
    """The checks every result file's top level passes (bench results and lesson results alike): its
    schema and version, finite numbers throughout, and the header ``fields`` present; InputError naming
    ``label`` otherwise."""
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(f"{label} is not a raytracer-app {kind} (schema {found!r}, expected {schema!r})")
    if doc.get("version") != version:
        raise InputError(f"{label} is a {kind} of version {doc.get('version')!r}; this raytracer-app "
                         f"reads version {version}")
    _finite(doc, label, "")
    missing = [k for k in fields if k not in doc]
    if missing:
        raise InputError(f"{label} lacks the header field(s) {', '.join(missing)}")


def _finite(value, label: str, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{label} holds a non-finite number ({value}) at {where or 'the top'}")
    if isinstance(value, dict):
        for k, v in value.items():
            _finite(v, label, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        kinds = set(map(type, value))  # a row's samples checked at once, not one call each
        if float in kinds:
            floats = value if kinds == {float} else [v for v in value if type(v) is float]
            if not np.isfinite(np.asarray(floats, np.float64)).all():
                i = next(i for i, v in enumerate(value) if type(v) is float and not math.isfinite(v))
                raise InputError(f"{label} holds a non-finite number ({value[i]}) at {where}[{i}]")
        if kinds & {dict, list}:
            for i, v in enumerate(value):
                if isinstance(v, (dict, list)):
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
    if isinstance(values, list) and len(values) > MAX_SAMPLES:
        raise InputError(f"{label}: {where}{key} has {len(values):,} samples; at most {MAX_SAMPLES:,} (the most "
                         "repeats a bench run takes)")
    if not isinstance(values, list) or not set(map(type, values)) <= {int, float} or (values and min(values) < 0):
        raise InputError(f"{label}: {where}{key} must be a list of times in ms (numbers of at least 0)")
    return tuple(map(float, values))


def _processes(d: dict, count: int, label: str, where: str) -> tuple[int, ...]:
    """``sample_processes`` (bench --processes): how many samples each process took; () when absent."""
    values = d.get("sample_processes")
    if values is None:
        return ()
    if not isinstance(values, list) or not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 1
                                                         for v in values):
        raise InputError(f"{label}: {where}sample_processes must be a list of sample counts (whole numbers of at "
                         f"least 1)")
    if sum(values) != count:
        raise InputError(f"{label}: {where}sample_processes adds up to {sum(values)}, but samples_ms has {count}")
    return tuple(values)


def check_record(d, name: str, fields, label: str) -> str:
    """Check that list element ``name`` (e.g. 'rows[3]') is an object holding every one of ``fields``;
    returns its prefix for messages ('rows[3].')."""
    if not isinstance(d, dict):
        raise InputError(f"{label}: {name} is not an object")
    missing = [k for k in fields if k not in d]
    if missing:
        raise InputError(f"{label}: {name} lacks {', '.join(missing)}")
    return f"{name}."


def _row(d, i: int, label: str) -> Row:
    where = check_record(d, f"rows[{i}]", ROW_FIELDS, label)
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
    if extra.get("clocks") is not None:  # read back as the record a timed row holds, so a row prints alike
        from kernels.counters.clocks import Clocks

        try:
            extra["clocks"] = Clocks.from_dict(extra["clocks"])
        except (KeyError, TypeError) as exc:
            raise InputError(f"{label}: {where}clocks is not a clocks record ({exc})") from None
    cold = _samples(d, "cold_samples_ms", label, where)
    processes = _processes(d, len(samples), label, where)
    return Row(variant=d["variant"], op=d["op"], dtype=d["dtype"], n=d["n"], block=d["block"], grid=d["grid"],
                     repeats=len(samples) or (d["repeats"] if isinstance(d.get("repeats"), int) else 0),
                     verified=d["verified"],
                     timing=Timing(samples, method, processes) if samples else None,
                     cold_timing=Timing(cold, method) if cold else None, **extra)


def row_from_dict(d, label: str = "a row") -> Row:
    """One row as a result file holds it (:func:`kernels.harness.results.row_dict`), checked as a file's is:
    a cluster worker's rows arrive this way."""
    return _row(d, 0, label)
