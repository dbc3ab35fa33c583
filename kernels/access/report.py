"""A traced run as text: per kernel its configuration, the blocks traced, each access kind's requests and
per-request figures, then the lines that cost the memory system most with their source; with measured
figures, both side by side with the difference."""

from __future__ import annotations

from kernels.access import model as M
from kernels.access.measured import compare, why


def _ratio_text(r: M.Ratio) -> str:
    parts = []
    if r.sectors_per_request is not None:
        parts.append(f"{r.sectors_per_request:.2f} sectors/request")
    if r.wavefronts_per_request is not None:
        parts.append(f"{r.wavefronts_per_request:.2f} wavefronts/request, {r.conflicts_per_request:.2f} "
                     "conflicts/request")
    if r.addresses_per_request is not None:
        parts.append(f"{r.addresses_per_request:.2f} addresses/request (constant-cache passes)")
    parts.append(f"{r.lanes_per_request:.1f} active lanes/request")
    return f"{r.label}: {r.requests} requests, " + ", ".join(parts)


def run_header(result: M.AccessResult) -> str:
    what = [f"n={result.n}"] if result.n is not None else []
    what += [f"{k} {'x'.join(map(str, v)) if isinstance(v, (tuple, list)) else v}" for k, v in result.options.items()]
    launch = result.launch
    block = "x".join(map(str, launch["block"])) if isinstance(launch.get("block"), list) else launch.get("block")
    what.append(f"block {block}" + (f", grid {launch['grid']}" if launch.get("grid") else ""))
    if launch.get("items_per_thread"):
        what.append(f"{launch['items_per_thread']} items per thread")
    source = f" ({result.variant_file})" if result.variant_file else ""
    return (f"access {result.target} {result.variant}{source}: {', '.join(what)}; traced in the CUDA simulator in "
            f"{result.seconds:.1f} s")


def _blocks_text(kernel: M.KernelAccess) -> str:
    if kernel.all_blocks:
        return f"all {kernel.blocks_total} blocks traced"
    return (f"{len(kernel.sampled)} of {kernel.blocks_total} blocks traced ({_ranges(kernel.sampled)}): totals for "
            "those blocks only")


def _ranges(numbers) -> str:
    out, start, prev = [], None, None
    for x in list(numbers) + [None]:
        if start is not None and (x is None or x != prev + 1):
            out.append(str(start) if start == prev else f"{start}-{prev}")
            start = None
        if x is not None and start is None:
            start = x
        prev = x
    return ", ".join(out)


def _dims(d) -> str:
    used = [str(v) for v in d]
    while len(used) > 1 and used[-1] == "1":
        used.pop()
    return "x".join(used)


def format_kernel(kernel: M.KernelAccess, lines: int = 5, measured: dict | None = None, device: str = "") -> list[str]:
    shared = f", {kernel.dynamic_shared} B dynamic shared" if kernel.dynamic_shared else ""
    launch = f"grid {_dims(kernel.grid)}, block {_dims(kernel.block)}{shared}"
    out = [f"kernel {kernel.name}: {launch}; {_blocks_text(kernel)}"]
    out += [f"  {_ratio_text(r)}" for r in kernel.ratios()] or ["  no global, shared or constant access"]
    costly = kernel.costliest(lines)
    if costly:
        out.append("  lines that cost most (global sectors + shared wavefronts + constant passes):")
        first_at: dict[str, int] = {}  # a note is written out once per kernel, at the first line that has it
        for line in costly:
            out.append(f"    {line.file}:{line.line}  {line.source}")
            out += [f"        {_ratio_text(r)}" for r in line.ratios()]
            for n in line.notes:
                out.append(f"        note: as for line {first_at[n]}" if n in first_at else f"        note: {n}")
                first_at.setdefault(n, line.line)
    out += [f"  note: {n}" for n in kernel.notes]
    if measured is not None:
        out += _measured_lines(kernel, measured, device)
    return out


def _number(x, ratio: bool) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" if ratio else f"{x:,.0f}"


def _measured_lines(kernel: M.KernelAccess, values, device: str) -> list[str]:
    if values is None or not values:
        return ["  measured: Nsight Compute reported no such kernel in this variant's run"]
    rows = compare(kernel, values)
    width = max([len(r.quantity) for r in rows] + [8])
    out = [f"  measured by Nsight Compute{' on ' + device if device else ''} (same launch, every block):",
           f"    {'quantity':<{width}}  {'predicted':>10}  {'measured':>10}  {'difference':>10}"]
    for r in rows:
        verdict = "" if r.agrees is None else ("  agrees" if r.agrees else "  DIFFERS")
        diff = r.difference
        diff_text = "-" if diff is None else (f"{diff:+.2f}" if r.judged else f"{diff:+,.0f}")
        predicted, measured = _number(r.predicted, r.judged), _number(r.measured, r.judged)
        out.append(f"    {r.quantity:<{width}}  {predicted:>10}  {measured:>10}  {diff_text:>10}{verdict}")
    if any(r.agrees is False for r in rows):
        out += [f"    why it may differ: {n}" for n in why(kernel)] or \
               ["    why it may differ: the compiler keeps or merges accesses the source makes (see the note below)"]
    return out


def format_result(result: M.AccessResult, lines: int = 5, measured: dict | None = None, device: str = "") -> str:
    """The whole run; ``measured``: {kernel label: {metric: value}} from :func:`kernels.access.measured.measure`."""
    out = [run_header(result)]
    for kernel in result.kernels:
        out.append("")
        out += format_kernel(kernel, lines, None if measured is None else measured.get(kernel.name, {}), device)
    if measured is not None:
        extra = sorted(set(measured) - {k.name for k in result.kernels})
        if extra:
            out.append(f"\nmeasured but not traced (launched on the GPU only): {', '.join(extra)}")
    out.append("")
    out += [f"note: {n}" for n in result.notes]
    return "\n".join(out)
