"""One line per kernel from Nsight Compute's CSV (``ncu --csv --metrics ...``): the median of each metric over
the kernel's launches, so a frame's kernels can be read side by side (what binds each: SM, DRAM or L1/shared
throughput, occupancy; scripts/gpu-session.sh's render-best stage).

    python scripts/ncu_limiters.py NCU_CSV
    python scripts/ncu_limiters.py --example DIR   (writes a two-kernel example CSV there and reads it)

A kernel is its short name (kernels/counters/report.py) and, for a float64 instance, ``(float64)``. Lines of the
file that are not ncu's table (the profiled program's own output, ncu's ==PROF== lines) are skipped. Exit 2
when the file is missing or holds no table.
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kernels.counters.report import short_name

SHORT = {  # metric -> its column, in the order printed
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm%",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram%",
    "l1tex__throughput.avg.pct_of_peak_sustained_elapsed": "l1tex%",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy%",
    "smsp__inst_executed.sum": "warp-instr",
    "gpu__time_duration.sum": "us",
}


def kernel_label(name: str) -> str:
    return short_name(name) + (" (float64)" if "double" in name else "")


def limiter_rows(text: str) -> dict[str, dict[str, float]]:
    """{kernel: {column: median over its launches}} from ncu's CSV text."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if '"Kernel Name"' in line and '"Metric Name"' in line), None)
    if start is None:
        return {}
    values: dict[str, dict[str, list[float]]] = {}
    for row in csv.DictReader(lines[start:]):
        metric, name = row.get("Metric Name"), row.get("Kernel Name")
        value = row.get("Metric Value", row.get("Average"))
        if metric not in SHORT or not name or value is None:
            continue
        try:
            number = float(value.replace(",", ""))
        except ValueError:
            continue
        if metric == "gpu__time_duration.sum" and row.get("Metric Unit") in ("nsecond", "ns"):
            number /= 1000.0
        elif metric == "gpu__time_duration.sum" and row.get("Metric Unit") in ("msecond", "ms"):
            number *= 1000.0
        values.setdefault(kernel_label(name), {}).setdefault(SHORT[metric], []).append(number)
    return {k: {c: statistics.median(v) for c, v in cols.items()} for k, cols in values.items()}


def line_of(kernel: str, cols: dict[str, float]) -> str:
    parts = [f"{c} {cols[c]:.4g}" for c in SHORT.values() if c in cols]
    return f"{kernel}: " + ", ".join(parts)


EXAMPLE = """==PROF== Connected to process 1
"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"
"0","kernels::spheres::sorted::shade_sorted[abi:v1](Array<float>)","sm__throughput.avg.pct_of_peak_sustained_elapsed","%","61.5"
"0","kernels::spheres::sorted::shade_sorted[abi:v1](Array<float>)","gpu__time_duration.sum","nsecond","123,456"
"1","kernels::julia::gpu::render_julia_grouped_float64[abi:v2](double)","sm__warps_active.avg.pct_of_peak_sustained_active","%","88"
"""


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--example":
        argv = [str(Path(argv[1]) / "ncu-example.csv")]
        Path(argv[0]).write_text(EXAMPLE)
    if len(argv) != 1:
        print("usage: ncu_limiters.py NCU_CSV | --example DIR", file=sys.stderr)
        return 2
    path = Path(argv[0])
    if not path.is_file():
        print(f"ncu_limiters: {path} is not a file", file=sys.stderr)
        return 2
    rows = limiter_rows(path.read_text(errors="replace"))
    if not rows:
        print(f"ncu_limiters: {path} holds no ncu table (did ncu run? its own lines follow)", file=sys.stderr)
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("==") and ("ERR" in line or "WARN" in line):
                print(line, file=sys.stderr)
        return 2
    for kernel, cols in rows.items():
        print(line_of(kernel, cols))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
