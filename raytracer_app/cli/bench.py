"""`raytracer-app bench TARGET`: verify and time variants, print a table while running, write CSV.
Everything about a target (variants, options, sizes, units, whether the copy peak matters) comes from its
descriptor in :mod:`kernels.registry`."""

from __future__ import annotations

import sys

from kernels import signals

from kernels.errors import InputError
from kernels.harness.rows import ERROR, FAILED, SKIPPED
from kernels.launch import Launch
from kernels.harness.table import ceiling_lines, csv_text, table_header, table_line, write_csv
from kernels.harness.summary import summary_lines
from kernels.registry import by_name
from kernels.service.bench import run_bench
from kernels.service.bench_request import BenchRequest
from kernels.service.fields import defaults_of, settings_of
from raytracer_app.cli.parser import (Parser, add_list, common, compiler_option, number, option_type, setting_item, setting_type,
                                      whole_number)
from raytracer_app.cli.cluster import cluster_address


def add_parser(sub) -> None:
    """`bench TARGET` for every algorithm, with the options its descriptor declares."""
    from kernels.registry import ALGORITHMS

    bench = sub.add_parser("bench", help="time and verify kernel variants, print a table, optionally write CSV")
    targets = bench.add_subparsers(dest="target", metavar="TARGET", parser_class=Parser, required=True)
    for algorithm in ALGORITHMS:
        _target_parser(targets, algorithm)


def _target_parser(targets, algorithm) -> None:
    """`bench NAME` with the options its descriptor declares; options it does not declare are errors."""
    from kernels.registry import ALIASES

    aliases = [old for old, new in ALIASES.items() if new == algorithm.name]  # earlier names, for scripts
    p = targets.add_parser(algorithm.name, aliases=aliases, help=algorithm.summary, description=algorithm.summary)
    add_list(p, "--variants", default="all", noun="name", metavar="all|NAME,...",
             help="'all' or names separated by commas, or the flag repeated (see --list)")
    p.add_argument("--list", action="store_true", help="list the variants with what each teaches, and exit")
    if algorithm.size:
        size = algorithm.size
        p.add_argument("--n", type=whole_number("--n", 1), default=None,
                       help=f"problem size in {size.unit} (default {size.default['cuda']} on a GPU, "
                            f"{size.default['cpu']} on the CPU, {size.default['sim']} in the simulator)")
    if algorithm.load_input:
        p.add_argument("--input", default=None, help=algorithm.input_help)
    for option in algorithm.options:
        default = option.default if not isinstance(option.default, dict) else option.default["cuda"]
        shown = "x".join(map(str, default)) if isinstance(default, tuple) else default
        if option.sweep:  # several values, one problem each: the one list parser
            add_list(p, option.flag, dest=option.name, default=None, item=option_type(option),
                     choices=option.choices, help=f"{option.help} (default {shown})")
        else:
            p.add_argument(option.flag, dest=option.name, default=None, type=option_type(option),
                           choices=option.choices or None, help=f"{option.help} (default {shown})")
    shapes = algorithm.block_shape_2d
    add_list(p, "--block", default=None, metavar="B1,B2,...", item=None if shapes else whole_number("--block", 1),
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
    groups = {"": p, "measurement": p.add_argument_group("measurement")}
    if algorithm.user is not None:
        groups["user"] = p.add_argument_group("your own variants (docs/user-variants.md)")
        groups["user"].add_argument("--variant-file", action="append", default=None, metavar="FILE",
                                    help="also run the variant this file declares (repeatable); --variants takes "
                                         "its NAME")
    _request_options(p, groups, algorithm)
    m = groups["measurement"]
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
        m.add_argument("--whole-call", action="store_true",
                       help="time the whole call (launch + result on the host, wall time) of best and the "
                            "library peers, and print where best's time goes")
    p.add_argument("--csv", default=None, help="write one row per variant and configuration to this CSV file "
                                               "(an existing file is kept as FILE.~N~)")
    p.add_argument("--json", default=None, help="write a result file: every row with its per-repeat times and a "
                                                "header (device, versions, commit, command, date) for `compare` "
                                                "(docs/results.md; an existing file is kept as FILE.~N~)")
    common(p)
    compiler_option(p, several=True)
    c = p.add_argument_group("on a cluster (docs/cluster.md)")
    cluster_address(c)
    c.add_argument("--on", default=None, metavar="WHERE",
                   help="with --cluster: a GPU model (e.g. H200), any-gpu (the model with the most GPUs; the "
                        "default for cuda), or each (every model, one result file each); cpu and sim runs use "
                        "every worker")


def _request_options(p, groups, algorithm) -> None:
    """An option for every BenchRequest field declared for the command line (kernels.service.fields), in its
    group, with its parser, default and help from that one declaration."""
    defaults = defaults_of(BenchRequest)
    for name, declared in settings_of(BenchRequest).items():
        if not (declared.cli and declared.flag and declared.takes(algorithm)):
            continue
        where = groups.get(declared.group, p)
        default = defaults[name] if defaults[name] != () else None
        if declared.kind is bool:
            where.add_argument(declared.flag, dest=name, action="store_true", help=declared.help)
        elif declared.kind is tuple:  # several values: the one list parser (comma lists, the flag repeated)
            add_list(where, declared.flag, dest=name, item=setting_item(declared.flag, declared), default=default,
                     help=declared.help)
        else:
            where.add_argument(declared.flag, dest=name, type=setting_type(declared.flag, declared), default=default,
                               help=declared.help)


def _request_fields(args) -> dict:
    """The declared fields the command line gave (each option made by :func:`_request_options`)."""
    return {name: getattr(args, name) for name, declared in settings_of(BenchRequest).items()
            if declared.cli and declared.flag and hasattr(args, name)}


def run(args) -> int:
    from kernels.backend import resolve

    if args.compiler and len(args.compiler) > 1:  # each compiler in its own process (bench_compilers.py)
        from raytracer_app.cli import bench_compilers

        return bench_compilers.run(args, args.compiler, resolve(args.backend, args.device))

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
    print(f"run: {request.settings_text()}")
    counted = None
    if getattr(args, "counters", False):
        from raytracer_app.cli import bench_counters

        counted = bench_counters.measure_all(request, args.clock_control)
    if backend.timing_note:
        print(f"note: {backend.timing_note}")
    if not request.wants_peak:
        print(table_header(request.spec.rate_unit))
    finished: list = []
    run = None
    printer = _printer(request, finished)
    try:
        run = run_bench(request, printer)
    except KeyboardInterrupt as exc:  # the rows that finished are kept: printed above, and written as partial
        stopped = signals.say_stopped(exc, len(finished))  # 130 for Ctrl-C, 143 for SIGTERM
    finally:
        printer.flush()
    rows = run.rows if run is not None else finished
    peak = run.peak if run is not None else None
    if run is not None:
        for line in ceiling_lines(run.ceilings):  # what %ceil is against, measured in this run
            print(line)
        _after_rows(args, request, rows, peak, counted)
    partial = run is None
    # each output written even when another failed: a failure to write one never loses the others
    wrote_csv = not csv_path or _write_csv(rows, csv_path, request.input)
    wrote_json = not json_path or _write_json(rows, json_path, args, request, peak, partial,
                                              run.ceilings if run is not None else None)
    if not (wrote_csv and wrote_json):
        return 1
    if partial:
        return stopped
    if run.bad_files:  # the file loaded but did not compile: bad input, as a file that does not load
        for line in run.bad_files:
            print(f"raytracer-app: error: {line}", file=sys.stderr)
        return 2
    bad = [r for r in rows if r.verified in (FAILED, ERROR)]
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
        _request_fields(args), algorithm=algorithm.name, sizes=tuple(sizes),
        options={o.name: getattr(args, o.name) for o in algorithm.options if getattr(args, o.name) is not None},
        launches=tuple(_launches(args, algorithm)), variants=args.variants,
        variant_files=tuple(getattr(args, "variant_file", None) or ()), input=getattr(args, "input", None))
    if getattr(args, "counters", False) and args.processes > 1:
        raise InputError("--processes runs bench's own timed rows, the same in every process; give it without "
                         "--counters")
    return fields, labels


