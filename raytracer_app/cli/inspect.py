"""`raytracer-app inspect TARGET VARIANT|--all`: what a GPU variant's kernel compiles to (resources,
occupancy, source, PTX, SASS, instruction mix), for a chosen architecture, with no GPU needed; with
``--lines`` the figures per Python line (raytracer_app/cli/inspect_lines.py), measured on a GPU with
``--measured``."""

from __future__ import annotations

import json
from dataclasses import asdict

from kernels.errors import InputError, shown, whole
from raytracer_app.cli.cluster import cluster_address, on_option
from raytracer_app.cli.parser import common, compiler_option, resolve_if_named, whole_number

SHOWS = ("resources", "occupancy", "source", "ptx", "sass", "mix", "all")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("inspect", help="show a GPU variant's registers, occupancy, source, PTX, SASS and "
                              "instruction mix for a target architecture (no GPU needed)")
    from kernels.registry import ALGORITHMS

    # every algorithm: one whose GPU variants declare no inspector entry is told what is missing
    p.add_argument("target", choices=[a.name for a in ALGORITHMS])
    p.add_argument("variant", nargs="?", default=None, help="a GPU variant of the target (see bench TARGET --list)")
    p.add_argument("--all", action="store_true", help="a table of every GPU variant's resources and occupancy")
    p.add_argument("--block", default=None, help="threads per block: B, or BXxBY for the image kernels (default: the variant's)")
    p.add_argument("--arch", default=None, help="target architecture sm_XY (default sm_90): sm_75, sm_80, sm_86, sm_89, sm_90, sm_100, sm_120")
    p.add_argument("--show", default="all", choices=SHOWS, help="what to print (default all)")
    p.add_argument("--compare", default=None, metavar="OTHER", help="another variant of the target, side by side")
    p.add_argument("--compiler-compare", action="store_true",
                   help="the variant compiled by numba-cuda and by numba-cuda-mlir, side by side (needs the mlir "
                        "extra)")
    p.add_argument("--json", nargs="?", const="-", default=None, metavar="FILE",
                   help="print JSON instead of text, or write it to FILE (an existing one is kept as FILE.~N~)")
    p.add_argument("--lines", action="store_true",
                   help="figures per Python line: SASS instructions (a device function's code on its own lines, a "
                        "call line also with what it inlines), and the shipped H100 / H200 references")
    p.add_argument("--measured", action="store_true",
                   help="with --lines: measure each line on this GPU with Nsight Compute (stall samples by reason, "
                        "instructions executed, sectors, shared wavefronts; needs a GPU and ncu)")
    p.add_argument("--predicted", action="store_true",
                   help="with --lines: also the CUDA simulator's access trace of the variant per line (sectors, "
                        "wavefronts, bank conflicts, active lanes; no GPU needed, as `access` traces it)")
    p.add_argument("--n", type=whole_number("--n", 1), default=None,
                   help="problem size of the --measured run (default: the size the inspector models, 2^24 for "
                        "the reduction)")
    p.add_argument("--top", type=whole_number("--top", 1), default=8, help="lines shown per kernel with --lines "
                                                                          "(default 8)")
    p.add_argument("--variant-file", default=None, metavar="FILE",
                   help="inspect your own variant from FILE (its INSPECT; docs/user-variants.md) instead of a built-in")
    common(p)
    compiler_option(p)
    c = p.add_argument_group("on a cluster, with --lines --measured (docs/cluster.md)")
    cluster_address(c)
    on_option(c, "to measure")


