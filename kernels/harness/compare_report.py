"""A :class:`kernels.harness.compare.Comparison` as text: the terminal table, CSV and Markdown, with the
header lines that say what was compared with what, the counts and the rows that did not match."""

from __future__ import annotations

import csv
import io

from kernels.harness.compare import VERDICTS, Comparison, key_text

CSV_COLUMNS = ("target", "variant", "op", "dtype", "n", "block", "grid", "base_median_ms", "base_noise",
               "new_median_ms", "new_noise", "delta_pct", "p_value", "verdict", "reason",
               "base_pct_of_spec", "new_pct_of_spec", "base_pct_of_peak", "new_pct_of_peak")


def _side(result) -> str:
    d = result.device
    commit = (result.commit or "no commit")[:12] + (" (with changes)" if result.dirty else "")
    return f"{d.get('name', '?')} ({d.get('backend', '?')}), commit {commit}, {result.date}"


def header_lines(c: Comparison, base_name: str, new_name: str) -> list[str]:
    lines = [f"BASE {base_name}: {_side(c.base)}", f"NEW  {new_name}: {_side(c.new)}"]
    if c.cross_device:
        lines.append("devices differ: times are compared as measured, and beside them each row's percent of its "
                     "own device's spec bandwidth (%spec) and of its own measured copy peak (%peak)")
    if c.base.target != c.new.target:
        lines.append(f"targets differ ({c.base.target} / {c.new.target}): only rows of the same target match")
    return lines


def summary_lines(c: Comparison) -> list[str]:
    counts = c.counts()
    lines = [f"{len(c.pairs)} rows compared: " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS)]
    for label, keys in (("only in BASE", c.only_base), ("only in NEW", c.only_new)):
        if keys:
            lines.append(f"{len(keys)} rows {label}: " + "; ".join(key_text(k) for k in keys))
    for key, why in c.not_compared:
        lines.append(f"not compared: {key_text(key)}: {why}")
    return lines


def records(c: Comparison) -> list[dict]:
    """One dict per compared pair, in CSV_COLUMNS' order (numbers unrounded, '' for none)."""
    out = []
    for p in c.pairs:
        target, variant, op, dtype, n, block, grid = p.key[:7]
        bt, nt = p.base.timing, p.new.timing
        v = p.verdict
        out.append(dict(zip(CSV_COLUMNS, (
            target, variant, op, dtype, n, block, grid, bt.median_ms, _blank(bt.noise), nt.median_ms,
            _blank(nt.noise), _blank(v.delta_pct), _blank(v.p_value), v.name, v.reason,
            _blank(p.base.pct_of_spec), _blank(p.new.pct_of_spec), _blank(p.base.pct_of_peak),
            _blank(p.new.pct_of_peak)))))
    return out


def _blank(x):
    return "" if x is None else x


def _f(x, digits: int, suffix: str = "") -> str:
    return "-" if x in (None, "") else f"{x:.{digits}f}{suffix}"


def _cells(rec: dict, cross: bool) -> list[str]:
    cells = [rec["variant"], rec["op"], rec["dtype"], str(rec["n"]), str(rec["block"]), str(rec["grid"]),
             _f(rec["base_median_ms"], 4), _f(rec["base_noise"] and 100 * rec["base_noise"], 1, "%"),
             _f(rec["new_median_ms"], 4), _f(rec["new_noise"] and 100 * rec["new_noise"], 1, "%"),
             _f(rec["delta_pct"], 2, "%") if rec["delta_pct"] == "" or rec["delta_pct"] < 0 else
             "+" + _f(rec["delta_pct"], 2, "%"), "-" if rec["p_value"] == "" else f"{rec['p_value']:.2g}",
             rec["verdict"]]
    if cross:
        cells += [_f(rec[k], 1) for k in ("base_pct_of_spec", "new_pct_of_spec", "base_pct_of_peak", "new_pct_of_peak")]
    return cells + [rec["reason"]]


TITLES = ("variant", "op", "dtype", "n", "block", "grid", "base ms", "noise", "new ms", "noise", "delta", "p",
          "verdict")
CROSS_TITLES = ("base %spec", "new %spec", "base %peak", "new %peak")
TEXT_COLUMNS = {0, 1, 2, 12}  # left-aligned; the last column (why) too


def _titles(cross: bool) -> tuple:
    return TITLES + (CROSS_TITLES if cross else ()) + ("why",)


def table_text(c: Comparison, base_name: str, new_name: str) -> str:
    """The terminal report: header lines, an aligned table, the counts and what did not match."""
    cross = c.cross_device
    titles = _titles(cross)
    rows = [_cells(r, cross) for r in records(c)]
    widths = [max(len(t), *(len(r[i]) for r in rows)) if rows else len(t) for i, t in enumerate(titles)]
    left = TEXT_COLUMNS | {len(titles) - 1}

    def line(cells):
        return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = header_lines(c, base_name, new_name) + [line(titles)] + [line(r) for r in rows] + summary_lines(c)
    return "\n".join(out) + "\n"


def csv_text(c: Comparison) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for rec in records(c):
        w.writerow(rec)
    return buf.getvalue()


def markdown_text(c: Comparison, base_name: str, new_name: str) -> str:
    cross = c.cross_device
    titles = _titles(cross)
    left = TEXT_COLUMNS | {len(titles) - 1}
    lines = [f"- {x}" for x in header_lines(c, base_name, new_name)] + [""]
    lines.append("| " + " | ".join(titles) + " |")
    lines.append("|" + "|".join("---" if i in left else "---:" for i in range(len(titles))) + "|")
    for rec in records(c):
        cells = _cells(rec, cross)
        cells[12] = f"**{cells[12]}**" if cells[12] in ("FASTER", "SLOWER") else cells[12]
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    lines.append("")
    lines += [f"- {x}" for x in summary_lines(c)]
    return "\n".join(lines) + "\n"
