"""One benchmark run as one validated, immutable object: what the CLI's `bench`, every benchmark panel, the
lessons, the simulator's child process and `--processes` children ask :func:`kernels.service.bench.run_bench`
to do.

The request checks every bound once, when it is made (sizes, options, launches against each variant's rule,
repeats, rounds, the measurement policy, processes, the memory a run needs), and raises InputError
naming the field in its caller's words (``labels``: the CLI's flags by default, a panel passes its own). It
round-trips through JSON (:meth:`BenchRequest.to_json`, :meth:`BenchRequest.from_json`, which checks every
field's type first: :func:`check_json`), and a result file's header holds it.

Each field declares its type, bounds, words, CLI option and panel control once (``setting(...)``,
:mod:`kernels.service.fields`): a run-wide setting is one declared field here, and `bench`'s option, the
panel's control with its save and load, the run's header line and the validator follow from it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Iterator, Mapping

from kernels.backend import MAX_REPEATS, Backend
from kernels.errors import InputError, items
from kernels.harness.processes import MAX_PROCESSES
from kernels.harness.rounds import MAX_ROUNDS
from kernels.launch import Launch
from kernels.service.fields import CHECK, DECIMAL, SPIN, Setting, check_fields, cli_words, setting, settings_of

MAX_WARMUP = 1000
MAX_COOLDOWN_S = 600.0
# the launch's keys (kernels.launch.Launch) as a request's JSON holds them, with the CLI's words
LAUNCH_SETTINGS = {
    "block": Setting(int, "Block size", flag="--block", optional=True, minimum=1),
    "grid": Setting(int, "Grid", flag="--grid", optional=True, minimum=1),
    "grid_sm": Setting(float, "Grid", flag="--grid-sm", optional=True, above=0),
    "items_per_thread": Setting(int, "Items per thread", flag="--items-per-thread", optional=True, minimum=1),
}


def _reduction(algorithm) -> bool:
    """`bench reduction` takes --retune (as it always has; docs/cli.md also names the hash table's best, whose
    tuning cache run_bench's retuning covers too, but its command line never offered the option)."""
    return algorithm.name == "reduction"


def _takes_files(algorithm) -> bool:
    return algorithm.user is not None


@dataclass(frozen=True)
class BenchRequest:
    """A benchmark run: an algorithm's variants on its sizes (and swept options), each launch, timed.

    Given fields may be loose (``options`` as text, ``variants`` as 'all' or 'a,b', ``repeats`` None for the
    backend's default, ``sizes`` empty for the size axis's default); the request settles them: its fields
    always hold the values the run uses. Each field declares its type, bounds and words once
    (:mod:`kernels.service.fields`): the CLI's options, the panel's controls and the validator read them."""

    algorithm: str = setting(kind=str, label="Target", cli=False)
    backend: Backend = setting(kind=dict, label="Backend", cli=False)  # JSON: {"kind", "device"}
    # () : the size axis's default on this backend (or the input file's size)
    sizes: tuple[int, ...] = setting((), kind=tuple, item=int, minimum=1, label="N", flag="--sizes",
                                     help="sweep over sizes N1,N2,...", applies=lambda a: a.size is not None)
    # every option of the algorithm, settled (each checked by its Option)
    options: tuple[tuple[str, object], ...] | Mapping = setting((), kind=dict, label="Options", cli=False)
    launches: tuple[Launch, ...] = setting((Launch(),), kind=tuple, item=dict, label="Launch", cli=False)
    # built-in names, and the NAMEs the variant files declare
    variants: tuple[str, ...] | str = setting("all", kind=tuple, item=str, label="Variants", flag="--variants",
                                              cli=False)
    variant_files: tuple[str, ...] = setting((), kind=tuple, item=str, label="Variant files", flag="--variant-file",
                                             cli=False)
    repeats: int | None = setting(
        None, kind=int, optional=True, label="Repeats", flag="--repeats", control=SPIN, gui_default=5,
        in_header=True,  # its bounds are the backend's (Caps.check_repeats)
        help=f"timed repeats after a warm-up (default 10, 2 in the simulator; at most {MAX_REPEATS}, 5 in the "
             "simulator)")
    rounds: int = setting(
        1, kind=int, minimum=1, maximum=MAX_ROUNDS, label="Rounds", flag="--rounds", group="measurement",
        control=SPIN, in_header=True,
        help="spread each row's repeats over this many rounds through the rows, each round in a shuffled order "
             "(default 1: the repeats back to back); for compare, docs/results.md")
    warmup: int = setting(
        1, kind=int, minimum=1, maximum=MAX_WARMUP, label="Warm-up", flag="--warmup", group="measurement",
        control=SPIN, in_header=True,
        help="untimed calls of each row before its timed repeats (default 1: the first call, which compiles, is "
             "never timed)")
    processes: int = setting(
        1, kind=int, minimum=1, maximum=MAX_PROCESSES, label="Processes", flag="--processes", group="measurement",
        in_header=True,
        help="run the bench in this many fresh processes one after another, each taking its share of --repeats, "
             "and join their rows (default 1); compare then judges the processes' medians, docs/results.md")
    cold: bool = setting(
        False, kind=bool, label="Cold", flag="--cold", group="measurement",
        help="also time every GPU variant with L2 flushed before each repeat (cold_median_ms)")
    # measure the copy bandwidth first, where GB/s is the algorithm's figure of merit
    peak: bool = setting(True, kind=bool, label="copy bandwidth line", cli=False, control=CHECK, attr="show_peak",
                         help="measure the device's copy bandwidth before the run and draw it on the chart")
    input: str | None = setting(None, kind=str, optional=True, label="Input", flag="--input", cli=False)
    seed: int = setting(0, kind=int, minimum=0, label="Seed", flag="--seed",
                        help="seed of the random input (default 0)")
    tolerance: float | None = setting(
        None, kind=float, optional=True, above=0, below=1, label="Tolerance", flag="--tolerance",
        group="measurement", bounds_text="a fraction below 1, e.g. 0.01 for 1 percent",
        help="after --repeats, keep repeating until the median moves by at most this fraction (e.g. 0.01), up to "
             "--max-repeats or --max-seconds (default: exactly --repeats)")
    max_repeats: int | None = setting(None, kind=int, optional=True, label="Max repeats", flag="--max-repeats",
                                      group="measurement", help="cap on repeats with --tolerance (default 10 x "
                                                                "--repeats)")
    max_seconds: float = setting(3.0, kind=float, above=0, label="Max seconds", flag="--max-seconds",
                                 group="measurement", help="time cap per timing with --tolerance (default 3)")
    retune: bool = setting(False, kind=bool, label="Retune", flag="--retune", group="measurement", applies=_reduction,
                           help="redo best's tuning sweep for this device and size (else its cached launch is used)")
    variant_timeout: float = setting(
        10.0, kind=float, above=0, label="Variant timeout", flag="--variant-timeout", group="user",
        applies=_takes_files,
        help="seconds a variant file's run may go without finishing a call before its process is stopped "
             "(default 10)")
    cooldown: float = setting(
        0.0, kind=float, minimum=0.0, maximum=MAX_COOLDOWN_S, label="Cooldown", flag="--cooldown",
        group="measurement", control=DECIMAL, suffix=" s", in_header=True,
        help="seconds of rest before each row's timed repeats (each round's, with --rounds), so that a GPU's "
             "clocks and temperature settle between measurements (default 0)")
    labels: Mapping | None = field(default=None, compare=False, repr=False)  # the caller's words for fields

    def __post_init__(self):
        words = self.words
        settle = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 - frozen
        for name, declared in settings_of(type(self)).items():  # each plain value: its type and bounds
            if declared.kind in (int, float, bool, str):
                declared.check(getattr(self, name), words.get(name, name))
        spec = self.spec
        settle("algorithm", spec.name)  # an earlier name (an alias) settles on the current one
        backend = self.backend
        settle("repeats", backend.caps.check_repeats(self.repeats, words["repeats"]))
        settle("options", self._settled_options(spec, words))
        settle("launches", self._settled_launches(spec, words))
        settle("variants", self._settled_variants(spec, words))
        settle("variant_files", tuple(str(p) for p in self.variant_files))
        self._check_launches(spec)
        self._check_measurement(words)
        settle("sizes", self._settled_sizes(spec, words))
        self._check_memory(spec, words)

    @property
    def words(self) -> dict:
        """The caller's word for each field: the CLI's flags, unless ``labels`` gives others (a panel's)."""
        return {**cli_words(type(self)), **{k: s.flag for k, s in LAUNCH_SETTINGS.items()}, **(self.labels or {})}

    # --- settling each field --------------------------------------------------------------------------------
    @property
    def spec(self):
        """The algorithm's descriptor (:class:`kernels.harness.descriptor.Algorithm`)."""
        from kernels.registry import by_name

        return by_name(self.algorithm)

    def _settled_options(self, spec, words) -> tuple:
        given = dict(self.options)
        unknown = sorted(set(given) - {o.name for o in spec.options})
        if unknown:
            raise InputError(f"{', '.join(unknown)}: not an option of {spec.name} (it takes "
                             f"{', '.join(o.name for o in spec.options) or 'none'})")
        out = []
        for option in spec.options:
            label = words.get(option.name, option.flag)
            value = given.get(option.name)
            if option.sweep:
                out.append((option.name, _swept(option, value, self.backend, label)))
            else:
                out.append((option.name, option.value(_tupled(value), self.backend, label)))
        return tuple(out)

    def _settled_launches(self, spec, words) -> tuple:
        launches = tuple(self.launches) or (Launch(),)
        if not self.backend.runs_cuda_kernels:
            for launch in launches:
                for name in ("block", "grid", "grid_sm", "items_per_thread"):
                    value = getattr(launch, name)
                    if value is not None:
                        shown = "x".join(map(str, value)) if isinstance(value, tuple) else value
                        raise InputError(f"{words[name]} {shown} applies to CUDA kernels; the cpu backend has none "
                                         "(use --backend cuda or sim)")
        return launches

    def _settled_variants(self, spec, words) -> tuple:
        """('all',) or the names given, each once. Without variant files every name must be a built-in (one
        line listing the known ones otherwise); the files' NAMEs are checked once they are loaded
        (:func:`kernels.service.bench.run_bench`)."""
        from kernels.harness.variants import select

        names = self.variants
        if isinstance(names, str):
            names = items(names, words["variants"], "name")
        names = tuple(dict.fromkeys(names))
        if not names or any(not isinstance(n, str) or not n.strip() for n in names):
            raise InputError(f"{words['variants']} {','.join(map(str, names))!r} has an empty name; give 'all' "
                             "or names separated by commas")
        if names == ("all",):
            return names
        if not self.variant_files:
            select(spec.variants, list(names))
        return names

    def selected(self, variants) -> list:
        """The variants of ``variants`` (built-ins, then the files' loaded ones) this request runs, in that
        order; InputError for a name none of them has."""
        from kernels.harness.variants import select

        return select(variants, "all" if self.variants == ("all",) else list(self.variants))

    def _check_launches(self, spec) -> None:
        """Each launch against each selected built-in's rule (a user file's, once it is loaded)."""
        chosen = spec.variants if self.variants == ("all",) else [v for v in spec.variants if v.name in self.variants]
        for launch in self.launches:
            for v in chosen:
                if v.skip_reason(self.backend) is None:
                    v.check(launch, self.backend)

    def _check_measurement(self, words) -> None:
        from kernels.harness.processes import check_processes
        from kernels.harness.rounds import check_rounds

        if self.max_repeats is not None:
            if self.tolerance is None:
                raise InputError(f"{words['max_repeats']} applies with {words['tolerance']} (the stopping rule); "
                                 "give both")
            self.backend.caps.check_repeats(self.max_repeats, words["max_repeats"])
            if self.max_repeats < self.repeats:
                raise InputError(f"{words['max_repeats']} {self.max_repeats} is below {words['repeats']} {self.repeats}")
        if self.cold and not self.backend.is_gpu:
            raise InputError(f"{words['cold']} flushes a GPU's L2 cache; it needs the cuda backend")
        check_rounds(self.rounds, self.repeats, self.tolerance, (words["rounds"], words["repeats"]))
        check_processes(self.processes, self.repeats, self.rounds, (words["processes"], words["repeats"],
                                                                    words["rounds"]))
        if self.processes > 1 and (self.tolerance is not None or self.retune):
            clash = words["tolerance"] if self.tolerance is not None else words["retune"]
            raise InputError(f"{words['processes']} runs the same timed rows in every process; give it without {clash}")

    def _settled_sizes(self, spec, words) -> tuple:
        if self.input is not None:
            if self.sizes:
                raise InputError(f"{words['input']} sets the problem size; give {words['sizes']} or "
                                 f"{words['input']}, not both")
            if spec.load_input is None:
                raise InputError(f"{spec.name} takes no input file")
            return ()
        if spec.size is None:
            if self.sizes:
                raise InputError(f"{spec.name} has no size axis; its options set what it computes")
            return (0,)
        sizes = tuple(self.sizes) or (spec.size.default_for(self.backend),)
        return tuple(spec.size.check(n, self.backend, words["sizes"]) for n in sizes)

    def _check_memory(self, spec, words) -> None:
        """Refuse, before anything is allocated, a run that cannot fit in free host or device memory."""
        options = dict(self.options)
        for values in self._sweep_values():
            chosen = {**options, **values}
            if self.input is not None:  # the same estimate as a size, from the file's size or header, unread
                from kernels.errors import shown

                n, loading = spec.input_size(self.input, words["input"])
                unit = spec.size.unit if spec.size else "items"
                spec.check_memory(n, chosen, self.backend, words["input"],
                                  f"{words['input']} {shown(self.input)} ({n:,} {unit})", extra_host=loading)
                continue
            for n in self.sizes:
                spec.check_memory(n, chosen, self.backend, words["sizes"])

    # --- what the run reads ---------------------------------------------------------------------------------
    @property
    def option_values(self) -> dict:
        """Every option's settled value (a swept option's: the tuple of its values)."""
        return dict(self.options)

    def _sweep_values(self) -> list[dict]:
        """Each combination of the swept options' values (one empty combination when nothing is swept)."""
        swept = [(o.name, dict(self.options)[o.name]) for o in self.spec.options if o.sweep]
        return [dict(zip([n for n, _ in swept], combo)) for combo in itertools.product(*(v for _, v in swept))]

    @property
    def problem_count(self) -> int:
        return max(1, len(self.sizes)) * len(self._sweep_values())

    def problems(self, cache=None) -> Iterator:
        """The problems in run order (size by size, each swept combination in turn), each built when its turn
        comes: a problem's input can be large. ``cache`` (a cluster worker's, kernels/cluster/problem_cache.py):
        a problem of the same algorithm, size, options, seed and input as one it keeps is that one."""
        spec, options = self.spec, dict(self.options)
        data: list = []  # the input file's data, read for the first problem built

        def build(n, chosen):
            if self.input is not None and not data:
                data.append(spec.load_input(self.input))
            return spec.make_problem(n, chosen, self.seed, *data)

        for n in self.sizes or (None,):
            for values in self._sweep_values():
                chosen = {**options, **values}
                if cache is None:
                    yield build(n, chosen)
                else:
                    key = (self.algorithm, n, repr(sorted(chosen.items())), self.seed, self.input)
                    yield cache.get(key, lambda n=n, chosen=chosen: build(n, chosen))

    @property
    def policy(self):
        """How the timers measure this run (:class:`kernels.timing.Policy`)."""
        from kernels.timing import Policy

        return Policy(tolerance=self.tolerance, max_repeats=self.max_repeats, max_seconds=self.max_seconds,
                      warmup=self.warmup)

    @property
    def unit(self):
        """The rate the algorithm reports beside GB/s (:class:`kernels.harness.rows.Unit`), or None."""
        return self.spec.unit

    @property
    def wants_peak(self) -> bool:
        return self.peak and self.spec.measures_copy_peak

    @property
    def wants_ceiling(self) -> bool:
        """Whether each row's ceiling (kernels/harness/ceilings.py) is measured: with the copy peak's line."""
        return bool(self.peak and self.spec.judge is not None)

    def settings_text(self) -> str:
        """The run-wide settings declared for a run's header, as the line above its table says them:
        'repeats 10, rounds 1, warm-up 1, processes 1, cooldown 0 s'."""
        return ", ".join(f"{s.label.lower()} {_shown_value(getattr(self, name))}{s.suffix}"
                         for name, s in settings_of(type(self)).items() if s.in_header)

    def with_changes(self, **changes) -> "BenchRequest":
        """A copy with ``changes``, validated again (e.g. one process's share of the repeats)."""
        return replace(self, **changes)

    # --- JSON -----------------------------------------------------------------------------------------------
    def to_json(self) -> dict:
        """Plain values only: a result file's header holds this, and :meth:`from_json` reads it back."""
        out = {}
        for name in settings_of(type(self)):
            value = getattr(self, name)
            if name == "backend":
                value = {"kind": value.kind, "device": value.device}
            elif name == "options":
                value = {k: _listed(v) for k, v in value}
            elif name == "launches":
                value = [{k: _listed(getattr(x, k)) for k in LAUNCH_SETTINGS} for x in value]
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out

    @classmethod
    def from_json(cls, doc: Mapping, backend: Backend | None = None, labels: Mapping | None = None) -> "BenchRequest":
        """The request ``doc`` (from :meth:`to_json`) describes, checked field by field (:func:`check_json`)
        and validated again; ``backend`` replaces the recorded one (a child process runs it where it is)."""
        values = check_json(doc)
        if backend is None:
            from kernels.backend import choice

            recorded = values.get("backend") or {}
            chosen = choice(recorded.get("kind", ""))  # InputError for a name that is no backend
            if chosen.is_auto:
                raise InputError("a bench request names a resolved backend (cuda, cpu or sim), not auto")
            backend = Backend(chosen.name, recorded.get("device", 0))
        values["backend"] = backend
        values["options"] = {k: _tupled(v) for k, v in (values.get("options") or {}).items()}
        values["launches"] = tuple(Launch(**{k: _tupled(v) for k, v in x.items()}) for x in values.get("launches", ()))
        return cls(**values, labels=labels)


WHERE = "a bench request"
BACKEND_SETTINGS = {"kind": Setting(str, "kind"), "device": Setting(int, "device", minimum=0)}


def check_json(doc) -> dict:
    """The one validator of a bench request that arrives as data (a ``--processes`` child's request, a result
    file's header, a cluster's job): every field of its declared type within its bounds, no unknown key, the
    backend and each launch likewise. One InputError naming the field; the values (lists as tuples) else.
    What depends on the algorithm (its options, sizes and launch rules) is checked when the request is made."""
    values = check_fields(BenchRequest, doc, WHERE, skip=("backend", "launches", "options"))
    if "backend" in values:
        values["backend"] = check_fields(BACKEND_SETTINGS, values["backend"], f"{WHERE}: backend")
    if "options" in values:
        options = values["options"]
        if not isinstance(options, Mapping):
            raise InputError(f"{WHERE}: options must be an object of option names and values")
        for name, value in options.items():
            if not _plain(value, depth=2):
                raise InputError(f"{WHERE}: options: {name} must be a value or a list of values")
    if "launches" in values:
        launches = values["launches"]
        if not isinstance(launches, list):
            raise InputError(f"{WHERE}: launches must be a list of objects")
        values["launches"] = tuple(_checked_launch(x, f"{WHERE}: launches[{i}]") for i, x in enumerate(launches))
    return values


def _plain(x, depth: int) -> bool:
    """A JSON scalar, or (``depth`` lists deep at most) a list of them: an option's value or values."""
    if isinstance(x, list):
        return depth > 0 and all(_plain(v, depth - 1) for v in x)
    return x is None or isinstance(x, (str, int, float, bool))


def _checked_launch(doc, where: str) -> dict:
    """A launch's keys: each None, or of its type (a block or grid: a whole number or a list of 1 to 3)."""
    out = check_fields(LAUNCH_SETTINGS, doc, where, skip=("block", "grid"))
    for key in ("block", "grid"):
        value = out.get(key)
        if isinstance(value, list):
            if not 1 <= len(value) <= 3:
                raise InputError(f"{where}: {key} must be a whole number or a list of 1 to 3 whole numbers")
            out[key] = [LAUNCH_SETTINGS[key].check(v, f"{where}: {key}") for v in value]
        elif value is not None:
            out[key] = LAUNCH_SETTINGS[key].check(value, f"{where}: {key}")
    return out


def _swept(option, value, backend, label) -> tuple:
    """A swept option's values: its default alone, or each item of a comma list (or of a sequence)."""
    if value is None:
        return (option.value(None, backend, label),)
    values = items(value, label, "value") if isinstance(value, str) else list(value) \
        if isinstance(value, (list, tuple)) else [value]
    if not values or any(isinstance(x, str) and not x.strip() for x in values):
        raise InputError(f"{label} {value!r} has an empty value; give values separated by commas")
    return tuple(dict.fromkeys(option.value(_tupled(x), backend, label) for x in values))


def _shown_value(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _tupled(value):
    """Lists (as JSON has them) as tuples (as the options and launches hold them)."""
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


def _listed(value):
    return [_listed(v) for v in value] if isinstance(value, tuple) else value
