"""Every benchmarkable algorithm, in the order the CLI's help and the GUI show them: the one list that the
CLI's targets, the GUI's panels and the inspector's targets are read from. Adding one is a new package that
declares ``ALGORITHM`` (see :mod:`kernels.harness.descriptor`), its tests, and a line here.

Importing this module imports the algorithm packages, which import no numba (their code loads when a
variant first runs)."""

from __future__ import annotations

from kernels import hashtable, histogram, julia, reduction, spheres
from kernels.harness.descriptor import Algorithm
from kernels.errors import InputError

ALGORITHMS: tuple[Algorithm, ...] = (
    reduction.ALGORITHM,
    histogram.ALGORITHM,
    hashtable.ALGORITHM,
    spheres.ALGORITHM,
    julia.ALGORITHM,
)

# the kernels shipped compiled (kernels/launch/images.py), each declared in its package
IMAGES = (*spheres.IMAGES.values(), *julia.IMAGES.values())

# earlier names still accepted (in scripts and result files): the ray tracer's target was `raytrace`
ALIASES = {"raytrace": "spheres"}


def by_name(name: str) -> Algorithm:
    name = ALIASES.get(name, name)
    for a in ALGORITHMS:
        if a.name == name:
            return a
    raise InputError(f"unknown algorithm {name!r}; known: {', '.join(a.name for a in ALGORITHMS)}")


def with_panels() -> tuple[Algorithm, ...]:
    """The algorithms the GUI gives a benchmark panel (the renders have their own view)."""
    return tuple(a for a in ALGORITHMS if a.panel)
