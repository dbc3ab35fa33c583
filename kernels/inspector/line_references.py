"""Per-line references: line-figures result files measured on an H100 and an H200 (``inspect TARGET --all
--lines --measured --json``, stage ``lines`` of scripts/gpu-session.sh) and shipped in
assets/reference-results/ as DEVICE-lines-TARGET.json (nvidia-h100-80gb-hbm3-lines-reduction.json).

Without a GPU, ``inspect --lines`` and a view show them beside the static figures as kind ``reference``,
each labelled with its device and date, never as a measurement of this machine. A line whose source text
is no longer the text it was measured on (the kernel changed since) is left out and counted in a note.

The folder is the project's assets/reference-results/, or the one RAYTRACER_LINE_REFERENCES names."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kernels.counters.lines import MEASURED, REFERENCE, KernelLines, LineRow, source_text
from kernels.errors import InputError
from kernels.harness.results import device_slug, short_device
from kernels.inspector.lines import SCHEMA, VERSION

ENV = "RAYTRACER_LINE_REFERENCES"
REFERENCE_DIR = Path(__file__).resolve().parents[2] / "assets" / "reference-results"
MAX_BYTES = 16 * 2**20


def folder() -> Path:
    return Path(os.environ[ENV]) if os.environ.get(ENV) else REFERENCE_DIR


def file_name(device: str, target: str) -> str:
    """'NVIDIA H100 80GB HBM3', 'reduction' -> 'nvidia-h100-80gb-hbm3-lines-reduction.json'."""
    return f"{device_slug(device)}-lines-{target}.json"


@dataclass
class LineReference:
    """One reference's kernels of one variant, their figures as kind ``reference``."""

    device: str
    date: str
    kernels: list  # KernelLines
    path: Path

    @property
    def short(self) -> str:
        return short_device(self.device)

    def heading(self) -> str:
        return f"reference, measured on {self.device} on {self.date[:10]} (not this machine)"


def read(path, option: str = "line reference") -> dict:
    """A line-figures result file, its schema checked (InputError naming the file otherwise)."""
    from kernels.io.reader import read_json

    label = f"{option} {os.fspath(path)!r}"
    doc = read_json(path, option, MAX_BYTES, "the largest line-figures file raytracer-app reads")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(f"{label} is not a line-figures file (schema {SCHEMA})")
    if doc.get("version") != VERSION:
        raise InputError(f"{label} has version {doc.get('version')!r}; this app reads version {VERSION}")
    if not isinstance(doc.get("variants"), list) or not isinstance(doc.get("device"), dict):
        raise InputError(f"{label}: needs 'variants' (a list) and 'device'")
    return doc


def as_reference(lines: KernelLines, heading: str) -> tuple[KernelLines, int]:
    """The kernel's measured figures as kind ``reference``, leaving out lines whose text changed since; and
    how many were left out."""
    out = KernelLines(lines.name, labels={REFERENCE: heading}, totals={REFERENCE: lines.totals.get(MEASURED, {})},
                      notes=list(lines.notes))
    stale = 0
    for row in lines.rows.values():
        figures = {(REFERENCE, scope): dict(figs) for (kind, scope), figs in row.figures.items() if kind == MEASURED}
        if not figures:
            continue
        now = source_text(row.file, row.line)
        if row.source and now != row.source:
            stale += 1
            continue
        out.rows[(row.file, row.line)] = LineRow(row.file, row.line, row.source, figures)
    if stale:
        out.notes.append(f"{stale} lines left out: their source changed since the reference was measured")
    return out, stale


def load(target: str, variant: str, where: Path | None = None) -> tuple[list[LineReference], list[str]]:
    """The references of ``variant`` of ``target`` in the folder, and a line for each file refused (a bad
    file is reported, never shown)."""
    where = Path(where) if where is not None else folder()
    if not where.is_dir():
        return [], []
    found, refused = [], []
    for path in sorted(p for p in where.glob(f"*-lines-{target}.json") if p.is_file()):
        try:
            doc = read(path)
            if doc.get("target") != target:
                raise InputError(f"line reference {path.name} holds {doc.get('target')!r}, not {target}")
            if not doc.get("measured"):
                raise InputError(f"line reference {path.name} was not measured on a GPU")
            entry = next((v for v in doc["variants"] if isinstance(v, dict) and v.get("variant") == variant), None)
            if entry is None or "kernels" not in entry:
                continue
            device = str(doc["device"].get("name", "?"))
            heading = f"reference, measured on {device} on {str(doc.get('date', ''))[:10]} (not this machine)"
            kernels = [as_reference(KernelLines.from_dict(k), heading)[0] for k in entry["kernels"]]
        except (InputError, OSError, ValueError, TypeError) as exc:
            refused.append(str(exc))
            continue
        found.append(LineReference(device, str(doc.get("date", "")), kernels, path))
    return found, refused
