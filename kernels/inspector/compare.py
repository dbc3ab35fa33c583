"""Two compiled variants side by side: a table of their numbers and one sentence built from them; and one
variant compiled by both compilers (numba-cuda, numba-cuda-mlir), the same table with the compilers as its
columns (:func:`by_compiler`)."""

from __future__ import annotations

import dataclasses
import re

from kernels.inspector.report import KernelReport
from kernels.inspector.sass import CATEGORIES


def rows(a: KernelReport, b: KernelReport) -> list[tuple[str, str, str]]:
    """(quantity, value for a, value for b) for every quantity, mix categories where either is non-zero."""
    def occ(r):
        o = r.occupancy
        return f"{o.blocks_per_sm} blocks, {o.warps_per_sm}/{o.max_warps_per_sm} warps ({o.percent:.0f}%), {o.limiter}"

    out = [
        ("block", _block(a), _block(b)),
        ("registers per thread", str(a.resources.registers), str(b.resources.registers)),
        ("shared memory per block (static + dynamic)", f"{a.shared_per_block} B", f"{b.shared_per_block} B"),
        ("local memory per thread", f"{a.resources.stack_frame} B", f"{b.resources.stack_frame} B"),
        ("__constant__ data", f"{a.resources.constant} B", f"{b.resources.constant} B"),
        ("barriers", str(a.resources.barriers), str(b.resources.barriers)),
        ("occupancy per SM", occ(a), occ(b)),
        ("SASS instructions", str(len(a.sass)), str(len(b.sass))),
    ]
    for category in CATEGORIES:
        if a.mix[category] or b.mix[category]:
            out.append((f"  {category}", str(a.mix[category]), str(b.mix[category])))
    return out


def _block(r: KernelReport) -> str:
    return "x".join(map(str, r.block))


def _threads(n: int) -> str:
    return "1 thread" if n == 1 else f"{n} threads"


def sentence(a: KernelReport, b: KernelReport) -> str:
    """What differs most, in words and numbers."""
    parts = []
    oa, ob = a.occupancy, b.occupancy
    if oa.warps_per_sm != ob.warps_per_sm:
        hi, lo = (a, b) if oa.warps_per_sm > ob.warps_per_sm else (b, a)
        parts.append(
            f"{hi.variant} keeps {hi.occupancy.warps_per_sm} warps per SM resident ({hi.occupancy.percent:.0f}%) "
            f"against {lo.occupancy.warps_per_sm} ({lo.occupancy.percent:.0f}%) for {lo.variant}, "
            f"which is limited by {lo.occupancy.limiter} ({lo.resources.registers} registers, "
            f"{lo.shared_per_block} B shared, {_threads(lo.threads)} per block)"
            + (f": each of its warps runs {lo.threads} of 32 lanes" if lo.threads < 32 else ""))
    elif a.resources.registers != b.resources.registers:
        parts.append(f"{a.variant} uses {a.resources.registers} registers per thread and {b.variant} "
                     f"{b.resources.registers}, at the same occupancy ({oa.percent:.0f}%)")
    else:
        parts.append(f"both keep {oa.warps_per_sm} warps per SM ({oa.percent:.0f}%) with "
                     f"{a.resources.registers} registers")
    diffs = sorted(((abs(a.mix[c] - b.mix[c]), c) for c in CATEGORIES if c not in ("other", "integer")), reverse=True)
    mentioned = [c for d, c in diffs if d > 0][:3]
    if mentioned:
        words = ", ".join(f"{a.mix[c]} vs {b.mix[c]} {c} instructions" for c in mentioned)
        parts.append(f"in the SASS ({a.variant} vs {b.variant}): {words}")
    return "; ".join(parts) + "."


def ptx_instructions(ptx: str) -> int:
    """Instructions in a PTX text: its lines less comments, directives, braces and labels."""
    return sum(1 for line in ptx.splitlines()
               if (s := line.strip()) and not s.startswith(("//", ".", "{", "}", "$")) and not s.endswith(":")
               and re.match(r"(@!?%p\d+\s+)?[a-z]", s))


def by_compiler(reports: dict[str, KernelReport]) -> tuple[KernelReport, KernelReport]:
    """The two compilers' reports of one variant, each named by its compiler (where :func:`rows` and
    :func:`sentence` name a variant), so the table's columns and the sentence's words say which is which."""
    (name_a, a), (name_b, b) = reports.items()
    return dataclasses.replace(a, variant=name_a), dataclasses.replace(b, variant=name_b)


def compiler_sentence(a: KernelReport, b: KernelReport) -> str:
    """:func:`sentence`, and where the second compiler's PTX shows a known wrong code of numba-cuda-mlir
    (kernels/backend/mlir_wrong_code.py) for the same source, that bug in words (docs/compilers.md)."""
    from kernels.backend.mlir_private import CHECKED_ON

    text = sentence(a, b)
    shuffles = [len(re.findall(r"\bshfl\.sync", r.ptx)) for r in (a, b)]
    if shuffles[1] < shuffles[0]:
        text += (f" {b.variant} emits {shuffles[1]} warp shuffles where {a.variant} emits {shuffles[0]}: "
                 f"numba-cuda-mlir {CHECKED_ON} truncates a 64-bit shfl_*_sync to 32 bits, so a 64-bit result "
                 f"shuffled here is wrong under it (docs/compilers.md).")
    signed = [len(_NARROW_SIGNED_LOAD.findall(r.ptx)) for r in (a, b)]
    if signed[1] > signed[0]:
        text += (f" {b.variant} loads {signed[1] - signed[0]} narrow value(s) sign-extended (ld.*.s8 / .s16) where "
                 f"{a.variant} loads them unsigned: numba-cuda-mlir {CHECKED_ON} sign-extends an unsigned index "
                 f"narrower than 64 bits, so a uint8 of 128..255 indexes 128 to 1 elements below the array "
                 f"(docs/compilers.md).")
    stray = [zero_based_global_atomics(r.ptx) for r in (a, b)]
    if stray[1] > stray[0]:
        text += (f" {b.variant} has {stray[1]} global atomics at address 0 + offset: numba-cuda-mlir {CHECKED_ON} "
                 f"emits an atomic on a shared array passed to a device function as atom.global on no base, an "
                 f"illegal address on a GPU (docs/compilers.md).")
    return text


# a signed byte or half-word load into a 64-bit or 32-bit register: how a sign-extended index shows in PTX
_NARROW_SIGNED_LOAD = re.compile(r"\bld\.(?:global|shared|local|const)(?:\.\w+)*\.s(?:8|16)\s")


def zero_based_global_atomics(ptx: str) -> int:
    """Global atomics whose address is ``0 + offset`` (``add.s64 %rdA, 0, %rdB`` then ``atom.global... [%rdA]``):
    no array's base at all, which is how numba-cuda-mlir 0.6.0 addresses a shared array inside a device function."""
    zero_based = set(re.findall(r"\badd\.s64\s+(%rd\d+),\s*0,", ptx))
    return sum(1 for reg in re.findall(r"\batom\.global[\w.]*\s+%\w+,\s*\[(%rd\d+)\]", ptx) if reg in zero_based)


def compiler_rows(a: KernelReport, b: KernelReport) -> list[tuple[str, str, str]]:
    """:func:`rows`, with the PTX's size first: a compiler's first difference shows there."""
    return [("PTX instructions", str(ptx_instructions(a.ptx)), str(ptx_instructions(b.ptx)))] + rows(a, b)
