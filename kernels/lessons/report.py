"""A lesson's results as a text table (the CLI), CSV and a Markdown report with device, versions and date.
Columns measured on this machine and columns copied from a source are named so, and a run that was not
timed (no GPU) shows no timing at all."""

from __future__ import annotations

import csv
import io

from kernels.lessons import evidence, measured
from kernels.lessons.run import LessonRun, StepResult

CSV_COLUMNS = (
    "lesson", "source", "n", "step", "label", "variant", "backend", "device", "measured", "verified",
    "median_ms", "gbps", "pct_of_spec", "pct_of_copy", "step_speedup", "cumulative_speedup",
    "published_ms", "published_gbps", "published_step", "published_cumulative", "published_device",
    "evidence_arch", "evidence", *measured.CSV_COLUMNS, "verdict", "date", "app_version", "numba_version", "numba_cuda_version",
)


def _f(x, digits: int = 2) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def _cell(x, width: int, digits: int = 2) -> str:
    return f"{_f(x, digits) or '-':>{width}}"


def header_lines(run: LessonRun) -> list[str]:
    lesson = run.lesson
    lines = [f"lesson: {lesson.title}", f"backend: {run.backend}; {run.how}"]
    if run.peak is not None and run.peak.gbps:
        lines.append(f"copy bandwidth: {run.peak.gbps:.1f} GB/s measured with a {run.peak.how}; %copy is against it")
    if lesson.source and has_published(lesson):
        published = f" ({lesson.published_device})" if lesson.published_device else ""
        lines.append(f"paper columns: {lesson.source}{published}; printed figures, not measured here")
    elif lesson.source:
        lines.append(f"source: {lesson.source}")
    lines.append(f"evidence: static, from the kernel inspector's compile for {run.arch}"
                 + (f" ({run.evidence_note})" if run.evidence_note else "") + "; " + counters_text(run))
    return lines


def counters_text(run: LessonRun) -> str:
    if run.counters:
        return f"measured counters read by {run.counters}, each step's kernels once, before the timed runs"
    return ("measured counters (bank conflicts, branch efficiency, DRAM %) need a profiler and are not shown "
            "(--counters reads them with Nsight Compute on a GPU)")


def evidence_text(run: LessonRun, r: StepResult) -> str:
    """The static facts, then the measured figures (or why a step asked for counters has none)."""
    parts = []
    if r.facts:
        parts.append(f"({run.arch}): {evidence.describe(r.facts, run.lesson.evidence)}")
    if r.counters is not None:
        parts.append(f"measured: {measured.describe(r.counters)}")
    elif r.counters_note:
        parts.append(f"no counters: {r.counters_note}")
    return "; ".join(parts)


def has_published(lesson) -> bool:
    return any(s.published is not None for s in lesson.steps)


def table_header(run: LessonRun) -> str:
    here = "this GPU" if run.measured else "(no GPU)"
    line = (f"{'step':<44} {'verified':>8}  {here + ' ms':>12} {'GB/s':>8} {'%spec':>6} {'%copy':>6} {'step x':>7} "
            f"{'cum x':>7}")
    if has_published(run.lesson):
        line += f"  {'paper ms':>8} {'paper GB/s':>10} {'step x':>6} {'cum x':>6}"
    return line


def table_published(step) -> str:
    """The paper's four cells of a step in the text table."""
    p = step.published
    return (f"{_cell(p and p.time_ms, 8, 3)} {_cell(p and p.gbps, 10, 3)} {_cell(p and p.step, 6)} "
            f"{_cell(p and p.cumulative, 6)}")


def published_cells(step) -> list[str]:
    """The paper's four cells of a step in the Markdown table."""
    p = step.published
    return [_f(p and p.time_ms, 3), _f(p and p.gbps, 3), _x(p and p.step), _x(p and p.cumulative)]


def table_line(r: StepResult, published: bool = True) -> str:
    line = (f"{r.step.title[:44]:<44} {r.verified:>8}  {_cell(r.time_ms, 12, 4)} {_cell(r.gbps, 8, 1)} "
            f"{_cell(r.pct_of_spec, 6, 1)} {_cell(r.pct_of_copy, 6, 1)} {_cell(r.step_speedup, 7)} {_cell(r.cumulative, 7)}")
    if published:
        line += "  " + table_published(r.step)
    return line


def explanation_lines(run: LessonRun, n: int) -> list[str]:
    lines = []
    for r in run.at(n):
        lines.append(f"{r.step.title}: {r.step.idea}")
        shown = evidence_text(run, r)
        if shown:
            lines.append(f"    evidence {shown}")
        lines.append(f"    -> {r.verdict}")
    return lines


def text(run: LessonRun, header_extra=(), tables=None) -> str:
    """The CLI's text; ``tables``: lines in place of this run's own tables (kernels.lessons.report_refs)."""
    out = header_lines(run) + list(header_extra)
    if tables is not None:
        return "\n".join(out + tables) + "\n"
    for n in run.sizes:
        out += ["", f"n = {n:,}", table_header(run)] + [table_line(r, has_published(run.lesson)) for r in run.at(n)]
        out += [""]
        out += explanation_lines(run, n)
    return "\n".join(out) + "\n"


