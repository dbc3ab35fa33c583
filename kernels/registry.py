"""Every benchmarkable algorithm and every render kind, in the order the CLI's help and the GUI show them:
the one list that the CLI's targets, the GUI's panels and render tabs and the inspector's targets are read
from. Adding an algorithm is a new package that declares ``ALGORITHM`` (see :mod:`kernels.harness.descriptor`),
its tests, and a line in ``ALGORITHM_PACKAGES``; a render kind is a package that also declares ``RENDERABLE``
(see :mod:`kernels.harness.renderable`) and a line in ``RENDER_PACKAGES``.

Importing this module imports the algorithm packages, which import no numba (their code loads when a
variant first runs)."""

from __future__ import annotations

import importlib

from kernels.errors import InputError
from kernels.harness.descriptor import Algorithm
from kernels.harness.renderable import Renderable

ALGORITHM_PACKAGES = (
    "kernels.reduction",
    "kernels.histogram",
    "kernels.hashtable",
)
# render kinds: each package is an algorithm (its `bench` variants) and a render kind (its window tab)
RENDER_PACKAGES = (
    "kernels.spheres",
    "kernels.julia",
    "kernels.mandelbrot",
)

_RENDER_MODULES = tuple(importlib.import_module(p) for p in RENDER_PACKAGES)
ALGORITHMS: tuple[Algorithm, ...] = (*(importlib.import_module(p).ALGORITHM for p in ALGORITHM_PACKAGES),
                                     *(m.ALGORITHM for m in _RENDER_MODULES))
RENDERABLES: tuple[Renderable, ...] = tuple(m.RENDERABLE for m in _RENDER_MODULES)

# the kernels shipped compiled (kernels/launch/images.py), each declared in its render kind
IMAGES = tuple(image for r in RENDERABLES for image in r.images.values())

# earlier names still accepted (in scripts and result files): each package's ALIASES (old name -> its name)
ALIASES = {old: new for m in _RENDER_MODULES for old, new in getattr(m, "ALIASES", {}).items()}


def by_name(name: str) -> Algorithm:
    name = ALIASES.get(name, name)
    for a in ALGORITHMS:
        if a.name == name:
            return a
    raise InputError(f"unknown algorithm {name!r}; known: {', '.join(a.name for a in ALGORITHMS)}")


def renderable_named(name: str) -> Renderable:
    for r in RENDERABLES:
        if r.name == name:
            return r
    raise InputError(f"render kind {name!r} is not one of {', '.join(r.name for r in RENDERABLES)}")


def with_panels() -> tuple[Algorithm, ...]:
    """The algorithms the GUI gives a benchmark panel (the renders have their own view)."""
    return tuple(a for a in ALGORITHMS if a.panel)
