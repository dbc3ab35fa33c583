"""Cold compile time and launch overhead under each compiler, measured in one run (issue 51's gates "cold
compile no slower, launch overhead no worse").

    python scripts/compiler_overheads.py [--compilers numba-cuda,numba-cuda-mlir] [--launches N] [--kernels K]
                                         [--no-launch] [--json FILE]

Each compiler is measured in a fresh Python process of its own (``RAYTRACER_COMPILER`` set, an empty numba
cache), the compilers alternating in that order, and the figures are printed side by side:

- ``import``: importing the compiler's ``cuda`` module through the seam;
- ``cold compile``: every declared kernel that both compile (the inspector's declarations, each kernel once;
  not those of a variant numba-cuda-mlir lacks a feature for) compiled to PTX for this GPU's architecture
  (sm_90 without one) the way the inspector compiles it, in that fresh process: the total, and the first
  kernel alone (it pays for loading the compiler's back end); ``--kernels K``: the first K of them only;
- ``first launch``: an empty kernel taking one device array, from its first launch call to the end of that
  launch (compile, load, launch);
- ``launch``: that kernel launched ``--launches`` times back to back, then one synchronize: microseconds per
  launch (the host's cost of a launch, what upstream's 5.9 -> 3.0 us compares); and ``launch + sync``: a
  synchronize after each launch, the round trip.

``--no-launch`` measures the import and the compiles only (no GPU needed). Figures go to docs/measurements.md,
not here. Exit status 1 when a child fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COMPILERS = ("numba-cuda", "numba-cuda-mlir")
FIGURES = (("import_s", "import (s)", "{:.2f}"), ("kernels", "kernels compiled", "{}"),
           ("compile_s", "cold compile, all (s)", "{:.2f}"), ("first_compile_s", "  the first kernel (s)", "{:.2f}"),
           ("first_launch_s", "first launch of an empty kernel (s)", "{:.3f}"),
           ("launch_us", "launch, 1 array argument (us)", "{:.2f}"),
           ("launch_sync_us", "launch + synchronize (us)", "{:.2f}"))


def measure(launches: int, with_launch: bool, kernels: int | None = None) -> dict:
    """The child's figures for the compiler ``RAYTRACER_COMPILER`` names (run in a fresh process)."""
    t0 = time.perf_counter()
    from kernels.backend.compiler import active, cuda_module

    cuda = cuda_module()
    figures: dict = {"compiler": active(), "import_s": time.perf_counter() - t0}
    cc = (9, 0)
    if with_launch:
        from kernels.backend import driver

        cc = tuple(driver.compute_capability(0))
    figures["arch"] = f"sm_{cc[0]}{cc[1]}"
    figures.update(_compile_all(cc, kernels))
    if with_launch:
        figures.update(_launch_overhead(cuda, launches))
    return figures


def _compile_all(cc, limit: int | None) -> dict:
    from kernels.inspector.declarations import declaration
    from kernels.inspector.offline_compile import compile_job
    from kernels.registry import ALGORITHMS

    jobs = {}
    both = [(a.name, v.name) for a in ALGORITHMS for v in a.variants if v.inspect is not None and not v.mlir_lacks]
    for target, variant in both:
        decl = declaration(target, variant)
        key = (decl.module, decl.function, repr(decl.args), decl.item, decl.signature)
        jobs.setdefault(key, {"name": f"{target}/{variant}", "module": decl.module, "function": decl.function,
                              "args": list(decl.args) if decl.args is not None else None, "item": decl.item,
                              "signature": decl.signature})
    failed, first, start = [], None, time.perf_counter()
    for job in list(jobs.values())[:limit]:
        t = time.perf_counter()
        try:
            compile_job(job, [cc])
        except Exception as exc:  # noqa: BLE001 - counted and named: one kernel a compiler refuses is a figure
            failed.append(f"{job['name']}: {type(exc).__name__}")
        first = time.perf_counter() - t if first is None else first
    return {"kernels": len(list(jobs)[:limit]) - len(failed), "failed": failed, "compile_s": time.perf_counter() - start,
            "first_compile_s": first}


def _launch_overhead(cuda, launches: int) -> dict:
    import numpy as np

    from kernels.backend import memory

    @cuda.jit
    def empty(a):
        pass

    a = memory.zeros(1, np.float32)
    t = time.perf_counter()
    empty[1, 1](a)
    memory.synchronize()
    first = time.perf_counter() - t
    for _ in range(100):  # warm: the launch path's own first-use costs
        empty[1, 1](a)
    memory.synchronize()
    t = time.perf_counter()
    for _ in range(launches):
        empty[1, 1](a)
    memory.synchronize()
    per_launch = (time.perf_counter() - t) / launches
    rounds = max(1, launches // 10)
    t = time.perf_counter()
    for _ in range(rounds):
        empty[1, 1](a)
        memory.synchronize()
    return {"first_launch_s": first, "launch_us": per_launch * 1e6,
            "launch_sync_us": (time.perf_counter() - t) / rounds * 1e6}


def table(results: list[dict]) -> str:
    names = [r["compiler"] for r in results]
    width = max(len(label) for _, label, _ in FIGURES) + 2
    lines = [f"{'':{width}}" + "".join(f"{n:>18}" for n in names)]
    for key, label, form in FIGURES:
        if all(key not in r for r in results):
            continue
        cells = [form.format(r[key]) if r.get(key) is not None else "-" for r in results]
        lines.append(f"{label:{width}}" + "".join(f"{c:>18}" for c in cells))
    for r in results:
        for failure in r.get("failed", []):
            lines.append(f"{r['compiler']} did not compile {failure}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compilers", default=",".join(COMPILERS))
    parser.add_argument("--launches", type=int, default=20000)
    parser.add_argument("--kernels", type=int, help="compile the first K declared kernels only (default all)")
    parser.add_argument("--no-launch", action="store_true", help="the import and the compiles only (no GPU)")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # the result file of one compiler's process
    args = parser.parse_args(argv)
    if args.child:
        figures = measure(args.launches, not args.no_launch, args.kernels)
        Path(args.child).write_text(json.dumps(figures))
        return 0
    compilers = [c.strip() for c in args.compilers.split(",") if c.strip()]
    unknown = [c for c in compilers if c not in COMPILERS]
    if unknown or not compilers or args.launches < 1 or (args.kernels is not None and args.kernels < 1):
        print(f"compiler_overheads: --compilers takes {', '.join(COMPILERS)}; --launches and --kernels at least 1",
              file=sys.stderr)
        return 2
    results = []
    with tempfile.TemporaryDirectory(prefix="compiler-overheads-") as folder:
        for name in compilers:
            out = os.path.join(folder, f"{name}.json")
            env = {**os.environ, "RAYTRACER_COMPILER": name, "NUMBA_CACHE_DIR": os.path.join(folder, f"cache-{name}"),
                   "RAYTRACER_CACHE_DIR": os.path.join(folder, f"app-{name}")}
            env.pop("NUMBA_ENABLE_CUDASIM", None)
            command = [sys.executable, __file__, "--child", out, "--launches", str(args.launches)]
            command += ["--kernels", str(args.kernels)] if args.kernels else []
            code = subprocess.run(command + (["--no-launch"] if args.no_launch else []), env=env).returncode
            if code != 0 or not os.path.exists(out):
                print(f"compiler_overheads: the {name} process ended with status {code}", file=sys.stderr)
                return 1
            results.append(json.loads(Path(out).read_text()))
    print(f"cold compile ({results[0]['arch']}, each compiler in a fresh process) and launch overhead:")
    print(table(results), end="")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