def run(args) -> int:
    if args.cluster and not args.measured:
        raise InputError("--cluster measures on a cluster's GPU: it applies with --lines --measured")
    if not args.cluster:
        resolve_if_named(args)  # `inspect --backend cuda` without a GPU: exit 2 (a cluster's GPU is asked there)
    from kernels.inspector import declarations, toolchain
    from kernels.inspector.compiler import check_arch
    from kernels.inspector.report import checked_decl_block

    arch = check_arch(args.arch)
    block = _parse_block(args.block)
    lines = args.lines or args.measured or args.predicted
    if lines:
        from raytracer_app.cli import inspect_lines

        inspect_lines.check(args)
    elif args.n is not None:
        raise InputError("--n sets the size of the measured run: it applies with --lines --measured")
    if args.compiler_compare:
        if args.all or args.compare or lines or args.variant_file or args.variant is None or args.compiler:
            raise InputError("--compiler-compare takes one VARIANT, without --all, --compare, --lines, "
                             "--variant-file or --compiler")
        return _print_compiler_compare(args, arch, block)
    if args.variant_file:
        return _run_file(args, arch, block)
    if args.all == (args.variant is not None):
        raise InputError("give either a VARIANT or --all")
    names = declarations.variants(args.target) if args.all else [args.variant]
    if args.compare:
        names.append(args.compare)
    for name in names:
        checked_decl_block(declarations.declaration(args.target, name), block, arch)
    if lines:
        return inspect_lines.run(args, arch, block, names)
    if toolchain.missing():
        if args.show == "source" and not args.all and not args.compare:
            return _print_source_only(args)
        toolchain.require()  # one line naming what is missing and the extra that brings it
    from kernels.inspector.report import inspect_many

    reports = inspect_many([(args.target, n) for n in names], arch, block)
    for report in reports.values():
        if isinstance(report, InputError):
            raise report
    if args.all:
        return _print_table(args, reports, names, block)
    failed = [r for r in reports.values() if isinstance(r, Exception)]
    if failed:
        raise failed[0]
    first = reports[(args.target, args.variant)]
    if args.compare:
        return _print_compare(args, first, reports[(args.target, args.compare)])
    if args.json:
        _emit(args, report_dict(first, args.show))
    else:
        print(format_report(first, args.show))
    return 0


def _emit(args, doc) -> None:
    """``--json``: the document on stdout, or (``--json FILE``) written through the one writer."""
    text = json.dumps(doc, indent=1)
    if args.json == "-":
        print(text)
        return
    from kernels.io.writer import write_output

    written = write_output(args.json, text + chr(10), "--json")
    print(f"wrote {written}{written.kept()}")


def _run_file(args, arch, block) -> int:
    """`inspect TARGET --variant-file FILE [--compare VARIANT]`: the file is read and its syntax checked here,
    its declarations read in the user-variant child process, its kernel compiled in the compiler's."""
    from kernels import backend as backends
    from kernels.inspector import declarations, toolchain
    from kernels.inspector.compiler import compile_variant_file
    from kernels.inspector.report import build, checked_decl_block, inspect_many
    from kernels.user_variants import loader

    if args.variant or args.all:
        raise InputError("--variant-file takes the place of VARIANT and --all; compare with --compare VARIANT")
    if args.compare:
        checked_decl_block(declarations.declaration(args.target, args.compare), block, arch)
    try:
        variant = loader.load(args.variant_file, backends.resolve(args.backend, args.device))
    finally:
        loader.end_children()
    if variant.run.target != args.target:
        raise InputError(f"--variant-file {args.variant_file} declares TARGET {variant.run.target!r}, not {args.target!r}")
    decl = loader.kernel_decl(variant)
    checked_decl_block(decl, block, arch)
    toolchain.require()
    file = variant.run.file
    compiled = compile_variant_file(args.target, variant.name, file.path, file.source, variant.run.declared["inspect"],
                                    arch)
    mine = build(compiled, block, decl)
    if args.compare:
        other = inspect_many([(args.target, args.compare)], arch, block)[(args.target, args.compare)]
        if isinstance(other, Exception):
            raise other
        return _print_compare(args, mine, other)
    if args.json:
        _emit(args, report_dict(mine, args.show))
    else:
        print(format_report(mine, args.show))
    return 0


def _parse_block(text):
    if text is None:
        return None
    pieces = text.lower().split("x")
    if not 1 <= len(pieces) <= 2 or not all(p.strip().isdigit() for p in pieces):
        raise InputError(f"--block {shown(text)} must be B or BXxBY, whole numbers")
    parts = tuple(whole(p, "--block") for p in pieces)
    if any(p < 1 for p in parts):
        raise InputError(f"--block {shown(text)} must be B or BXxBY, each at least 1")
    return parts


def _print_source_only(args) -> int:
    from kernels.inspector.source import kernel_sources

    print(_format_sources(kernel_sources(args.target, args.variant)))
    print(f"(resources, occupancy, PTX and SASS need the compiler packages: {_extra()})")
    return 0


def _extra() -> str:
    from kernels.inspector.toolchain import EXTRA_HINT

    return EXTRA_HINT


def _format_sources(sources) -> str:
    out = []
    for s in sources:
        name = s["name"] if isinstance(s, dict) else s.name
        file = s["file"] if isinstance(s, dict) else s.file
        first = s["first_line"] if isinstance(s, dict) else s.first_line
        text = s["source"] if isinstance(s, dict) else s.text
        out.append(f"# {name}  ({file}, line {first})")
        out += [f"{first + i:5d}  {line}" for i, line in enumerate(text.rstrip("\n").splitlines())]
        out.append("")
    return "\n".join(out).rstrip("\n")