class _Printer:
    """The run's progress as the terminal shows it (``progress``, called by the run), and ``flush`` after it:
    skipped rows said once per reason after the table (on the CPU most GPU variants skip for one reason; a
    line each drowned the timed rows), in the CSV and JSON as rows all the same."""

    def __init__(self, progress):
        self.progress = progress
        self.skipped: dict[str, list] = {}  # reason -> its rows, in order

    def __call__(self, kind, value):
        if kind == "row" and value.verified == SKIPPED:
            self.skipped.setdefault(value.note or "no reason given", []).append(value)
            self.progress("counted", value)
            return
        self.progress(kind, value)

    def flush(self) -> None:
        for line in skipped_lines(self.skipped):
            print(line, flush=True)
        self.skipped = {}


def skipped_lines(skipped: dict) -> list[str]:
    """One line per reason: 'skipped: a, b, c (REASON)', with the sizes where more than one."""
    out = []
    for reason, rows in skipped.items():
        names = list(dict.fromkeys(r.variant for r in rows))
        sizes = list(dict.fromkeys(r.n for r in rows))
        at = f" at n {', '.join(f'{n:,}' for n in sizes)}" if len(sizes) > 1 else ""
        out.append(f"skipped ({len(names)}): {', '.join(names)}{at} ({reason})")
    return out