THIS_MACHINE = "this machine"


def csv_rows(run: LessonRun, source: str = THIS_MACHINE) -> list[dict]:
    """One row per step and size; ``source``: where the figures were measured (a reference names its device)."""
    rows = []
    for r in run.results:
        p = r.step.published
        rows.append({
            "lesson": run.lesson.name, "source": source, "n": r.n, "step": r.index + 1, "label": r.step.name,
            "variant": r.step.variant, "backend": run.backend, "device": run.device,
            "measured": ("yes" if source == THIS_MACHINE else "reference") if r.measured else "no",
            "verified": r.verified, "median_ms": _f(r.time_ms, 6), "gbps": _f(r.gbps, 3),
            "pct_of_spec": _f(r.pct_of_spec, 1), "pct_of_copy": _f(r.pct_of_copy, 1),
            "step_speedup": _f(r.step_speedup, 3), "cumulative_speedup": _f(r.cumulative, 3),
            "published_ms": _f(p and p.time_ms, 3), "published_gbps": _f(p and p.gbps, 3),
            "published_step": _f(p and p.step), "published_cumulative": _f(p and p.cumulative),
            "published_device": run.lesson.published_device if p else "",
            "evidence_arch": run.arch if r.facts else "",
            "evidence": "; ".join(f"{k}={v}" for k, v in r.facts.items() if k in run.lesson.evidence),
            **measured.csv_cells(r.counters, r.counters_note),
            "verdict": r.verdict, "date": run.date, "app_version": run.versions["app"],
            "numba_version": run.versions["numba"], "numba_cuda_version": run.versions["numba_cuda"],
        })
    return rows


def csv_text(run: LessonRun, extra_rows=()) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(csv_rows(run))
    w.writerows(extra_rows)
    return buf.getvalue()


def _md(x) -> str:
    return str(x).replace("|", "\\|")


def markdown(run: LessonRun, header_extra=(), tables=None) -> str:
    """The Markdown report; ``tables``: lines in place of this run's own tables (kernels.lessons.report_refs)."""
    lesson = run.lesson
    v = run.versions
    out = [f"# {lesson.title}", "", lesson.summary + ".", "",
           f"- device: {run.device} ({run.backend})", f"- how: {run.how}",
           f"- date: {run.date}",
           f"- versions: raytracer-app {v['app']}, numba {v['numba']}, numba-cuda {v['numba_cuda']}",
           f"- evidence: static, the kernel inspector's compile for {run.arch}"
           + (f" ({run.evidence_note})" if run.evidence_note else "") + "; " + counters_text(run)]
    if run.peak is not None and run.peak.gbps:
        out.append(f"- copy bandwidth: {run.peak.gbps:.1f} GB/s ({run.peak.how})")
    if lesson.source and has_published(lesson):
        out.append(f"- published columns: {lesson.source}"
                   + (f", {lesson.published_device}" if lesson.published_device else "") + "; not measured here")
    elif lesson.source:
        out.append(f"- source: {lesson.source}")
    out += [f"- {line}" for line in header_extra]
    paper = has_published(lesson)
    if tables is not None:
        return "\n".join(out + tables) + "\n"
    here = "this GPU" if run.measured else "(no GPU: not timed)"
    columns = ["step", "verified", f"{here} ms", "GB/s", "% spec", "% copy", "step", "cumulative"]
    columns += ["paper ms", "paper GB/s", "paper step", "paper cumulative"] if paper else []
    columns += list(MD_COUNTERS) if run.counters else []
    for n in run.sizes:
        out += ["", f"## n = {n:,}", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for r in run.at(n):
            cells = [r.step.title, r.verified, _f(r.time_ms, 4), _f(r.gbps, 1), _f(r.pct_of_spec, 1),
                     _f(r.pct_of_copy, 1), _x(r.step_speedup), _x(r.cumulative)]
            if paper:
                cells += published_cells(r.step)
            if run.counters:
                got = measured.csv_cells(r.counters, "")
                cells += [got["dram_pct"], got["achieved_occupancy_pct"], got["bank_conflicts_per_request"],
                          got["instructions"], got["branch_efficiency_pct"], got["top_stall"]]
            out.append("| " + " | ".join(_md(c) or "" for c in cells) + " |")
        out += ["", "### Steps", ""]
        for r in run.at(n):
            shown = evidence_text(run, r)
            out.append(f"- **{_md(r.step.title)}** ({r.step.variant}): {r.step.idea}"
                       + (f" Evidence {_md(shown)}." if shown else "") + f" *{_md(r.verdict)}.*")
    return "\n".join(out) + "\n"


# the Markdown table's measured columns, when the run read counters (the CSV's, shorter)
MD_COUNTERS = ("DRAM % of peak", "achieved occupancy %", "bank conflicts / request", "executed instructions",
               "branch efficiency %", "top stall")


def _x(x) -> str:
    return "" if x is None else f"{x:.2f}x"


def write(path, content: str, option: str, others=()):
    """Write a report through the one output writer (atomic; refuses links and non-regular files);
    ``others``: (option, path) pairs of the run's other files, never written over."""
    from kernels.io.writer import write_output

    return write_output(path, content, option, others)
