"""Per-line figures as text: a kernel's top lines, one table per kind of figure (what `inspect --lines` and
`access --measured` print)."""

from __future__ import annotations

from kernels.counters.lines import COLUMNS, MEASURED, OWN, PREDICTED, REFERENCE, STATIC, WITH_INLINED, KernelLines

# (key, scope, heading, width): the columns each kind prints, when some line has them
_STATIC = (("sass_instructions", OWN, "SASS", 6), ("sass_instructions", WITH_INLINED, "+inlined", 9))
_MEASURED = (("stall_pct", OWN, "stall%", 7), ("stall_pct", WITH_INLINED, "+inlined", 9),
             ("top_stall", OWN, "top stall", 18), ("inst_executed", OWN, "instr exec", 11),
             ("global_sectors", OWN, "sectors", 9), ("global_sectors_excessive", OWN, "excess", 8),
             ("shared_wavefronts", OWN, "wavefr", 8), ("shared_conflicts", OWN, "confl", 8), ("lanes", OWN, "lanes", 6))
_PREDICTED = (("global_sectors", OWN, "sectors", 9), ("shared_wavefronts", OWN, "wavefr", 8),
              ("shared_conflicts", OWN, "confl", 8), ("lanes", OWN, "lanes", 6))
SORT = {STATIC: "sass_instructions", MEASURED: "stall_samples", REFERENCE: "stall_samples"}


def count(x) -> str:
    """'1.20M', '45.1k', '12', '3.5'; a word (a stall reason) as it is."""
    if isinstance(x, str):
        return x
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e4:
        return f"{x / 1e3:.1f}k"
    return f"{x:.1f}" if x != int(x) else f"{int(x)}"


def cell(key: str, value, none: str = "-") -> str:
    """A figure of column ``key`` as a table shows it: '62.0%', 'long_scoreboard', '1.20M'; ``none`` for none."""
    if value is None:
        return none
    if key == "stall_pct":
        return f"{value:.1f}%"
    if key == "lanes":
        return f"{value:.1f}"
    return count(value)


def top_rows(lines: KernelLines, kind: str, how_many: int):
    if kind == PREDICTED:  # what a line costs the memory system: its sectors and wavefronts
        cost = {w: (r.get("global_sectors", kind) or 0) + (r.get("shared_wavefronts", kind) or 0)
                for w, r in lines.rows.items()}
        return [lines.rows[w] for w in sorted((w for w in cost if cost[w] > 0), key=lambda w: (-cost[w], w))][:how_many]
    rows = lines.top(SORT[kind], kind, how_many)
    if not rows and kind != STATIC:
        rows = lines.top("inst_executed", kind, how_many)
    return rows


def coverage_text(lines: KernelLines, kind: str) -> str:
    """'99.9% of 1.20M instructions and 99.8% of 45.1k samples found their line (ncu's totals: ...)'."""
    totals = lines.totals.get(kind) or {}
    parts = []
    for key, words in (("inst_executed", "instructions executed"), ("samples", "warp-state samples")):
        t = totals.get(key)
        if not t or not t.get("all"):
            continue
        whole = t.get("kernel") or t["all"]
        parts.append(f"{100 * t['lines'] / whole:.1f}% of {count(whole)} {words}")
    return (", ".join(parts) + " are on a line") if parts else ""


def table(lines: KernelLines, kind: str, how_many: int = 8, notes: bool = True) -> str:
    """The kernel's top lines by the kind's main figure (static: SASS instructions; measured and reference:
    stall samples, else instructions executed), with the kind's columns some line has (and the kernel's
    notes, unless ``notes`` is False)."""
    rows = top_rows(lines, kind, how_many)
    head = f"kernel {lines.name}: {lines.labels.get(kind, kind)}"
    covered = coverage_text(lines, kind)
    if covered:
        head += f"\n  {covered}"
    for note in lines.notes if notes else ():
        head += f"\n  note: {note}"
    if not rows:
        return head + "\n  (no line has figures of this kind)"
    wanted = _STATIC if kind == STATIC else _PREDICTED if kind == PREDICTED else _MEASURED
    columns = [c for c in wanted if any(r.get(c[0], kind, c[1]) is not None for r in rows)]
    out = [head, "  " + " ".join(f"{h:>{w}}" if not COLUMNS[k].text else f"{h:<{w}}" for k, _, h, w in columns)
           + "  line"]
    for r in rows:
        cells = []
        for key, scope, _, width in columns:
            text = cell(key, r.get(key, kind, scope))
            cells.append(f"{text:<{width}}" if COLUMNS[key].text else f"{text:>{width}}")
        out.append("  " + " ".join(cells) + f"  {r.where}  {r.source}")
    return "\n".join(out)
