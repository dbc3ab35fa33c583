"""The command line's shared parsing: the parser that says what went wrong in one line, the options every
command takes (--backend, --device), the parsers of whole numbers, lists and numbers that turn a bad value
into one line, and what is read before the full parser exists (--backend, which decides whether numba
starts on the simulator). Each command's own options are in its module (raytracer_app/cli/COMMAND.py)."""

from __future__ import annotations

import argparse
import math

from kernels import backend as backends
from kernels.errors import InputError, whole, whole_items


class Parser(argparse.ArgumentParser):
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
            if isinstance(value, str) and not value.strip() and name not in POSITIONALS:
                raise InputError(f"--{name.replace('_', '-')} {value!r} is empty")
        return parsed


POSITIONALS = ("command", "target", "variant", "action", "file")


def common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", default="auto", choices=backends.BACKEND_NAMES,
                   help="auto (cuda when a GPU is present, else cpu), cuda, cpu, or sim (the CUDA simulator; slow, for tiny inputs)")
    p.add_argument("--device", type=whole_number("--device"), default=None, help="GPU index when there are several (cuda only)")


def whole_number(name, minimum=None):
    def parse(text):
        try:
            return whole(text, name, minimum)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def whole_numbers(name, minimum=1):
    """A comma list of whole numbers: the one list rule (kernels.errors.items, no empty item)."""
    def parse(text):
        try:
            return whole_items(text, name, minimum)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def number(name, positive: bool = False):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r} is not a number") from None
        if not math.isfinite(value) or (positive and value <= 0):
            raise argparse.ArgumentTypeError(f"{name} {text} must be a {'positive ' if positive else ''}finite number")
        return value
    return parse


def option_type(option):
    """An algorithm option's parser as argparse wants it (ArgumentTypeError for a bad value)."""
    def parse(text):
        try:
            return option.parse(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    parse.__name__ = option.name
    return parse


def early_backend(argv: list[str]) -> str:
    """The --backend value, read before the full parser exists (building it imports numba)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--backend", default="auto")
    known, _ = pre.parse_known_args(argv)
    return known.backend


def join_negative_pairs(argv: list[str]) -> list[str]:
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




def split_compiler_list(text: str) -> list[str]:
    """--compiler's comma list, split here until the one shared list-option parser takes it over (the same
    rule: no empty item, each a known compiler, none twice)."""
    from kernels.backend.compiler import COMPILER_NAMES
    from kernels.errors import items, one_of

    names = items(text, "--compiler")
    for name in names:
        one_of(name, COMPILER_NAMES, "--compiler")
    if len(set(names)) != len(names):
        raise InputError(f"--compiler {text!r} names a compiler twice")
    return names


def compiler_option(p: argparse.ArgumentParser, several: bool = False) -> None:
    """--compiler: which compiler builds the CUDA kernels (kernels/backend/compiler.py); ``several``: a comma
    list, each run in its own processes (bench)."""
    from kernels.backend.compiler import COMPILER_ENV, COMPILER_NAMES, DEFAULT

    def parse(text):
        try:
            names = split_compiler_list(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if not several and len(names) != 1:
            raise argparse.ArgumentTypeError(f"--compiler takes one of {', '.join(COMPILER_NAMES)}")
        return names

    what = "compilers, separated by commas, each row run under each" if several else "the compiler"
    p.add_argument("--compiler", type=parse, default=None,
                   help=f"{what} of the CUDA kernels: {', '.join(COMPILER_NAMES)} (default ${COMPILER_ENV} "
                        f"or {DEFAULT}; numba-cuda-mlir needs the mlir extra)")


def apply_compiler(args) -> None:
    """Make a single --compiler this process's compiler (before any kernel module loads; children inherit it)."""
    from kernels.backend.compiler import choose

    from kernels.backend.compiler import NUMBA_CUDA_MLIR

    names = getattr(args, "compiler", None)
    backend = backends.choice(getattr(args, "backend", "auto") or "auto")
    if names and NUMBA_CUDA_MLIR in names and (backend.is_simulator or backend.is_host) \
            and getattr(args, "command", None) != "inspect":  # inspect compiles offline, for any backend
        raise InputError(f"--compiler {NUMBA_CUDA_MLIR} builds CUDA kernels for a GPU; the {backend.name} backend runs "
                         f"{'numba-cuda in its simulator' if backend.is_simulator else 'numba CPU twins'} "
                         f"(use --backend cuda, or leave --compiler out)")
    if names and len(names) == 1:  # several: bench runs each in its own process (cli/bench_compilers.py)
        choose(names[0])


def resolve_if_named(args) -> None:
    """For commands that need no backend but accept --backend: one that was named and cannot be had here (a
    `cuda` without a GPU, a --device that does not exist) is refused as any command refuses it."""
    if not backends.choice(args.backend).is_auto or args.device is not None:
        backends.resolve(args.backend, args.device)
