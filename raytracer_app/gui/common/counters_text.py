"""One variant's Nsight Compute counters as text: the table's line(s) and the guided analysis, for a benchmark
panel's tooltip and the Inspector's Measured tab alike."""

from __future__ import annotations


def counters_tooltip(variant: str, measured, n: int = 0) -> str:
    """The counters table line(s) and the guided analysis of one variant, for a tooltip or the Measured tab."""
    from kernels.counters.columns import table_header, table_lines
    from kernels.counters.rules import Facts, analyse

    if isinstance(measured, str):
        return f"{variant}: no counters ({measured})"
    lines = [table_header(), *table_lines(variant, measured)]
    lines += [f"- {s}" for s in analyse(Facts(measured, n=n))]
    return "\n".join(lines)
