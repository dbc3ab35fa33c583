"""The command line's shared parsing: the parser that says what went wrong in one line, the options every
command takes (--backend, --device), the parsers of whole numbers, lists and numbers that turn a bad value
into one line, and what is read before the full parser exists (--backend, which decides whether numba
starts on the simulator). Each command's own options are in its module (raytracer_app/cli/COMMAND.py)."""

from __future__ import annotations

import argparse
import math

from kernels import backend as backends
from kernels.errors import InputError, items, one_of, whole


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)  # --size must not silently mean --sizes
        super().__init__(*args, **kwargs)

    def error(self, message):  # one line, no usage dump
        raise InputError(f"{message}{self._choices_of_missing(message)} (see {self.prog} --help)")

    def _choices_of_missing(self, message: str) -> str:
        """': one of a, b, c' where a required positional with choices was left out (`render`, `lesson`)."""
        prefix = "the following arguments are required: "
        if not message.startswith(prefix):
            return ""
        missing = [m.strip() for m in message[len(prefix):].split(",")]
        for action in self._actions:
            if action.required and action.metavar in missing and action.choices:
                names = list(action.choices)
                return f": one of {', '.join(names)}" if len(missing) == 1 else ""
        return ""

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


class ListOption(argparse.Action):
    """The one parser of every option that takes several values: each occurrence is a comma list
    (:func:`kernels.errors.items`, the one list rule: no empty item), and repeating the flag adds its items,
    so ``--op insert,find`` and ``--op insert --op find`` give the same list. ``item``: each item's parser
    (an argparse ``type``: ArgumentTypeError or InputError for a bad one); ``item_choices``: the items
    allowed (checked after ``item``). The value is a list in the order given; the default is left as it is
    (not appended to). Use it as ``add_argument(flag, action=ListOption, item=..., item_choices=...)``."""

    def __init__(self, option_strings, dest, item=None, item_choices=(), noun: str = "value", **kwargs):
        self.item, self.item_choices, self.noun = item, tuple(item_choices), noun
        if self.item_choices and kwargs.get("metavar") is None:
            kwargs["metavar"] = "{" + ",".join(map(str, self.item_choices)) + "}[,...]"
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        flag = option_string or self.dest
        try:
            parsed = list_values(values, flag, self.item, self.item_choices, self.noun)
        except (InputError, argparse.ArgumentTypeError) as exc:
            raise argparse.ArgumentError(None, str(exc)) from None  # the message names the flag itself
        before = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, (list(before) if isinstance(before, list) else []) + parsed)


def list_values(text, flag: str, item=None, choices=(), noun: str = "value") -> list:
    """The items of one comma list ``text`` given to ``flag``, each through ``item`` and checked against
    ``choices``: the parsing behind :class:`ListOption`, for callers outside argparse too."""
    if not str(text).strip():  # as every other option's empty value (Parser.parse_args)
        raise InputError(f"{flag} {text!r} is empty")
    out = []
    for part in items(text, flag, noun):
        value = item(part) if item is not None else part
        if choices:
            one_of(value, choices, flag)
        out.append(value)
    return out


def add_list(p, flag: str, item=None, choices=(), noun: str = "value", **kwargs):
    """``p.add_argument(flag, ...)`` for an option taking several values (:class:`ListOption`)."""
    return p.add_argument(flag, action=ListOption, item=item, item_choices=choices, noun=noun, **kwargs)


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


def setting_type(flag: str, declared):
    """The parser of a request field's option from its declaration (:class:`kernels.service.fields.Setting`):
    a whole number or a number (a field of several values goes through :class:`ListOption` and
    :func:`setting_item`)."""
    if declared.kind is int:
        return whole_number(flag, declared.minimum)
    if declared.kind is float:
        return number(flag, positive=declared.above == 0)
    return str


def setting_item(flag: str, declared):
    """The parser of one item of a request field that takes several values (:class:`ListOption` splits the
    list): a whole number of at least the declared minimum, or the text as given."""
    if declared.item is int:
        return whole_number(flag, declared.minimum if declared.minimum is not None else 1)
    return None


def option_type(option):
    """An algorithm option's parser as argparse wants it (ArgumentTypeError for a bad value)."""
    def parse(text):
        try:
            return option.parse(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    parse.__name__ = option.name
    return parse


def report_failed_write(option: str, path, exc: BaseException) -> None:
    """One line on stderr for an output that could not be written (the others are written all the same)."""
    import sys

    from kernels.errors import printable

    print(f"raytracer-app: failed: {printable(exc)}", file=sys.stderr)


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




def compiler_option(p: argparse.ArgumentParser, several: bool = False) -> None:
    """--compiler: which compiler builds the CUDA kernels (kernels/backend/compiler.py), through the one list
    parser; ``several``: more than one, each run in its own processes (bench). A command that takes one
    refuses several in :func:`apply_compiler`."""
    from kernels.backend.compiler import COMPILER_ENV, COMPILER_NAMES, DEFAULT

    what = "compilers, separated by commas, each row run under each" if several else "the compiler"
    add_list(p, "--compiler", choices=COMPILER_NAMES, noun="compiler", default=None,
             metavar="{" + ",".join(COMPILER_NAMES) + "}" + ("[,...]" if several else ""),
             help=f"{what} of the CUDA kernels: {', '.join(COMPILER_NAMES)} (default ${COMPILER_ENV} "
                  f"or {DEFAULT}; numba-cuda-mlir needs the mlir extra)")
    p.set_defaults(compiler_several=several)


def _checked_compilers(args) -> list[str] | None:
    """--compiler's names: none twice, one alone where the command takes one."""
    from kernels.backend.compiler import COMPILER_NAMES

    names = getattr(args, "compiler", None)
    if not names:
        return names
    if len(set(names)) != len(names):
        raise InputError(f"--compiler {','.join(names)!r} names a compiler twice")
    if len(names) > 1 and not getattr(args, "compiler_several", False):
        raise InputError(f"--compiler takes one of {', '.join(COMPILER_NAMES)}")
    return names


def apply_compiler(args) -> None:
    """Make a single --compiler this process's compiler (before any kernel module loads; children inherit it)."""
    from kernels.backend.compiler import choose

    from kernels.backend.compiler import NUMBA_CUDA_MLIR

    names = _checked_compilers(args)
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
