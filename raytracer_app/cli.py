"""The command line: ``raytracer-app [gui] | render | bench | devices``.

Arguments are parsed before numba is imported, because ``--backend sim`` has to switch numba to its CUDA
simulator first. Bad input ends with one line on stderr and exit status 2; nothing is left half-written.
"""

from __future__ import annotations

import argparse
import os
import sys

from kernels import backend as backends
from kernels.errors import InputError

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
BENCH_TARGETS = ("reduction", "histogram", "hashtable", "raytrace", "julia")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise InputError(f"{message} (see {self.prog} --help)")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", default="auto", choices=backends.BACKEND_NAMES,
                   help="auto (cuda when a GPU is present, else cpu), cuda, cpu, or sim (the CUDA simulator; slow, for tiny inputs)")
    p.add_argument("--device", type=_int("--device"), default=None, help="GPU index when there are several (cuda only)")


def _int(name, minimum=None):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r} is not a whole number") from None
        if minimum is not None and v < minimum:
            raise argparse.ArgumentTypeError(f"{name} {v} must be at least {minimum}")
        return v
    return parse


def _int_list(name, minimum=1):
    def parse(text):
        return [_int(name, minimum)(t) for t in str(text).split(",") if t.strip()] or _empty(name)
    return parse


def _empty(name):
    raise argparse.ArgumentTypeError(f"{name} needs at least one value")


def _float(name):
    def parse(text):
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r} is not a number") from None
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="raytracer-app", description="GPU kernel lab: ray-traced spheres, the Julia set, reductions, histograms and hash tables on CUDA, the CUDA simulator or the CPU. With no command it opens the GUI.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    gui = sub.add_parser("gui", help="open the desktop app (the default)")
    _common(gui)

    render = sub.add_parser("render", help="render one image to a PNG and print its timing")
    render.add_argument("target", choices=("spheres", "julia"))
    render.add_argument("--out", required=True, help="output PNG file")
    render.add_argument("--size", default=None, help="WxH, each 1..4096 (default 1024x1024 for spheres, 1000x1000 for julia)")
    render.add_argument("--repeats", type=_int("--repeats", 1), default=10, help="timed repeats after a warm-up (default 10)")
    render.add_argument("--block", default=None, help="CUDA block shape BXxBY (default 16x16; cuda/sim only)")
    g = render.add_argument_group("spheres")
    g.add_argument("--spheres", type=_int("--spheres"), default=None, help="random scene with N spheres (default 20)")
    g.add_argument("--seed", type=_int("--seed", 0), default=0, help="seed of the random scene (default 0)")
    g.add_argument("--scene", default=None, help="load the scene from a JSON file instead")
    g.add_argument("--save-scene", default=None, help="also save the scene as JSON")
    g.add_argument("--memory", default=None, choices=("global", "constant"), help="where the kernel reads the spheres (default global; cuda/sim only)")
    g.add_argument("--pattern", default="uniform", choices=("uniform", "staggered"), help="sphere access order per warp (default uniform)")
    j = render.add_argument_group("julia")
    j.add_argument("--c", default="-0.8,0.156", help="the constant c as RE,IM (default -0.8,0.156)")
    j.add_argument("--center", default="0,0", help="view centre as X,Y (default 0,0)")
    j.add_argument("--zoom", type=_float("--zoom"), default=1.0, help="zoom factor (default 1)")
    j.add_argument("--iterations", type=_int("--iterations"), default=200, help="iterations, 1..100000 (default 200)")
    j.add_argument("--colormap", default="classic", choices=("classic", "smooth"), help="classic: the book's red on black (default)")
    j.add_argument("--launch", default=None, choices=("book", "2d"), help="book: one thread per block as in the book; 2d: 2-D blocks (default; cuda/sim only)")
    _common(render)

    bench = sub.add_parser("bench", help="time and verify kernel variants, print a table, optionally write CSV")
    bench.add_argument("target", choices=BENCH_TARGETS)
    bench.add_argument("--variants", default="all", help="'all' or names separated by commas (see --list)")
    bench.add_argument("--list", action="store_true", help="list the target's variants and exit")
    bench.add_argument("--op", default="sum", choices=("sum", "sumsq", "dot"), help="reduction operation (default sum)")
    bench.add_argument("--dtype", default="int32", choices=("int32", "float32"), help="reduction element type (default int32)")
    bench.add_argument("--n", type=_int("--n", 1), default=None, help="problem size: elements (reduction), bytes (histogram), keys (hashtable), spheres (raytrace)")
    bench.add_argument("--sizes", type=_int_list("--sizes"), default=None, help="sweep over sizes N1,N2,...")
    bench.add_argument("--input", default=None, help="input file: a .npy array (reduction) or any file's bytes (histogram)")
    bench.add_argument("--pattern", default=None, help="histogram: uniform|low-entropy; raytrace: uniform|staggered")
    bench.add_argument("--buckets", type=_int("--buckets", 1), default=1024, help="hash table buckets (default 1024, the seed's)")
    bench.add_argument("--size", default=None, help="image size WxH for raytrace/julia (default 1024x1024 / 1000x1000)")
    bench.add_argument("--block", default=None, help="block sizes B1,B2,... (raytrace/julia: shapes 16x16,32x8)")
    grid = bench.add_mutually_exclusive_group()
    grid.add_argument("--grid", type=_int("--grid", 1), default=None, help="blocks in the grid")
    grid.add_argument("--grid-sm", type=_float("--grid-sm"), default=None, help="blocks as a multiple of the SM count")
    bench.add_argument("--items-per-thread", type=_int("--items-per-thread", 1), default=None, help="elements per thread, for variants that have one")
    bench.add_argument("--repeats", type=_int("--repeats", 1), default=10, help="timed repeats after a warm-up (default 10)")
    bench.add_argument("--seed", type=_int("--seed", 0), default=0, help="seed of the random input (default 0)")
    bench.add_argument("--csv", default=None, help="write one row per variant and configuration to this CSV file")
    _common(bench)

    devices = sub.add_parser("devices", help="print the GPUs' properties (as seed 003 does) and the CPU backend")
    _common(devices)
    return parser


