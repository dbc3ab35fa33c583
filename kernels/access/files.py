"""Access result files (``access --json``): the traced run's kernels, each with its totals under Nsight
Compute's names and its lines, with the header every result file carries (device, versions, commit,
command, date); with ``--measured`` also the GPU's figures and the comparison. Written through the one
output writer; read back (for the measurements table) through the one input reader."""

from __future__ import annotations

import json
import os

from kernels.access import model as M
from kernels.access.measured import compare
from kernels.errors import InputError

SCHEMA, VERSION = "raytracer-app/access-result", 1
MAX_BYTES = 32 * 2**20


def _examples(line: M.LineAccess) -> list[dict]:
    if not line.requests:
        return []
    first = line.requests[0]
    costliest = max(line.requests, key=lambda r: (len(r.sectors()) if r.space == M.GLOBAL else
                                                  r.wavefronts()[0] if r.space == M.SHARED else r.active))
    return [r.as_dict() for r in ([first] if costliest is first else [first, costliest])]


def kernel_doc(kernel: M.KernelAccess, measured: dict | None = None) -> dict:
    d = {"name": kernel.name, "grid": list(kernel.grid), "block": list(kernel.block),
         "dynamic_shared": kernel.dynamic_shared, "launches": kernel.launches,
         "blocks": {"traced": list(kernel.sampled), "of": kernel.blocks_total}, "scope": kernel.scope,
         "totals": kernel.totals,
         "ratios": [{k: v for k, v in vars(r).items() if v is not None} for r in kernel.ratios()],
         "notes": list(kernel.notes),
         "lines": [{"file": ln.file, "line": ln.line, "source": ln.source, **ln.metrics, "notes": list(ln.notes),
                    "requests_seen": ln.requests_seen, "examples": _examples(ln)} for ln in kernel.lines]}
    if measured is not None:
        values = measured.get(kernel.name, {})
        d["measured"] = values
        d["comparison"] = [c.as_dict() for c in compare(kernel, values)] if values else []
    return d


def to_json(result: M.AccessResult, command=None, measured: dict | None = None, measured_device: dict | None = None
            ) -> str:
    from kernels.backend import Backend
    from kernels.harness import results

    made = results.provenance(command)
    doc = {"schema": SCHEMA, "version": VERSION, "target": result.target, "variant": result.variant,
           "variant_file": result.variant_file, "n": result.n, "options": dict(result.options),
           "launch": result.launch, "date": made["date"], "device": results.device_info(Backend("sim"), None),
           "versions": made["versions"], "commit": made["commit"], "dirty": made["dirty"], "command": made["command"],
           "trace_seconds": result.seconds,
           "sampled_blocks": result.sampled_blocks, "notes": list(result.notes),
           "kernels": [kernel_doc(k, measured) for k in result.kernels]}
    if measured is not None:
        doc["measured_device"] = measured_device or {}
    return json.dumps(results._plain(doc), indent=1, allow_nan=False) + "\n"


def write(path, result: M.AccessResult, option: str = "--json", command=None, measured=None, measured_device=None):
    from kernels.io.writer import write_output

    return write_output(path, to_json(result, command, measured, measured_device), option)


def read(path, option: str) -> dict:
    """An access result file, its schema checked (InputError naming the file otherwise)."""
    from kernels.io.reader import read_json

    label = f"{option} {os.fspath(path)!r}"
    doc = read_json(path, option, MAX_BYTES, "the largest access result file raytracer-app reads")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(f"{label} is not an access result file (schema {SCHEMA})")
    if doc.get("version") != VERSION:
        raise InputError(f"{label} has version {doc.get('version')!r}; this app reads version {VERSION}")
    kernels = doc.get("kernels")
    if not isinstance(kernels, list) or not all(isinstance(k, dict) and isinstance(k.get("name"), str)
                                                and isinstance(k.get("totals"), dict) for k in kernels):
        raise InputError(f"{label}: 'kernels' must be a list of kernels with a name and totals")
    return doc
