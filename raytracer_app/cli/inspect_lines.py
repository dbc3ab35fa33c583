"""`raytracer-app inspect TARGET VARIANT|--all --lines [--measured] [--json [FILE]]`: figures per Python line.

Static (no GPU): each line's SASS instructions, a device function's code on its own lines and a call line
also with what it inlines. ``--measured`` (a GPU and Nsight Compute): one ncu run over the variants with
source counters, folded per line (stall samples by reason, instructions executed, sectors, wavefronts).
``--predicted``: the simulator's access trace of the variant beside them (kernels/access: sectors, wavefronts,
bank conflicts, active lanes per line). Without a GPU, the per-line references shipped in
assets/reference-results/ are shown, labelled."""

from __future__ import annotations

import sys

from kernels.errors import InputError


def check(args) -> None:
    """The options that do not go with --lines, each refused in one line before anything runs."""
    if args.compare:
        raise InputError("--compare sets two variants side by side; --lines shows one variant's lines (or --all's)")
    if args.show != "all":
        raise InputError("--show picks a part of the report; --lines prints the figures per line instead")
    if args.variant_file:
        raise InputError("--lines reads the built-in variants (ncu runs them by name); inspect a variant file "
                         "without it")
    if args.n is not None and not args.measured:
        raise InputError("--n sets the size of the measured run: it applies with --measured")
    if args.measured and args.block is not None:
        raise InputError("--block applies to the static figures; --measured runs each variant at its own launch")


def measuring_backend(args):
    """The GPU backend --measured runs on; InputError (exit 2) in one line where it cannot. With --cluster, a
    cluster's GPU (its worker checks Nsight Compute there)."""
    from kernels import backend as backends
    from kernels.counters.tool import CannotMeasure, why_not

    if args.cluster:
        from kernels.cluster import remote
        from raytracer_app.cli.cluster import one_place

        args.cluster_client = remote.connect(args.cluster, args.certs)
        backend, args.cluster_resources = one_place(args, args.cluster_client)
        if not backend.is_gpu:
            raise InputError("--measured reads Nsight Compute's per-line counters on a GPU; the cluster's workers "
                             "have none")
        return backend
    backend = backends.resolve(args.backend, args.device)
    if not backend.is_gpu:
        raise InputError("--measured reads Nsight Compute's per-line counters on a GPU, and this run has none "
                         f"({backend.label}); leave --measured out for the static figures and the shipped "
                         "H100 / H200 references")
    reason = why_not(backend)
    if reason:
        raise CannotMeasure(reason)
    return backend


def run(args, arch: str, block, names: list[str]) -> int:
    try:
        return _run(args, arch, block, names)
    finally:
        if getattr(args, "cluster_client", None) is not None:
            args.cluster_client.close()


def _run(args, arch: str, block, names: list[str]) -> int:
    from kernels.inspector import toolchain
    from kernels.inspector.lines import combined, static_lines

    backend = measuring_backend(args) if args.measured else None
    if backend is not None and args.arch is None:
        from kernels.inspector.bench_columns import device_arch

        arch = getattr(backend, "remote_arch", None) or device_arch(backend)  # a cluster's GPU: as it reported
    reports = {}
    if not toolchain.missing():
        from kernels.inspector.report import inspect_many

        for (_, name), report in inspect_many([(args.target, n) for n in names], arch, block).items():
            if isinstance(report, InputError):
                raise report
            reports[name] = report
    elif backend is None:
        toolchain.require()  # one line naming what is missing and the extra that brings it
    predicted = {name: _predicted(args.target, name) for name in names} if args.predicted else {}
    measured, seconds, n = {}, None, None
    if backend is not None:
        from kernels.inspector.declarations import declaration

        n = args.n or declaration(args.target, names[0]).default_n
        measured, seconds = _measure(args, backend, names, reports, n)
    from kernels.backend.compiler import uses_mlir

    per_variant, references, failures = {}, {}, 0
    for name in names:
        report = reports.get(name)
        if isinstance(report, Exception):
            failures += 1
            per_variant[name] = f"did not compile: {report}"
            continue
        kernels = combined(static_lines(report) if report is not None else None, measured.get(name),
                           predicted.get(name) or ())
        if isinstance(kernels, str):
            failures += 1
        per_variant[name] = kernels
        if backend is None and not uses_mlir():  # the shipped references measured numba-cuda's code
            references[name] = _references(args.target, name)
    _print(args, arch, per_variant, references, backend)
    if args.json is not None:
        _write_json(args, arch, per_variant, references, backend, seconds, n)
    return 1 if failures else 0