def _join_negative_pairs(argv: list[str]) -> list[str]:
    """Let `--c -0.8,0.156` work: argparse would take '-0.8,0.156' for an option, so glue it on."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in ("--c", "--center") and i + 1 < len(argv) and argv[i + 1].startswith("-"):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    argv = _join_negative_pairs(sys.argv[1:] if argv is None else list(argv))
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["gui", *argv]  # `raytracer-app --backend sim` opens the GUI, as `raytracer-app` does
    try:
        args = build_parser().parse_args(argv if argv else ["gui"])
        if args.command is None:
            args = build_parser().parse_args(["gui", *argv])
        backends.prepare(args.backend)  # before numba is imported
        return _dispatch(args)
    except InputError as exc:
        print(f"raytracer-app: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("raytracer-app: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line for the user; RAYTRACER_DEBUG=1 shows the traceback
        if os.environ.get("RAYTRACER_DEBUG"):
            raise
        from kernels.bench import one_line

        print(f"raytracer-app: failed: {one_line(exc)}", file=sys.stderr)
        return EXIT_FAILED


def _dispatch(args) -> int:
    if args.command == "gui":
        from raytracer_app.gui import run_gui

        return run_gui(args.backend, args.device)
    if args.command == "devices":
        from kernels.devices import devices_report

        print(devices_report())
        return 0
    backend = backends.resolve(args.backend, args.device)
    if args.command == "render":
        from raytracer_app.cli_render import render_command

        return render_command(args, backend)
    from raytracer_app.cli_bench import bench_command

    return bench_command(args, backend)
