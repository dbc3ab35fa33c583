"""`raytracer-app bench TARGET`: verify and time variants, print a table while running, write CSV.
Everything about a target (variants, options, sizes, units, whether the copy peak matters) comes from its
descriptor in :mod:`kernels.registry`."""

from __future__ import annotations

import os
import sys

from kernels.harness import bench
from kernels.registry import by_name
from kernels.errors import InputError, items, whole_items
from kernels.harness.variants import select
from raytracer_app.cli_options import refuse_launch_options_on_the_host


def bench_command(args, backend) -> int:
    algorithm = by_name(args.target)
    users = _user_variants(args, backend)
    try:
        return _bench(args, backend, algorithm, users)
    finally:
        if users:
            from kernels.user_variants import loader

            loader.end_children()


def _user_variants(args, backend) -> list:
    """The --variant-file variants, each loaded in the user-variant child process (a file that does not
    load is one line and exit 2, before anything runs)."""
    paths = getattr(args, "variant_file", None) or []
    if not paths:
        return []
    from kernels.user_variants import loader

    users = []
    for path in paths:
        v = loader.load(path, backend, args.variant_timeout)
        if v.run.target != args.target:
            raise InputError(f"--variant-file {path} declares TARGET {v.run.target!r}; this is `bench {args.target}`")
        if v.name in {u.name for u in users}:
            raise InputError(f"--variant-file {path}: NAME {v.name!r} is also the NAME of {users[-1].run.file.path}")
        users.append(v)
    return users


def _bench(args, backend, algorithm, users) -> int:
    all_variants = (*algorithm.variants, *users)
    if args.list:
        for v in all_variants:
            source = f"seed {v.seed}" if v.seed[:1].isdigit() else v.seed  # a seed number, or a paper
            extra = "; ".join(x for x in (source, v.rules) if x)
            print(f"{v.name:<24} [{v.kind}] {v.description}" + (f" ({extra})" if extra else ""))
        return 0
    if getattr(args, "whole_call", False):
        _check_whole_call_names(args.variants)
        variants = algorithm.variants
    else:
        variants = select(all_variants, args.variants)
    csv_path, json_path = _check_outputs(args)
    args.repeats = backend.caps.check_repeats(args.repeats)
    policy = _policy(args, backend)
    shares = _process_shares(args)
    launches = _launches(args, algorithm)
    refuse_launch_options_on_the_host(args, backend, ("block", "grid", "grid_sm", "items_per_thread"))
    options = algorithm.options_for({o.name: getattr(args, o.name) for o in algorithm.options}, backend)
    problems, count = _problems(args, algorithm, options, backend)
    print(f"backend: {backend.label}" + (f"  [{backend.note}]" if backend.note else ""))
    counted = None
    if getattr(args, "counters", False):
        from raytracer_app import cli_counters

        if getattr(args, "whole_call", False):
            raise InputError("--counters measures bench's own kernel rows; give it without --whole-call")
        sizes = [None] if getattr(args, "input", None) else _sizes(args, algorithm, backend)
        counted = cli_counters.measure_all(args, algorithm, variants, launches, sizes, options, backend)
    if backend.timing_note:
        print(f"note: {backend.timing_note}")
    peak = None
    if algorithm.measures_copy_peak:
        peak = bench.copy_peak(backend)
        if peak.gbps:
            print(f"peak: {peak.gbps:.1f} GB/s measured with a {peak.how}; %peak is against it")
        else:
            print(f"peak: not measured ({peak.how})")
    print(bench.table_header())
    sweep = count * len(launches) > 1

    def on_row(row):
        print(bench.table_line(row), flush=True)

    def on_progress(done, total):
        if sweep and done % len(variants) == 0:
            print(f"progress: {done}/{total}", file=sys.stderr, flush=True)

    if getattr(args, "whole_call", False):
        rows = _whole_call_rows(args, problems, backend, on_row)
    elif args.processes > 1:
        from raytracer_app import cli_processes

        rows = cli_processes.run(args, backend, shares, peak.gbps if peak else None, on_row)
    else:
        with _retuning(args):
            rows = bench.run(problems, variants, launches, backend, args.repeats, peak=peak, unit=algorithm.unit,
                             on_row=on_row, on_progress=on_progress, problem_count=count, policy=policy,
                             cold=args.cold, rounds=args.rounds)
    if getattr(args, "resources", False):
        from kernels.inspector.bench_columns import add_resources

        used = add_resources(rows, algorithm.name, backend)
        print(f"resources ({used}): " + "; ".join(f"{r.variant} {r.registers} registers, {r.shared_bytes} B shared, "
                                                  f"{r.occupancy_pct}% occupancy" for r in rows if r.registers != ""))
    if counted is not None:
        from raytracer_app import cli_counters

        cli_counters.attach(rows, counted, len(variants), len(launches))
        cli_counters.print_counters(rows, variants, peak)
    if backend.is_gpu:
        from raytracer_app.cli_counters import clocks_note

        if clocks_note(rows):
            print(clocks_note(rows))
    for line in bench.summary_lines(rows, peak, variants):
        print(line)
    if any("tuned:" in r.note for r in rows):
        from kernels.launch import tuning

        print(f"tuning cache: {tuning.cache_path()}")
    if csv_path and not _write_csv(rows, csv_path, getattr(args, "input", None)):
        return 1
    if json_path and not _write_json(rows, json_path, args, backend, peak):
        return 1
    broken = [u.run.bad_file for u in users if u.run.bad_file]
    if broken:  # the file loaded but did not compile: bad input, as a file that does not load
        for line in broken:
            print(f"raytracer-app: error: {line}", file=sys.stderr)
        return 2
    bad = [r for r in rows if r.verified in (bench.FAILED, bench.ERROR)]
    if bad:
        print(f"{len(bad)} of {len(rows)} runs failed verification or raised", file=sys.stderr)
        return 1
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


