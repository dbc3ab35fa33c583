"""What Nsight Compute is asked for, and the typed record a kernel's counters become (pure functions: no ncu,
no numba, so the tests run them on recorded metric sets).

One ncu process collects every metric below for a whole batch of kernels; ncu replays each kernel as many
times as the metrics need. Metric names are checked against what the installed ncu lists for the device
(``ncu --query-metrics``): one that a version or chip lacks is left out and its cells stay empty."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# name in the record <- ncu metric
METRICS = {
    "duration_ns": "gpu__time_duration.sum",
    "dram_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_read": "dram__bytes_read.sum",
    "dram_write": "dram__bytes_write.sum",
    "occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_occupancy_pct": "sm__maximum_warps_per_active_cycle_pct",
    "sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "l2_hit_pct": "lts__t_sector_hit_rate.pct",
    "bank_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "shared_ld": "smsp__inst_executed_op_shared_ld.sum",
    "shared_st": "smsp__inst_executed_op_shared_st.sum",
    "shared_atom": "smsp__inst_executed_op_shared_atom.sum",
    "instructions": "smsp__inst_executed.sum",
    "branch_efficiency_pct": "smsp__sass_average_branch_targets_threads_uniform.pct",
    "global_atom": "smsp__sass_inst_executed_op_global_atom.sum",
    "global_red": "smsp__sass_inst_executed_op_global_red.sum",
    "registers": "launch__registers_per_thread",
    "grid": "launch__grid_size",
    "block": "launch__block_size",
    "limit_registers": "launch__occupancy_limit_registers",
    "limit_shared": "launch__occupancy_limit_shared_mem",
    "limit_blocks": "launch__occupancy_limit_blocks",
    "limit_warps": "launch__occupancy_limit_warps",
}
# launch statistics are not hardware counters: --query-metrics does not list them, ncu always has them
ALWAYS = tuple(v for v in METRICS.values() if v.startswith("launch__"))
# warp-stall reasons, one metric per reason: stalled warps per issued instruction
STALL_PATTERN = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active$")
STALL_SUFFIX = ".ratio"
STALL_FALLBACK = r"regex:^smsp__average_warps_issue_stalled_\w+_per_issue_active\.ratio$"
NOT_STALLS = {"selected", "not_selected"}  # issuing, or eligible and waiting its turn: not a stall


def base_name(metric: str) -> str:
    return metric.split(".", 1)[0]


def parse_query(text: str) -> set[str]:
    """The base metric names in ``ncu --query-metrics`` output."""
    names = set()
    for line in text.splitlines():
        first = line.split(maxsplit=1)[0] if line.strip() else ""
        if re.fullmatch(r"[a-z0-9]+__[a-z0-9_]+", first):
            names.add(first)
    return names


def metric_list(available: set[str] | None) -> tuple[list[str], list[str]]:
    """(metrics to ask for, those left out because this ncu does not list them). ``available`` None: the
    query failed, so ask for everything and let ncu say."""
    if available is None:
        return list(METRICS.values()) + [STALL_FALLBACK], []
    wanted, left = [], []
    for m in METRICS.values():
        (wanted if m in ALWAYS or base_name(m) in available else left).append(m)
    stalls = sorted(n + STALL_SUFFIX for n in available if STALL_PATTERN.match(n))
    wanted += stalls or [STALL_FALLBACK]
    return wanted, left


@dataclass(frozen=True)
class KernelCounters:
    """One kernel launch's counters (None: not collected)."""

    name: str
    values: dict  # record name -> number, from METRICS
    stalls: dict = field(default_factory=dict)  # reason -> stalled warps per issued instruction
    lines: object = None  # kernels.counters.lines.KernelLines: the source counters per line, when read

    def get(self, key: str):
        return self.values.get(key)

    @property
    def duration_ms(self):
        d = self.get("duration_ns")
        return None if d is None else d / 1e6

    @property
    def dram_bytes(self):
        r, w = self.get("dram_read"), self.get("dram_write")
        return None if r is None and w is None else (r or 0) + (w or 0)

    @property
    def shared_requests(self):
        parts = [self.get(k) for k in ("shared_ld", "shared_st", "shared_atom")]
        return None if all(p is None for p in parts) else sum(p or 0 for p in parts)

    @property
    def atomics(self):
        parts = [self.get("global_atom"), self.get("global_red")]
        return None if all(p is None for p in parts) else sum(p or 0 for p in parts)


