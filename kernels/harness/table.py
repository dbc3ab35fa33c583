"""Rows as text: the CSV (written through the one output writer) and the terminal table's header and lines."""

from __future__ import annotations

import csv
import io
from typing import Iterable

from kernels.harness.rows import CSV_COLUMNS, Row
from kernels.timing import Timing


def csv_text(rows: Iterable[Row]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(r.as_dict())
    return buf.getvalue()


def write_csv(rows: Iterable[Row], path, option: str = "--csv", inputs=()):
    """Write rows to ``path`` through the one output writer (atomic: no partial file; an existing
    file is replaced). Returns the file written."""
    from kernels.io.writer import write_output

    return write_output(path, csv_text(rows), option, inputs)


def table_header(unit: str = "GB/s") -> str:
    """The table's header; ``unit`` the algorithm's figure of merit: GB/s (with %peak and %spec against the
    copy bandwidth), or its own (a hash table's G ops/s, in place of those three) and %ceil, the percent of
    the ceiling its rows are judged against (kernels/harness/ceilings.py; %peak is that for GB/s)."""
    rates = f"{'GB/s':>9} {'%peak':>6} {'%spec':>6}" if unit == "GB/s" else f"{unit:>11} {'%ceil':>6}"
    return f"{'variant':<24} {'n':>11} {'block':>7} {'grid':>7} {'median ms':>10} {'min':>9} {'max':>9} {rates} {'noise':>6}  verified"


def table_line(r: Row, unit: str = "GB/s") -> str:
    t = r.timing
    f = lambda x, w, p: f"{x:>{w}.{p}f}" if x is not None else f"{'-':>{w}}"  # noqa: E731
    own = unit != "GB/s"
    rates = (f"{(f'{r.rate:.4g}' if r.rate is not None else '-'):>11} {f(r.pct_of_ceiling, 6, 1)}" if own else
             f"{f(r.gbps, 9, 1)} {f(r.pct_of_peak, 6, 1)} {f(r.pct_of_spec, 6, 1)}")
    line = (
        f"{r.variant:<24} {r.n:>11} {str(r.block):>7} {str(r.grid):>7} {f(t and t.median_ms, 10, 4)} "
        f"{f(t and t.min_ms, 9, 4)} {f(t and t.max_ms, 9, 4)} {rates} "
        f"{_noise_cell(t)}  {r.verified}"
    )
    if r.cold_timing is not None:
        line += f"  cold {r.cold_timing.median_ms:.4f} ms"
    if r.cache_resident == "yes":
        line += "  [input fits in cache]"
    if r.note:
        line += f"  ({r.note})"
    if r.clocks is not None and r.clocks.throttled:
        line += f"  [THROTTLED: {r.clocks.reason_text()}]"
    if r.rate is not None and not own:
        line += f"  {rate_text(r.rate, r.rate_unit)}"
    if r.figures:
        line += "  " + figures_text(r.figures)
    return line


FIGURE_WORDS = {"rays": "rays", "tests": "tests", "all_tests": "tests without culling", "iterations": "iterations"}


def figures_text(figures: dict) -> str:
    """A render row's work per second: 'rays 2.41 G/s, tests 50.1 G/s, tests without culling 96.4 G/s'."""
    return ", ".join(f"{FIGURE_WORDS.get(k, k)} {v / 1e9:.3g} G/s" for k, v in figures.items() if v is not None)


def ceiling_lines(figures) -> list[str]:
    """The ceilings measured for a run's rows, a line each: 'ceiling sector-reads: 20.1 G sectors/s (how)'."""
    return [f"ceiling {f.text()}" for f in figures]


def _noise_cell(t: Timing | None) -> str:
    """The noise column: the repeats' relative spread in percent, '-' without a timing."""
    if t is None or t.noise is None:
        return f"{'-':>6}"
    return f"{100 * t.noise:>5.1f}%"


def rate_text(rate: float, unit: str) -> str:
    """E.g. '412.5 M inserts/s'; small rates keep their digits."""
    return f"{rate:.1f} {unit}" if rate >= 1 else f"{rate:.4g} {unit}"