def _printer(request, finished: list) -> _Printer:
    """The run's progress as the terminal shows it: the peak (then the table's header), each row as it
    finishes, a sweep's progress and the processes' lines on stderr; skipped rows once per reason at the end."""
    sweep = request.problem_count * len(request.launches) > 1
    unit = request.spec.rate_unit

    def progress(kind, value):
        if kind == "peak":
            if unit != "GB/s":  # the table has no %peak column: the copy bandwidth says nothing about ops/s
                pass
            elif value.gbps:
                print(f"peak: {value.gbps:.1f} GB/s measured with a {value.how}; %peak is against it")
            else:
                print(f"peak: not measured ({value.how})")
            print(table_header(unit))
        elif kind == "row":
            finished.append(value)
            print(table_line(value, unit), flush=True)
        elif kind == "counted":  # a skipped row: kept, said once with the others of its reason
            finished.append(value)
        elif kind == "message":
            print(value, file=sys.stderr, flush=True)
        elif kind == "progress" and sweep:
            print(f"progress: {value[0]}/{value[1]}", file=sys.stderr, flush=True)

    return _Printer(progress)


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
    for line in summary_lines(rows, peak, variants):
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
    when it will replace a file (whose old text the writer keeps as a numbered backup); neither may be an input or the other."""
    from kernels.io.writer import overwrite_notice

    paths = {"--csv": getattr(args, "csv", None), "--json": getattr(args, "json", None)}
    for option, path in paths.items():
        if path:
            others = [("--input", getattr(args, "input", None))] + [(o, p) for o, p in paths.items() if o != option]
            notice = overwrite_notice(path, option, others)
            if notice:
                print(notice)
    return paths["--csv"], paths["--json"]


def _write_json(rows, path, args, request, peak, partial: bool = False, ceilings=None) -> bool:
    """The result file for `compare`; when it cannot be written the table above still has the rows.
    ``ceilings``: the run's (its processes' with --processes), else those this process measured."""
    from kernels.harness import results
    from kernels.io.writer import WriteFailed

    result = results.make_result(request, rows, peak, getattr(args, "argv", None), ceilings)
    result.partial = partial
    try:
        results.write_result(path, result, "--json", [("--input", request.input), ("--csv", args.csv)])
    except (WriteFailed, InputError) as exc:
        print(f"raytracer-app: failed: {exc}; the {len(rows)} rows are in the table above", file=sys.stderr)
        return False
    print(f"wrote {len(rows)} rows with their samples to {path}" + ("" if result.commit else " (no git commit known)")
          + (" (partial: the run was interrupted)" if partial else ""))
    return True


def _check_whole_call_names(spec) -> None:
    from kernels.reduction import whole_call

    names = _names(spec)
    unknown = [n for n in names if n != "all" and n not in whole_call.WHOLE_CALL_VARIANTS]
    if unknown or not names:
        raise InputError(f"--whole-call measures {', '.join(whole_call.WHOLE_CALL_VARIANTS)}; "
                         f"not {', '.join(map(repr, unknown)) or 'nothing'}")


def _names(variants) -> list[str]:
    """--variants as a list: its default 'all', or what the list option gave."""
    return [variants] if isinstance(variants, str) else list(variants)


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
    print(table_header())
    names = whole_call.WHOLE_CALL_VARIANTS if _names(args.variants) == ["all"] else _names(args.variants)
    rows = []
    with tuning.retuning(request.retune):
        for problem in request.problems():
            for row in whole_call.run(problem, names, backend, request.repeats):
                print(table_line(row), flush=True)
                rows.append(row)
            if "best" in names:
                for line in whole_call.best_breakdown(whole_call.BestCall(problem, backend)):
                    print(line)
    wrote_csv = not csv_path or _write_csv(rows, csv_path, request.input)
    wrote_json = not json_path or _write_json(rows, json_path, args, request, None)
    if not (wrote_csv and wrote_json):
        return 1
    return 1 if any(r.verified in (FAILED, ERROR) for r in rows) else 0


def _write_csv(rows, csv_path, input_path) -> bool:
    """Write the CSV; when that fails after the run, say so and print the rows so they are not lost."""
    from kernels.io.writer import WriteFailed

    try:
        write_csv(rows, csv_path, "--csv", [("--input", input_path)])
    except (WriteFailed, InputError) as exc:
        print("# the CSV could not be written; its rows follow")
        print(csv_text(rows), end="", flush=True)
        print(f"raytracer-app: failed: {exc}; the {len(rows)} rows are printed above as CSV", file=sys.stderr)
        return False
    print(f"wrote {len(rows)} rows to {csv_path}")
    return True


def _launches(args, algorithm) -> list[Launch]:
    common = dict(grid=getattr(args, "grid", None), grid_sm=getattr(args, "grid_sm", None),
                  items_per_thread=getattr(args, "items_per_thread", None))
    if not args.block:
        return [Launch(None, **common)]
    if algorithm.block_shape_2d:
        from kernels.launch import parse_block

        return [Launch(parse_block(b), **common) for b in args.block]
    return [Launch(b, **common) for b in args.block]
