"""The named variants of an algorithm, as its package declares them; the CLI, the GUI, the inspector and the
tests read them from the package's descriptor (:mod:`kernels.registry`). A variant's ``run`` is usually a
:class:`kernels.lazy.Entry` into the module that holds its code."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

from kernels.backend import Skip, SkipKind
from kernels.errors import InputError, items
from kernels.harness.kernel_decl import KernelDecl
from kernels.launch import Launch, LaunchRule, Resolved, resolve

# Where a variant runs. 'gpu': @cuda.jit kernels (real GPU, or the simulator unless sim_skip says why
# not); 'cpu': host code, any backend; 'peer': a library reference (CuPy, numba's cuda.reduce), GPU only.
KINDS = ("gpu", "cpu", "peer")


# What numba-cuda's simulator cannot run, said the same way for a built-in (its ``sim_skip``) and for a user's
# file whose kernel calls it (``sim_lacks``): its FakeCUDAModule has no warp-level intrinsics.
NO_WARP_SHUFFLES = "the CUDA simulator has no warp shuffles"
_WARP_INTRINSIC_MISSING = re.compile(r"'FakeCUDAModule' object has no attribute '(shfl_\w+|activemask|lanemask_lt|"
                                     r"ballot_sync|all_sync|any_sync|eq_sync|match_any_sync|match_all_sync)'")


def sim_lacks(error: str) -> str:
    """Why the simulator could not run a kernel that failed with ``error`` ('' when that is not the reason): it
    called a warp-level intrinsic the simulator lacks."""
    return NO_WARP_SHUFFLES if _WARP_INTRINSIC_MISSING.search(error) else ""


@dataclass(frozen=True)
class Variant:
    name: str
    description: str  # one line: what it teaches, or why it is fast (shown as a tooltip and in --list)
    kind: str  # one of KINDS
    seed: str = ""  # the seed document it comes from, e.g. "000 (a)"; empty for variants we add
    constraints: str = ""  # what its launch rule cannot say, e.g. "32 KiB shared memory per block"
    sim_skip: str = ""  # non-empty: the simulator cannot run it, and this says why
    mlir_lacks: str = ""  # non-empty: the feature numba-cuda-mlir lacks for it (docs/compilers.md): skipped under it
    # non-empty: the name of numba-cuda-mlir's known wrong code (kernels/backend/mlir_wrong_code.py) that would end
    # the CUDA context if it ran: skipped under it, naming the bug
    mlir_wrong_code: str = ""
    run: Callable[..., object] | None = None  # run(problem, launch, backend, repeats) -> Outcome | Skip
    launch: LaunchRule | None = None  # GPU variants: default launch and the block sizes it accepts
    inspect: KernelDecl | None = None  # GPU variants: what the inspector compiles (kernels.inspector)

    @property
    def runs_on_host(self) -> bool:
        """Host code (kind 'cpu'): no launch, no GPU memory, on any backend."""
        return self.kind == "cpu"

    @property
    def rules(self) -> str:
        """Its launch rule and constraints in words ('' for host code)."""
        return "; ".join(x for x in (self.launch.describe() if self.launch else "", self.constraints) if x)

    def skip_reason(self, backend) -> Skip | None:
        """Why this variant cannot run on a resolved backend (None when it can)."""
        reason = backend.skip_reason(self.kind)
        if reason is None and self.sim_skip and backend.is_simulator:
            return Skip(SkipKind.NOT_IN_SIMULATOR, self.sim_skip)
        if reason is None and (self.mlir_lacks or self.mlir_wrong_code) and not backend.is_simulator \
                and not self.runs_on_host:
            from kernels.backend.compiler import uses_mlir

            if uses_mlir() and self.mlir_lacks:
                return Skip(SkipKind.NOT_UNDER_COMPILER, f"numba-cuda-mlir lacks {self.mlir_lacks}")
            if uses_mlir():
                from kernels.backend.mlir_wrong_code import skip_text

                return Skip(SkipKind.COMPILER_WRONG_CODE, skip_text(self.mlir_wrong_code))
        return reason

    def resolve(self, launch: Launch, limits, n: int | None = None) -> Resolved:
        """The launch this variant runs with (its rule's defaults where ``launch`` leaves them out)."""
        if self.launch is None:
            raise InputError(f"{self.name} runs on the host and has no launch configuration")
        return resolve(self.launch, launch, limits, n=n, variant=self.name)

    def check(self, launch: Launch, backend) -> None:
        """Raises InputError when ``launch`` breaks this variant's rule on ``backend``."""
        if self.launch is None:
            return
        resolved = self.resolve(launch, backend.limits)
        cap = backend.caps.max_launch_threads
        if cap and not self.sim_skip and resolved.grid is not None and resolved.block * resolved.grid > cap:
            raise InputError(f"{self.name}: {resolved.grid} blocks of {resolved.block} threads is "
                             f"{resolved.block * resolved.grid} threads; the simulator runs every thread in Python, "
                             f"so it takes at most {cap} per launch")


# names `--variants` (and a request's ``variants``) give a meaning of their own: no variant may be called so,
# or it could never be selected alone (a user variant file's NAME is checked against this: kernels/user_variants)
RESERVED_NAMES = ("all",)


def select(variants: Iterable[Variant], spec: str | Iterable[str] = "all") -> list[Variant]:
    """Variants named by ``spec`` ('all', 'a,b' or a list of names), in the registry's order."""
    variants = list(variants)
    by_name = {v.name: v for v in variants}
    if isinstance(spec, str):
        if spec.strip() == RESERVED_NAMES[0]:
            return variants
        names = items(spec, "--variants")
    else:
        names = list(spec)
    if not names:
        raise InputError("no variants given; use 'all' or names separated by commas")
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise InputError(f"unknown variant {', '.join(map(repr, unknown))}; known: {', '.join(by_name)}")
    wanted = set(names)
    return [v for v in variants if v.name in wanted]
