"""A lesson run without a GPU, shown with the project's reference results (:mod:`.references`): one table per
size the references were measured at, with this machine's verification (in the simulator, at its own small
size), the paper's columns and, per reference device, its measured columns headed with the device's short
name ("H100 ms") and explained in the header as "reference, measured on ... (not this machine)"."""

from __future__ import annotations

from kernels.lessons import measured, references as refs, report
from kernels.lessons.report import _md, _x, evidence_text, published_cells, table_published

# the reference columns per device: (heading, StepResult attribute, digits, width)
TEXT_COLUMNS = (("ms", "time_ms", 4, 10), ("GB/s", "gbps", 1, 8), ("step x", "step_speedup", 2, 7),
                ("cum x", "cumulative", 2, 7))
MD_COLUMNS = (("ms", "time_ms", 4), ("GB/s", "gbps", 1), ("% spec", "pct_of_spec", 1), ("% copy", "pct_of_copy", 1),
              ("step", "step_speedup", None), ("cumulative", "cumulative", None))


def shown(run, references) -> bool:
    """References are shown in place of measured columns only when this machine measured nothing."""
    return bool(references) and not run.measured


def header_lines(references) -> list[str]:
    return [f"{ref.label} columns: {ref.heading()} ({ref.path.name})" for ref in references]


def verified(run, index: int) -> str:
    """This machine's verification of step ``index`` (every size it ran at; one word when they agree)."""
    got = list(dict.fromkeys(r.verified for r in run.results if r.index == index))
    return "/".join(got) if got else "-"


def _value(ref, n: int, index: int, attr: str):
    r = ref.step(n, index)
    return getattr(r, attr) if r is not None else None


def _cell(x, width: int, digits: int) -> str:
    return f"{'-' if x is None else f'{x:.{digits}f}':>{width}}"


def text_tables(run, references, paper: bool) -> list[str]:
    here = ", ".join(f"{n:,}" for n in run.sizes)
    out = []
    for n in refs.sizes(references):
        names = ", ".join(r.label for r in references if any(x.n == n for x in r.run.results))
        out += ["", f"n = {n:,}: {names} columns are references (not this machine); this machine verified each "
                    f"step at n = {here} in the CUDA simulator"]
        line = f"{'step':<44} {'verified':>8}"
        if paper:
            line += f"  {'paper ms':>8} {'paper GB/s':>10} {'step x':>6} {'cum x':>6}"
        for ref in references:
            line += "  " + " ".join(f"{ref.label + ' ' + h:>{max(w, len(ref.label) + 1 + len(h))}}"
                                    for h, _, _, w in TEXT_COLUMNS)
        out.append(line)
        for i, step in enumerate(run.lesson.steps):
            line = f"{step.title[:44]:<44} {verified(run, i):>8}"
            if paper:
                line += "  " + table_published(step)
            for ref in references:
                line += "  " + " ".join(_cell(_value(ref, n, i, a), max(w, len(ref.label) + 1 + len(h)), d)
                                        for h, a, d, w in TEXT_COLUMNS)
            out.append(line)
        out += [""] + explanation_lines(run, references, n)
    return out


def reference_evidence(references, n: int, index: int) -> list[str]:
    """The references' measured counters of a step, each labelled with its device."""
    out = []
    for ref in references:
        r = ref.step(n, index)
        if r is not None and r.counters is not None:
            out.append(f"{ref.label} reference, measured: {measured.describe(r.counters)}")
    return out


def explanation_lines(run, references, n: int) -> list[str]:
    lines = []
    for i, step in enumerate(run.lesson.steps):
        lines.append(f"{step.title}: {step.idea}")
        here = next((r for r in run.results if r.index == i), None)
        shown_here = evidence_text(run, here) if here is not None else ""
        if shown_here:
            lines.append(f"    evidence {shown_here}")
        for text in reference_evidence(references, n, i):
            lines.append(f"    evidence ({text})")
        if here is not None:
            lines.append(f"    -> {here.verdict}")
        speedups = refs.cited(references, n, i)
        if speedups:
            lines.append(f"    -> references (not this machine): {speedups}")
    return lines


def markdown_tables(run, references, paper: bool) -> list[str]:
    here = ", ".join(f"{n:,}" for n in run.sizes)
    out = []
    for n in refs.sizes(references):
        columns = ["step", "verified here (simulator)"]
        columns += ["paper ms", "paper GB/s", "paper step", "paper cumulative"] if paper else []
        for ref in references:
            columns += [f"{ref.label} {h}" for h, _, _ in MD_COLUMNS]
        out += ["", f"## n = {n:,}", "", f"The {', '.join(r.label for r in references)} columns are references "
                f"measured at n = {n:,}, not on this machine; this machine verified each step at n = {here} in the "
                "CUDA simulator.", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for i, step in enumerate(run.lesson.steps):
            cells = [step.title, verified(run, i)] + (published_cells(step) if paper else [])
            for ref in references:
                for _, attr, digits in MD_COLUMNS:
                    x = _value(ref, n, i, attr)
                    cells.append(_x(x) if digits is None else "" if x is None else f"{x:.{digits}f}")
            out.append("| " + " | ".join(_md(c) for c in cells) + " |")
        out += ["", "### Steps", ""]
        for i, step in enumerate(run.lesson.steps):
            here_r = next((r for r in run.results if r.index == i), None)
            shown_here = evidence_text(run, here_r) if here_r is not None else ""
            extra = "; ".join(reference_evidence(references, n, i))
            speedups = refs.cited(references, n, i)
            out.append(f"- **{_md(step.title)}** ({step.variant}): {step.idea}"
                       + (f" Evidence {_md(shown_here)}." if shown_here else "")
                       + (f" Evidence ({_md(extra)})." if extra else "")
                       + (f" *{_md(here_r.verdict)}.*" if here_r is not None else "")
                       + (f" References (not this machine): {_md(speedups)}." if speedups else ""))
    return out


def csv_rows(references) -> list[dict]:
    """Each reference's steps as CSV rows, their ``source`` naming the device and date."""
    out = []
    for ref in references:
        out += report.csv_rows(ref.run, f"{ref.heading()} from {ref.path.name}")
    return out


# --- the report's three forms, with the references where they are shown -----------------------------------


def text(run, references=()) -> str:
    if not shown(run, references):
        return report.text(run)
    return report.text(run, header_lines(references), text_tables(run, references, report.has_published(run.lesson)))


def markdown(run, references=()) -> str:
    if not shown(run, references):
        return report.markdown(run)
    return report.markdown(run, header_lines(references),
                           markdown_tables(run, references, report.has_published(run.lesson)))


def csv_text(run, references=()) -> str:
    return report.csv_text(run, csv_rows(references) if shown(run, references) else ())
