"""Record the metric sets the counters tests replay: for each target, one ncu run over its GPU variants at
the default size, the report's kernels as read (with their metrics), the variant order and the Measured
records, written as small JSON files (tests/data/counters/ keeps them).

Usage: python3 scripts/counters_record.py OUTDIR [TARGET ...]   (needs a GPU, ncu and counter permission)"""

from __future__ import annotations

import json
import sys
import time


def record(target: str, out_dir: str) -> str:
    from kernels import backend as backends
    from kernels.counters.measure import measure
    from kernels.counters.tool import find_ncu, ncu_version
    from kernels.io.writer import write_output
    from kernels.registry import by_name
    from kernels.service.bench_request import BenchRequest

    backend = backends.resolve("cuda")
    algorithm = by_name(target)
    names = [v.name for v in algorithm.variants if v.kind == "gpu" and v.skip_reason(backend) is None]
    request = BenchRequest(target, backend, variants=tuple(names), repeats=1)
    options, n = request.option_values, request.sizes[0]
    raw: list = []
    t0 = time.perf_counter()
    got = measure(request.to_json(), backend, raw_out=raw, lines=False,  # per-PC tables: scripts/pc_table.py
                  on_progress=lambda d, t, text: print(f"  {text}", file=sys.stderr, flush=True))
    seconds = time.perf_counter() - t0
    doc = {"target": target, "n": n, "options": options, "device": backend.device_name,
           "ncu": ncu_version(str(find_ncu())), "clock_control": "none", "seconds": round(seconds, 1),
           "variants": names, "actions": raw,
           "measured": {k: (v.as_dict() if hasattr(v, "as_dict") else v) for k, v in got.items()}}
    path = f"{out_dir}/counters-{target}.json"
    write_output(path, json.dumps(doc, indent=0), "counters_record")
    print(f"{target}: {len(names)} variants, {len(raw)} kernels profiled in {seconds:.1f} s -> {path}")
    return path


def main(argv: list[str]) -> int:
    out_dir = argv[0] if argv else "."
    for target in argv[1:] or ["reduction", "histogram"]:
        record(target, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
