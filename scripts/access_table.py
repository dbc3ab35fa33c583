"""The access trace's predicted-against-measured table for docs/measurements.md: per variant and kernel, each
per-request ratio the trace predicts in the CUDA simulator beside the one Nsight Compute measured on the GPU
(`raytracer-app access TARGET VARIANT --measured --json FILE`, stage access-measured of gpu-session.sh),
whether they agree (within 10%, or 0.1 where both are under 1), and the notes that may say why they do not.

Usage:
  python3 scripts/access_table.py FILE.json ...        the table (Markdown) on stdout
  python3 scripts/access_table.py --list TARGET ...    the GPU variants of these targets the simulator traces
  python3 scripts/access_table.py --example DIR        trace one variant here (no GPU needed) into DIR and
                                                       print its table (predicted only)"""

from __future__ import annotations

import os
import subprocess
import sys


def traceable(targets: list[str]) -> list[str]:
    from kernels.registry import by_name

    return [f"{t} {v.name}" for t in targets for v in by_name(t).variants if v.kind == "gpu" and not v.sim_skip]


def _number(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def rows(doc: dict) -> list[tuple]:
    """(variant, kernel, quantity, predicted, measured, agrees) for each judged ratio of a file; a file made
    without --measured gives its predicted ratios with no measured figure."""
    out = []
    for kernel in doc["kernels"]:
        if "comparison" in kernel:
            for c in kernel["comparison"]:
                if "/request" in c["quantity"]:
                    out.append((doc["variant"], kernel["name"], c["quantity"], c.get("predicted"), c.get("measured"),
                                c.get("agrees")))
            if not kernel["comparison"]:
                out.append((doc["variant"], kernel["name"], "not measured (ncu reported no such kernel)", None,
                            None, None))
            continue
        for r in kernel.get("ratios", []):
            words = {"ld": "loads", "st": "stores", "atom": "atomics", "red": "reductions"}.get(r["op"], r["op"])
            for key in ("sectors_per_request", "wavefronts_per_request", "conflicts_per_request"):
                if key in r:
                    out.append((doc["variant"], kernel["name"], f"{r['space']} {words}: {key.replace('_per_', '/')}",
                                r[key], None, None))
    return out


def table(docs: list[dict]) -> str:
    lines = ["| target | variant | kernel | quantity | predicted | measured | agrees |",
             "|---|---|---|---|---|---|---|"]
    judged = agreed = 0
    differ = []
    for doc in docs:
        for variant, kernel, quantity, predicted, measured, agrees in rows(doc):
            verdict = "-" if agrees is None else ("yes" if agrees else "**no**")
            lines.append(f"| {doc['target']} | {variant} | {kernel} | {quantity} | {_number(predicted)} | "
                         f"{_number(measured)} | {verdict} |")
            if agrees is not None:
                judged += 1
                agreed += bool(agrees)
                if not agrees:
                    differ.append((doc, kernel))
    lines.append("")
    device = next((d.get("measured_device", {}).get("name") for d in docs if d.get("measured_device")), None)
    lines.append(f"{agreed} of {judged} measured ratios agree" + (f" (measured on {device})" if device else "") + ".")
    seen = set()
    for doc, kernel in differ:
        if (doc["variant"], kernel) in seen:
            continue
        seen.add((doc["variant"], kernel))
        notes = sorted({n for k in doc["kernels"] if k["name"] == kernel for ln in k["lines"] for n in ln["notes"]})
        lines.append(f"- {doc['target']} {doc['variant']} {kernel}: " + ("; ".join(notes) if notes else
                     "no note from the trace: the compiler kept or merged accesses the source makes"))
    return "\n".join(lines)


def example(folder: str) -> list[str]:
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "access-reduction-interleaved-strided.json")
    env = dict(os.environ)
    subprocess.run([sys.executable, "-m", "raytracer_app", "access", "reduction", "interleaved-strided", "--n", "4096",
                    "--blocks", "2", "--json", path], check=True, env=env, stdout=subprocess.DEVNULL)
    return [path]


def main(argv: list[str]) -> int:
    from kernels.access import files

    if argv[:1] == ["--list"]:
        print("\n".join(traceable(argv[1:])))
        return 0
    paths = example(argv[1]) if argv[:1] == ["--example"] and len(argv) == 2 else argv
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    print(table([files.read(p, "access_table.py") for p in paths]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
