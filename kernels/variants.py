"""The one list of named variants per algorithm that the CLI, the GUI and the tests all read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from kernels.errors import InputError

# Where a variant runs. 'gpu': @cuda.jit kernels (real GPU, or the simulator unless sim_skip says why
# not); 'cpu': host code, any backend; 'peer': a library reference (CuPy, numba's cuda.reduce), GPU only.
KINDS = ("gpu", "cpu", "peer")


@dataclass(frozen=True)
class Variant:
    name: str
    description: str  # one line: what it teaches, or why it is fast (shown as a tooltip and in --help)
    kind: str  # one of KINDS
    seed: str = ""  # the seed document it comes from, e.g. "000 (a)"; empty for variants we add
    constraints: str = ""  # human-readable, e.g. "block size a power of two"
    sim_skip: str = ""  # non-empty: the simulator cannot run it, and this says why
    check: Callable[..., None] | None = None  # raises InputError naming the broken constraint
    run: Callable[..., object] | None = None  # algorithm-specific runner, see the algorithm's module

    def skip_reason(self, backend_kind: str) -> str:
        """Why this variant cannot run on a backend kind ('' when it can)."""
        if self.kind in ("gpu", "peer") and backend_kind == "cpu":
            return "needs a CUDA backend (cuda or sim); this run uses the cpu backend"
        if backend_kind == "sim" and self.kind == "peer":
            return "library peers need a real GPU, not the simulator"
        if backend_kind == "sim" and self.sim_skip:
            return self.sim_skip
        return ""


def select(variants: Iterable[Variant], spec: str | Iterable[str] = "all") -> list[Variant]:
    """Variants named by ``spec`` ('all', 'a,b' or a list of names), in the registry's order."""
    variants = list(variants)
    by_name = {v.name: v for v in variants}
    if isinstance(spec, str):
        if spec.strip() == "all":
            return variants
        names = [s.strip() for s in spec.split(",") if s.strip()]
    else:
        names = list(spec)
    if not names:
        raise InputError("no variants given; use 'all' or names separated by commas")
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise InputError(f"unknown variant {', '.join(map(repr, unknown))}; known: {', '.join(by_name)}")
    wanted = set(names)
    return [v for v in variants if v.name in wanted]
