"""`raytracer-app bench TARGET`: verify and time variants, print a table while running, write CSV.
Everything about a target (variants, options, sizes, units, whether the copy peak matters) comes from its
descriptor in :mod:`kernels.registry`."""

from __future__ import annotations

import os
import sys

from kernels import signals

from kernels.errors import InputError, items, whole_items
from kernels.harness import bench
from kernels.registry import by_name
from kernels.service.bench import run_bench
from kernels.service.bench_request import BenchRequest
from raytracer_app.cli.cluster import cluster_address
from raytracer_app.cli.parser import Parser, common, number, option_type, whole_number, whole_numbers


def add_parser(sub) -> None:
    """`bench TARGET` for every algorithm, with the options its descriptor declares."""
    from kernels.registry import ALGORITHMS

    bench = sub.add_parser("bench", help="time and verify kernel variants, print a table, optionally write CSV")
    targets = bench.add_subparsers(dest="target", metavar="TARGET", parser_class=Parser, required=True)
    for algorithm in ALGORITHMS:
        _target_parser(targets, algorithm)


def _target_parser(targets, algorithm) -> None:
    """`bench NAME` with the options its descriptor declares; options it does not declare are errors."""
    from kernels.backend import MAX_REPEATS

    from kernels.registry import ALIASES

    aliases = [old for old, new in ALIASES.items() if new == algorithm.name]  # earlier names, for scripts
    p = targets.add_parser(algorithm.name, aliases=aliases, help=algorithm.summary, description=algorithm.summary)
    p.add_argument("--variants", default="all", help="'all' or names separated by commas (see --list)")
    p.add_argument("--list", action="store_true", help="list the variants with what each teaches, and exit")
    if algorithm.size:
        size = algorithm.size
        p.add_argument("--n", type=whole_number("--n", 1), default=None,
                       help=f"problem size in {size.unit} (default {size.default['cuda']} on a GPU, "
                            f"{size.default['cpu']} on the CPU, {size.default['sim']} in the simulator)")
        p.add_argument("--sizes", type=whole_numbers("--sizes"), default=None, help="sweep over sizes N1,N2,...")
    if algorithm.load_input:
        p.add_argument("--input", default=None, help=algorithm.input_help)
    for option in algorithm.options:
        default = option.default if not isinstance(option.default, dict) else option.default["cuda"]
        shown = "x".join(map(str, default)) if isinstance(default, tuple) else default
        p.add_argument(option.flag, dest=option.name, default=None, type=option_type(option),
                       choices=option.choices or None, help=f"{option.help} (default {shown})")
    shapes = algorithm.block_shape_2d
    p.add_argument("--block", default=None,
                   help="block shapes to sweep, BXxBY,... (default 16x16)" if shapes else
                   "block sizes to sweep, B1,B2,... (default: each variant's own, the seed's launch)")
    if not shapes:
        grid = p.add_mutually_exclusive_group()
        grid.add_argument("--grid", type=whole_number("--grid", 1), default=None, help="blocks in the grid")
        grid.add_argument("--grid-sm", type=number("--grid-sm", positive=True), default=None,
                          help="blocks as a multiple of the SM count")
    if algorithm.has_items_per_thread:
        p.add_argument("--items-per-thread", type=whole_number("--items-per-thread", 1), default=None,
                       help="elements per thread, for variants that have one (best)")
    p.add_argument("--repeats", type=whole_number("--repeats", 1), default=None,
                   help=f"timed repeats after a warm-up (default 10, 2 in the simulator; at most {MAX_REPEATS}, 5 in the simulator)")
    m = p.add_argument_group("measurement")
    m.add_argument("--tolerance", type=number("--tolerance", positive=True), default=None,
                   help="after --repeats, keep repeating until the median moves by at most this fraction "
                        "(e.g. 0.01), up to --max-repeats or --max-seconds (default: exactly --repeats)")
    m.add_argument("--max-repeats", type=whole_number("--max-repeats", 1), default=None,
                   help="cap on repeats with --tolerance (default 10 x --repeats)")
    m.add_argument("--max-seconds", type=number("--max-seconds", positive=True), default=3.0,
                   help="time cap per timing with --tolerance (default 3)")
    m.add_argument("--warmup", type=whole_number("--warmup", 1), default=1,
                   help="untimed calls of each row before its timed repeats (default 1: the first call, which "
                        "compiles, is never timed)")
    m.add_argument("--rounds", type=whole_number("--rounds", 1), default=1,
                   help="spread each row's repeats over this many rounds through the rows, each round in a "
                        "shuffled order (default 1: the repeats back to back); for compare, docs/results.md")
    m.add_argument("--processes", type=whole_number("--processes", 1), default=1,
                   help="run the bench in this many fresh processes one after another, each taking its share "
                        "of --repeats, and join their rows (default 1); compare then judges the processes' "
                        "medians, docs/results.md")
    m.add_argument("--cold", action="store_true",
                   help="also time every GPU variant with L2 flushed before each repeat (cold_median_ms)")
    m.add_argument("--resources", action="store_true",
                   help="add each GPU row's registers, shared memory and theoretical occupancy at the launch "
                        "used (the kernel inspector's compile for this GPU's architecture, sm_90 without one)")
    m.add_argument("--counters", action="store_true",
                   help="read each GPU variant's hardware counters with Nsight Compute (ncu, in a child process): "
                        "DRAM %% of peak and bytes, achieved occupancy, L2 hit rate, bank conflicts, instructions, "
                        "branch efficiency, top warp stall; then the guided analysis")
    m.add_argument("--clock-control", choices=("none", "base"), default="none",
                   help="ncu's clock control with --counters: none (the GPU boosts as in the timed runs, default) "
                        "or base (locked to base clocks)")
    if algorithm.name == "reduction":
        m.add_argument("--retune", action="store_true",
                       help="redo best's tuning sweep for this device and size (else its cached launch is used)")
        m.add_argument("--whole-call", action="store_true",
                       help="time the whole call (launch + result on the host, wall time) of best and the "
                            "library peers, and print where best's time goes")
    if algorithm.user is not None:
        u = p.add_argument_group("your own variants (docs/user-variants.md)")
        u.add_argument("--variant-file", action="append", default=None, metavar="FILE",
                       help="also run the variant this file declares (repeatable); --variants takes its NAME")
        u.add_argument("--variant-timeout", type=number("--variant-timeout", positive=True), default=10.0,
                       help="seconds a variant file's run may go without finishing a call before its process is "
                            "stopped (default 10)")
    p.add_argument("--seed", type=whole_number("--seed", 0), default=0, help="seed of the random input (default 0)")
    p.add_argument("--csv", default=None, help="write one row per variant and configuration to this CSV file "
                                               "(an existing file is overwritten)")
    p.add_argument("--json", default=None, help="write a result file: every row with its per-repeat times and a "
                                                "header (device, versions, commit, command, date) for `compare` "
                                                "(docs/results.md; an existing file is overwritten)")
    common(p)
    c = p.add_argument_group("on a cluster (docs/cluster.md)")
    cluster_address(c)
    c.add_argument("--on", default=None, metavar="WHERE",
                   help="with --cluster: a GPU model (e.g. H200), any-gpu (the model with the most GPUs; the "
                        "default for cuda), or each (every model, one result file each); cpu and sim runs use "
                        "every worker")


