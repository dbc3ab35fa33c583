"""`raytracer-app access TARGET VARIANT`: what each warp of a GPU variant does to memory, line by line, from
a traced run in numba's CUDA simulator (no GPU needed): per kernel the requests, sectors per request, bank
conflicts per request and active lanes, then the lines that cost most. ``--measured`` sets Nsight Compute's
figures for the same launch beside them (a GPU and ncu needed)."""

from __future__ import annotations

import sys

from kernels.errors import InputError, whole
from raytracer_app.cli.cluster import cluster_address, on_option, one_place
from raytracer_app.cli.parser import common, compiler_option, number, option_type, whole_number


def add_parser(subparsers) -> None:
    from kernels.access.planning import DEFAULT_BLOCKS, SIM
    from kernels.registry import ALGORITHMS

    p = subparsers.add_parser("access", help="trace a GPU variant in the CUDA simulator: each line's warp requests, "
                              "sectors, bank conflicts and active lanes (no GPU needed)")
    targets = p.add_subparsers(dest="target", metavar="TARGET", parser_class=type(p), required=True)
    for algorithm in ALGORITHMS:
        t = targets.add_parser(algorithm.name, help=algorithm.summary, description=algorithm.summary)
        t.add_argument("variant", nargs="?", default=None, help="a GPU variant of the target (see bench TARGET --list)")
        if algorithm.user is not None:
            t.add_argument("--variant-file", default=None, metavar="FILE",
                           help="trace your own variant from FILE (docs/user-variants.md); VARIANT may be left out")
            t.add_argument("--variant-timeout", type=number("--variant-timeout", positive=True), default=10.0,
                           help="seconds the file's code may run without finishing a traced block or a call "
                                "before its process is stopped (default 10, as bench's)")
        if algorithm.size is not None:
            t.add_argument("--n", type=whole_number("--n", 1), default=None,
                           help=f"problem size in {algorithm.size.unit} (default "
                                f"{algorithm.size.default_for(SIM)}, the simulator's)")
        for option in algorithm.options:
            t.add_argument(option.flag, dest=option.name, default=None, type=option_type(option),
                           choices=option.choices or None, help=f"{option.help} (default: the simulator's)")
        t.add_argument("--block", default=None, help="threads per block: B, or BXxBY for the image kernels "
                                                     "(default: the variant's)")
        t.add_argument("--blocks", type=whole_number("--blocks", 1), default=DEFAULT_BLOCKS,
                       help=f"blocks traced per launch: all of a grid this small, else the first half of them and "
                            f"the rest spread to the last block (default {DEFAULT_BLOCKS})")
        t.add_argument("--lines", type=whole_number("--lines", 1), default=5,
                       help="how many of the costliest lines to show per kernel (default 5)")
        t.add_argument("--seed", type=whole_number("--seed", 0), default=0, help="seed of the random input (default 0)")
        t.add_argument("--json", default=None, help="also write the result as JSON to this file (an existing one is kept as FILE.~N~)")
        t.add_argument("--measured", action="store_true",
                       help="also read the same metrics with Nsight Compute on the GPU for the same launch, and "
                            "show both with the difference (needs a GPU and ncu)")
        common(t)
        compiler_option(t)
        c = t.add_argument_group("on a cluster, with --measured (docs/cluster.md)")
        cluster_address(c)
        on_option(c, "to measure")


def run(args) -> int:
    if not args.cluster:
        return access_command(args)
    if not args.measured:
        raise InputError("--cluster measures on a cluster's GPU: it applies with --measured (the trace itself runs "
                         "here, in the CUDA simulator)")
    from kernels.cluster import remote
    from kernels.cluster.worker_side import measure_access

    client = remote.connect(args.cluster, args.certs)
    try:
        backend, resources = one_place(args, client)
        return access_command(args, (backend, lambda job: remote.call(client, measure_access, job,
                                                                      resources=resources)))
    finally:
        client.close()


def access_command(args, remote_gpu=None) -> int:
    """The trace here; with --measured, Nsight Compute's figures from this machine's GPU or, with
    ``remote_gpu`` ((backend, measure: job -> (figures, lines))), from a cluster's."""
    from kernels import access
    from kernels import backend as backends
    from kernels.access import planning
    from kernels.access import report
    from kernels.registry import by_name

    spec = by_name(args.target)
    block = _block(args.block, spec.block_shape_2d)
    backend = None
    limits = planning.MODEL_LIMITS
    choice = backends.choice(args.backend)
    if args.measured:
        backend = remote_gpu[0] if remote_gpu else backends.resolve(args.backend, args.device)
        if not backend.is_gpu:
            raise InputError("--measured reads Nsight Compute's counters on a GPU, and this run has none (the trace "
                             "itself needs no GPU: leave --measured out)")
        limits = backend.limits
    elif not (choice.is_auto or choice.is_simulator) or args.device is not None:
        raise InputError(f"--backend {args.backend} / --device apply to `access` only with --measured (the trace "
                         "always runs in the CUDA simulator)")
    json_path = _check_json(args)
    options = {o.name: getattr(args, o.name) for o in spec.options}
    job = planning.plan(args.target, args.variant, n=getattr(args, "n", None), options=options, seed=args.seed,
                        block=block, blocks=args.blocks, variant_file=getattr(args, "variant_file", None),
                        variant_timeout=getattr(args, "variant_timeout", None),
                        limits=limits)
    measured = device = None
    lines: dict = {}
    if backend is not None:
        from kernels.access.measured import measure

        print(f"measuring {job.label} with Nsight Compute on {backend.device_name} ...", file=sys.stderr, flush=True)
        if remote_gpu:
            measured, lines = remote_gpu[1](job)
        else:
            measured = measure(job, backend, on_progress=lambda done, total, text: None, lines_out=lines)
        device = backend.device_name
    if limits is planning.MODEL_LIMITS:
        print(f"grids sized for {limits.name}; the trace runs in the CUDA simulator", file=sys.stderr, flush=True)
    try:
        result = access.trace(job, on_progress=_progress)
    finally:
        from kernels.access import runner

        runner.end()
    print(report.format_result(result, args.lines, measured, device or ""))
    if lines:
        from kernels.counters.lines import MEASURED, fill_sources
        from kernels.counters.lines_text import table

        for kernel in lines.values():  # the same ncu run's source counters, per Python line
            print(table(fill_sources(kernel), MEASURED, args.lines))
    if json_path is not None:
        from kernels.access import files
        from kernels.harness.results import device_info

        written = files.write(json_path, result, "--json", args.argv, measured,
                              device_info(backend, None) if backend is not None else None)
        print(f"wrote {json_path}{written.kept()}")
    return 0


def _progress(step) -> None:
    kernel, done, total = step
    print(f"access: {kernel}: block {done}/{total} traced", file=sys.stderr, flush=True)


def _block(text, shape_2d: bool):
    if text is None:
        return None
    if shape_2d:
        from kernels.launch import parse_block

        return parse_block(text)
    return whole(text, "--block", 1)


def _check_json(args):
    if args.json is None:
        return None
    from kernels.io.writer import check_output

    return check_output(args.json, "--json")
