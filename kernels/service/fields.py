"""A request's field declared once: its type, bounds, words (the panel's label, the CLI's flag, the help), the
panel's control and whether the command line's option is made from it, in the dataclass field's metadata
(``setting(...)``). The CLI's `bench` options, the benchmark panel's run form with its save and load, the
refusals' words and the one validator of a request that arrives as data (a ``--processes`` child's JSON, a
result file's header) all read it.

The validator checks a value field by field, the same way whoever made it: a whole number is an ``int`` and
never a ``bool`` (JSON's ``true`` is not 1), a decimal number an ``int`` or ``float``, a switch a ``bool``;
``None`` only where the field is optional; then the bounds. A refusal is one InputError naming the field in
the caller's words."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Mapping

from kernels.errors import InputError

SETTING = "setting"  # the key of a field's Setting in its metadata
PLURALS = {int: "whole numbers", float: "numbers", bool: "true or false", str: "texts", dict: "objects"}

# the panel's controls a field may ask for
SPIN, DECIMAL, CHECK = "spin", "decimal", "check"


@dataclass(frozen=True)
class Setting:
    """What every reader of a request's field needs to know about it.

    ``kind``: ``int``, ``float``, ``bool`` or ``str``, or ``tuple`` for a list (each item a ``item``).
    ``flag``: the CLI's option (a refusal names it there); ``cli``: whether `bench`'s option is made from
    this declaration (False: the command builds the value itself, as the launches from ``--block``).
    ``minimum``/``maximum`` are inclusive, ``above``/``below`` exclusive. ``control``: the panel's control
    (SPIN, DECIMAL, CHECK; None: none), with ``gui_default`` when the panel starts elsewhere than the
    field's default and ``attr`` the panel's attribute for it (default: the field's name); its value is
    saved and loaded under ``key`` (default: the field's name). ``applies(algorithm)``: whether `bench TARGET` takes it."""

    kind: type
    label: str
    help: str = ""
    flag: str | None = None
    cli: bool = True
    group: str = ""  # the CLI's option group: "" (the target's own), "measurement", "user"
    optional: bool = False
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    below: float | None = None
    bounds_text: str = ""  # the refusal's words for the bounds, where the plain ones would not help
    item: type | None = None
    control: str | None = None
    gui_default: object = None
    attr: str = ""
    key: str = ""  # the panel's saved setting (default: the field's name)
    suffix: str = ""  # the panel's unit after the value (" s")
    decimals: int = 2
    applies: Callable | None = None
    in_header: bool = False  # named in the run's settings line above the table (and so in a result's header)

    def takes(self, algorithm) -> bool:
        return self.applies is None or bool(self.applies(algorithm))

    # --- the one check -------------------------------------------------------------------------------------
    def check(self, value, word: str):
        """``value`` when it is of this field's type and within its bounds; InputError naming ``word``."""
        if value is None:
            if self.optional:
                return None
            raise InputError(f"{word} is missing: it needs {self._what()}")
        if self.kind is tuple:
            if not isinstance(value, (list, tuple)):
                raise InputError(f"{word} {_shown(value)} must be a list of {PLURALS.get(self.item, 'values')}")
            return tuple(Setting(self.item, self.label, minimum=self.minimum, maximum=self.maximum)
                         .check(v, word) for v in value)
        if not _is(value, self.kind):
            raise InputError(f"{word} {_shown(value)} must be {self._what()}")
        if self.kind in (int, float):
            if (isinstance(value, float) and not math.isfinite(value)) or not self._within(value):
                shown = _num(value) if self.kind is float else _shown(value)  # 700, as typed, not 700.0
                raise InputError(f"{word} {shown} must be {self.bounds_text or self._range()}")
        return value

    def _within(self, v) -> bool:
        return ((self.minimum is None or v >= self.minimum) and (self.maximum is None or v <= self.maximum)
                and (self.above is None or v > self.above) and (self.below is None or v < self.below))

    def _what(self, kind=None) -> str:
        kind = kind or self.kind
        return {int: "a whole number", float: "a number", bool: "true or false", str: "a text",
                dict: "an object"}.get(kind, "a list")

    def _range(self) -> str:
        low = self.minimum if self.minimum is not None else self.above
        what = "a whole number" if self.kind is int else "a positive number" if self.above == 0 else "a number"
        if self.above == 0 and self.maximum is None and self.below is None:
            return what
        if low is not None and (self.maximum is not None):
            return f"{what} from {_num(low)} to {_num(self.maximum)}"
        if self.below is not None:
            return f"{what} below {_num(self.below)}"
        return f"{what} of at least {_num(low)}"


def setting(default=dataclasses.MISSING, **declared) -> dataclasses.Field:
    """A dataclass field with its Setting (``kind`` and ``label`` at least) in its metadata."""
    return dataclasses.field(default=default, metadata={SETTING: Setting(**declared)})


def settings_of(cls) -> dict[str, Setting]:
    """Every declared field of ``cls`` (a request dataclass) with its Setting, in the class's order."""
    return {f.name: f.metadata[SETTING] for f in dataclasses.fields(cls) if SETTING in f.metadata}


def defaults_of(cls) -> dict[str, object]:
    return {f.name: f.default for f in dataclasses.fields(cls) if SETTING in f.metadata}


def cli_words(cls) -> dict[str, str]:
    """The CLI's flag of each field that has one: a refusal names the option the user typed."""
    return {name: s.flag for name, s in settings_of(cls).items() if s.flag}


def panel_words(cls) -> dict[str, str]:
    """The panel's label of each field that has a control."""
    return {name: s.label for name, s in settings_of(cls).items() if s.control}


def check_fields(declared, doc, where: str, skip=()) -> dict:
    """The one validator of a request that arrives as data: ``doc`` must be a JSON object whose keys are
    ``declared``'s (a request dataclass, or a dict of name: Setting), each value of its declared type within
    its bounds. Returns the checked values (lists as tuples); InputError naming ``where`` and the field
    otherwise. Fields in ``skip`` are left to the caller (a nested value that has a reader of its own)."""
    if not isinstance(declared, Mapping):
        declared = settings_of(declared)
    if not isinstance(doc, Mapping):
        raise InputError(f"{where} must be a JSON object with {', '.join(declared)}, not {_shown(doc)}")
    unknown = sorted(str(k) for k in doc if k not in declared)
    if unknown:
        raise InputError(f"{where} has unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                         f"(it takes {', '.join(declared)})")
    return {name: value if name in skip else declared[name].check(value, f"{where}: {name}")
            for name, value in doc.items()}


def _is(value, kind) -> bool:
    if isinstance(value, bool):
        return kind is bool  # a bool is an int to Python, never to a request
    if kind is float:
        return isinstance(value, (int, float))
    if kind is dict:
        return isinstance(value, Mapping)
    return isinstance(value, kind)


def _shown(value) -> str:
    import json

    try:
        text = json.dumps(value)  # as the file has it: true, "cuda", [1, 2]
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _num(x) -> str:
    return f"{x:g}" if isinstance(x, float) else f"{x}"
