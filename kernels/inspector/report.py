"""One dataclass per compiled kernel, and :func:`inspect` / :func:`inspect_many` that build them."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from kernels.errors import InputError
from kernels.inspector import sass as sass_mod
from kernels.inspector.declarations import KernelDecl, Traffic, declaration, threads
from kernels.inspector.compiler import Compiled, compile_kernels
from kernels.inspector.occupancy import DEFAULT_ARCH, Occupancy, curve, limits_for, occupancy


@dataclass(frozen=True)
class SourceBlock:
    name: str
    file: str
    first_line: int
    text: str


@dataclass
class KernelReport:
    target: str
    variant: str
    arch: str
    signature: str
    numba_cuda: str
    block: tuple[int, ...]
    resources: sass_mod.Resources
    dynamic_shared: int  # bytes per block at this block size
    max_threads_per_block: int  # the most the kernel's register use allows
    occupancy: Occupancy
    curve: list[Occupancy]
    sources: list[SourceBlock]
    ptx: str
    ptx_lines: dict[tuple[str, int], list[int]]  # Python (file, line) -> PTX line indices (with what it inlines)
    traffic: Traffic
    note: str = ""
    ptxas_report: str = field(default="", repr=False)
    # the SASS lines, parsed when first asked for (nvdisasm runs then, once a kernel: compiler.Compiled)
    read_sass: Callable[[], list[sass_mod.SassLine]] = field(default=list, repr=False, compare=False)

    @functools.cached_property
    def sass(self) -> list[sass_mod.SassLine]:
        return self.read_sass()

    @functools.cached_property
    def mix(self) -> dict[str, int]:
        return sass_mod.mix(self.sass)

    @functools.cached_property
    def mix_by_line(self) -> dict[tuple[str, int], dict[str, int]]:
        return sass_mod.mix_by_line(self.sass)

    @property
    def threads(self) -> int:
        return threads(self.block)

    @property
    def shared_per_block(self) -> int:
        return self.resources.static_shared + self.dynamic_shared

    def sass_for_line(self, file: str, line: int, inlined: bool = True) -> list[int]:
        """Indices into :attr:`sass` of the instructions a Python line compiled to: a device function's line
        its own (wherever it was inlined); a line calling a device function also what that call inlined,
        unless ``inlined`` is False."""
        where = (file, line)
        if inlined:
            return [i for i, s in enumerate(self.sass) if where in s.chain]
        return [i for i, s in enumerate(self.sass) if s.file == file and s.line == line]


def checked_decl_block(decl: KernelDecl, block: tuple[int, ...] | None, arch: str) -> tuple[int, ...]:
    if block is None or decl.fixed_block:
        return decl.default_block
    if len(block) != len(decl.default_block):
        shape = "BXxBY" if len(decl.default_block) == 2 else "B"
        raise InputError(f"this kernel takes a {len(decl.default_block)}-D block ({shape}), got {block}")
    limit = limits_for(arch).max_threads_per_block
    if any(b < 1 for b in block) or threads(block) > limit:
        raise InputError(f"block {'x'.join(map(str, block))} is out of range; 1..{limit} threads in all")
    return tuple(block)


def build(compiled: Compiled, block: tuple[int, ...] | None = None, decl: KernelDecl | None = None) -> KernelReport:
    """The report of a compiled kernel; ``decl`` for a kernel the registry does not declare (a user's file)."""
    decl = decl or declaration(compiled.target, compiled.variant)
    block = checked_decl_block(decl, block, compiled.arch)
    resources = sass_mod.parse_ptxas(compiled.ptxas_report, compiled.ptx)
    total = threads(block)
    dynamic = decl.dynamic_shared(total)
    lim = limits_for(compiled.arch)
    shared_at = lambda t: resources.static_shared + decl.dynamic_shared(t)  # noqa: E731
    warp_regs = -(-max(resources.registers, 1) * 32 // lim.register_unit) * lim.register_unit
    max_threads = min(lim.max_threads_per_block, (lim.max_registers_per_block // warp_regs) * 32)
    if decl.fixed_block:
        sizes = [total]
    else:
        sizes = None
    blocks = decl.grid or -(-decl.default_n // total)
    return KernelReport(
        compiled.target, compiled.variant, compiled.arch, compiled.signature, compiled.numba_cuda, block, resources,
        dynamic, max_threads, occupancy(compiled.arch, total, resources.registers, shared_at(total)),
        curve(compiled.arch, resources.registers, shared_at, sizes),
        [SourceBlock(s["name"], s["file"], s["first_line"], s["source"]) for s in compiled.sources],
        compiled.ptx, sass_mod.ptx_lines_by_source(compiled.ptx), decl.traffic(decl.default_n, total, blocks),
        decl.note, compiled.ptxas_report, functools.partial(sass_lines, compiled),
    )


def sass_lines(compiled: Compiled) -> list[sass_mod.SassLine]:
    """The kernel's SASS, each instruction on its Python line, with the chain of lines it was inlined through."""
    lines = sass_mod.parse_sass(compiled.sass_text)
    if compiled.sources:  # the kernel's own lines: the first source block
        kernel = compiled.sources[0]
        last = kernel["first_line"] + len(kernel["source"].splitlines())
        lines = sass_mod.complete_chains(
            lines, lambda file, line: file == kernel["file"] and kernel["first_line"] <= line < last)
    return lines


def inspect(target: str, variant: str, arch: str | None = None, block: tuple[int, ...] | None = None,
            cache=None, compiler: str | None = None) -> KernelReport:
    """The report of one GPU variant's kernel for ``arch`` (default sm_90) at ``block``, compiled by
    ``compiler`` (default: the process's setting)."""
    return inspect_many([(target, variant)], arch, block, cache, compiler)[(target, variant)]


def inspect_many(pairs, arch: str | None = None, block: tuple[int, ...] | None = None, cache=None,
                 compiler: str | None = None) -> dict[tuple[str, str], KernelReport | Exception]:
    """Reports for several variants compiled in one child process; a failure maps to its exception
    (an InputError for a bad block, a CompileFailed for a kernel that did not compile). ``compiler``:
    numba-cuda or numba-cuda-mlir (default: the process's setting)."""
    arch = arch or DEFAULT_ARCH
    for target, variant in pairs:
        declaration(target, variant)
    out: dict = {}
    for pair, compiled in compile_kernels(list(pairs), arch, cache, compiler).items():
        if isinstance(compiled, Exception):
            out[pair] = compiled
            continue
        try:
            out[pair] = build(compiled, block)
        except InputError as exc:
            out[pair] = exc
    return out
