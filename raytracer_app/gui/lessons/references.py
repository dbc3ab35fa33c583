"""What the Lessons place shows of the project's reference results without a GPU (kernels.lessons.references):
per shipped device three columns ("H100 ms", "H100 step x", "H100 cum x") at the references' first size,
headed and explained as "reference, measured on ... (not this machine)", a cumulative-speedup series per
device for the chart, and the lines the explanation adds. No Qt: the panel asks this module."""

from __future__ import annotations

from kernels.lessons import measured, references as refs

# per device: (heading after the device's short name, StepResult attribute, how the cell is written)
COLUMNS = (("ms", "time_ms", lambda x: f"{x:.4f}"), ("step x", "step_speedup", lambda x: f"{x:.2f}x"),
           ("cum x", "cumulative", lambda x: f"{x:.2f}x"))


def size(shown: list) -> int | None:
    """The size the columns show: the references' first (the lesson's first size on a GPU)."""
    sizes = refs.sizes(shown)
    return sizes[0] if sizes else None


def headings(shown: list) -> list[tuple[str, str]]:
    """(column heading, its tooltip) per reference column."""
    n = size(shown)
    return [(f"{ref.label} {h}", f"{ref.heading()}, at n = {n:,} ({ref.path.name})")
            for ref in shown for h, _, _ in COLUMNS]


def cells(shown: list, index: int) -> list[str]:
    """The reference columns' cells of step ``index`` ('' where a reference has no figure)."""
    n = size(shown)
    out = []
    for ref in shown:
        r = ref.step(n, index)
        for _, attr, fmt in COLUMNS:
            x = getattr(r, attr) if r is not None else None
            out.append("" if x is None else fmt(x))
    return out


def series(shown: list) -> list[tuple[str, list[tuple[int, float]]]]:
    """(legend name, [(step number, cumulative speedup)]) per reference device, for the chart."""
    n = size(shown)
    out = []
    for ref in shown:
        points = [(r.index + 1, r.cumulative) for r in sorted(ref.run.results, key=lambda r: r.index)
                  if r.n == n and r.cumulative]
        if points:
            out.append((f"{ref.label} reference (not this machine), n={n:,}", points))
    return out


def summary(shown: list) -> str:
    """One sentence for the panel's summary: which columns are references and from where."""
    if not shown:
        return ""
    n = size(shown)
    return (" The " + ", ".join(f"{ref.label} columns are a {ref.heading()}" for ref in shown)
            + f", at n = {n:,}.")


def explanation(shown: list, index: int) -> list[str]:
    """The references' step speedups and measured counters of step ``index``, each labelled with its device."""
    n = size(shown)
    out = []
    cited = refs.cited(shown, n, index)
    if cited:
        out.append(f"References (not this machine, n = {n:,}): {cited}")
    for ref in shown:
        r = ref.step(n, index)
        if r is not None and r.counters is not None:
            out.append(f"{ref.label} reference, measured: {measured.describe(r.counters)}")
    return out