def run(args) -> int:
    from kernels.backend import resolve

    if args.cluster:  # on a Dask cluster (docs/cluster.md); without one nothing of Dask is imported
        from raytracer_app.cli import bench_remote

        return bench_remote.run(args, *bench_fields(args))
    return bench_command(args, resolve(args.backend, args.device))


def bench_command(args, backend) -> int:
    algorithm = by_name(args.target)
    if args.list:
        return _list(args, backend, algorithm)
    if getattr(args, "whole_call", False):
        return _whole_call(args, backend)
    request = bench_request(args, backend)
    csv_path, json_path = _check_outputs(args)
    print(f"backend: {backend.label}" + (f"  [{backend.note}]" if backend.note else ""))
    counted = None
    if getattr(args, "counters", False):
        from raytracer_app.cli import bench_counters

        counted = bench_counters.measure_all(request, args.clock_control)
    if backend.timing_note:
        print(f"note: {backend.timing_note}")
    if not request.wants_peak:
        print(bench.table_header())
    finished: list = []
    run = None
    try:
        run = run_bench(request, _printer(request, finished))
    except KeyboardInterrupt as exc:  # the rows that finished are kept: printed above, and written as partial
        stopped = signals.status_of(exc)  # 130 for Ctrl-C, 143 for SIGTERM (kernels/signals.py)
        print(f"raytracer-app: {'terminated' if stopped == 143 else 'interrupted'} after {len(finished)} row(s)",
              file=sys.stderr)
    rows = run.rows if run is not None else finished
    peak = run.peak if run is not None else None
    if run is not None:
        _after_rows(args, request, rows, peak, counted)
    partial = run is None
    if csv_path and not _write_csv(rows, csv_path, request.input):
        return 1
    if json_path and not _write_json(rows, json_path, args, request, peak, partial):
        return 1
    if partial:
        return stopped
    if run.bad_files:  # the file loaded but did not compile: bad input, as a file that does not load
        for line in run.bad_files:
            print(f"raytracer-app: error: {line}", file=sys.stderr)
        return 2
    bad = [r for r in rows if r.verified in (bench.FAILED, bench.ERROR)]
    if bad:
        print(f"{len(bad)} of {len(rows)} runs failed verification or raised", file=sys.stderr)
        return 1
    return 0


