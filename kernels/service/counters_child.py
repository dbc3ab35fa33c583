"""The process ncu profiles: ``python -m kernels.service.counters_child [--lineinfo] REQUEST`` (REQUEST: the JSON
of a BenchRequest of one problem and one launch, its variants named; ``--lineinfo``: every kernel and device
function compiled with line information, for Nsight Compute's per-line source counters). It builds the same
problem the bench timed from the same request and runs each variant twice: once unprofiled (compiling,
tuning, warming caches), then inside a profiler window (cuProfilerStart/Stop;
ncu runs with --profile-from-start off) that opens with a marker kernel launched on as many blocks as the
variant's number, so the report's kernels can be told apart without relying on numba's mangled names.

Progress and per-variant failures go to stderr as lines starting with ``@counters``."""

from __future__ import annotations

import json
import sys

from kernels.counters.measure import PREFIX


def _marker():
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    @cuda.jit("void()")
    def counters_marker():
        pass

    return counters_marker


def main(argv: list[str]) -> int:
    from kernels.counters.measure import LINEINFO_FLAG

    if argv and argv[0] == LINEINFO_FLAG:
        from kernels.backend.numba_private import lineinfo_everywhere

        with lineinfo_everywhere():  # before any kernel module is imported or compiles
            return run(argv[1:])
    return run(argv)


def run(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    from kernels import backend as backends
    from kernels.backend import Skip, memory
    from kernels.errors import one_line
    from kernels.service.bench_request import BenchRequest

    recorded = spec.get("backend") or {}
    backend = backends.resolve("cuda", recorded.get("device", 0))
    backend.activate()
    request = BenchRequest.from_json(spec, backend)
    algorithm = request.spec
    launch = request.launches[0]
    problem = next(request.problems())
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
