"""`raytracer-app bench TARGET`: verify and time variants, print a table while running, write CSV."""

from __future__ import annotations

import os
import sys

from kernels import bench
from kernels.errors import InputError
from kernels.variants import select

# Default problem sizes: the seeds' sizes on a GPU, smaller on the CPU, tiny in the simulator.
DEFAULT_N = {
    "reduction": {"cuda": 100_000_000, "cpu": 16 * 2**20, "sim": 4096},
    "histogram": {"cuda": 100 * 2**20, "cpu": 16 * 2**20, "sim": 4096},
    "hashtable": {"cuda": 100 * 2**20 // 4, "cpu": 2**20, "sim": 512},
    "raytrace": {"cuda": 20, "cpu": 20, "sim": 5},
}
DEFAULT_IMAGE = {"raytrace": "1024x1024", "julia": "1000x1000"}
SIM_IMAGE = "32x32"


def variants_of(target: str):
    if target == "reduction":
        from kernels.reduction import VARIANTS
    elif target == "histogram":
        from kernels.histogram import VARIANTS
    elif target == "hashtable":
        from kernels.hashtable import VARIANTS
    elif target == "raytrace":
        from kernels.render_bench import RAYTRACE_VARIANTS as VARIANTS
    else:
        from kernels.render_bench import JULIA_VARIANTS as VARIANTS
    return VARIANTS


def bench_command(args, backend) -> int:
    all_variants = variants_of(args.target)
    if args.list:
        for v in all_variants:
            extra = "; ".join(x for x in (f"seed {v.seed}" if v.seed else "", v.constraints) if x)
            print(f"{v.name:<24} [{v.kind}] {v.description}" + (f" ({extra})" if extra else ""))
        return 0
    variants = select(all_variants, args.variants)
    csv_path = None
    if args.csv:
        from kernels.files import check_output

        csv_path = args.csv
        if os.path.exists(check_output(csv_path, "--csv", [("--input", args.input)])):
            print(f"--csv {csv_path} exists: it will be overwritten")
    problems = _problems(args, backend)
    launches = _launches(args)
    print(f"backend: {backend.label}" + (f"  [{backend.note}]" if backend.note else ""))
    peak = None
    if args.target in ("reduction", "histogram", "hashtable"):
        peak = bench.copy_peak(backend.kind, backend.device)
        if peak.gbps:
            print(f"peak: {peak.gbps:.1f} GB/s measured with a {peak.how}; %peak is against it")
        else:
            print(f"peak: not measured ({peak.how})")
    print(bench.table_header())
    sweep = len(problems) * len(launches) > 1

    def on_row(row):
        line = bench.table_line(row)
        if args.target == "hashtable" and row.timing:
            from kernels.hashtable import rate_note

            line += f"  {rate_note(row.n, row.timing)}"
        print(line, flush=True)

    def on_progress(done, total):
        if sweep and done % len(variants) == 0:
            print(f"progress: {done}/{total}", file=sys.stderr, flush=True)

    rows = bench.run(problems, variants, launches, backend, args.repeats, peak=peak, on_row=on_row, on_progress=on_progress)
    for line in bench.summary_lines(rows, peak, variants):
        print(line)
    if csv_path and not _write_csv(rows, csv_path, args.input):
        return 1
    bad = [r for r in rows if r.verified in (bench.FAILED, bench.ERROR)]
    if bad:
        print(f"{len(bad)} of {len(rows)} runs failed verification or raised", file=sys.stderr)
        return 1
    return 0


def _write_csv(rows, csv_path, input_path) -> bool:
    """Write the CSV; when that fails after the run, say so and print the rows so they are not lost."""
    from kernels.files import WriteFailed

    try:
        bench.write_csv(rows, csv_path, "--csv", [("--input", input_path)])
    except (WriteFailed, InputError) as exc:
        print("# the CSV could not be written; its rows follow")
        print(bench.csv_text(rows), end="", flush=True)
        print(f"raytracer-app: failed: {exc}; the {len(rows)} rows are printed above as CSV", file=sys.stderr)
        return False
    print(f"wrote {len(rows)} rows to {csv_path}")
    return True


def _sizes(args, backend) -> list[int]:
    if args.sizes and args.n is not None:
        raise InputError("give either --n or --sizes, not both")
    if args.sizes:
        return args.sizes
    return [args.n if args.n is not None else DEFAULT_N[args.target][backend.kind]]


def _problems(args, backend) -> list:
    target = args.target
    if args.input and target not in ("reduction", "histogram"):
        raise InputError(f"--input applies to reduction (.npy) and histogram (any file), not {target}")
    if target == "reduction":
        from kernels.reduction import make_problem

        if args.input:
            return [make_problem(args.op, args.dtype, None, args.seed, data=_load_npy(args.input))]
        return [make_problem(args.op, args.dtype, n, args.seed) for n in _sizes(args, backend)]
    if target == "histogram":
        from kernels.histogram import load_input, make_problem

        pattern = args.pattern or "uniform"
        if args.input:
            return [make_problem(data=load_input(args.input))]
        return [make_problem(n, args.seed, pattern=pattern) for n in _sizes(args, backend)]
    if target == "hashtable":
        from kernels.hashtable import make_problem

        return [make_problem(n, args.buckets, args.seed) for n in _sizes(args, backend)]
    from kernels.frames import parse_size

    size = parse_size(args.size or (SIM_IMAGE if backend.kind == "sim" else DEFAULT_IMAGE[target]))
    if target == "raytrace":
        from kernels.render_bench import make_raytrace_problem

        return [make_raytrace_problem(n, size, args.pattern or "uniform", args.seed) for n in _sizes(args, backend)]
    from kernels.render_bench import make_julia_problem

    return [make_julia_problem(size)]


def _load_npy(path):
    from kernels.inputs import read_npy

    return read_npy(path, "--input")


def _launches(args) -> list[bench.Launch]:
    common = dict(grid=args.grid, grid_sm=args.grid_sm, items_per_thread=args.items_per_thread)
    if not args.block:
        return [bench.Launch(None, **common)]
    if args.target in ("raytrace", "julia"):
        from kernels.frames import parse_block

        return [bench.Launch(parse_block(b), **common) for b in args.block.split(",") if b.strip()]
    blocks = []
    for b in args.block.split(","):
        try:
            blocks.append(int(b))
        except ValueError:
            raise InputError(f"--block {b!r} is not a whole number; give block sizes like 128,256") from None
    return [bench.Launch(b, **common) for b in blocks]