def bench_request(args, backend, **changes) -> BenchRequest:
    """The command line's BenchRequest: every bound checked in one place, refusals naming the options."""
    fields, labels = bench_fields(args)
    return BenchRequest(**{**fields, "backend": backend, **changes}, labels=labels)


def bench_fields(args) -> tuple[dict, dict]:
    """The request's fields from the command line (all but its backend), and the words naming them."""
    algorithm = by_name(args.target)
    given_sizes, n = getattr(args, "sizes", None), getattr(args, "n", None)
    if given_sizes and n is not None:
        raise InputError("give either --n or --sizes, not both")
    sizes = given_sizes or ([n] if n is not None else [])
    labels = {"sizes": "--sizes" if given_sizes else "--n"}
    fields = dict(
        algorithm=algorithm.name, sizes=tuple(sizes),
        options={o.name: getattr(args, o.name) for o in algorithm.options if getattr(args, o.name) is not None},
        launches=tuple(_launches(args, algorithm)), variants=args.variants,
        variant_files=tuple(getattr(args, "variant_file", None) or ()), repeats=args.repeats, rounds=args.rounds,
        warmup=args.warmup,
        processes=args.processes, cold=args.cold, input=getattr(args, "input", None), seed=args.seed,
        tolerance=args.tolerance, max_repeats=args.max_repeats, max_seconds=args.max_seconds,
        retune=bool(getattr(args, "retune", False)), variant_timeout=getattr(args, "variant_timeout", 10.0))
    if getattr(args, "counters", False) and args.processes > 1:
        raise InputError("--processes runs bench's own timed rows, the same in every process; give it without "
                         "--counters")
    return fields, labels


def _printer(request, finished: list):
    """The run's progress as the terminal shows it: the peak (then the table's header), each row as it
    finishes, a sweep's progress and the processes' lines on stderr."""
    sweep = request.problem_count * len(request.launches) > 1

    def progress(kind, value):
        if kind == "peak":
            if value.gbps:
                print(f"peak: {value.gbps:.1f} GB/s measured with a {value.how}; %peak is against it")
            else:
                print(f"peak: not measured ({value.how})")
            print(bench.table_header())
        elif kind == "row":
            finished.append(value)
            print(bench.table_line(value), flush=True)
        elif kind == "message":
            print(value, file=sys.stderr, flush=True)
        elif kind == "progress" and sweep:
            print(f"progress: {value[0]}/{value[1]}", file=sys.stderr, flush=True)

    return progress


def _after_rows(args, request, rows, peak, counted) -> None:
    """What follows the table: resources, counters and the guided analysis, clocks, best against its peers."""
    variants = request.spec.variants
    if getattr(args, "resources", False):
        from kernels.inspector.bench_columns import add_resources

        used = add_resources(rows, request.algorithm, request.backend)
        print(f"resources ({used}): " + "; ".join(f"{r.variant} {r.registers} registers, {r.shared_bytes} B shared, "
                                                  f"{r.occupancy_pct}% occupancy" for r in rows if r.registers != ""))
    if counted is not None:
        from raytracer_app.cli import bench_counters

        bench_counters.attach(rows, counted)
        bench_counters.print_counters(rows, variants, peak)
    if request.backend.is_gpu:
        from raytracer_app.cli.bench_counters import clocks_note

        if clocks_note(rows):
            print(clocks_note(rows))
    for line in bench.summary_lines(rows, peak, variants):
        print(line)
    if any("tuned:" in r.note for r in rows):
        from kernels.launch import tuning

        print(f"tuning cache: {tuning.cache_path()}")


def _list(args, backend, algorithm) -> int:
    """--list: every variant with what it teaches (the variant files' too, loaded in their child)."""
    from kernels.service.bench import load_variant_files

    request = BenchRequest(algorithm.name, backend, variant_files=tuple(getattr(args, "variant_file", None) or ()),
                           variant_timeout=getattr(args, "variant_timeout", 10.0))
    users = load_variant_files(request)
    try:
        for v in (*algorithm.variants, *users):
            source = f"seed {v.seed}" if v.seed[:1].isdigit() else v.seed  # a seed number, or a paper
            extra = "; ".join(x for x in (source, v.rules) if x)
            print(f"{v.name:<24} [{v.kind}] {v.description}" + (f" ({extra})" if extra else ""))
    finally:
        if users:
            from kernels.user_variants import loader

            loader.end_children()
    return 0


