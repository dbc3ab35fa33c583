"""`raytracer-app variant new TARGET --from VARIANT FILE`: a built-in GPU variant written out as a variant
file (docs/user-variants.md) that verifies as it is.

The kernels and the device functions they call are copied from the built-in's real source (its module's
text, read with ``ast``; nothing is imported, so writing a template imports no numba); each template's
``run`` is written here from the built-in's launch function (kernels/reduction/launches.py,
kernels/histogram/gpu.py), with the one change a one-element result needs: where a built-in adds into a
two-slot result and zeroes the other slot for the next launch, the copy adds into ``out[0]`` only (the
harness hands every call a zeroed ``out``). Each rewrite names the exact text it replaces, so a change to
the built-in's source fails the template's test instead of writing a file that does not work."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
from dataclasses import dataclass

from kernels.errors import InputError, shown
from kernels.launch import LaunchRule
from kernels.user_variants.names import name_problem


@dataclass(frozen=True)
class Template:
    module: str  # the built-in's kernels, read as text
    names: tuple[str, ...]  # top-level definitions copied, in the module's order
    run: str  # the run function, written from the built-in's launch function
    inspect: dict  # what `inspect --variant-file` compiles (kernel factory, its arguments, signature)
    rewrites: tuple[tuple[str, str], ...] = ()  # (exact old text, new text)
    before: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (module, names) copied first: what module imports


_ZERO_OTHER_SLOT_WARP = ("        if cuda.grid(1) == 0:\n            result[1 - slot] = 0\n", "")
_ZERO_OTHER_SLOT_BEST = ("                if cuda.blockIdx.x == 0:\n                    result[1 - slot] = 0\n", "")
_RED_SHARED = ("ACCUMULATOR", "WARP_SIZE", "FULL_WARP", "term_function", "thread_partial_function",
               "block_tree_sum", "load_from_l2", "warp_sum")
_RED_SIG = "void(int32[::1], int32[::1], int64[::1])"
_HARRIS = "kernels.reduction.gpu_harris"
# Harris's kernels 4-7 read two elements per thread (pair_partial_function); 5-7 end with the unrolled last warp
_HARRIS_PAIR = ("pair_partial_function",)
_HARRIS_WARP = (*_HARRIS_PAIR, "warp_barrier", "warp_step", "last_warp_sum")
_SLOT_SIG = "void(int32[::1], int32[::1], int64[::1], int64)"


def _block_partials(factory: str, harris: bool = False) -> Template:
    if harris:  # gpu_harris imports its building blocks from gpu.py: those come first
        return dataclasses.replace(_block_partials(factory), module=_HARRIS, names=(factory,),
                                   before=(("kernels.reduction.gpu", _RED_SHARED),))
    return Template("kernels.reduction.gpu", (*_RED_SHARED, factory), f'''
def run(a, b, out, launch, op):
    """One partial per block (dynamic shared memory of block x 8 bytes, as the seeds' extern __shared__),
    then add_partials adds them into out (the built-in adds them on the host, untimed)."""
    kernel = {factory}(op, a.dtype.name)
    partials = scratch("partials", launch.grid, out.dtype)
    kernel[launch.grid, launch.block, 0, launch.block * out.dtype.itemsize](a, b, partials)
    add_partials[-(-launch.grid // 256), 256](partials, out)
''', {"kernel": factory, "args": ["sum", "int32"], "signature": _RED_SIG, "dynamic_shared_per_thread": 8})


def _unrolled(variant: str) -> Template:
    """Harris's kernels 6 and 7: one kernel compiled per block size (static shared memory), one partial per
    block, added into out by add_partials; they differ only in their launch rules."""
    return Template(_HARRIS, (*_HARRIS_WARP, "complete_unroll_kernel"), f'''
def run(a, b, out, launch, op):
    """{variant}: the kernel compiled for this launch's block size (a constant of the kernel), one partial
    per block, then add_partials adds them into out (the built-in adds them on the host, untimed)."""
    kernel = complete_unroll_kernel(op, a.dtype.name, launch.block)
    partials = scratch("partials", launch.grid, out.dtype)
    kernel[launch.grid, launch.block](a, b, partials)
    add_partials[-(-launch.grid // 256), 256](partials, out)
''', {"kernel": "complete_unroll_kernel", "args": ["sum", "int32", 128], "signature": _RED_SIG},
        before=(("kernels.reduction.gpu", _RED_SHARED),))


REDUCTION = {
    "per-thread-partials": Template("kernels.reduction.gpu", (*_RED_SHARED, "per_thread_partials_kernel"), '''
def run(a, b, out, launch, op):
    """Every thread writes its own partial, then add_partials adds them into out (the built-in adds them on
    the host, untimed)."""
    kernel = per_thread_partials_kernel(op, a.dtype.name)
    partials = scratch("partials", launch.grid * launch.block, out.dtype)
    kernel[launch.grid, launch.block](a, b, partials)
    add_partials[-(-partials.size // 256), 256](partials, out)
''', {"kernel": "per_thread_partials_kernel", "args": ["sum", "int32"], "signature": _RED_SIG}),
    "block-serial": _block_partials("block_serial_kernel"),
    "tree-mask": _block_partials("tree_mask_kernel"),
    "interleaved-divergent": _block_partials("interleaved_divergent_kernel"),
    "sequential": _block_partials("sequential_kernel"),
    "interleaved-strided": _block_partials("interleaved_strided_kernel", harris=True),
    "first-add-load": dataclasses.replace(_block_partials("first_add_load_kernel", harris=True),
                                          names=(*_HARRIS_PAIR, "first_add_load_kernel")),
    "unroll-last-warp": dataclasses.replace(_block_partials("unroll_last_warp_kernel", harris=True),
                                            names=(*_HARRIS_WARP, "unroll_last_warp_kernel")),
    "complete-unroll": _unrolled("complete-unroll"),
    "multiple-elements": _unrolled("multiple-elements"),
    "two-kernel": Template("kernels.reduction.gpu", (*_RED_SHARED, "block_sums_kernel"), '''
def run(a, b, out, launch, op):
    """Per-block sums, then the same kernel on one block over the 64-bit partials, straight into out."""
    first = block_sums_kernel(op, a.dtype.name)
    second = block_sums_kernel("sum", out.dtype.name)
    partials = scratch("partials", launch.grid, out.dtype)
    shared_bytes = launch.block * out.dtype.itemsize
    first[launch.grid, launch.block, 0, shared_bytes](a, b, partials)
    second[1, launch.block, 0, shared_bytes](partials, partials, out)
''', {"kernel": "block_sums_kernel", "args": ["sum", "int32"], "signature": _RED_SIG,
      "dynamic_shared_per_thread": 8}),
    "last-block": Template("kernels.reduction.gpu", (*_RED_SHARED, "last_block_kernel"), '''
def run(a, b, out, launch, op):
    """One launch; the last block to finish adds every block's partial into out (it resets the ticket)."""
    kernel = last_block_kernel(op, a.dtype.name)
    partials = scratch("partials", launch.grid, out.dtype)
    tickets = scratch("tickets", 1, np.int32)
    kernel[launch.grid, launch.block, 0, launch.block * out.dtype.itemsize](a, b, partials, out, tickets)
''', {"kernel": "last_block_kernel", "args": ["sum", "int32"],
      "signature": "void(int32[::1], int32[::1], int64[::1], int64[::1], int32[::1])", "dynamic_shared_per_thread": 8}),
    "warp-shuffle": Template("kernels.reduction.gpu", (*_RED_SHARED, "warp_shuffle_kernel"), '''
def run(a, b, out, launch, op):
    """Warp shuffles, one atomic per warp into out[0] (slot 0: out has one element)."""
    warp_shuffle_kernel(op, a.dtype.name)[launch.grid, launch.block](a, b, out, 0)
''', {"kernel": "warp_shuffle_kernel", "args": ["sum", "int32"], "signature": _SLOT_SIG},
        (_ZERO_OTHER_SLOT_WARP,)),
    "best": Template("kernels.reduction.gpu", (*_RED_SHARED, "vector_term_function", "best_kernel"), '''
def run(a, b, out, launch, op):
    """Tiles of block x items elements read by 16-byte loads, one atomic per block into out[0] (slot 0)."""
    best_kernel(op, a.dtype.name, launch.items)[launch.grid, launch.block](a, b, out, 0)
''', {"kernel": "best_kernel", "args": ["sum", "int32", 8], "signature": _SLOT_SIG}, (_ZERO_OTHER_SLOT_BEST,)),
}

_HIST_SIG = "void(uint8[::1], int64, uint32[::1])"
HISTOGRAM = {
    "global-atomics": Template("kernels.histogram.gpu", ("seed_kernels",), '''
def run(data, n, bins, launch):
    """The seed's first kernel: one global atomic per byte."""
    seed_kernels()[1][launch.grid, launch.block](data, n, bins)
''', {"kernel": "seed_kernels", "args": [], "item": 1, "signature": _HIST_SIG}),
    "shared-atomics": Template("kernels.histogram.gpu", ("seed_kernels",), '''
def run(data, n, bins, launch):
    """The seed's second kernel: a block's shared histogram, then one global atomic per bin."""
    seed_kernels()[2][launch.grid, launch.block](data, n, bins)
''', {"kernel": "seed_kernels", "args": [], "item": 2, "signature": _HIST_SIG}),
    "best": Template("kernels.histogram.gpu", ("best_kernel",), '''
def run(data, n, bins, launch):
    """Per-lane shared sub-histograms; the bytes also read as uint32 words (the padding makes the view legal)."""
    best_kernel(launch.items)[launch.grid, launch.block](data.view(np.uint32), data, n, bins)
''', {"kernel": "best_kernel", "args": [8], "signature": "void(uint32[::1], uint8[::1], int64, uint32[::1])"}),
}


_HEADER = '''"""{name}: a copy of the built-in {target} variant `{variant}` as a variant file (docs/user-variants.md).

Written by `raytracer-app variant new {target} --from {variant}`: the kernels are the built-in's source, run()
is written from its launch. Edit them, then compare with the built-in:

    raytracer-app bench {target} --variant-file THIS_FILE --variants {variant},{name}
    raytracer-app inspect {target} --variant-file THIS_FILE --compare {variant}
"""

import functools

import numba
import numpy as np
from numba import cuda, uint32

from kernels.backend import memory, simulator_active
from kernels.device_functions.fences import threadfence
from kernels.device_functions.vector_loads import VECTOR_LANES, check_aligned, load_vector
from kernels.launch import LaunchRule
from kernels.user_variants.names import name_problem

TARGET = {target!r}
NAME = {name!r}
SUPPORTS = {supports!r}
{helpers}LAUNCH = {launch}
# what `inspect --variant-file` compiles: the kernel (here a factory, called with args), its signature, and
# the dynamic shared memory its launch asks for per thread
INSPECT = {inspect!r}
'''

_REDUCTION_HELPERS = '''

_SCRATCH = {}


def scratch(name, size, dtype):
    """A zeroed device array kept across calls (allocated by the first, untimed, call), from the lab's
    memory seam, as the arrays run() is given."""
    key = (name, size, np.dtype(dtype).str)
    if key not in _SCRATCH:
        _SCRATCH[key] = memory.zeros(size, dtype)
    return _SCRATCH[key]


@cuda.jit
def add_partials(partials, out):
    i = cuda.grid(1)
    if i < partials.size:
        cuda.atomic.add(out, 0, partials[i])


'''
_HISTOGRAM_HELPERS = "BINS = 256\n\n"
# target -> (its templates by built-in variant, the helpers its runs use)
TEMPLATES = {"reduction": (REDUCTION, _REDUCTION_HELPERS), "histogram": (HISTOGRAM, _HISTOGRAM_HELPERS)}


def names(target: str) -> list[str]:
    if target not in TEMPLATES:
        raise InputError(f"variant files are for {', '.join(TEMPLATES)}, not {target!r}")
    return list(TEMPLATES[target][0])


def source(target: str, variant: str, name: str | None = None) -> str:
    """The variant file's text for ``target``'s built-in GPU variant ``variant``."""
    known = names(target)
    if variant not in known:
        raise InputError(f"--from {variant!r}: templates exist for every built-in GPU variant of {target}: "
                         f"{', '.join(known)}")
    from kernels.registry import by_name

    template = TEMPLATES[target][0][variant]
    algorithm = by_name(target)
    built_in = next(v for v in algorithm.variants if v.name == variant)
    name = f"my-{variant}" if name is None else name
    problem = name_problem(name, target)
    if problem:  # the loader's own rule: a file written here always loads
        raise InputError(f"--name {shown(name)} {problem}")
    code = "\n\n".join(_copied(module, wanted) for module, wanted in (*template.before,
                                                                       (template.module, template.names)))
    for old, new in template.rewrites:
        if old not in code:
            raise RuntimeError(f"the template of {target} {variant} no longer matches its built-in's source: "
                               f"{old.strip()!r} is gone")
        code = code.replace(old, new)
    supports = {key: tuple(algorithm.option(attr).choices) for key, attr in algorithm.user.supports.items()}
    launch, launch_helpers = _launch_text(built_in.launch)
    helpers = TEMPLATES[target][1] + launch_helpers
    header = _HEADER.format(name=name, target=target, variant=variant, supports=supports, helpers=helpers,
                            launch=launch, inspect=template.inspect)
    return f"{header}\n\n{code}\n{template.run}"


def write(target: str, variant: str, path, name: str | None = None, option: str = "FILE"):
    from kernels.io.writer import write_output

    return write_output(path, source(target, variant, name), option)


def _module_text(module: str) -> tuple[str, ast.Module]:
    from kernels.io.reader import read_bytes

    spec = importlib.util.find_spec(module)
    text = read_bytes(spec.origin, "a built-in's source", 16 * 2**20, "a module of the app").decode("utf-8")
    return text, ast.parse(text)


def _defined(node) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.If):
        return set().union(*(_defined(n) for n in node.body + node.orelse))
    return set()


def _segment(text: str, node) -> str:
    lines = text.splitlines(True)
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "".join(lines[first - 1:node.end_lineno])


def _copied(module: str, wanted: tuple[str, ...]) -> str:
    """The top-level definitions of ``module`` named in ``wanted``, in the module's order, as its text."""
    text, tree = _module_text(module)
    parts, found = [], set()
    for node in tree.body:
        defined = _defined(node) & set(wanted)
        if defined:
            parts.append(_segment(text, node))
            found |= defined
    missing = set(wanted) - found
    if missing:
        raise RuntimeError(f"{module} no longer defines {', '.join(sorted(missing))}")
    return "\n\n".join(parts)


def _launch_text(rule: LaunchRule) -> tuple[str, str]:
    """``LaunchRule(...)`` with the fields that differ from the defaults, and the source of a grid_for_n
    function it names (copied from the built-in's package)."""
    fields, helpers = [], ""
    for f in dataclasses.fields(LaunchRule):
        value = getattr(rule, f.name)
        if value == f.default:
            continue
        if callable(value):
            text, tree = _module_text(value.__module__)
            node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == value.__name__)
            helpers += "\n\n" + _segment(text, node) + "\n\n"
            fields.append(f"{f.name}={value.__name__}")
        else:
            fields.append(f"{f.name}={value!r}")
    return f"LaunchRule({', '.join(fields)})", helpers
