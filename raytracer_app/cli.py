"""The command line: ``raytracer-app [gui] | render | bench | compare | inspect | lesson | devices``.

``--backend`` is read before anything imports numba, because ``sim`` has to switch numba to its CUDA
simulator first; then the full parser is built from the algorithm descriptors (:mod:`kernels.registry`),
so every algorithm's options, choices and defaults come from its own module. Bad input ends with one line
on stderr and exit status 2; nothing is left half-written.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

from kernels import backend as backends
from kernels import signals
from kernels.errors import InputError, printable, shown, whole, whole_items


EXIT_BAD_INPUT = 2
EXIT_FAILED = 1


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)  # --size must not silently mean --sizes
        super().__init__(*args, **kwargs)

    def error(self, message):  # one line, no usage dump
        raise InputError(f"{message} (see {self.prog} --help)")

    def parse_args(self, args=None, namespace=None):
        """As argparse's, but an option the chosen command does not take is named as not applying to it."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            where = " ".join(x for x in (getattr(parsed, "command", None), getattr(parsed, "target", None)) if x)
            options = [x for x in extra if x.startswith("-")] or extra
            raise InputError(f"{' '.join(options)} {'does' if len(options) == 1 else 'do'} not apply to "
                             f"`{where or self.prog}` (see {self.prog} {where} --help for what it takes)")
        for name, value in vars(parsed).items():  # every text option defaults to None: '' was given
            if isinstance(value, str) and not value.strip() and name not in _POSITIONALS:
                raise InputError(f"--{name.replace('_', '-')} {value!r} is empty")
        return parsed


_POSITIONALS = ("command", "target", "variant", "action", "file")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", default="auto", choices=backends.BACKEND_NAMES,
                   help="auto (cuda when a GPU is present, else cpu), cuda, cpu, or sim (the CUDA simulator; slow, for tiny inputs)")
    p.add_argument("--device", type=_int("--device"), default=None, help="GPU index when there are several (cuda only)")


def _int(name, minimum=None):
    def parse(text):
        try:
            return whole(text, name, minimum)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def _int_list(name, minimum=1):
    def parse(text):
        try:
            return whole_items(text, name, minimum)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def _float(name, positive: bool = False):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r} is not a number") from None
        if not math.isfinite(value) or (positive and value <= 0):
            raise argparse.ArgumentTypeError(f"{name} {text} must be a {'positive ' if positive else ''}finite number")
        return value
    return parse


