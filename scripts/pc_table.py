"""Record a real per-PC table: Nsight Compute's source counters of one variant's kernels, one row per program
counter, as the counters' report child reads them (kernels/counters/report.py) before they are folded onto
lines. Written as a small JSON file with the device and versions; committed under tests/data/lines/, it is
what tests/test_lines_recorded.py folds and checks against sums made by hand.

    python3 scripts/pc_table.py OUT.json [--target reduction] [--variant best] [--n 1048576]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCHEMA = "raytracer-app/pc-table"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--target", default="reduction")
    p.add_argument("--variant", default="best")
    p.add_argument("--n", type=int, default=1 << 20)
    args = p.parse_args(argv)

    from kernels import backend as backends
    from kernels.counters.lines import shown_file
    from kernels.counters.measure import measure
    from kernels.counters.report import short_name, split
    from kernels.counters.tool import why_not
    from kernels.harness import results
    from kernels.service.bench_request import BenchRequest

    backend = backends.resolve("cuda")
    reason = why_not(backend)
    if reason:
        print(reason, file=sys.stderr)
        return 2
    request = BenchRequest(args.target, backend, sizes=(args.n,), variants=(args.variant,), repeats=1, peak=False)
    raw: list = []
    got = measure(request.to_json(), backend, raw_out=raw, lines=True)
    if isinstance(got.get(args.variant), str):
        print(f"{args.variant}: {got[args.variant]}", file=sys.stderr)
        return 1
    made = results.provenance(["scripts/pc_table.py", *(argv if argv is not None else sys.argv[1:])])
    kernels = []
    for action in split(raw, 1).get(0, []):
        pcs = {pc: {**row, "file": shown_file(row.get("file"))} for pc, row in action.get("pcs", {}).items()}
        kernels.append({"name": short_name(action["name"]), "metrics": action["metrics"],
                        "pc_totals": action.get("pc_totals", {}), "pcs": pcs})
    doc = {"schema": SCHEMA, "target": args.target, "variant": args.variant, "n": args.n,
           "device": results.device_info(backend, None), "date": made["date"], "versions": made["versions"],
           "commit": made["commit"], "command": made["command"], "kernels": kernels}
    Path(args.out).write_text(json.dumps(results._plain(doc), separators=(",", ":")) + "\n")
    rows = sum(len(k["pcs"]) for k in kernels)
    print(f"wrote {args.out}: {len(kernels)} kernel(s), {rows} PCs, {Path(args.out).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
