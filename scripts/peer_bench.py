"""The hash-table peers built with nvcc, outside the app: builds the `cuco-static-map` and `bght-bcht` shims
and two stand-alone harnesses, scripts/cuco_bench.cu (cuCollections' own static_map find and insert benchmarks
without NVBench) and scripts/bght_bench.cu (BGHT's own rates benchmark for bcht), each beside the app's
workload (see their headers), for one GPU architecture, through the same build and cache as the rows
(kernels/hashtable/shim_build.py), then runs both harnesses. Each part whose folder variable is unset or
whose build fails says so in one line and is skipped.

    python3 scripts/peer_bench.py [--arch sm_90] [--n 67108864] [--loads 0.5,0.8,0.9,0.95] [--repeats 20]
        [--build-only]

--build-only builds without running (no GPU needed: --arch then names the architecture, default sm_90).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RUN_TIMEOUT_S = 3000


def _arch_of_gpu() -> str | None:
    """sm_XY of the first GPU nvidia-smi lists, or None."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=60).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"sm_{out[0].replace('.', '')}" if out and out[0].replace(".", "").isdigit() else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", help="GPU architecture, e.g. sm_90 (default: the GPU's; sm_90 with --build-only)")
    ap.add_argument("--n", type=int, default=1 << 26, help="keys (default 2^26)")
    ap.add_argument("--loads", default="0.5,0.8,0.9,0.95", help="load factors, comma-separated")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--build-only", action="store_true", help="build the shims and the harness, run nothing")
    args = ap.parse_args(argv)
    try:
        loads = [float(x) for x in args.loads.split(",") if x.strip()]
    except ValueError:
        print(f"peer_bench: --loads {args.loads!r} is not a list of numbers", file=sys.stderr)
        return 2
    if not loads or not all(0 < x < 1 for x in loads) or not 1 <= args.n <= 2**31 or args.repeats < 1:
        print("peer_bench: --loads between 0 and 1, --n from 1 to 2^31, --repeats at least 1", file=sys.stderr)
        return 2
    arch = args.arch or ("sm_90" if args.build_only else _arch_of_gpu())
    if arch is None:
        print("peer_bench: no GPU answered nvidia-smi: name the architecture with --arch", file=sys.stderr)
        return 2
    if not (arch.startswith("sm_") and arch[3:].isdigit()):
        print(f"peer_bench: --arch {arch!r} is not of the form sm_90", file=sys.stderr)
        return 2

    from kernels.backend import Skip
    from kernels.hashtable import bght, cuco, shim_build

    for module in (cuco, bght):
        done = module.library(arch) if not args.build_only else shim_build.built(module.SHIM_BUILD, arch)
        print(done.text if isinstance(done, Skip) else f"{module.NAME}: built for {arch}", flush=True)
    failed = 0
    for harness in harnesses():
        program = shim_build.built(harness, arch)
        if isinstance(program, Skip):
            print(program.text, flush=True)
            continue
        print(f"{harness.name}: built for {arch}: {program}", flush=True)
        if args.build_only:
            continue
        command = [str(program), str(args.n), ",".join(f"{x:g}" for x in loads), str(args.repeats)]
        try:
            failed |= subprocess.run(command, timeout=RUN_TIMEOUT_S).returncode != 0
        except subprocess.TimeoutExpired:
            print(f"peer_bench: {harness.name} ran past {RUN_TIMEOUT_S} s", file=sys.stderr)
            failed = 1
    return 1 if failed else 0


def _harness(name: str, env: str, header: str):
    from kernels.hashtable import shim_build

    return shim_build.Shim(name, env, header, ROOT / "scripts" / f"{name}.cu", f"rt_{name}", 0,
                           program=True, includes=(ROOT / "scripts" / "peer_bench.cuh",))


def harnesses():
    """The two stand-alone harnesses as builds (cuco_bench against RAYTRACER_CUCO_DIR, bght_bench against
    RAYTRACER_BGHT_DIR)."""
    from kernels.hashtable import bght, cuco

    return (_harness("cuco_bench", cuco.CUCO_ENV, cuco.SHIM_BUILD.header),
            _harness("bght_bench", bght.BGHT_ENV, bght.SHIM_BUILD.header))


if __name__ == "__main__":
    sys.exit(main())
