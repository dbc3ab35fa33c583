"""Figures per source line of a kernel, from wherever they come: the compiler (static), the simulator's trace
(predicted), Nsight Compute on this GPU (measured) or on the GPUs the app ships results from (reference).

A :class:`KernelLines` holds one kernel's lines, keyed by (file, line), the file as shown (relative to the
project for its own files: :func:`shown_file`); each :class:`LineRow` holds figures by kind and scope:

- the kind says where a figure comes from (:data:`KINDS`), and :attr:`KernelLines.labels` says it in words
  ("measured on NVIDIA H100 80GB HBM3 with ncu 2025.3.1, n = 16,777,216");
- the scope says what it counts: ``own``, the line's own instructions (for a device function's line, its
  code wherever it was inlined), or ``with_inlined``, a call line's own and what it inlines (present only
  where a line inlines something).

The keys are :data:`COLUMNS` (and ``stall.REASON`` for one stall reason's samples). Pure: no numba, no ncu;
the Inspector's source pane and the Access view read it, the CLI prints it, result files carry it."""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATIC, PREDICTED, MEASURED, REFERENCE = "static", "predicted", "measured", "reference"
KINDS = (STATIC, PREDICTED, MEASURED, REFERENCE)
OWN, WITH_INLINED = "own", "with_inlined"
SCOPES = (OWN, WITH_INLINED)
STALL = "stall."  # 'stall.long_scoreboard': the line's samples of one stall reason


@dataclass(frozen=True)
class Column:
    key: str
    label: str  # a table's heading
    unit: str
    what: str  # a tooltip
    text: bool = False  # a word (the top stall), not a number


COLUMNS = {c.key: c for c in (
    Column("sass_instructions", "SASS", "instructions", "SASS instructions the line compiled to (each counted once)"),
    Column("inst_executed", "instr exec", "warp instructions", "warp-level instructions executed (ncu inst_executed)"),
    Column("stall_samples", "stalls", "samples", "warp-state samples of warps stalled at the line's instructions "
                                                 "(ncu's PC sampling; issuing and eligible warps left out)"),
    Column("stall_pct", "stall %", "%", "the line's share of the kernel's stall samples"),
    Column("top_stall", "top stall", "", "the stall reason with the most samples at the line", text=True),
    Column("global_sectors", "sectors", "sectors", "32-byte sectors the line's global loads, stores and atomics "
                                                   "touched"),
    Column("global_sectors_excessive", "excess sectors", "sectors", "sectors above the fewest the line's global "
                                                                    "accesses could touch (uncoalesced)"),
    Column("shared_wavefronts", "wavefronts", "wavefronts", "shared-memory wavefronts of the line's accesses"),
    Column("shared_conflicts", "conflicts", "wavefronts", "shared-memory wavefronts above the fewest the access "
                                                          "needs: bank conflicts"),
    Column("lanes", "lanes", "lanes", "active lanes per executed instruction (measured) or per request "
                                      "(predicted)"),
)}


def shown_file(path: str | None) -> str | None:
    """A project file relative to the project (``kernels/reduction/gpu.py``), any other as given. A path of
    another checkout of the project (a reference made on another machine) is shown the same way."""
    if not path or not os.path.isabs(path):  # already shown (or a name such as '<string>')
        return path
    try:
        return Path(path).resolve().relative_to(ROOT).as_posix()
    except (ValueError, OSError):
        pass
    parts = Path(path).parts
    if "kernels" in parts:
        rest = Path(*parts[len(parts) - 1 - parts[::-1].index("kernels"):])
        if (ROOT / rest).is_file():
            return rest.as_posix()
    return path


def source_text(file: str, line: int) -> str:
    """The stripped text of a line of a file (shown or absolute), '' when it cannot be read."""
    path = file if os.path.isabs(file) else str(ROOT / file)
    return linecache.getline(path, line).strip()


