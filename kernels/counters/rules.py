"""Guided analysis: each rule is a pure function of one variant's measured and static facts that returns one
sentence with its numbers, or None when it has nothing to say. :func:`analyse` runs them all in order.

The thresholds are the usual ones of Nsight Compute's own guidance where it has one (a kernel above 60% of a
unit's peak is limited by it; achieved occupancy well below theoretical means imbalance), and round numbers
otherwise; each sentence shows the figures it rests on, so a reader can judge."""

from __future__ import annotations

from dataclasses import dataclass

from kernels.counters.lines import MEASURED, hottest
from kernels.counters.metrics import Measured

LAUNCH_US = 3.0  # a kernel launch's own cost on current GPUs and drivers, about 2-4 us
STALL_WORDS = {
    "long_scoreboard": "waiting for global or local memory (L1TEX)",
    "short_scoreboard": "waiting for shared memory or special functions (MIO)",
    "barrier": "waiting at __syncthreads",
    "membar": "waiting at a memory fence",
    "lg_throttle": "the global / local memory instruction queue is full",
    "mio_throttle": "the shared-memory / special-function queue is full",
    "math_pipe_throttle": "a math pipe is busy",
    "wait": "a fixed-latency dependency",
    "branch_resolving": "resolving a branch target",
    "no_instruction": "the instruction cache",
    "dispatch_stall": "the dispatcher",
    "drain": "draining memory stores at exit",
    "sleeping": "sleeping (nanosleep)",
    "tex_throttle": "the texture queue is full",
    "imc_miss": "the immediate-constant cache",
    "misc": "miscellaneous reasons",
}


@dataclass(frozen=True)
class Facts:
    """One variant's facts: ``measured`` from the counters, the rest from the bench row and the traffic model."""

    measured: Measured
    n: int = 0  # elements / bytes of the problem
    median_ms: float | None = None  # the timed repeats' median (CUDA events)
    gbps: float | None = None
    copy_peak_gbps: float | None = None
    model_bytes: float | None = None  # the traffic model's DRAM bytes for this launch
    # the ceiling the row is judged against, measured in the same run (kernels/harness/ceilings.py)
    ceiling: str = ""
    ceiling_rate: float | None = None  # per second
    pct_of_ceiling: float | None = None


def _pct(x) -> str:
    return f"{x:.1f}%"


def memory_bound(f: Facts):
    d = f.measured.dram_pct
    if d is not None and d >= 60:
        return f"Memory-bound: DRAM at {_pct(d)} of its peak, within {100 - d:.1f} percentage points of the limit."
    return None


def latency_bound(f: Facts):
    m = f.measured
    d, s, o = m.dram_pct, m.sm_pct, m.occupancy_pct
    if None not in (d, s, o) and d < 40 and s < 40 and o < 50:
        return (f"Latency-bound: DRAM at {_pct(d)} and SM at {_pct(s)} of peak with {_pct(o)} achieved occupancy: "
                "too few warps in flight to hide memory latency.")
    return None


def occupancy_limit(f: Facts):
    k = max(f.measured.kernels, key=lambda k: k.get("duration_ns") or 0)
    limits = {"registers": k.get("limit_registers"), "shared memory": k.get("limit_shared"),
              "blocks per SM": k.get("limit_blocks"), "warps per SM": k.get("limit_warps")}
    limits = {name: v for name, v in limits.items() if v is not None}
    theoretical = k.get("theoretical_occupancy_pct")
    if not limits or theoretical is None or theoretical >= 99.9:
        return None
    which = min(limits, key=limits.get)
    regs = k.get("registers")
    extra = f" ({regs:.0f} registers per thread)" if which == "registers" and regs is not None else ""
    return (f"Occupancy limited by {which}{extra}: {limits[which]:.0f} blocks per SM, theoretical occupancy "
            f"{_pct(theoretical)} in {k.name}.")


def occupancy_gap(f: Facts):
    m = f.measured
    a, t = m.occupancy_pct, m.theoretical_occupancy_pct
    if a is not None and t and a < 0.7 * t:
        return (f"Achieved occupancy {_pct(a)} is well below the theoretical {_pct(t)}: blocks finish unevenly or too "
                "few are launched to fill the GPU (a tail).")
    return None


def _main_kernel(m: Measured):
    """The kernel that ran longest (its per-line figures are the ones a sentence names)."""
    return max(m.kernels, key=lambda k: k.get("duration_ns") or 0)


def _line_words(row) -> str:
    source = f": `{row.source}`" if row.source else ""
    return f"line {row.line} of {row.file}{source}"


def bank_conflicts(f: Facts):
    m = f.measured
    c, r = m.bank_conflicts, m.shared_requests
    if c and r and c / r >= 0.5 and c >= 1000:
        where = ""
        lines = _main_kernel(m).lines
        found = hottest(lines, "shared_conflicts") if lines is not None else None
        if found:
            where = f"; {100 * found[1]:.0f}% of them at {_line_words(found[0])}"
        return (f"Shared-memory bank conflicts: {c / r:.2f} extra wavefronts per shared request ({c / 1e6:.2f} M in "
                f"all over {r / 1e6:.2f} M requests): those accesses are serialized{where}.")
    return None


