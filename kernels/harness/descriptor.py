"""What an algorithm module declares about itself, once, for the CLI, the GUI and the tests to read:
its variants, its options and their defaults per backend, its size axis, how to build a problem, the rate
it reports and what a run needs in memory. Each ``kernels/<algorithm>.py`` builds one :class:`Algorithm`
(``ALGORITHM``); :mod:`kernels.registry` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from kernels.harness.rows import Problem, Unit
from kernels.errors import InputError, whole


@dataclass(frozen=True)
class Option:
    """A choice a problem needs (op, dtype, pattern, buckets, image size). ``default`` may be a mapping
    from backend kind to value; ``parse`` turns the user's text into the value (and raises InputError)."""

    name: str  # python name; the CLI flag is --name with dashes
    help: str
    choices: tuple = ()
    default: object = None
    parse: Callable[[str], object] = str
    gui: bool = True  # shown in the benchmark panel
    suggestions: tuple = ()  # values the GUI offers when any value of ``parse`` is allowed
    # an axis like the size: the user may give several values (``--load 0.5,0.9``), each one problem of its
    # own (make_problem always sees one value), and each row records its value (the problem's ``axes``)
    sweep: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def default_for(self, backend) -> object:
        if isinstance(self.default, Mapping):
            return self.default[backend.kind]
        return self.default

    def value(self, given, backend, label: str | None = None):
        """The user's value (text from the CLI or GUI, or already parsed), else the backend's default;
        a refusal names the option as ``label`` (default: its flag)."""
        if given is None:
            return self.default_for(backend)
        value = self.parse(given) if isinstance(given, str) else given
        if self.choices and value not in self.choices:
            raise InputError(f"{label or self.flag} {given} is not one of {', '.join(map(str, self.choices))}")
        return value


@dataclass(frozen=True)
class SizeAxis:
    """The problem size a sweep varies: its words, its defaults and limits per backend kind ('cuda',
    'cpu', 'sim'); the simulator's limits keep a run to seconds."""

    label: str  # "N elements": the GUI's label
    unit: str  # "elements": what --n counts
    default: Mapping[str, int]  # the CLI's default (the seeds' sizes on a GPU)
    maximum: Mapping[str, int]
    gui_default: Mapping[str, int] | None = None  # the panel's default, smaller where a run should be quick

    def default_for(self, backend, gui: bool = False) -> int:
        table = self.gui_default if gui and self.gui_default else self.default
        return table[backend.kind]

    def check(self, n: int, backend, option: str = "--n") -> int:
        top = self.maximum[backend.kind]
        if not 1 <= n <= top:
            where = " in the simulator" if backend.is_simulator else ""
            raise InputError(f"{option} {n} is out of range; allowed 1..{top} {self.unit}{where}")
        return n


@dataclass(frozen=True)
class UserTarget:
    """How a user's variant file (docs/user-variants.md) runs for an algorithm that accepts them.

    ``time_run(problem, resolved, backend, repeats, call, tick)`` runs in the variant's child process: it
    hands the file's ``run`` (``call``) the device inputs, a zeroed result and the launch, times it with the
    backend's timer and returns an Outcome whose result is raw (the accumulator value, the bins);
    ``score(problem, raw)`` turns that into the result the algorithm's ``verify`` checks, in the app's
    process. ``arguments``: the ``run`` signature in words; ``default_launch``: the rule when the file
    declares no ``LAUNCH``; ``supports``: the SUPPORTS keys and the problem attribute each one limits."""

    time_run: Callable[..., object]
    score: Callable[[object, object], object]
    arguments: str
    default_launch: object
    supports: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Algorithm:
    """One benchmarkable algorithm. ``make_problem(n, options, seed, data)`` builds a
    :class:`kernels.harness.rows.Problem` (``data``: a loaded input file, or None); ``memory(n, options)``
    estimates (host bytes, device bytes) of a run so that one too large is refused before allocating."""

    name: str  # the CLI target: `bench NAME`
    title: str  # the GUI panel's title
    summary: str
    variants: tuple
    make_problem: Callable[..., Problem]
    size: SizeAxis | None = None  # None: the size is not an axis (julia: one image)
    options: tuple[Option, ...] = ()
    unit: Unit | None = None  # a rate beside GB/s (inserts/s, pixels/s)
    measures_copy_peak: bool = True  # GB/s is its figure of merit, so the copy bandwidth is its ceiling
    # what its rows are judged against and the work a row does (kernels/harness/ceilings.py): % of its ceiling
    judge: object = None
    load_input: Callable[[str], object] | None = None  # --input FILE -> data for make_problem
    # (path, option) -> (the n a file gives, the host bytes loading it holds beside the run's own), from its
    # size or header before a byte of data is read: every algorithm with load_input declares it
    input_size: Callable[[str, str], tuple[int, int]] | None = None
    input_help: str = ""
    memory: Callable[[int, dict], tuple[int, int]] | None = None
    panel: bool = True  # has a benchmark panel in the GUI (the renders have their own view)
    block_shape_2d: bool = False  # blocks are BXxBY shapes (image kernels)
    extra: dict = field(default_factory=dict)
    user: UserTarget | None = None  # accepts user variant files (kernels.user_variants)

    def __post_init__(self):
        if self.load_input is not None and self.input_size is None:
            raise TypeError(f"{self.name}: an algorithm that loads --input declares input_size, so that a file "
                            "gets the memory estimate --n gets before it is read")

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)

    def options_for(self, given: Mapping[str, object], backend) -> dict:
        """Every option's value: the given ones (text or values) checked, the others at their defaults."""
        return {o.name: o.value(given.get(o.name), backend) for o in self.options}

    @property
    def rate_unit(self) -> str:
        """The figure of merit its charts and tables show: GB/s, or its own unit (M inserts/s, Mpixels/s)."""
        return self.unit.label if self.unit is not None else "GB/s"

    @property
    def has_items_per_thread(self) -> bool:
        return any(v.launch is not None and v.launch.items is not None for v in self.variants)

    @property
    def gui_options(self) -> tuple[Option, ...]:
        return tuple(o for o in self.options if o.gui)

    def check_memory(self, n: int, options: dict, backend, option: str = "--n", label: str | None = None,
                     extra_host: int = 0) -> None:
        """Refuse, before anything is allocated, a run that cannot fit in free host or device memory.
        ``label`` names the size in the message (default: ``option n``); ``extra_host``: bytes held beside
        the run's own (an input file's data while it is converted)."""
        from kernels.io.reader import host_memory_problem, size_text

        free_device = backend.free_device_bytes()

        def too_big(size):
            host, device = self.memory(size, options) if self.memory is not None else (0, 0)
            why = host_memory_problem(host + (extra_host if size == n else 0))
            if why is not None:
                return why
            if free_device is not None and device > free_device:
                return f"about {size_text(device)} of GPU memory; {size_text(free_device)} is free on {backend.device_name}"
            return None

        why = too_big(n)
        if why is None:
            return
        # the culprit: the options alone when even the smallest problem does not fit with them, else the size
        given = [o for o in self.options if options.get(o.name) != o.default_for(backend)]
        if given and too_big(1) is not None:
            names = " ".join(f"{o.flag} {options[o.name]}" for o in given)
            raise InputError(f"{names} {'needs' if len(given) == 1 else 'need'} {why}")
        raise InputError(f"{label or f'{option} {n}'} needs {why}")


def whole_number(option: str, minimum: int = 1) -> Callable[[str], int]:
    """A parser for an option's text: a whole number of at least ``minimum``."""
    def parse(text) -> int:
        return whole(text, option, minimum)
    return parse
