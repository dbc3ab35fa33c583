"""Lesson result files (`lesson NAME --json FILE`, and the references shipped in assets/reference-results/):
every step's measured figures with the header a bench result file has (device, versions, commit, command,
date). The schema is in docs/results.md.

The header is the bench result file's (:func:`kernels.harness.results.make_result` makes it) and each step
holds its bench row as `bench --json` writes it, so the timings keep every sample; reading goes through the
one input reader and the bench reader's checks, and refuses a file whose steps are not the lesson's."""

from __future__ import annotations

import json
import os

from kernels.errors import InputError
from kernels.harness.peak import Peak
from kernels.harness import results as bench_results
from kernels.harness.results_read import _row, _type, check_header, check_record

SCHEMA, VERSION = "raytracer-app/lesson-result", 1
HEADER_FIELDS = ("lesson", "target", "date", "device", "versions", "commit", "command", "sizes", "measured",
                 "how", "evidence_arch", "steps")
STEP_FIELDS = ("step", "label", "variant", "n", "row", "pct_of_copy", "step_speedup", "cumulative_speedup",
               "facts", "counters_note", "verdict")
_FIGURES = ("pct_of_copy", "step_speedup", "cumulative_speedup")


def _step_dict(r) -> dict:
    row = bench_results.row_dict(r.row) if r.row is not None else None
    if row is not None and r.counters is not None:
        row["counters"] = bench_results._record(r.counters)
    return {"step": r.index + 1, "label": r.step.name, "variant": r.step.variant, "n": r.n, "measured": r.measured,
            "row": row, "pct_of_copy": r.pct_of_copy, "step_speedup": r.step_speedup,
            "cumulative_speedup": r.cumulative, "facts": dict(r.facts), "counters_note": r.counters_note,
            "verdict": r.verdict}


def to_json(run, command=None) -> str:
    """The run as a lesson result file; ``command``: the command line that made it (recorded as is)."""
    made = bench_results.provenance(command)
    device = run.device_info or {"name": run.device, "backend": run.backend}
    doc = {"schema": SCHEMA, "version": VERSION, "lesson": run.lesson.name, "target": run.lesson.target,
           "date": made["date"], "device": device, "versions": made["versions"],
           "commit": made["commit"], "dirty": made["dirty"], "command": made["command"], "sizes": run.sizes,
           "measured": run.measured, "how": run.how, "evidence_arch": run.arch, "evidence_note": run.evidence_note,
           "counters": run.counters, "steps": bench_results._PLACE}
    steps = ",\n".join("  " + json.dumps(bench_results._plain(_step_dict(r)), allow_nan=False) for r in run.results)
    text = json.dumps(bench_results._plain(doc), indent=1, allow_nan=False)
    return bench_results.put_list(text, "steps", steps) + "\n"


def write(path, run, option: str, others=(), command=None):
    """Through the one output writer (atomic; refuses links and non-regular files)."""
    from kernels.io.writer import write_output

    return write_output(path, to_json(run, command), option, others)


# --- reading ------------------------------------------------------------------------------------------------

MAX_BYTES = 16 * 2**20  # a lesson's few dozen steps with their samples stay far below
MAX_WHY = "the largest lesson result file raytracer-app reads"


def read(path, option: str):
    """A lesson result file as a :class:`kernels.lessons.run.LessonRun` (its ``source`` the file),
    validated; InputError naming the file otherwise."""
    from kernels.io.reader import read_json

    return from_json(read_json(path, option, MAX_BYTES, MAX_WHY), f"{option} {os.fspath(path)!r}", os.fspath(path))


def from_json(doc, label: str = "lesson result", source: str = ""):
    from kernels.lessons.catalog import LESSONS
    from kernels.lessons.run import LessonRun, StepResult

    check_header(doc, label, "lesson result file", SCHEMA, VERSION, HEADER_FIELDS)
    for key, types in (("lesson", (str,)), ("date", (str,)), ("device", (dict,)), ("versions", (dict,)),
                       ("sizes", (list,)), ("measured", (bool,)), ("how", (str,)), ("evidence_arch", (str,)),
                       ("steps", (list,))):
        _type(doc, key, types, label)
    _type(doc["device"], "name", (str,), label, "device.")
    lesson = next((x for x in LESSONS if x.name == doc["lesson"]), None)
    if lesson is None:
        raise InputError(f"{label} holds the lesson {doc['lesson']!r}, which this raytracer-app does not know")
    results = [_step(lesson, d, i, label, StepResult) for i, d in enumerate(doc["steps"])]
    device = doc["device"]
    peak = (Peak(float(device["copy_peak_gbps"]), str(device.get("copy_peak_how", "")))
            if isinstance(device.get("copy_peak_gbps"), (int, float)) and device["copy_peak_gbps"] > 0 else None)
    run = LessonRun(lesson, str(device.get("backend", "")), device["name"], doc["measured"], doc["how"],
                    doc["evidence_arch"], peak, results, str(doc.get("evidence_note") or ""),
                    str(doc.get("counters") or ""), doc["date"],
                    {k: str(doc["versions"].get(k, "?")) for k in ("app", "numba", "numba_cuda")})
    run.device_info, run.commit, run.command, run.source = device, doc.get("commit"), doc.get("command"), source
    return run


def _step(lesson, d, i: int, label: str, step_result):
    where = check_record(d, f"steps[{i}]", STEP_FIELDS, label)
    _type(d, "step", (int,), label, where)
    index = d["step"] - 1
    if not 0 <= index < len(lesson.steps):
        raise InputError(f"{label}: {where}step is {d['step']}; lesson {lesson.name} has {len(lesson.steps)} steps")
    step = lesson.steps[index]
    if d["variant"] != step.variant or d["label"] != step.name:
        raise InputError(f"{label}: {where} is {d['label']!r} ({d['variant']}); step {d['step']} of lesson "
                         f"{lesson.name} is {step.name!r} ({step.variant}): the file is of another version of it")
    _type(d, "n", (int,), label, where)
    for key in _FIGURES:
        if d[key] is not None:
            _type(d, key, (int, float), label, where)
    _type(d, "facts", (dict,), label, where)
    row = _row(d["row"], i, label) if d["row"] is not None else None
    measured = bool(d.get("measured", True)) and row is not None
    r = step_result(index, step, d["n"], row, measured, d["step_speedup"], d["cumulative_speedup"],
                    d["pct_of_copy"], dict(d["facts"]), str(d["verdict"] or ""))
    if row is not None and row.counters is not None:
        from kernels.counters.columns import measured as record

        r.counters = record(row.counters)
    r.counters_note = str(d["counters_note"] or "")
    return r