def divergence(f: Facts):
    b = f.measured.branch_efficiency_pct
    if b is not None and b < 90:
        return f"Divergent branches: only {_pct(b)} of branches go the same way for the whole warp."
    return None


def atomics(f: Facts):
    m = f.measured
    a = m.atomics
    if not a or not f.n:
        return None
    per = a / f.n
    stall = m.top_stall
    if per >= 0.01 and stall in ("lg_throttle", "membar", "long_scoreboard", "drain"):
        return (f"Atomics contention: {a / 1e6:.2f} M warp-level global atomic instructions (one per {1 / per:.0f} input "
                f"elements) and warps stall most on {stall} ({STALL_WORDS.get(stall, stall)}).")
    return None


def launch_overhead(f: Facts):
    d = f.measured.duration_ms
    if d is None:
        return None
    us = d * 1e3
    if us < LAUNCH_US:
        return f"Launch overhead dominates: the kernels run {us:.2f} us, less than a launch costs (about {LAUNCH_US:.0f} us)."
    if f.median_ms and f.median_ms > 2 * d and (f.median_ms - d) * 1e3 > LAUNCH_US:
        return (f"Launch overhead dominates: the timed run takes {f.median_ms * 1e3:.1f} us but its kernels only "
                f"{us:.1f} us; the rest is launches and gaps.")
    return None


def l2_resident(f: Facts):
    h = f.measured.l2_hit_pct
    if h is None or h < 80:
        return None
    above = f.gbps and f.copy_peak_gbps and f.gbps > f.copy_peak_gbps
    if above:
        return (f"Data resident in L2: {_pct(h)} hit rate and {f.gbps:.0f} GB/s, above the {f.copy_peak_gbps:.0f} GB/s "
                "DRAM copy peak: this measures the cache, not memory.")
    return f"Data mostly in L2: {_pct(h)} of sectors hit."


def traffic_model(f: Facts):
    b = f.measured.dram_bytes
    if not f.model_bytes or b is None:
        return None
    apart = abs(b - f.model_bytes) / f.model_bytes
    if apart > 0.2:
        return (f"The traffic model disagrees with the counters: it says {f.model_bytes / 1e6:.1f} MB, DRAM moved "
                f"{b / 1e6:.1f} MB ({100 * apart:.0f}% apart).")
    return None


def top_stall(f: Facts):
    s = f.measured.stalls
    if not s:
        return None
    reason = max(s, key=s.get)
    return (f"Warps stall most on {reason}: {STALL_WORDS.get(reason, reason)} "
            f"({s[reason]:.1f} stalled warps per issued instruction).")


def stall_line(lines, of: str = "", kind: str = MEASURED):
    """The sentence naming a kernel's line with most stall samples (of ``kind``: measured, or a reference's),
    None when no line has any; ``of`` names the kernel (' of block_sums')."""
    found = hottest(lines, "stall_samples", kind) if lines is not None else None
    if not found:
        return None
    row, share = found
    reason = row.get("top_stall", kind) or ""
    words = f", most on {reason}: {STALL_WORDS.get(reason, reason)}" if reason else ""
    return f"{100 * share:.0f}% of the stall samples{of} at {_line_words(row)}{words}."


def hottest_line(f: Facts):
    k = _main_kernel(f.measured)
    return stall_line(k.lines, f" of {k.name}" if len(f.measured.kernels) > 1 else "")


CEILING_WORDS = {"sector-reads": "random 32-byte sector reads", "cas": "random 8-byte compare-and-swaps",
                 "fma-float32": "float32 FMAs", "fma-float64": "float64 FMAs", "ray-sphere": "ray-sphere tests",
                 "copy": "copy bandwidth"}


def measured_ceiling(f: Facts):
    """Where the row stands against its own ceiling, measured in this run (the copy peak's sentences say the
    copy bandwidth's)."""
    if f.pct_of_ceiling is None or not f.ceiling or f.ceiling == "copy" or not f.ceiling_rate:
        return None
    what = f"{CEILING_WORDS.get(f.ceiling, f.ceiling)} at {f.ceiling_rate / 1e9:.3g} G/s, measured in this run"
    if f.pct_of_ceiling >= 80:
        return f"At its ceiling: {_pct(f.pct_of_ceiling)} of {what}."
    return f"At {_pct(f.pct_of_ceiling)} of its ceiling ({what}): {100 / f.pct_of_ceiling:.1f}x below it."


RULES = (measured_ceiling, memory_bound, latency_bound, occupancy_limit, occupancy_gap, bank_conflicts, divergence, atomics,
         launch_overhead, l2_resident, traffic_model, top_stall, hottest_line)


def analyse(f: Facts) -> list[str]:
    return [s for s in (rule(f) for rule in RULES) if s]