def format_report(r, show: str = "all") -> str:
    from kernels.inspector.compiler import compiled_by

    parts = [f"{r.target} {r.variant}: {r.arch}, block {'x'.join(map(str, r.block))}, {compiled_by(r.numba_cuda)}"
             + (f"  ({r.note})" if r.note else "")]
    if show in ("resources", "all"):
        res = r.resources
        parts.append("resources:\n" + "\n".join(f"  {k:<34}{v}" for k, v in (
            ("registers per thread", res.registers),
            ("static shared memory per block", f"{res.static_shared} B"),
            ("dynamic shared memory per block", f"{r.dynamic_shared} B"),
            ("local memory per thread (stack)", f"{res.stack_frame} B"),
            ("spill stores / loads", f"{res.spill_stores} B / {res.spill_loads} B"),
            ("__constant__ data", f"{res.constant} B"),
            ("kernel parameters (constant bank)", f"{res.parameters} B"),
            ("barriers", res.barriers),
            ("max threads per block", r.max_threads_per_block))))
    if show in ("occupancy", "all"):
        parts.append(format_occupancy(r))
    if show in ("mix", "all"):
        parts.append("instruction mix (static SASS counts):\n" + "\n".join(
            f"  {c:<20}{n:6d}" for c, n in r.mix.items() if n) + f"\n  {'total':<20}{len(r.sass):6d}")
    if show in ("source", "all"):
        parts.append("source:\n" + _format_sources(r.sources))
    if show in ("ptx", "all"):
        parts.append("PTX:\n" + r.ptx.rstrip("\n"))
    if show in ("sass", "all"):
        parts.append("SASS:\n" + format_sass(r))
    return "\n\n".join(parts)


def format_occupancy(r) -> str:
    o = r.occupancy
    lines = [f"occupancy at {o.threads_per_block} threads: {o.blocks_per_sm} blocks/SM, {o.warps_per_sm} of "
             f"{o.max_warps_per_sm} warps ({o.percent:.0f}%), limited by {o.limiter}"
             + (f"; shared-memory carve-out {o.carveout_kib} KiB" if o.carveout_kib else ""),
             "  threads  blocks/SM  warps/SM  occupancy  limiter"]
    for point in r.curve:
        mark = "*" if point.threads_per_block == o.threads_per_block else " "
        lines.append(f"  {point.threads_per_block:6d}{mark} {point.blocks_per_sm:9d}  {point.warps_per_sm:8d}  "
                     f"{point.percent:8.0f}%  {point.limiter}")
    return "\n".join(lines)


def format_sass(r) -> str:
    source_lines = _source_lines(r)
    out, where = [], None
    for ins in r.sass:
        if ins.chain != where:
            where = ins.chain
            text = source_lines.get((ins.file, ins.line), "")
            at = "".join(f"  (inlined at line {line})" for _, line in ins.inlined_at[:1])
            out.append(f"  # {ins.file}:{ins.line}  {text.strip()}{at}" if ins.file else "  # (no line)")
        out.append(f"    /*{ins.address:04x}*/ {ins.text}")
    return "\n".join(out)


def _source_lines(r) -> dict:
    lines = {}
    for s in r.sources:
        for i, text in enumerate(s.text.splitlines()):
            lines[(s.file, s.first_line + i)] = text
    return lines


def report_dict(r, show: str = "all") -> dict:
    out = {"target": r.target, "variant": r.variant, "arch": r.arch, "block": list(r.block),
           "numba_cuda": r.numba_cuda, "signature": r.signature}
    if show in ("resources", "all"):
        out["resources"] = asdict(r.resources) | {"dynamic_shared": r.dynamic_shared,
                                                 "max_threads_per_block": r.max_threads_per_block}
    if show in ("occupancy", "all"):
        out["occupancy"] = _occupancy_dict(r.occupancy)
        out["curve"] = [_occupancy_dict(p) for p in r.curve]
    if show in ("mix", "all"):
        out["mix"] = r.mix
        out["mix_by_line"] = [{"file": f, "line": ln, "mix": m} for (f, ln), m in r.mix_by_line.items()]
    if show in ("source", "all"):
        out["sources"] = [asdict(s) for s in r.sources]
    if show in ("ptx", "all"):
        out["ptx"] = r.ptx
    if show in ("sass", "all"):
        out["sass"] = [asdict(s) for s in r.sass]
    if show == "all":
        out["traffic"] = {"bytes": r.traffic.bytes, "ops": r.traffic.ops, "ops_kind": r.traffic.ops_kind,
                          "model": r.traffic.model}
    return out


def _occupancy_dict(o) -> dict:
    return asdict(o) | {"percent": o.percent}


