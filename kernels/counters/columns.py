"""The columns counters and clocks add to a bench row: their names (part of the CSV's header), their cells,
and the table's extra lines. Pure: a row's ``counters`` is a Measured record (or, read back from a result
file, its dict), its ``clocks`` a Clocks pair (or its dict)."""

from __future__ import annotations

COUNTER_COLUMNS = ("dram_pct", "dram_bytes", "achieved_occupancy_pct", "l2_hit_pct", "bank_conflicts_per_request",
                   "instructions", "branch_efficiency_pct", "top_stall", "ncu_ms", "clock_control", "counters_note")
CLOCK_COLUMNS = ("sm_clock_mhz", "sm_clock_mhz_after", "memory_clock_mhz", "power_w", "power_w_after",
                 "throttle_reasons", "throttled")


def measured(value):
    """A Measured record from a row's ``counters`` (a record, its dict, or None)."""
    from kernels.counters.metrics import Measured

    if isinstance(value, dict):
        return Measured.from_dict(value)
    return value if isinstance(value, Measured) else None


def clocks(value):
    from kernels.counters.clocks import Clocks

    if isinstance(value, dict):
        return Clocks.from_dict(value)
    return value if isinstance(value, Clocks) else None


def _r(x, digits: int):
    return "" if x is None else round(float(x), digits)


def cells(counters, note: str, clock) -> dict:
    m, c = measured(counters), clocks(clock)
    out = {k: "" for k in COUNTER_COLUMNS + CLOCK_COLUMNS}
    out["counters_note"] = note or ""
    if m is not None:
        out.update(dram_pct=_r(m.dram_pct, 2), dram_bytes=_r(m.dram_bytes, 0), achieved_occupancy_pct=_r(m.occupancy_pct, 2),
                   l2_hit_pct=_r(m.l2_hit_pct, 2), bank_conflicts_per_request=_r(m.conflicts_per_request, 4),
                   instructions=_r(m.instructions, 0), branch_efficiency_pct=_r(m.branch_efficiency_pct, 2),
                   top_stall=m.top_stall, ncu_ms=_r(m.duration_ms, 6), clock_control=m.clock_control)
        for k in ("dram_bytes", "instructions"):
            out[k] = int(out[k]) if out[k] != "" else ""
    if c is not None:
        out.update(sm_clock_mhz=c.before.sm_mhz, sm_clock_mhz_after=c.after.sm_mhz, memory_clock_mhz=c.before.memory_mhz,
                   power_w=_r(c.before.power_w, 1), power_w_after=_r(c.after.power_w, 1),
                   throttle_reasons=c.reason_text(), throttled="yes" if c.throttled else "no")
    return out


def _f(x, fmt: str, width: int) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:>{width}{fmt}}"


def table_header() -> str:
    return (f"{'variant':<24} {'kernel':<24} {'ncu ms':>9} {'DRAM%':>6} {'DRAM MB':>9} {'occ%':>6} {'L2hit%':>7} "
            f"{'confl/req':>9} {'instr M':>9} {'branch%':>7}  top stall")


def table_lines(variant: str, counters) -> list[str]:
    """The variant's line (the sum over its kernels), then one line per kernel when it has several."""
    m = measured(counters)
    if m is None:
        return []

    def line(name, kernel, x):
        mb = None if x.dram_bytes is None else x.dram_bytes / 1e6
        ins = None if x.instructions is None else x.instructions / 1e6
        return (f"{name:<24} {kernel:<24} {_f(x.duration_ms, '.4f', 9)} {_f(x.dram_pct, '.1f', 6)} {_f(mb, '.1f', 9)} "
                f"{_f(x.occupancy_pct, '.1f', 6)} {_f(x.l2_hit_pct, '.1f', 7)} {_f(x.conflicts_per_request, '.3f', 9)} "
                f"{_f(ins, '.2f', 9)} {_f(x.branch_efficiency_pct, '.1f', 7)}  {x.top_stall or '-'}")

    from kernels.counters.metrics import Measured

    if len(m.kernels) == 1:
        return [line(variant, m.kernels[0].name, m)]
    lines = [line(variant, f"sum of {len(m.kernels)} kernels", m)]
    lines += [line("", k.name, Measured((k,), m.clock_control)) for k in m.kernels]
    return lines


def clock_text(clock) -> str:
    """'SM 1980 -> 1980 MHz, memory 2619 MHz, 310 -> 420 W' and '[THROTTLED: power cap]' when it was."""
    c = clocks(clock)
    if c is None:
        return ""
    power = "" if c.before.power_w is None else f", {c.before.power_w:.0f} -> {c.after.power_w or 0:.0f} W"
    text = f"SM {c.before.sm_mhz} -> {c.after.sm_mhz} MHz, memory {c.before.memory_mhz} MHz{power}"
    return text + (f"  [THROTTLED: {c.reason_text()}]" if c.throttled else "")
