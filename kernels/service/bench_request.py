"""One benchmark run as one validated, immutable object: what the CLI's `bench`, every benchmark panel, the
lessons, the simulator's child process and `--processes` children ask :func:`kernels.service.bench.run_bench`
to do.

The request checks every bound once, when it is made (sizes, options, launches against each variant's rule,
repeats, rounds, the measurement policy, processes, the memory a run needs), and raises InputError
naming the field in its caller's words (``labels``: the CLI's flags by default, a panel passes its own). It
round-trips through JSON (:meth:`BenchRequest.to_json`, :meth:`BenchRequest.from_json`), and a result file's
header holds it. Adding a run-wide setting is a field here, an option in the CLI and a control in the panel."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, fields, replace
from typing import Iterator, Mapping

from kernels.backend import Backend
from kernels.errors import InputError, items
from kernels.launch import Launch

# the CLI's words for each field: a refusal names the option the user typed
CLI_LABELS = {
    "sizes": "--sizes", "repeats": "--repeats", "rounds": "--rounds", "warmup": "--warmup",
    "processes": "--processes", "tolerance": "--tolerance", "max_repeats": "--max-repeats",
    "max_seconds": "--max-seconds", "cold": "--cold", "input": "--input", "seed": "--seed",
    "variants": "--variants", "variant_timeout": "--variant-timeout", "block": "--block", "grid": "--grid",
    "grid_sm": "--grid-sm", "items_per_thread": "--items-per-thread",
}
MAX_WARMUP = 1000


@dataclass(frozen=True)
class BenchRequest:
    """A benchmark run: an algorithm's variants on its sizes (and swept options), each launch, timed.

    Given fields may be loose (``options`` as text, ``variants`` as 'all' or 'a,b', ``repeats`` None for the
    backend's default, ``sizes`` empty for the size axis's default); the request settles them: its fields
    always hold the values the run uses."""

    algorithm: str
    backend: Backend
    sizes: tuple[int, ...] = ()  # () : the size axis's default on this backend (or the input file's size)
    options: tuple[tuple[str, object], ...] | Mapping = ()  # every option of the algorithm, settled
    launches: tuple[Launch, ...] = (Launch(),)
    variants: tuple[str, ...] | str = "all"  # built-in names, and the NAMEs the variant files declare
    variant_files: tuple[str, ...] = ()
    repeats: int | None = None  # timed repeats per row; None: the backend's default
    rounds: int = 1  # the repeats spread over this many shuffled rounds through the rows
    warmup: int = 1  # untimed calls before each row's timed repeats (at least one: a compile is never timed)
    processes: int = 1  # fresh processes the repeats are shared between (kernels.harness.processes)
    cold: bool = False  # also time every GPU row with L2 flushed before each repeat
    peak: bool = True  # measure the copy bandwidth first, where GB/s is the algorithm's figure of merit
    input: str | None = None  # a file holding the problem's input (its size replaces ``sizes``)
    seed: int = 0
    tolerance: float | None = None  # repeat until the median moves by at most this fraction
    max_repeats: int | None = None
    max_seconds: float = 3.0
    retune: bool = False  # redo best's tuning sweep instead of reading its cached launch
    variant_timeout: float = 10.0  # seconds a variant file's call may go without finishing
    labels: Mapping | None = field(default=None, compare=False, repr=False)  # the caller's words for fields

    def __post_init__(self):
        words = {**CLI_LABELS, **(self.labels or {})}
        settle = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 - frozen
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

        if self.tolerance is not None and not 0 < self.tolerance < 1:
            raise InputError(f"{words['tolerance']} {self.tolerance} must be a fraction below 1, e.g. 0.01 for 1 percent")
        if self.max_repeats is not None:
            if self.tolerance is None:
                raise InputError(f"{words['max_repeats']} applies with {words['tolerance']} (the stopping rule); "
                                 "give both")
            self.backend.caps.check_repeats(self.max_repeats, words["max_repeats"])
            if self.max_repeats < self.repeats:
                raise InputError(f"{words['max_repeats']} {self.max_repeats} is below {words['repeats']} {self.repeats}")
        if not self.max_seconds > 0:
            raise InputError(f"{words['max_seconds']} {self.max_seconds} must be a positive number")
        if self.cold and not self.backend.is_gpu:
            raise InputError(f"{words['cold']} flushes a GPU's L2 cache; it needs the cuda backend")
        check_rounds(self.rounds, self.repeats, self.tolerance, (words["rounds"], words["repeats"]))
        if not isinstance(self.warmup, int) or isinstance(self.warmup, bool) or not 1 <= self.warmup <= MAX_WARMUP:
            raise InputError(f"{words['warmup']} {self.warmup!r} must be a whole number from 1 to {MAX_WARMUP}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise InputError(f"{words['seed']} {self.seed!r} must be a whole number of at least 0")
        if not self.variant_timeout > 0:
            raise InputError(f"{words['variant_timeout']} {self.variant_timeout} must be a positive number")
        check_processes(self.processes, self.repeats, self.rounds, (words["processes"], words["repeats"],
                                                                    words["rounds"]))
        if self.processes > 1 and (self.tolerance is not None or self.retune):
            clash = words["tolerance"] if self.tolerance is not None else "--retune"
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

    def problems(self) -> Iterator:
        """The problems in run order (size by size, each swept combination in turn), each built when its turn
        comes: a problem's input can be large."""
        spec, options = self.spec, dict(self.options)
        data = spec.load_input(self.input) if self.input is not None else None
        for n in self.sizes or (None,):
            for values in self._sweep_values():
                yield spec.make_problem(n, {**options, **values}, self.seed, *(() if data is None else (data,)))

    @property
    def policy(self):
        """How the timers measure this run (:class:`kernels.timing.Policy`)."""
        from kernels.timing import Policy

        return Policy(tolerance=self.tolerance, max_repeats=self.max_repeats, max_seconds=self.max_seconds,
                      warmup=self.warmup)

    @property
    def unit(self):
        """The rate the algorithm reports beside GB/s (:class:`kernels.harness.bench.Unit`), or None."""
        return self.spec.unit

    @property
    def wants_peak(self) -> bool:
        return self.peak and self.spec.measures_copy_peak

    def with_changes(self, **changes) -> "BenchRequest":
        """A copy with ``changes``, validated again (e.g. one process's share of the repeats)."""
        return replace(self, **changes)

    # --- JSON -----------------------------------------------------------------------------------------------
    def to_json(self) -> dict:
        """Plain values only: a result file's header holds this, and :meth:`from_json` reads it back."""
        out = {}
        for f in fields(self):
            if f.name == "labels":
                continue
            value = getattr(self, f.name)
            if f.name == "backend":
                value = {"kind": value.kind, "device": value.device}
            elif f.name == "options":
                value = {k: _listed(v) for k, v in value}
            elif f.name == "launches":
                value = [{k: _listed(getattr(x, k)) for k in ("block", "grid", "grid_sm", "items_per_thread")}
                         for x in value]
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_json(cls, doc: Mapping, backend: Backend | None = None, labels: Mapping | None = None) -> "BenchRequest":
        """The request ``doc`` (from :meth:`to_json`) describes, validated again; ``backend`` replaces the
        recorded one (a child process runs it where it is)."""
        if not isinstance(doc, Mapping):
            raise InputError("a bench request must be a JSON object")
        known = {f.name for f in fields(cls)} - {"labels"}
        unknown = sorted(set(doc) - known)
        if unknown:
            raise InputError(f"a bench request has unknown fields {', '.join(unknown)}")
        values = dict(doc)
        if backend is None:
            from kernels.backend import choice

            recorded = values.get("backend") or {}
            chosen = choice(str(recorded.get("kind", "")))  # InputError for a name that is no backend
            if chosen.is_auto:
                raise InputError("a bench request names a resolved backend (cuda, cpu or sim), not auto")
            backend = Backend(chosen.name, int(recorded.get("device", 0)))
        values["backend"] = backend
        values["options"] = {k: _tupled(v) for k, v in (values.get("options") or {}).items()}
        values["launches"] = tuple(Launch(**{k: _tupled(v) for k, v in x.items()}) for x in values.get("launches", []))
        for name in ("sizes", "variants", "variant_files"):
            if isinstance(values.get(name), list):
                values[name] = tuple(values[name])
        return cls(**values, labels=labels)


def _swept(option, value, backend, label) -> tuple:
    """A swept option's values: its default alone, or each item of a comma list (or of a sequence)."""
    if value is None:
        return (option.value(None, backend, label),)
    values = items(value, label, "value") if isinstance(value, str) else list(value) \
        if isinstance(value, (list, tuple)) else [value]
    if not values or any(isinstance(x, str) and not x.strip() for x in values):
        raise InputError(f"{label} {value!r} has an empty value; give values separated by commas")
    return tuple(dict.fromkeys(option.value(_tupled(x), backend, label) for x in values))


def _tupled(value):
    """Lists (as JSON has them) as tuples (as the options and launches hold them)."""
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


def _listed(value):
    return [_listed(v) for v in value] if isinstance(value, tuple) else value