def _write_json(rows, path, args, backend, peak) -> bool:
    """The result file for `compare`; when it cannot be written the table above still has the rows."""
    from kernels.harness import results
    from kernels.io.writer import WriteFailed

    options = {k: v for k, v in vars(args).items() if k != "argv"}
    result = results.make_result(args.target, rows, backend, peak, getattr(args, "argv", None), options)
    try:
        results.write_result(path, result, "--json", [("--input", getattr(args, "input", None)), ("--csv", args.csv)])
    except (WriteFailed, InputError) as exc:
        print(f"raytracer-app: failed: {exc}; the {len(rows)} rows are in the table above", file=sys.stderr)
        return False
    print(f"wrote {len(rows)} rows with their samples to {path}" + ("" if result.commit else " (no git commit known)"))
    return True


def _policy(args, backend):
    """The timers' measurement policy from --tolerance, --max-repeats, --max-seconds (see kernels.timing)."""
    from kernels.timing import Policy

    if args.max_repeats is not None:
        if args.tolerance is None:
            raise InputError("--max-repeats applies with --tolerance (the stopping rule); give both")
        backend.caps.check_repeats(args.max_repeats, "--max-repeats")
        if args.max_repeats < args.repeats:
            raise InputError(f"--max-repeats {args.max_repeats} is below --repeats {args.repeats}")
    if args.tolerance is not None and args.tolerance >= 1:
        raise InputError(f"--tolerance {args.tolerance} must be a fraction below 1, e.g. 0.01 for 1 percent")
    if args.cold and not backend.is_gpu:
        raise InputError("--cold flushes a GPU's L2 cache; it needs the cuda backend")
    from kernels.harness.rounds import check_rounds

    check_rounds(args.rounds, args.repeats, args.tolerance)
    if args.rounds > 1 and getattr(args, "whole_call", False):
        raise InputError("--rounds spreads bench's own kernel rows; give it without --whole-call")
    return Policy(tolerance=args.tolerance, max_repeats=args.max_repeats, max_seconds=args.max_seconds)


def _process_shares(args) -> list[int]:
    """Each process's repeats with --processes (docs/results.md); the options it cannot take are refused."""
    from kernels.harness.processes import check_processes

    shares = check_processes(args.processes, args.repeats, args.rounds)
    if args.processes > 1:
        clash = [name for name, given in (("--tolerance", args.tolerance is not None),
                                          ("--whole-call", getattr(args, "whole_call", False)),
                                          ("--counters", getattr(args, "counters", False)),
                                          ("--retune", getattr(args, "retune", False))) if given]
        if clash:
            raise InputError(f"--processes runs bench's own timed rows, the same in every process; give it "
                             f"without {', '.join(clash)}")
    return shares


def _check_whole_call_names(spec: str) -> None:
    from kernels.reduction import whole_call

    names = items(spec, "--variants")
    unknown = [n for n in names if n != "all" and n not in whole_call.WHOLE_CALL_VARIANTS]
    if unknown or not names:
        raise InputError(f"--whole-call measures {', '.join(whole_call.WHOLE_CALL_VARIANTS)}; "
                         f"not {', '.join(map(repr, unknown)) or 'nothing'}")


def _retuning(args):
    from kernels.launch import tuning

    return tuning.retuning(bool(getattr(args, "retune", False)))


def _whole_call_rows(args, problems, backend, on_row):
    """--whole-call: wall time per call of best (lean and plain) and the peers, then best's breakdown."""
    from kernels.reduction import whole_call

    if not backend.is_gpu:
        raise InputError("--whole-call times launches on a real GPU; it needs the cuda backend")
    names = whole_call.WHOLE_CALL_VARIANTS if args.variants.strip() == "all" else \
        items(args.variants, "--variants")
    rows = []
    with _retuning(args):
        for problem in problems:
            for row in whole_call.run(problem, names, backend, args.repeats):
                on_row(row)
                rows.append(row)
            if "best" in names:
                for line in whole_call.best_breakdown(whole_call.BestCall(problem, backend)):
                    print(line)
    return rows


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


def _sizes(args, algorithm, backend) -> list[int]:
    if algorithm.size is None:
        return [0]
    if args.sizes and args.n is not None:
        raise InputError("give either --n or --sizes, not both")
    option = "--sizes" if args.sizes else "--n"
    sizes = args.sizes or [args.n if args.n is not None else algorithm.size.default_for(backend)]
    return [algorithm.size.check(n, backend, option) for n in sizes]


def _problems(args, algorithm, options: dict, backend):
    """A lazy sequence of problems (each input is built when its turn comes) and how many there are."""
    path = getattr(args, "input", None)
    if path:
        if args.n is not None or args.sizes:
            raise InputError("--input sets the problem size; give --n / --sizes or --input, not both")
        data = algorithm.load_checked(path, options, backend)  # the estimate --n gets, before a byte is read
        return [algorithm.make_problem(None, options, args.seed, data)], 1
    sizes = _sizes(args, algorithm, backend)
    sweep = algorithm.size is not None and args.sizes
    for n in sizes:
        algorithm.check_memory(n, options, backend, "--sizes" if sweep else "--n")
    first = algorithm.make_problem(sizes[0], options, args.seed)  # bad options fail now, before the header

    def build():
        yield first
        for n in sizes[1:]:
            yield algorithm.make_problem(n, options, args.seed)

    return build(), len(sizes)


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