def _option_type(option):
    """An algorithm option's parser as argparse wants it (ArgumentTypeError for a bad value)."""
    def parse(text):
        try:
            return option.parse(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    parse.__name__ = option.name
    return parse


def build_parser() -> argparse.ArgumentParser:
    """The whole command line. Imports the algorithm modules (and numba): prepare the backend first."""
    from kernels.registry import ALGORITHMS
    from kernels.backend import MAX_REPEATS
    from kernels.julia import COLORMAPS, LAUNCHES, PRECISIONS
    from kernels.raytrace.layout import PATTERNS
    from kernels.raytrace.scene import MAX_SPHERES, MEMORIES

    parser = _Parser(prog="raytracer-app", description="GPU kernel lab: ray-traced spheres, the Julia set, reductions, histograms and hash tables on CUDA, the CUDA simulator or the CPU. With no command it opens the GUI.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    gui = sub.add_parser("gui", help="open the desktop app (the default)")
    _common(gui)

    render = sub.add_parser("render", help="render one image to a PNG and print its timing")
    images = render.add_subparsers(dest="target", metavar="TARGET", parser_class=_Parser, required=True)
    spheres = images.add_parser("spheres", help="the ray-traced spheres of seed 001")
    julia = images.add_parser("julia", help="the Julia set of seed 003")
    for p, size in ((spheres, "1024x1024"), (julia, "1000x1000")):
        p.add_argument("--out", required=True, help="output PNG file")
        p.add_argument("--size", default=None, help=f"WxH, each 1..4096 (default {size}; 32x32 in the simulator, at most 128x128)")
        p.add_argument("--repeats", type=_int("--repeats", 1), default=None,
                       help=f"timed repeats after a warm-up (default 10, 2 in the simulator; at most {MAX_REPEATS}, 5 in the simulator)")
        p.add_argument("--block", default=None, help="CUDA block shape BXxBY (default 16x16; cuda/sim only)")
    spheres.add_argument("--spheres", type=_int("--spheres"), default=None,
                         help=f"random scene with N spheres, 1..{MAX_SPHERES:,} (constant memory: up to its capacity, 2340 spheres in 64 KiB; default 20; at most 64 in the simulator)")
    spheres.add_argument("--seed", type=_int("--seed", 0), default=0, help="seed of the random scene (default 0)")
    spheres.add_argument("--scene", default=None, help="load the scene from a JSON file instead")
    spheres.add_argument("--save-scene", default=None, help="also save the scene as JSON")
    spheres.add_argument("--memory", default=None, choices=MEMORIES,
                         help="where the kernel reads the spheres: " + "|".join(MEMORIES) + " (default global; cuda/sim only)")
    spheres.add_argument("--pattern", default="uniform", choices=PATTERNS, help="sphere access order per warp (default uniform)")
    julia.add_argument("--c", default="-0.8,0.156", help="the constant c as RE,IM (default -0.8,0.156)")
    julia.add_argument("--center", default="0,0", help="view centre as X,Y (default 0,0)")
    julia.add_argument("--zoom", type=_float("--zoom"), default=1.0, help="zoom factor (default 1)")
    julia.add_argument("--iterations", type=_int("--iterations"), default=200, help="iterations, 1..100000 (default 200)")
    julia.add_argument("--colormap", default="classic", choices=COLORMAPS, help="classic: the book's red on black (default)")
    julia.add_argument("--precision", default="float32", choices=PRECISIONS,
                       help="float32 (the book's, default) or float64 for deep zooms (float32 shows blocks past a zoom of about 10^4)")
    julia.add_argument("--launch", default=None, choices=LAUNCHES, help="book: one thread per block as in the book; 2d: 2-D blocks (default; cuda/sim only)")
    _common(spheres)
    _common(julia)

    bench = sub.add_parser("bench", help="time and verify kernel variants, print a table, optionally write CSV")
    targets = bench.add_subparsers(dest="target", metavar="TARGET", parser_class=_Parser, required=True)
    for algorithm in ALGORITHMS:
        _bench_parser(targets, algorithm)

    from raytracer_app import cli_inspect

    cli_inspect.add_parser(sub, _common)
    from raytracer_app import cli_compare

    cli_compare.add_parser(sub)
    from raytracer_app import cli_variant

    cli_variant.add_parser(sub)
    from raytracer_app import cli_lesson

    cli_lesson.add_parser(sub, _common, _int_list, _int)
    devices = sub.add_parser("devices", help="print the GPUs' properties (as seed 003 does) and the CPU backend")
    _common(devices)
    return parser


def _bench_parser(targets, algorithm) -> None:
    """`bench NAME` with the options its descriptor declares; options it does not declare are errors."""
    from kernels.backend import MAX_REPEATS

    p = targets.add_parser(algorithm.name, help=algorithm.summary, description=algorithm.summary)
    p.add_argument("--variants", default="all", help="'all' or names separated by commas (see --list)")
    p.add_argument("--list", action="store_true", help="list the variants with what each teaches, and exit")
    if algorithm.size:
        size = algorithm.size
        p.add_argument("--n", type=_int("--n", 1), default=None,
                       help=f"problem size in {size.unit} (default {size.default['cuda']} on a GPU, "
                            f"{size.default['cpu']} on the CPU, {size.default['sim']} in the simulator)")
        p.add_argument("--sizes", type=_int_list("--sizes"), default=None, help="sweep over sizes N1,N2,...")
    if algorithm.load_input:
        p.add_argument("--input", default=None, help=algorithm.input_help)
    for option in algorithm.options:
        default = option.default if not isinstance(option.default, dict) else option.default["cuda"]
        shown = "x".join(map(str, default)) if isinstance(default, tuple) else default
        p.add_argument(option.flag, dest=option.name, default=None, type=_option_type(option),
                       choices=option.choices or None, help=f"{option.help} (default {shown})")
    shapes = algorithm.block_shape_2d
    p.add_argument("--block", default=None,
                   help="block shapes to sweep, BXxBY,... (default 16x16)" if shapes else
                   "block sizes to sweep, B1,B2,... (default: each variant's own, the seed's launch)")
    if not shapes:
        grid = p.add_mutually_exclusive_group()
        grid.add_argument("--grid", type=_int("--grid", 1), default=None, help="blocks in the grid")
        grid.add_argument("--grid-sm", type=_float("--grid-sm", positive=True), default=None,
                          help="blocks as a multiple of the SM count")
    if algorithm.has_items_per_thread:
        p.add_argument("--items-per-thread", type=_int("--items-per-thread", 1), default=None,
                       help="elements per thread, for variants that have one (best)")
    p.add_argument("--repeats", type=_int("--repeats", 1), default=None,
                   help=f"timed repeats after a warm-up (default 10, 2 in the simulator; at most {MAX_REPEATS}, 5 in the simulator)")
    m = p.add_argument_group("measurement")
    m.add_argument("--tolerance", type=_float("--tolerance", positive=True), default=None,
                   help="after --repeats, keep repeating until the median moves by at most this fraction "
                        "(e.g. 0.01), up to --max-repeats or --max-seconds (default: exactly --repeats)")
    m.add_argument("--max-repeats", type=_int("--max-repeats", 1), default=None,
                   help="cap on repeats with --tolerance (default 10 x --repeats)")
    m.add_argument("--max-seconds", type=_float("--max-seconds", positive=True), default=3.0,
                   help="time cap per timing with --tolerance (default 3)")
    m.add_argument("--rounds", type=_int("--rounds", 1), default=1,
                   help="spread each row's repeats over this many rounds through the rows, each round in a "
                        "shuffled order (default 1: the repeats back to back); for compare, docs/results.md")
    m.add_argument("--processes", type=_int("--processes", 1), default=1,
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
        u.add_argument("--variant-timeout", type=_float("--variant-timeout", positive=True), default=10.0,
                       help="seconds a variant file's run may go without finishing a call before its process is "
                            "stopped (default 10)")
    p.add_argument("--seed", type=_int("--seed", 0), default=0, help="seed of the random input (default 0)")
    p.add_argument("--csv", default=None, help="write one row per variant and configuration to this CSV file "
                                               "(an existing file is overwritten)")
    p.add_argument("--json", default=None, help="write a result file: every row with its per-repeat times and a "
                                                "header (device, versions, commit, command, date) for `compare` "
                                                "(docs/results.md; an existing file is overwritten)")
    _common(p)


def _early_backend(argv: list[str]) -> str:
    """The --backend value, read before the full parser exists (building it imports numba)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--backend", default="auto")
    known, _ = pre.parse_known_args(argv)
    return known.backend


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


class _Stdout:
    """sys.stdout while a command runs. When the reader goes away (`raytracer-app bench ... | head -1`),
    printing stops quietly and the command goes on, so a --csv file is still written: the descriptor is
    pointed at /dev/null, and the exit status is the command's own, with no message (as `head` users
    expect)."""

    def __init__(self, stream):
        self._stream = stream
        self.reader_gone = False

    def write(self, text):
        if not self.reader_gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self):
        if not self.reader_gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def _gone(self):
        self.reader_gone = True
        try:  # what the stream still buffers goes nowhere, at exit too, instead of raising again
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self._stream.fileno())
            finally:
                os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> int:
    stdout = sys.stdout
    sys.stdout = _Stdout(stdout)
    try:
        code = _main(argv)
        sys.stdout.flush()
    finally:
        sys.stdout = stdout
    if argv is None and code in signals.EXIT_STATUS.values():  # the process's own command line, stopped
        signals.exit_now(code)
    return code


def _main(argv: list[str] | None = None) -> int:
    argv = _join_negative_pairs(sys.argv[1:] if argv is None else list(argv))
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["gui", *argv]  # `raytracer-app --backend sim` opens the GUI, as `raytracer-app` does
    try:
        early = _early_backend(argv)
        if early in backends.BACKEND_NAMES:
            backends.prepare(early)  # before numba is imported; a bad name is the full parser's error
        parser = build_parser()
        args = parser.parse_args(argv if argv else ["gui"])
        if args.command is None:
            args = parser.parse_args(["gui", *argv])
        args.argv = ["raytracer-app", *argv]  # the command line, as result files record it
        if args.command == "gui":
            return _dispatch(args)
        with signals.stoppable():  # Ctrl-C / SIGTERM end it within a second, even inside a kernel
            return _dispatch(args)
    except InputError as exc:
        print(f"raytracer-app: error: {printable(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as exc:
        return signals.say_stopped(exc)
    except Exception as exc:  # one line for the user; RAYTRACER_DEBUG=1 shows the traceback
        if signals.stopped_by() is not None:  # a Ctrl-C that came out as another error
            return signals.say_stopped(signals.stopped_by())
        if os.environ.get("RAYTRACER_DEBUG"):
            raise
        from kernels.harness.bench import one_line

        print(f"raytracer-app: failed: {printable(one_line(exc))}", file=sys.stderr)
        return EXIT_FAILED


def _dispatch(args) -> int:
    if args.command == "gui":
        from raytracer_app.gui import run_gui

        return run_gui(args.backend, args.device)
    if args.command == "devices":
        from kernels.backend.devices import devices_report

        if not backends.choice(args.backend).is_auto or args.device is not None:
            backends.resolve(args.backend, args.device)  # `devices --backend cuda` without a GPU: exit 2, as render

        print(devices_report())
        return 0
    if args.command == "inspect":
        from raytracer_app import cli_inspect

        if not backends.choice(args.backend).is_auto or args.device is not None:
            backends.resolve(args.backend, args.device)  # `inspect --backend cuda` without a GPU: exit 2

        return cli_inspect.run(args)
    if args.command == "compare":
        from raytracer_app import cli_compare

        return cli_compare.run(args)
    if args.command == "variant":
        from raytracer_app import cli_variant

        return cli_variant.run(args)
    backend = backends.resolve(args.backend, args.device)
    if args.command == "lesson":
        from raytracer_app.cli_lesson import run as lesson_command

        return lesson_command(args, backend)
    if args.command == "render":
        from raytracer_app.cli_render import render_command

        return render_command(args, backend)
    from raytracer_app.cli_bench import bench_command

    return bench_command(args, backend)