def _print_table(args, reports, names, block) -> int:
    rows, failures = [], 0
    for name in names:
        r = reports[(args.target, name)]
        if isinstance(r, Exception):
            failures += 1
            rows.append({"variant": name, "error": str(r)})
            continue
        o = r.occupancy
        rows.append({"variant": name, "block": "x".join(map(str, r.block)), "registers": r.resources.registers,
                     "shared_static": r.resources.static_shared, "shared_dynamic": r.dynamic_shared,
                     "local": r.resources.stack_frame, "barriers": r.resources.barriers,
                     "blocks_per_sm": o.blocks_per_sm, "warps_per_sm": o.warps_per_sm,
                     "max_warps_per_sm": o.max_warps_per_sm, "occupancy_percent": round(o.percent, 1),
                     "limiter": o.limiter})
    arch = _arch_of(reports)
    if args.json:
        _emit(args, {"target": args.target, "arch": arch, "variants": rows})
    else:
        print(f"{args.target} on {arch} (each variant at its default block)")
        head = f"{'variant':<22}{'block':>7}{'regs':>6}{'smem':>8}{'dyn smem':>9}{'local':>7}{'bars':>5}" \
               f"{'blocks':>7}{'warps':>7}{'occ':>6}  limiter"
        print(head)
        for row in rows:
            if "error" in row:
                print(f"{row['variant']:<22}failed: {row['error']}")
                continue
            print(f"{row['variant']:<22}{row['block']:>7}{row['registers']:>6}{row['shared_static']:>8}"
                  f"{row['shared_dynamic']:>9}{row['local']:>7}{row['barriers']:>5}{row['blocks_per_sm']:>7}"
                  f"{str(row['warps_per_sm']) + '/' + str(row['max_warps_per_sm']):>7}"
                  f"{row['occupancy_percent']:>5.0f}%  {row['limiter']}")
    return 1 if failures else 0


def _arch_of(reports) -> str:
    for r in reports.values():
        if not isinstance(r, Exception):
            return r.arch
    return "?"


def _print_compiler_compare(args, arch, block) -> int:
    """`inspect TARGET VARIANT --compiler-compare`: one variant compiled by both compilers, side by side; a
    compiler that cannot compile it is named with its error (exit 1)."""
    from kernels.backend.compiler import COMPILER_NAMES
    from kernels.inspector import declarations, toolchain
    from kernels.inspector.compare import by_compiler, compiler_rows, compiler_sentence
    from kernels.inspector.report import checked_decl_block, inspect_many

    checked_decl_block(declarations.declaration(args.target, args.variant), block, arch)
    from kernels.registry import by_name

    lacks = next(v.mlir_lacks for v in by_name(args.target).variants if v.name == args.variant)
    if lacks:
        raise RuntimeError(f"numba-cuda-mlir cannot compile {args.target} {args.variant}: it lacks {lacks}")
    toolchain.require()
    pair = (args.target, args.variant)
    reports = {name: inspect_many([pair], arch, block, compiler=name)[pair] for name in COMPILER_NAMES}
    for name, report in reports.items():
        if isinstance(report, InputError):
            raise report
        if isinstance(report, Exception):
            raise RuntimeError(f"{name} cannot compile {args.target} {args.variant}: {report}")
    a, b = by_compiler(reports)
    table = compiler_rows(a, b)
    if args.json:
        _emit(args, {"variant": args.variant, "arch": arch, "compilers": [a.variant, b.variant],
                     "versions": [a.numba_cuda, b.numba_cuda], "rows": [list(r) for r in table],
                     "sentence": compiler_sentence(a, b)})
        return 0
    _print_table_of(f"{args.target} {args.variant} on {arch}", a, b, table)
    print(compiler_sentence(a, b))
    return 0


def _print_table_of(title: str, a, b, table) -> None:
    width = max(len(q) for q, _, _ in table) + 2
    col = max(len(x) for _, x, _ in table + [("", a.variant, "")]) + 2
    print(title)
    print(f"{'':<{width}}{a.variant:<{col}}{b.variant}")
    for quantity, va, vb in table:
        print(f"{quantity:<{width}}{va:<{col}}{vb}")
    print()


def _print_compare(args, a, b) -> int:
    from kernels.inspector.compare import rows, sentence

    table = rows(a, b)
    if args.json:
        _emit(args, {"a": a.variant, "b": b.variant, "arch": a.arch, "rows": [list(r) for r in table],
                     "sentence": sentence(a, b)})
        return 0
    _print_table_of(f"{args.target} on {a.arch}", a, b, table)
    print(sentence(a, b))
    return 0
