"""A render kind declared once, as data, for the CLI, the window, the service, the inspector and the tests to
read: :class:`Renderable`. Each render package (kernels/spheres, kernels/julia, kernels/mandelbrot) builds one
(``RENDERABLE`` in its ``__init__``) and :mod:`kernels.registry` lists them; nothing outside a render package
names a kind.

A Renderable holds what is known without numba: the kind's name and title, its params object (a frozen
dataclass with a ``checked(flag)`` method, such as ``JuliaParams``), its controls (:class:`Control`: what a
window shows and the CLI offers, with bounds and labels, as data), its default image size, the memories its
kernels can read from, the kernel images it ships, and the name of its *kind module*: the module in the
package holding its render paths, imported on the first frame (it imports no numba itself; its renderer
does, when it draws). A kind module defines:

- ``make_params(values, backend, words)``: the params object from control values (the CLI's or a window's),
  checked; optional (default: ``params(**values).checked(flag)``);
- ``checked(params, backend, words)``: the params, checked against the backend (a sphere cap), or InputError;
- ``launch_block(params, block)``: the launch rule, the block a launch runs with (the book's one thread per
  block for a Julia ``book`` launch), checked against the device by the request;
- ``renderer(backend)``: a renderer object kept per backend, whose ``start_request(params, size, block, repeats,
  timed, shipped_image, twin)`` returns the call that completes the Frame (its CPU, simulator and GPU paths);
- ``preview(params, size)``: (image, meta) from the numpy reference, or None (too costly to preview);
- ``gpu_kernel_key(params)`` and ``compile_gpu_kernel(key)``: which CUDA kernel draws a frame, compiled ahead;
- ``QUICK_TWIN``, ``DEFAULT_TWIN``, ``TWIN_FUNCTIONS`` ({twin: (module, functions)}): the host twins;
- ``tiny(params)``: the params of a tiny frame that warms the same kernel;
- ``row(meta, size)``: (op, n, what) of a frame's timing row, and ``variant(meta)``: a GPU frame's variant name;
- ``png_text(params)``: text chunks a saved image carries besides the frame's metadata (optional);
- ``notes(params, size, out, values)``: lines the CLI prints after a render, given its control values (optional);
- ``outputs(params, size, out, values)``: the files a render writes besides its image, as (option, path, write)
  for the one writer's ``write_each`` (each written even when another fails; optional);
- ``params_to_json(params)`` / ``params_from_json(doc)``: the params as JSON and back, for a request that
  travels (a cluster's worker draws it); optional: by default each field as JSON, a complex as [re, im] and a
  tuple as a list, read back by the type of the field's default.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from typing import Mapping

from kernels.errors import InputError, one_of, shown, whole

CONTROL_KINDS = ("int", "float", "choice", "point", "text")


@dataclass(frozen=True)
class Control:
    """One value of a render kind's params a user sets: a slider (``int``, ``float``; ``log``: over a log
    scale), a combo (``choice``), a pair ``X,Y`` (``point``) or a line of text. ``gpu_only``: it changes only
    a CUDA kernel's launch (refused on the cpu backend, disabled there in a window). ``window=False``: the
    CLI's only (a file to save); ``cli=False``: the window's only."""

    name: str  # the params field it sets; the CLI flag is --name with dashes
    label: str
    kind: str
    default: object = None
    low: float | None = None
    high: float | None = None
    choices: tuple = ()
    log: bool = False
    help: str = ""
    gpu_only: bool = False
    window: bool = True
    cli: bool = True
    file: str = ""  # 'in' or 'out': a file the CLI reads or writes (kept apart from --out)
    supplies: str = ""  # a file control: the control whose value the file gives (a refusal names the file)

    def __post_init__(self):
        one_of(self.kind, CONTROL_KINDS, "control kind")

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def parse(self, text, label: str | None = None):
        """The control's value from the user's text (InputError naming ``label``, the flag by default)."""
        label = label or self.flag
        if self.kind == "int":
            return whole(text, label, None if self.low is None else int(self.low),
                         None if self.high is None else int(self.high))
        if self.kind == "float":
            return self.bounded(_number(text, label), label)
        if self.kind == "choice":
            return one_of(str(text), self.choices, label)
        if self.kind == "point":
            parts = str(text).split(",")
            if len(parts) != 2:
                raise InputError(f"{label} {shown(text)} is malformed; use X,Y, e.g. -0.5,0")
            return tuple(_number(p, label) for p in parts)
        return str(text)

    def bounded(self, value: float, label: str | None = None) -> float:
        label = label or self.flag
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise InputError(f"{label} {value!r} is out of range; allowed {self.low:g}..{self.high:g}")
        return value


def _number(text, label: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise InputError(f"{label} {shown(text)} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"{label} {shown(text)} must be a finite number")
    return value


@dataclass(frozen=True)
class Renderable:
    """A render kind: see the module's docstring for what its kind module defines."""

    name: str
    title: str  # the window's tab
    summary: str  # the CLI's help
    params: type
    controls: tuple[Control, ...]
    default_size: tuple[int, int]
    kind_module: str
    memories: tuple[str, ...] = ()  # where its kernels can read their data (Compare Memory needs two)
    images: Mapping = field(default_factory=dict)  # the kernels it ships compiled: key -> KernelImage
    pan_zoom: bool = False  # a drag pans and the wheel zooms its view (params.panned / params.zoomed)
    tip: str = ""  # the tab's tooltip

    def module(self):
        return importlib.import_module(self.kind_module)

    def _hook(self, name: str):
        hook = getattr(self.module(), name, None)
        if hook is None:
            raise AttributeError(f"render kind {self.name!r}: {self.kind_module} defines no {name}")
        return hook

    def control(self, name: str) -> Control:
        return next(c for c in self.controls if c.name == name)

    def make_params(self, values: dict, backend, words: dict | None = None):
        """The params object from control values (missing ones at their defaults), checked."""
        make = getattr(self.module(), "make_params", None)
        if make is not None:
            return make(values, backend, words or {})
        known = {c.name for c in self.controls}
        return self.params(**{k: v for k, v in values.items() if k in known and v is not None}).checked("--")

    def checked(self, params, backend, words: dict):
        if not isinstance(params, self.params):
            raise InputError(f"a {self.name} frame needs {self.params.__name__}, not {type(params).__name__}")
        return self._hook("checked")(params, backend, words)

    def launch_block(self, params, block) -> tuple[int, int]:
        return self._hook("launch_block")(params, block)

    def renderer(self, backend):
        return self._hook("renderer")(backend)

    def start(self, renderer, params, size, block, repeats, timed, shipped_image, twin):
        return renderer.start_request(params, size, block, repeats, timed, shipped_image, twin)

    def preview(self, params, size):
        return self._hook("preview")(params, size)

    def gpu_kernel_key(self, params):
        return self._hook("gpu_kernel_key")(params)

    def compile_gpu_kernel(self, key) -> None:
        self._hook("compile_gpu_kernel")(key)

    @property
    def quick_twin(self) -> str:
        return self._hook("QUICK_TWIN")

    @property
    def default_twin(self) -> str:
        return self._hook("DEFAULT_TWIN")

    def twin_functions(self, twin: str) -> tuple[str, tuple[str, ...]]:
        return self._hook("TWIN_FUNCTIONS")[twin]

    def tiny(self, params):
        return self._hook("tiny")(params)

    def row(self, meta: dict, size) -> tuple[str, int, str]:
        return self._hook("row")(meta, size)

    def variant(self, meta: dict) -> str:
        return self._hook("variant")(meta)

    def notes(self, params, size, out: str, values: dict) -> list[str]:
        notes = getattr(self.module(), "notes", None)
        return [] if notes is None else notes(params, size, out, values)

    def outputs(self, params, size, out: str, values: dict) -> list:
        outputs = getattr(self.module(), "outputs", None)
        return [] if outputs is None else outputs(params, size, out, values)

    def params_to_json(self, params) -> dict:
        hook = getattr(self.module(), "params_to_json", None)
        return hook(params) if hook is not None else fields_to_json(params)

    def params_from_json(self, doc: Mapping):
        """The params ``doc`` describes, or InputError naming what does not parse."""
        hook = getattr(self.module(), "params_from_json", None)
        try:
            return hook(doc) if hook is not None else fields_from_json(self.params, doc)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{self.name} params do not parse: {exc}") from None

    def png_text(self, params) -> dict:
        png_text = getattr(self.module(), "png_text", None)
        return {} if png_text is None else png_text(params)


def fields_to_json(params) -> dict:
    """A params dataclass as JSON: each field, a complex as [re, im], a tuple as a list."""
    from dataclasses import fields

    def plain(value):
        if isinstance(value, complex):
            return [value.real, value.imag]
        if isinstance(value, tuple):
            return [plain(v) for v in value]
        return value

    return {f.name: plain(getattr(params, f.name)) for f in fields(params)}


def fields_from_json(params_type, doc: Mapping):
    """:func:`fields_to_json`'s inverse: each field read back by the type of its default; unknown keys refused."""
    from dataclasses import fields

    declared = {f.name: f for f in fields(params_type)}
    unknown = sorted(set(doc) - set(declared))
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}")
    values = {}
    for name, value in doc.items():
        default = declared[name].default
        if isinstance(default, complex) and not isinstance(value, complex):
            value = complex(*value)
        elif isinstance(default, tuple):
            value = tuple(value)
        values[name] = value
    return params_type(**values)
