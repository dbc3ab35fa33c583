"""The command line: ``raytracer-app [gui] | render | bench | compare | inspect | lesson | access | variant |
devices | cluster``, one module per command in this package (each declares its options and runs itself).

``--backend`` is read before anything imports numba, because ``sim`` has to switch numba to its CUDA
simulator first; then the full parser is built from the algorithm descriptors (:mod:`kernels.registry`),
so every algorithm's options, choices and defaults come from its own module. Bad input ends with one line
on stderr and exit status 2; nothing is left half-written.
"""

from __future__ import annotations

import argparse
import os
import sys

from kernels import backend as backends
from kernels import signals
from kernels.errors import InputError, printable
from raytracer_app.cli.parser import Parser, apply_compiler, early_backend, join_negative_pairs


EXIT_BAD_INPUT = 2
EXIT_FAILED = 1


def build_parser() -> argparse.ArgumentParser:
    """The whole command line, each command's options from its module. Imports the algorithm packages:
    prepare the backend first."""
    parser = Parser(prog="raytracer-app", description="GPU kernel lab: ray-traced spheres, the Julia set, reductions, histograms and hash tables on CUDA, the CUDA simulator or the CPU. With no command it opens the GUI.")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for command in _commands().values():
        command.add_parser(sub)
    return parser


def _commands() -> dict:
    """Each command's module, by the command's name (each has ``add_parser(sub)`` and ``run(args)``)."""
    from raytracer_app.cli import access, bench, cluster, compare, devices, gui, inspect, lesson, render, variant

    return {"gui": gui, "render": render, "bench": bench, "inspect": inspect, "compare": compare, "variant": variant,
            "lesson": lesson, "access": access, "devices": devices, "cluster": cluster}


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


def _paths_print_whole() -> None:
    """A file name that is not UTF-8 (legal on Linux) reaches text as lone surrogates: the terminal gets
    them as \\udcXX, as the one writer writes them, instead of a UnicodeEncodeError losing the output."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass


def main(argv: list[str] | None = None) -> int:
    _paths_print_whole()
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
    argv = join_negative_pairs(sys.argv[1:] if argv is None else list(argv))
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["gui", *argv]  # `raytracer-app --backend sim` opens the GUI, as `raytracer-app` does
    try:
        early = early_backend(argv)
        if early in backends.BACKEND_NAMES:
            backends.prepare(early)  # before numba is imported; a bad name is the full parser's error
        parser = build_parser()
        args = parser.parse_args(argv if argv else ["gui"])
        if args.command is None:
            args = parser.parse_args(["gui", *argv])
        args.argv = ["raytracer-app", *argv]  # the command line, as result files record it
        apply_compiler(args)  # before a kernel module takes its cuda
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
        from kernels.errors import one_line

        print(f"raytracer-app: failed: {printable(one_line(exc))}", file=sys.stderr)
        return EXIT_FAILED


def _dispatch(args) -> int:
    return _commands()[args.command].run(args)