@dataclass
class LineRow:
    """One source line: its text and its figures, {(kind, scope): {key: value}}."""

    file: str
    line: int
    source: str = ""
    figures: dict = field(default_factory=dict)

    def get(self, key: str, kind: str = MEASURED, scope: str = OWN, default=None):
        return self.figures.get((kind, scope), {}).get(key, default)

    def set(self, key: str, value, kind: str, scope: str = OWN) -> None:
        if kind not in KINDS or scope not in SCOPES:
            raise ValueError(f"kind {kind!r} / scope {scope!r}: one of {KINDS} / {SCOPES}")
        self.figures.setdefault((kind, scope), {})[key] = value

    def stalls(self, kind: str = MEASURED, scope: str = OWN) -> dict:
        """{reason: samples} at the line, most first."""
        found = {k[len(STALL):]: v for k, v in self.figures.get((kind, scope), {}).items() if k.startswith(STALL)}
        return dict(sorted(found.items(), key=lambda kv: -kv[1]))

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class KernelLines:
    """One kernel's lines and where their figures come from (see the module's doc)."""

    name: str
    rows: dict = field(default_factory=dict)  # (file, line) -> LineRow
    labels: dict = field(default_factory=dict)  # kind -> its source in words
    totals: dict = field(default_factory=dict)  # kind -> {quantity: {"lines": x, "all": y, "kernel": z}}
    notes: list = field(default_factory=list)

    def row(self, file: str, line: int) -> LineRow | None:
        """The line's row; ``file`` as shown or as the compiler names it (an absolute path)."""
        return self.rows.get((file, line)) or self.rows.get((shown_file(file), line))

    def add(self, file: str, line: int, source: str = "") -> LineRow:
        key = (shown_file(file), line)
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = LineRow(key[0], line, source)
        elif source and not row.source:
            row.source = source
        return row

    def kinds(self) -> list[str]:
        present = {kind for row in self.rows.values() for kind, _ in row.figures}
        return [k for k in KINDS if k in present]

    def columns(self, kind: str | None = None) -> list[tuple[str, str]]:
        """(key, kind) of every figure some line has, in COLUMNS' order, then the stall reasons."""
        present = {(key, k) for row in self.rows.values() for (k, _), figs in row.figures.items()
                   if kind in (None, k) for key in figs}
        order = list(COLUMNS) + sorted({key for key, _ in present if key not in COLUMNS})
        return [(key, k) for key in order for k in KINDS if (key, k) in present]

    def values(self, key: str, kind: str = MEASURED, scope: str = OWN) -> dict:
        """{(file, line): value} of one column: what a heat column shows. ``with_inlined`` falls back on a
        line's own figure where nothing is inlined at it."""
        out = {}
        for where, row in self.rows.items():
            value = row.get(key, kind, scope)
            if value is None and scope == WITH_INLINED:
                value = row.get(key, kind, OWN)
            if value is not None:
                out[where] = value
        return out

    def top(self, key: str, kind: str = MEASURED, count: int = 5, scope: str = OWN) -> list[LineRow]:
        """The lines with the largest values of a numeric column, largest first (ties by file and line)."""
        values = {w: v for w, v in self.values(key, kind, scope).items() if isinstance(v, (int, float)) and v > 0}
        order = sorted(values, key=lambda w: (-values[w], w))
        return [self.rows[w] for w in order[:count]]

    def total(self, key: str, kind: str = MEASURED) -> float:
        """A numeric column summed over the lines' own figures (every instruction counted once)."""
        return sum(v for v in self.values(key, kind, OWN).values() if isinstance(v, (int, float)))

    def merged(self, other: "KernelLines") -> "KernelLines":
        """This kernel's lines with ``other``'s figures added (``other`` wins a figure both have)."""
        out = KernelLines(self.name, {}, {**self.labels, **other.labels}, {**self.totals, **other.totals},
                          list(dict.fromkeys(self.notes + other.notes)))
        for source in (self, other):
            for row in source.rows.values():
                mine = out.add(row.file, row.line, row.source)
                for where, figs in row.figures.items():
                    mine.figures.setdefault(where, {}).update(figs)
        return out

    def sorted_rows(self) -> list[LineRow]:
        return [self.rows[k] for k in sorted(self.rows, key=lambda w: (str(w[0]), w[1]))]

    def to_dict(self) -> dict:
        return {"name": self.name, "labels": dict(self.labels), "totals": self.totals, "notes": list(self.notes),
                "lines": [{"file": r.file, "line": r.line, "source": r.source,
                           "figures": {f"{kind}/{scope}": figs for (kind, scope), figs in sorted(r.figures.items())}}
                          for r in self.sorted_rows() if r.figures]}  # a line without figures: no row

    @classmethod
    def from_dict(cls, d: dict) -> "KernelLines":
        """Read back :meth:`to_dict`'s form; ValueError (with what is wrong) for another shape."""
        if not isinstance(d, dict) or not isinstance(d.get("name"), str) or not isinstance(d.get("lines"), list):
            raise ValueError("a kernel's lines need a name and a list of lines")
        out = cls(d["name"], {}, dict(d.get("labels") or {}), dict(d.get("totals") or {}), list(d.get("notes") or []))
        for r in d["lines"]:
            if not isinstance(r, dict) or not isinstance(r.get("file"), str) or not isinstance(r.get("line"), int) \
                    or not isinstance(r.get("figures", {}), dict):
                raise ValueError(f"a line needs a file, a line number and figures: {str(r)[:80]}")
            row = out.rows.setdefault((r["file"], r["line"]), LineRow(r["file"], r["line"], str(r.get("source", ""))))
            for where, figs in r.get("figures", {}).items():
                kind, _, scope = str(where).partition("/")
                if kind not in KINDS or scope not in SCOPES or not isinstance(figs, dict):
                    raise ValueError(f"figures {where!r}: KIND/SCOPE with KIND one of {KINDS}, SCOPE one of {SCOPES}")
                row.figures[(kind, scope)] = {str(k): v for k, v in figs.items()
                                              if isinstance(v, (int, float, str)) and not isinstance(v, bool)}
        return out


