"""What the inspector compiles, read from the algorithm packages: each GPU variant declares its kernel,
signature, launch shape and traffic model next to itself (``Variant.inspect``); this module only looks them
up. The targets are the algorithms of :mod:`kernels.registry` that have such variants."""

from __future__ import annotations

from dataclasses import replace

from kernels.errors import InputError
from kernels.harness.kernel_decl import KernelDecl, Traffic, threads
from kernels.registry import ALGORITHMS

__all__ = ["KernelDecl", "Traffic", "threads", "targets", "variants", "declaration", "all_declarations"]


def targets() -> tuple[str, ...]:
    """Every algorithm with a GPU variant to inspect, in the registry's order."""
    return tuple(a.name for a in ALGORITHMS if any(v.inspect is not None for v in a.variants))


GUIDE = "docs/architecture.md, 'An algorithm package'"


def _algorithm(target: str):
    for a in ALGORITHMS:
        if a.name == target and target in targets():
            return a
    known = next((a for a in ALGORITHMS if a.name == target), None)
    allowed = f"inspectable targets: {', '.join(targets())}"
    if known is None:
        raise InputError(f"unknown target {target!r}; {allowed}")
    gpu = [v.name for v in known.variants if v.kind == "gpu"]
    if not gpu:
        raise InputError(f"{target} has no GPU variant to inspect (its variants run on the host or call a "
                         f"library); {allowed}")
    raise InputError(f"{target}'s GPU variants ({', '.join(gpu)}) declare no inspector entry: each needs "
                     f"inspect=KernelDecl(...) beside it (kernel, signature, launch shape; {GUIDE}); {allowed}")


def _missing_entry(target: str, variant: str) -> str:
    """Why ``variant`` of ``target`` cannot be inspected: not a variant, not a GPU one, or no entry."""
    v = next((v for v in _algorithm(target).variants if v.name == variant), None)
    if v is not None and v.kind == "gpu":
        return (f"{target}'s GPU variant {variant!r} declares no inspector entry: it needs inspect=KernelDecl(...) "
                f"beside it (kernel, signature, launch shape; {GUIDE})")
    if v is not None:
        return f"{target}'s variant {variant!r} is not a GPU kernel ({v.kind}): there is nothing to compile"
    return f"{target} has no GPU variant {variant!r} to inspect"


def variants(target: str) -> list[str]:
    """The names of ``target``'s GPU variants that the inspector can compile, in the registry's order."""
    return [v.name for v in _algorithm(target).variants if v.inspect is not None]


def declaration(target: str, variant: str) -> KernelDecl:
    """What ``target``'s GPU variant ``variant`` compiles, with the block its launch rule runs by default."""
    names = variants(target)
    if variant not in names:
        raise InputError(f"{_missing_entry(target, variant)}; known: {', '.join(names)}")
    v = next(v for v in _algorithm(target).variants if v.name == variant)
    if v.launch is None:
        return v.inspect
    block = v.launch.block if isinstance(v.launch.block, tuple) else (v.launch.block,)
    return replace(v.inspect, default_block=block, fixed_block=v.launch.fixed)


def all_declarations() -> dict[tuple[str, str], KernelDecl]:
    """(target, variant) -> declaration, for every inspectable variant."""
    return {(t, name): declaration(t, name) for t in targets() for name in variants(t)}