def kernel_counters(name: str, metrics: dict, lines=None) -> KernelCounters:
    """A report action's metrics (ncu name -> value) as a record (``lines``: its per-line figures)."""
    values = {key: float(metrics[m]) for key, m in METRICS.items() if metrics.get(m) is not None}
    stalls = {}
    for m, v in metrics.items():
        found = STALL_PATTERN.match(base_name(m))
        if found and v is not None and found.group(1) not in NOT_STALLS:
            stalls[found.group(1)] = float(v)
    return KernelCounters(name, values, stalls, lines)


@dataclass(frozen=True)
class Measured:
    """What the counters say about one variant: each of its kernels, and the whole (sums, or averages
    weighted by each kernel's duration) under one clock-control setting."""

    kernels: tuple
    clock_control: str

    def _weighted(self, key: str, weight=lambda k: k.get("duration_ns")):
        pairs = [(k.get(key), weight(k) or 0) for k in self.kernels if k.get(key) is not None]
        total = sum(w for _, w in pairs)
        if not pairs:
            return None
        if total <= 0:
            return sum(v for v, _ in pairs) / len(pairs)
        return sum(v * w for v, w in pairs) / total

    def _sum(self, values):
        values = [v for v in values if v is not None]
        return sum(values) if values else None

    @property
    def duration_ms(self):
        return self._sum(k.duration_ms for k in self.kernels)

    @property
    def dram_bytes(self):
        return self._sum(k.dram_bytes for k in self.kernels)

    @property
    def dram_pct(self):
        return self._weighted("dram_pct")

    @property
    def occupancy_pct(self):
        return self._weighted("occupancy_pct")

    @property
    def theoretical_occupancy_pct(self):
        return self._weighted("theoretical_occupancy_pct")

    @property
    def sm_pct(self):
        return self._weighted("sm_pct")

    @property
    def l2_hit_pct(self):
        return self._weighted("l2_hit_pct")

    @property
    def instructions(self):
        return self._sum(k.get("instructions") for k in self.kernels)

    @property
    def branch_efficiency_pct(self):
        return self._weighted("branch_efficiency_pct", lambda k: k.get("instructions"))

    @property
    def bank_conflicts(self):
        return self._sum(k.get("bank_conflicts") for k in self.kernels)

    @property
    def shared_requests(self):
        return self._sum(k.shared_requests for k in self.kernels)

    @property
    def conflicts_per_request(self):
        c, r = self.bank_conflicts, self.shared_requests
        if c is None or not r:
            return None if c is None else (0.0 if c == 0 else None)
        return c / r

    @property
    def atomics(self):
        return self._sum(k.atomics for k in self.kernels)

    @property
    def stalls(self) -> dict:
        """Each reason's stalled warps per issued instruction, weighted by duration over the kernels."""
        out: dict[str, float] = {}
        total = sum(k.get("duration_ns") or 0 for k in self.kernels) or 1.0
        for k in self.kernels:
            w = (k.get("duration_ns") or 0) / total if len(self.kernels) > 1 else 1.0
            for reason, v in k.stalls.items():
                out[reason] = out.get(reason, 0.0) + v * w
        return out

    @property
    def top_stall(self) -> str:
        s = self.stalls
        return max(s, key=s.get) if s else ""

    def as_dict(self) -> dict:
        """The record for result files: each kernel's values and stalls."""
        def kernel(k):
            d = {"name": k.name, "values": k.values, "stalls": k.stalls}
            if k.lines is not None:
                d["lines"] = k.lines.to_dict()
            return d

        return {"clock_control": self.clock_control, "kernels": [kernel(k) for k in self.kernels]}

    @classmethod
    def from_dict(cls, d: dict) -> "Measured":
        return cls(tuple(KernelCounters(k["name"], dict(k["values"]), dict(k.get("stalls", {})), _lines(k.get("lines")))
                         for k in d["kernels"]), d["clock_control"])


def _lines(d):
    """A kernel's per-line figures read back; None for none, or for a block of another shape (the record's
    other figures stay readable)."""
    from kernels.counters.lines import KernelLines

    if d is None:
        return None
    try:
        return KernelLines.from_dict(d)
    except ValueError:
        return None
