"""Nsight Compute's per-instruction figures folded onto source lines (pure: tested on hand-made tables).

ncu's source counters (sections SourceCounters and WarpStateStats) give each figure per program counter:
warp-state samples by stall reason (PC sampling), instructions executed, the global sectors and shared
wavefronts an instruction's accesses needed and the fewest they could have needed. The report child
(:mod:`kernels.counters.report`) reads them with NVIDIA's report module into a plain table, one row per PC::

    {pc: {"file": str | None, "line": int | None, "sass": "LDG.E R2, desc[UR4][R2.64]",
          "inlined_at": [[file, line], ...],           # optional: the call sites, innermost first
          "inst_executed": 1024.0, "smsp__pcsamp_warps_issue_stalled_long_scoreboard": 75.0, ...}}

:func:`fold` sums it per line: a row's ``file``/``line`` is the line the instruction belongs to (a device
function's own line for its inlined code), and where the row knows the call sites it was inlined at, each
of those lines' ``with_inlined`` figures count it too. It also keeps, per quantity, the sum over the located
rows, over all rows, and the kernel's own total as ncu reported it, so a reader sees how much found a line."""

from __future__ import annotations

from kernels.counters.lines import MEASURED, OWN, STALL, WITH_INLINED, KernelLines

RESERVED = ("file", "line", "sass", "inlined_at")
INSTRUCTIONS = "inst_executed"
THREAD_INSTRUCTIONS = "thread_inst_executed"
SAMPLE_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
SAMPLE_COUNT = "smsp__pcsamp_sample_count"
SECTORS, SECTORS_IDEAL = "memory_l2_theoretical_sectors_global", "memory_l2_theoretical_sectors_global_ideal"
WAVEFRONTS, WAVEFRONTS_IDEAL = "memory_l1_wavefronts_shared", "memory_l1_wavefronts_shared_ideal"
PER_PC = (INSTRUCTIONS, THREAD_INSTRUCTIONS, SAMPLE_COUNT, SECTORS, SECTORS_IDEAL, WAVEFRONTS, WAVEFRONTS_IDEAL)
NOT_STALLS = ("selected", "not_selected")  # issuing, or eligible and waiting its turn: sampled, not stalled
KERNEL_INSTRUCTIONS = "smsp__inst_executed.sum"  # the kernel's own count (a scalar metric the counters read)


def per_pc(metric: str) -> bool:
    """Whether a report metric is one the table keeps per PC."""
    return metric in PER_PC or (metric.startswith(SAMPLE_PREFIX) and not metric.endswith("_not_issued"))


def reason(metric: str) -> str | None:
    """'long_scoreboard' of 'smsp__pcsamp_warps_issue_stalled_long_scoreboard'; None for other metrics."""
    if metric.startswith(SAMPLE_PREFIX) and not metric.endswith("_not_issued"):
        return metric[len(SAMPLE_PREFIX):]
    return None


def pc_number(key) -> int:
    """A table's key: an int, or its text in JSON (decimal or 0x hex)."""
    return key if isinstance(key, int) else int(str(key), 0)


_SUMMED = ("inst", "threads", "samples", "stalls", "sectors", "sectors_ideal", "wavefronts", "wavefronts_ideal")


def _sums(row: dict) -> dict:
    """One PC's quantities: instructions, samples (all, and stalled) by reason, sectors, wavefronts."""
    out = {"inst": row.get(INSTRUCTIONS, 0) or 0, "threads": row.get(THREAD_INSTRUCTIONS, 0) or 0,
           "sectors": row.get(SECTORS, 0) or 0, "sectors_ideal": row.get(SECTORS_IDEAL, 0) or 0,
           "wavefronts": row.get(WAVEFRONTS, 0) or 0, "wavefronts_ideal": row.get(WAVEFRONTS_IDEAL, 0) or 0,
           "samples": 0, "stalls": 0, "by_reason": {}}
    for metric, value in row.items():
        why = reason(metric)
        if why is None or not value:
            continue
        out["samples"] += value
        if why not in NOT_STALLS:
            out["stalls"] += value
            out["by_reason"][why] = out["by_reason"].get(why, 0) + value
    return out


