"""The process ncu profiles: ``python -m kernels.counters.child SPEC`` (SPEC: JSON with target, n, options,
seed, launch, variants, device). It builds the same problem the bench timed and runs each variant twice:
once unprofiled (compiling, tuning, warming caches), then inside a profiler window (cuProfilerStart/Stop;
ncu runs with --profile-from-start off) that opens with a marker kernel launched on as many blocks as the
variant's number, so the report's kernels can be told apart without relying on numba's mangled names.

Progress and per-variant failures go to stderr as lines starting with ``@counters``."""

from __future__ import annotations

import json
import sys

PREFIX = "@counters"


def _marker():
    from numba import cuda

    @cuda.jit("void()")
    def counters_marker():
        pass

    return counters_marker


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    from numba import cuda

    from kernels import backend as backends
    from kernels.backend import Skip, memory
    from kernels.harness.bench import one_line
    from kernels.launch import Launch
    from kernels.registry import by_name

    backend = backends.resolve("cuda", spec.get("device", 0))
    backend.activate()
    algorithm = by_name(spec["target"])
    launch = Launch(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in spec.get("launch", {}).items()})
    if spec.get("input"):
        problem = algorithm.make_problem(None, spec.get("options", {}), spec.get("seed", 0),
                                         algorithm.load_input(spec["input"]))
    else:
        problem = algorithm.make_problem(spec["n"], spec.get("options", {}), spec.get("seed", 0))
    by_variant = {v.name: v for v in algorithm.variants}
    marker = _marker()
    names = spec["variants"]
    for i, name in enumerate(names):
        print(f"{PREFIX} {i + 1}/{len(names)} {name}", file=sys.stderr, flush=True)
        variant = by_variant[name]
        try:
            out = variant.run(problem, launch, backend, 1)
            if isinstance(out, Skip):
                print(f"{PREFIX}-skip {i} {out.text}", file=sys.stderr, flush=True)
                continue
            memory.synchronize()
            cuda.profile_start()
            try:
                marker[i + 1, 1]()
                variant.run(problem, launch, backend, 1)
                memory.synchronize()
            finally:
                cuda.profile_stop()
        except Exception as exc:  # noqa: BLE001 - one broken variant is reported, never stops the batch
            print(f"{PREFIX}-skip {i} {one_line(exc)}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
