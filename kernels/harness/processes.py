"""One benchmark run spread over several processes (``bench --processes P``): each process takes its share
of the repeats, and the rows of all of them are joined into one row per variant, its samples kept by
process (``Timing.processes``).

Why: on a GPU the median of a kernel of a few microseconds differs by 1-2% from one process to the next
and stays put within a process (docs/results.md). A run in one process sees one such state, so its samples
cannot say how much the next run will differ; the medians of several processes can, and ``compare`` judges
them (:func:`kernels.harness.compare.timing_verdict`)."""

from __future__ import annotations

from kernels.errors import InputError
from kernels.harness import bench, compare
from kernels.harness.rounds import split_repeats

MAX_PROCESSES = 100


def check_processes(processes: int, repeats: int, rounds: int = 1,
                    names=("--processes", "--repeats", "--rounds")) -> list[int]:
    """The repeats each process takes (as even as possible); InputError (naming the fields as ``names``)
    when ``processes`` is not a whole number from 1 to MAX_PROCESSES, exceeds the repeats, or leaves a
    process fewer repeats than rounds."""
    p, r, k = names
    if not isinstance(processes, int) or isinstance(processes, bool) or not 1 <= processes <= MAX_PROCESSES:
        raise InputError(f"{p} {processes!r} must be a whole number from 1 to {MAX_PROCESSES}")
    if processes > repeats:
        raise InputError(f"{p} {processes} is more than {r} {repeats}: every process takes at least one repeat")
    shares = split_repeats(repeats, processes)
    if rounds > min(shares):
        raise InputError(f"{k} {rounds} is more than the {min(shares)} repeats each of {processes} processes "
                         f"takes; with {p}, rounds are counted within each process")
    return shares


def merge_processes(runs: list[list], peak_gbps: float | None = None) -> list:
    """One list of rows from the rows of each process (the same rows in the same order, else InputError),
    each joined by :func:`kernels.harness.bench.join_rows` with the split by process kept, its notes
    joined, and its rates following the joined median (% of peak against ``peak_gbps`` when given)."""
    if not runs:
        return []
    keys = [compare.row_key("", r) for r in runs[0]]
    for i, rows in enumerate(runs[1:], start=2):
        if [compare.row_key("", r) for r in rows] != keys:
            raise InputError(f"process {i} ran other rows than process 1; its results cannot be joined")
    return [_merge_row([rows[j] for rows in runs], peak_gbps) for j in range(len(keys))]


def _merge_row(parts: list, peak_gbps: float | None):
    row = bench.join_rows(parts, by_process=True)
    if not row.ok:
        return row
    first = parts[0]
    row.note = "; ".join(dict.fromkeys(r.note for r in parts if r.note))
    # every rate is work over the median time (no problem here to recompute it from): scale the first
    # process's by its median over the joined one
    scale = first.timing.median_ms / row.timing.median_ms if row.timing.median_ms > 0 else None
    for name in ("gbps", "rate", "pct_of_spec", "pct_of_ceiling"):
        value = getattr(first, name)
        setattr(row, name, value * scale if value is not None and scale is not None else None)
    if first.figures and scale is not None:
        row.figures = {k: v * scale for k, v in first.figures.items()}
    row.pct_of_peak = 100.0 * row.gbps / peak_gbps if row.gbps is not None and peak_gbps else None
    return row
