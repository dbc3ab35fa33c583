"""The Python source of a variant's kernel and of the jitted functions it calls, read in this process
without compiling anything (what the inspector shows when the compiler packages are not installed)."""

from __future__ import annotations

from kernels.inspector.declarations import declaration
from kernels.inspector.offline_compile import callee_sources, resolve_kernel


def kernel_sources(target: str, variant: str) -> list[dict]:
    """[{"name", "file", "first_line", "source"}]: the kernel first, then what it calls."""
    decl = declaration(target, variant)
    job = {"module": decl.module, "function": decl.function,
           "args": list(decl.args) if decl.args is not None else None, "item": decl.item}
    return callee_sources(resolve_kernel(job))