def fill_sources(lines: KernelLines) -> KernelLines:
    """Each row's source text from its file where it has none (a table folded from ncu's PCs); returns it."""
    for row in lines.rows.values():
        if not row.source:
            row.source = source_text(row.file, row.line)
    return lines


def hottest(lines: KernelLines, key: str = "stall_samples", kind: str = MEASURED):
    """(the line with the most of ``key``, its share of the kernel's total), or None when no line has any."""
    top = lines.top(key, kind, 1)
    total = lines.total(key, kind)
    if not top or total <= 0:
        return None
    return top[0], top[0].get(key, kind) / total


# --- predicted figures: the access trace's lines (kernels/access), read by their attributes ---------------

_GLOBAL_OPS, _SHARED_OPS = ("ld", "st", "atom", "red"), ("ld", "st", "atom")


def from_access(kernel) -> KernelLines:
    """A traced kernel (kernels.access's KernelAccess: ``name``, ``lines`` with ``file``, ``line``, ``source``
    and ``metrics`` under Nsight Compute's names) as predicted figures: global sectors, shared wavefronts and
    bank conflicts, active lanes per request. The trace covers the traced blocks only (``kernel.scope``)."""
    out = KernelLines(kernel.name, labels={PREDICTED: f"predicted by the CUDA simulator's trace ({kernel.scope})"})
    for ln in kernel.lines:
        m = ln.metrics
        row = out.add(ln.file, ln.line, ln.source)
        sectors = sum(m.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum", 0) for op in _GLOBAL_OPS)
        wavefronts = sum(m.get(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum", 0) for op in _SHARED_OPS)
        conflicts = sum(m.get(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum", 0) for op in _SHARED_OPS)
        requests = sum(v for k, v in m.items() if k.startswith(("l1tex__t_requests_", "smsp__inst_executed_op_shared_"))
                       or k == "const_requests")
        lanes = sum(v for k, v in m.items() if k.startswith("lanes_"))
        for key, value, present in (("global_sectors", sectors, sectors), ("shared_wavefronts", wavefronts, wavefronts),
                                    ("shared_conflicts", conflicts, wavefronts), ("lanes", lanes / requests if requests
                                                                                   else None, requests)):
            if present:
                row.set(key, value, PREDICTED)
    return out