def _add(into: dict, sums: dict) -> None:
    for k in _SUMMED:
        into[k] = into.get(k, 0) + sums[k]
    reasons = into.setdefault("by_reason", {})
    for why, v in sums["by_reason"].items():
        reasons[why] = reasons.get(why, 0) + v


def _location(row: dict):
    file, line = row.get("file"), row.get("line")
    if not file or not isinstance(line, int) or line <= 0:
        return None
    return (file, line)


def fold(pcs: dict, name: str = "", kernel_totals: dict | None = None, label: str = "",
         sources: dict | None = None) -> KernelLines:
    """One kernel's per-PC table as measured figures per line (see the module's doc). ``kernel_totals``: the
    kernel's own totals as ncu reported them (metric name -> value), to set beside the sums; ``sources``:
    {(file, line): text} for the lines' source text."""
    own: dict = {}
    inlined: dict = {}
    located, everything = {}, {}
    for key, row in pcs.items():
        pc_number(key)  # a key that is no PC is an error in the table, not a line
        sums = _sums(row)
        _add(everything, sums)
        where = _location(row)
        if where is None:
            continue
        _add(located, sums)
        _add(own.setdefault(where, {}), sums)
        for site in row.get("inlined_at") or ():
            site = tuple(site)
            if len(site) == 2 and site != where:
                _add(inlined.setdefault((site[0], int(site[1])), {}), sums)
    out = KernelLines(name, labels={MEASURED: label} if label else {})
    total_stalls = located.get("stalls", 0)
    for scope, table in ((OWN, own), (WITH_INLINED, inlined)):
        for (file, line), sums in table.items():
            row = out.add(file, line, (sources or {}).get((file, line), ""))
            if scope == WITH_INLINED:  # a call line: its own figures and everything inlined at it
                _add(sums, own.get((file, line)) or _sums({}))
            _figures(row, sums, total_stalls, scope)
    totals = kernel_totals or {}
    out.totals[MEASURED] = {
        "inst_executed": _total(located, everything, "inst", totals.get(KERNEL_INSTRUCTIONS, totals.get(INSTRUCTIONS))),
        "samples": _total(located, everything, "samples", totals.get(SAMPLE_COUNT)),
        "stall_samples": _total(located, everything, "stalls", None),
        "global_sectors": _total(located, everything, "sectors", totals.get(SECTORS)),
        "shared_wavefronts": _total(located, everything, "wavefronts", totals.get(WAVEFRONTS)),
    }
    if everything.get("inst") and not located.get("inst"):
        out.notes.append("no instruction found its source line: the kernel was compiled without line information")
    return out


def _total(located: dict, everything: dict, key: str, kernel) -> dict:
    return {"lines": located.get(key, 0), "all": everything.get(key, 0), "kernel": kernel}


def _figures(row, sums: dict, total_stalls: float, scope: str) -> None:
    put = lambda key, value: row.set(key, value, MEASURED, scope)  # noqa: E731
    if sums["inst"]:
        put("inst_executed", sums["inst"])
        if sums["threads"]:
            put("lanes", sums["threads"] / sums["inst"])
    if sums["samples"]:
        put("stall_samples", sums["stalls"])
        if total_stalls:
            put("stall_pct", 100.0 * sums["stalls"] / total_stalls)
        if sums["by_reason"]:
            top = max(sorted(sums["by_reason"]), key=sums["by_reason"].get)
            put("top_stall", top)
            for why, v in sums["by_reason"].items():
                put(STALL + why, v)
    if sums["sectors"]:
        put("global_sectors", sums["sectors"])
        put("global_sectors_excessive", max(0, sums["sectors"] - sums["sectors_ideal"]))
    if sums["wavefronts"]:
        put("shared_wavefronts", sums["wavefronts"])
        put("shared_conflicts", max(0, sums["wavefronts"] - sums["wavefronts_ideal"]))


def coverage(lines: KernelLines, quantity: str = "inst_executed") -> float | None:
    """The share of a quantity the lines account for, against the kernel's own total where ncu gave one,
    else against every PC's: 1.0 when every instruction found its line."""
    t = lines.totals.get(MEASURED, {}).get(quantity)
    if not t:
        return None
    whole = t.get("kernel") or t.get("all")
    return t["lines"] / whole if whole else None