def _measure(args, backend, names, reports, n: int):
    from kernels.inspector.lines import measure_lines, timed

    def progress(done, total, text):
        print(f"lines: {text}", file=sys.stderr, flush=True)

    print(f"measuring {len(names)} variant{'s' if len(names) > 1 else ''} of {args.target} per line with Nsight "
          f"Compute on {backend.device_name} ...", file=sys.stderr, flush=True)
    static = {name: r for name, r in reports.items() if not isinstance(r, Exception)}
    if getattr(args, "cluster_client", None) is not None:  # the one ncu run on the cluster's worker
        from kernels.cluster import remote
        from kernels.cluster import worker_side

        measured, seconds = timed(lambda: remote.call(args.cluster_client, worker_side.measure_lines, args.target,
                                                      names, n, static, resources=args.cluster_resources))
    else:
        measured, seconds = timed(lambda: measure_lines(args.target, names, backend, n, on_progress=progress,
                                                        static=static))
    print(f"lines: {len(names)} variants measured per line in {seconds:.1f} s (one ncu run)", file=sys.stderr,
          flush=True)
    return measured, seconds


def _predicted(target: str, name: str) -> list:
    """The variant's kernels traced in the CUDA simulator (kernels/access), as predicted per-line figures."""
    from kernels import access
    from kernels.access import planning, runner
    from kernels.counters.lines import from_access

    job = planning.plan(target, name)
    print(f"lines: tracing {job.label} in the CUDA simulator ...", file=sys.stderr, flush=True)
    try:
        result = access.trace(job)
    finally:
        runner.end()
    return [from_access(k) for k in result.kernels]


def _references(target: str, name: str):
    from kernels.inspector.line_references import load

    found, refused = load(target, name)
    for line in refused:
        print(f"reference not shown: {line}", file=sys.stderr)
    return found


def _print(args, arch, per_variant, references, backend) -> None:
    from kernels.backend.compiler import uses_mlir

    from kernels.counters.lines import MEASURED, PREDICTED, REFERENCE, STATIC
    from kernels.counters.lines_text import table

    if args.json == "-":
        return
    for name, kernels in per_variant.items():
        print(f"{args.target} {name} on {arch}: figures per Python line")
        if isinstance(kernels, str):
            print(f"  no figures: {kernels}")
            continue
        for kernel in kernels:
            for kind in (STATIC, PREDICTED, MEASURED):
                if kind in kernel.kinds():
                    print(table(kernel, kind, args.top, notes=False))
            for note in kernel.notes:
                print(f"  note: {note}")
        shown = references.get(name) or []
        for ref in shown:
            for kernel in ref.kernels:
                print(table(kernel, REFERENCE, args.top))
        if backend is None and not shown:
            shipped = ("the shipped references measured numba-cuda's code" if uses_mlir() else
                       f"no reference shipped for {args.target} {name}")
            print(f"  (measured figures need a GPU and Nsight Compute: --measured; {shipped})")
        print()


def _write_json(args, arch, per_variant, references, backend, seconds, n) -> None:
    from kernels.harness.results import device_info
    from kernels.inspector.lines import document, to_json

    measured_device = device_info(backend, None) if backend is not None else None
    doc = document(args.target, arch, per_variant, getattr(args, "argv", None), measured_device, n, seconds)
    for entry in doc["variants"]:
        refs = references.get(entry["variant"]) or []
        if refs:
            entry["references"] = [{"device": r.device, "date": r.date, "file": r.path.name,
                                    "kernels": [k.to_dict() for k in r.kernels]} for r in refs]
    if args.json == "-":
        print(to_json(doc), end="")
        return
    from kernels.io.writer import write_output

    written = write_output(args.json, to_json(doc), "--json")
    print(f"wrote {written}")