def _check_outputs(args):
    """--csv and --json checked before the run (a bad path is one line, before any timing), each said
    when it will overwrite a file; neither may be an input or the other."""
    from kernels.io.writer import check_output

    paths = {"--csv": getattr(args, "csv", None), "--json": getattr(args, "json", None)}
    for option, path in paths.items():
        if path:
            others = [("--input", getattr(args, "input", None))] + [(o, p) for o, p in paths.items() if o != option]
            if os.path.exists(check_output(path, option, others)):
                print(f"{option} {path} exists: it will be overwritten")
    return paths["--csv"], paths["--json"]


def _write_json(rows, path, args, request, peak, partial: bool = False) -> bool:
    """The result file for `compare`; when it cannot be written the table above still has the rows."""
    from kernels.harness import results
    from kernels.io.writer import WriteFailed

    result = results.make_result(request, rows, peak, getattr(args, "argv", None))
    result.partial = partial
    try:
        results.write_result(path, result, "--json", [("--input", request.input), ("--csv", args.csv)])
    except (WriteFailed, InputError) as exc:
        print(f"raytracer-app: failed: {exc}; the {len(rows)} rows are in the table above", file=sys.stderr)
        return False
    print(f"wrote {len(rows)} rows with their samples to {path}" + ("" if result.commit else " (no git commit known)")
          + (" (partial: the run was interrupted)" if partial else ""))
    return True


def _check_whole_call_names(spec: str) -> None:
    from kernels.reduction import whole_call

    names = items(spec, "--variants", "name")
    unknown = [n for n in names if n != "all" and n not in whole_call.WHOLE_CALL_VARIANTS]
    if unknown or not names:
        raise InputError(f"--whole-call measures {', '.join(whole_call.WHOLE_CALL_VARIANTS)}; "
                         f"not {', '.join(map(repr, unknown)) or 'nothing'}")


def _whole_call(args, backend) -> int:
    """--whole-call: wall time per call of best (lean and plain) and the peers, then best's breakdown."""
    from kernels.launch import tuning
    from kernels.reduction import whole_call

    for given, option in ((args.rounds > 1, "--rounds"), (args.processes > 1, "--processes"),
                          (getattr(args, "counters", False), "--counters")):
        if given:
            raise InputError(f"{option} applies to bench's own kernel rows; give it without --whole-call")
    _check_whole_call_names(args.variants)
    if not backend.is_gpu:
        raise InputError("--whole-call times launches on a real GPU; it needs the cuda backend")
    request = bench_request(args, backend, variants="all")
    csv_path, json_path = _check_outputs(args)
    print(f"backend: {backend.label}" + (f"  [{backend.note}]" if backend.note else ""))
    print(bench.table_header())
    names = whole_call.WHOLE_CALL_VARIANTS if args.variants.strip() == "all" else \
        items(args.variants, "--variants", "name")
    rows = []
    with tuning.retuning(request.retune):
        for problem in request.problems():
            for row in whole_call.run(problem, names, backend, request.repeats):
                print(bench.table_line(row), flush=True)
                rows.append(row)
            if "best" in names:
                for line in whole_call.best_breakdown(whole_call.BestCall(problem, backend)):
                    print(line)
    if csv_path and not _write_csv(rows, csv_path, request.input):
        return 1
    if json_path and not _write_json(rows, json_path, args, request, None):
        return 1
    return 1 if any(r.verified in (bench.FAILED, bench.ERROR) for r in rows) else 0


def _write_csv(rows, csv_path, input_path) -> bool:
    """Write the CSV; when that fails after the run, say so and print the rows so they are not lost."""
    from kernels.io.writer import WriteFailed

    try:
        bench.write_csv(rows, csv_path, "--csv", [("--input", input_path)])
    except (WriteFailed, InputError) as exc:
        print("# the CSV could not be written; its rows follow")
        print(bench.csv_text(rows), end="", flush=True)
        print(f"raytracer-app: failed: {exc}; the {len(rows)} rows are printed above as CSV", file=sys.stderr)
        return False
    print(f"wrote {len(rows)} rows to {csv_path}")
    return True


def _launches(args, algorithm) -> list[bench.Launch]:
    common = dict(grid=getattr(args, "grid", None), grid_sm=getattr(args, "grid_sm", None),
                  items_per_thread=getattr(args, "items_per_thread", None))
    if not args.block:
        return [bench.Launch(None, **common)]
    if algorithm.block_shape_2d:
        from kernels.launch import parse_block

        return [bench.Launch(parse_block(b), **common) for b in items(args.block, "--block")]
    blocks = whole_items(args.block, "--block")
    return [bench.Launch(b, **common) for b in blocks]
