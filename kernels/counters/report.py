"""Reading an ncu report, and telling which kernels belong to which variant.

``python -m kernels.counters.report FILE [--pcs] [METRIC...]`` runs with Nsight Compute's ``extras/python`` on its
path (the ``ncu_report`` module ships with ncu, for any Python 3) and prints every profiled kernel, in launch order,
as JSON (the counters' metrics, and the METRICs named): ``[{"name", "mangled", "metrics": {ncu name: value}}]``;
with ``--pcs`` each kernel also has its source counters per program counter, the table
:mod:`kernels.counters.fold` folds onto lines (``"pcs": {"0x...": {"file", "line", "sass", metric: value}}``), and
their totals as ncu gives them (``"pc_totals"``). Loading it in a child keeps NVIDIA's module out of the app's
process.

:func:`split` is pure: the child that ncu profiles launches a marker kernel (grid = variant number) at the
start of each variant's profiled window, so the kernels between two markers are that variant's."""

from __future__ import annotations

import json
import re
import sys

from kernels.counters.fold import per_pc
from kernels.counters.metrics import METRICS, STALL_PATTERN, base_name

MARKER = "counters_marker"
TIMING_HELPERS = ("sleep_ns",)  # the timer's head-start kernel: launched inside a window, measured by no one
_WANTED = set(METRICS.values())


def _value(metric):
    import ncu_report

    if metric is None:
        return None
    kinds = ncu_report.IMetric
    kind = metric.kind()
    if kind == getattr(kinds, "ValueKind_STRING", None):
        return None
    if kind in (getattr(kinds, "ValueKind_UINT32", None), getattr(kinds, "ValueKind_UINT64", None)):
        return metric.as_uint64()
    return metric.as_double()


def _instance(metric, i: int):
    try:
        return metric.as_double(i)
    except Exception:  # noqa: BLE001 - an integer-valued metric of an older module
        return float(metric.as_uint64(i))


def _total(metric):
    try:
        return metric.as_double()
    except Exception:  # noqa: BLE001 - no single value for this instanced metric
        return None


def pc_table(action) -> tuple[dict, dict]:
    """({pc: {"file", "line", "sass", metric: value}}, {metric: ncu's total}) of one report action: every
    per-instruction source counter it holds (instanced metrics whose instances are keyed by program counter),
    non-zero values only, each PC located with ``source_info`` and shown with ``sass_by_pc``."""
    table: dict[int, dict] = {}
    totals: dict[str, float] = {}
    for name in action.metric_names():
        if not per_pc(name):
            continue
        metric = action.metric_by_name(name)
        if metric is None or not metric.has_correlation_ids():
            continue
        ids = metric.correlation_ids()
        total = _total(metric)
        if total is not None:
            totals[name] = total
        for i in range(metric.num_instances()):
            value = _instance(metric, i)
            if value:
                table.setdefault(int(ids.as_uint64(i)), {})[name] = value
    for pc, row in table.items():
        file, line = None, None
        try:
            info = action.source_info(pc)
        except Exception:  # noqa: BLE001 - a PC the report cannot place: it stays unlocated
            info = None
        if info is not None:
            file, line = str(info.file_name() or "") or None, int(info.line() or 0) or None
        row.update(file=file if line else None, line=line if file else None)
        try:
            row["sass"] = str(action.sass_by_pc(pc) or "").strip()
        except Exception:  # noqa: BLE001 - the instruction's text is a courtesy
            row["sass"] = ""
    return table, totals


def read(path: str, extra=(), pcs: bool = False) -> list[dict]:
    """Every profiled kernel's wanted metrics (METRICS, the stall reasons, and ``extra`` names); with ``pcs``
    its per-PC source counters too (:func:`pc_table`)."""
    import ncu_report

    wanted = _WANTED | set(extra)
    context = ncu_report.load_report(path)
    out = []
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            metrics = {}
            names = action.metric_names() if hasattr(action, "metric_names") else sorted(wanted)
            for name in names:
                if name in wanted or STALL_PATTERN.match(base_name(name)):
                    value = _value(action.metric_by_name(name))
                    if value is not None:
                        metrics[name] = value
            try:
                mangled = action.name(ncu_report.IAction.NameBase_MANGLED)
            except Exception:  # noqa: BLE001 - an older module without name bases
                mangled = action.name()
            kernel = {"name": action.name(), "mangled": mangled, "metrics": metrics}
            if pcs:
                table, totals = pc_table(action)
                kernel["pcs"] = {hex(pc): row for pc, row in sorted(table.items())}
                kernel["pc_totals"] = totals
            out.append(kernel)
    return out


def short_name(demangled: str) -> str:
    """'kernels::reduction::gpu::best_kernel::<locals>::best_tiles[abi:...](Array<...>)' -> 'best_tiles'."""
    head = re.split(r"\[abi:|\(", demangled, maxsplit=1)[0]
    return re.split(r"::|\.", head)[-1] or demangled


def split(actions: list[dict], count: int) -> dict[int, list[dict]]:
    """Variant number (0-based) -> its kernels, in launch order, one per distinct kernel: a kernel launched
    twice in a window (the timer's warm-up, then the timed launch) keeps its last launch. Windows whose
    marker is missing are absent."""
    windows: dict[int, list[dict]] = {}
    current = None
    for a in actions:
        if MARKER in (a.get("mangled") or "") or a["name"].startswith(MARKER[:-1]):  # ncu cuts numba's demangled name
            grid = a["metrics"].get(METRICS["grid"])
            current = int(grid) - 1 if grid is not None and 0 < grid <= count else None
            if current is not None:
                windows[current] = []
            continue
        if current is None or any(h in a["name"] for h in TIMING_HELPERS):
            continue
        windows[current].append(a)
    out = {}
    for k, kernels in windows.items():
        last = {a.get("mangled") or a["name"]: a for a in kernels}  # a later launch replaces the warm-up
        ordered = list(dict.fromkeys(a.get("mangled") or a["name"] for a in kernels))
        out[k] = [last[key] for key in ordered]
    return out


def main(argv: list[str]) -> int:
    pcs = "--pcs" in argv[1:]
    json.dump(read(argv[0], [a for a in argv[1:] if a != "--pcs"], pcs), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
