"""What the inspector compiles for each GPU variant: the kernel, its signature, its launch shape, its
dynamic shared memory and its traffic model. Keyed by (target, variant name) with the names of each
module's VARIANTS / RAYTRACE_VARIANTS / JULIA_VARIANTS. Plain data, so each declaration can later move
next to its variant.

Reductions are declared for op 'sum' on int32 (int64 accumulators), as ``bench`` runs them by default;
items_per_thread is the default (8). Histogram best uses its default 8 words per thread. Image kernels
use 1024x1024 (spheres) and 1000x1000 (Julia) for their traffic models.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from kernels.errors import InputError

TARGETS = ("reduction", "histogram", "hashtable", "raytrace", "julia")


@dataclass(frozen=True)
class Traffic:
    """Bytes a launch moves to or from DRAM and the arithmetic operations it does, by the model."""

    bytes: float
    ops: float
    ops_kind: str  # 'int32', 'fp32' or 'fp64': which peak the operations count against
    model: str  # the model in words


@dataclass(frozen=True)
class KernelDecl:
    module: str  # where the kernel (or the factory that builds it) lives
    function: str  # the kernel's Python function, or a factory returning it
    args: tuple | None  # factory arguments; None: ``function`` is the kernel itself
    signature: str  # numba signature to compile
    default_block: tuple[int, ...]  # (x,) or (x, y) threads
    dynamic_shared: Callable[[int], int]  # bytes of dynamic shared memory for a block of that many threads
    traffic: Callable[[int, int, int], Traffic]  # (n, threads per block, blocks) -> Traffic
    default_n: int
    item: int | None = None  # the factory returns a tuple of kernels: this one
    fixed_block: bool = False  # the variant always launches default_block (the book's Julia launch)
    grid: int | None = None  # blocks the traffic model assumes (None: one thread per element or pixel)
    note: str = ""


def _none(threads: int) -> int:
    return 0


def _acc_per_thread(threads: int) -> int:
    return 8 * threads  # one int64 accumulator per thread (extern __shared__ in the seeds)


_RED_SIG = "void(int32[::1], int32[::1], int64[::1])"
_RED_LAST_SIG = "void(int32[::1], int32[::1], int64[::1], int64[::1], int32[::1])"
_RED_SLOT_SIG = "void(int32[::1], int32[::1], int64[::1], int64)"
_RED_N = 1 << 24


def _reduction_traffic(extra_write_per_block: int = 8, per_thread: int = 0, per_warp: int = 0,
                       words: str = "and writes one int64 partial per block"):
    def traffic(n, threads, blocks):
        written = extra_write_per_block * blocks + per_thread * threads * blocks + per_warp * (threads // 32) * blocks
        return Traffic(4 * n + written, n, "int32", f"reads n int32 once {words}")
    return traffic


_H100_SMS = 132  # grids the variants size from the SM count are modelled on an H100


def _reduction(function: str, dynamic=_acc_per_thread, signature=_RED_SIG, args=("sum", "int32"), grid=32, **traffic):
    return KernelDecl("kernels.reduction_kernels", function, args, signature, (256,), dynamic,
                      _reduction_traffic(**traffic), _RED_N, grid=grid)


_HIST_SIG = "void(uint8[::1], int64, uint32[::1])"
_HIST_N = 100 * 2**20


def _histogram_traffic(per_byte_atomic: bool):
    def traffic(n, threads, blocks):
        atomics = n if per_byte_atomic else BINS_BYTES * blocks // 4
        words = "one global atomic per byte" if per_byte_atomic else "256 global atomics per block"
        return Traffic(n + 4 * atomics, n, "int32", f"reads n bytes once, {words} (4 bytes each)")
    return traffic


BINS_BYTES = 256 * 4


def _hash_traffic(locked: bool):
    def traffic(n, threads, blocks):
        lock_bytes = 8 * n if locked else 0  # a CAS to take and an exchange to release per key
        return Traffic(16 * n + lock_bytes, n, "int32",
                       "per key: reads it, writes its pool key and link, a 4-byte CAS on the head" +
                       (", plus the lock's CAS and exchange" if locked else ""))
    return traffic


def _counting_scatter_traffic(n, threads, blocks):
    from kernels.hashtable import SEED_BUCKETS, SORT_ITEMS

    tiles = -(-n // (threads * SORT_ITEMS))
    return Traffic(8 * n + 4 * SEED_BUCKETS * tiles, n, "int32",
                   f"the scatter: reads each key and writes it once into its bucket's range, plus one 4-byte atomic "
                   f"per bucket ({SEED_BUCKETS}) and tile of threads x {SORT_ITEMS} keys; one shared atomic per key")


_IMAGE = (1024, 1024)
_JULIA_IMAGE = (1000, 1000)
_JULIA_ITERATIONS = 200


def _spheres_traffic(n, threads, blocks):
    pixels = _IMAGE[0] * _IMAGE[1]
    return Traffic(4 * pixels + 28 * n, 8 * pixels * n, "fp32",
                   "writes one 4-byte pixel each and reads the 28-byte spheres once (caches absorb the rest); "
                   "8 FP32 operations per pixel and sphere (the hit test)")


def _julia_traffic(n, threads, blocks, kind: str = "fp32"):
    return Traffic(4 * n, 10 * _JULIA_ITERATIONS * n, kind,
                   f"writes one 4-byte pixel each; at most {_JULIA_ITERATIONS} iterations of 10 {kind.upper()} "
                   "operations per pixel (bounded points run all of them)")


def _julia64_traffic(n, threads, blocks):
    return _julia_traffic(n, threads, blocks, "fp64")


def _binned_traffic(n, threads, blocks):
    pixels = _IMAGE[0] * _IMAGE[1]
    return Traffic(4 * pixels + 28 * n, 8 * pixels * n, "fp32",
                   "the shading pass: writes one 4-byte pixel each and reads each tile's own list (at most every "
                   "sphere); 8 FP32 operations per pixel and listed sphere (an upper bound: lists are short)")


_SPHERES_SIG = "void(float32[::1], int32, boolean, uint32[:, ::1])"
_JULIA = dict(module="kernels.julia", function="_render_julia", args=None,
              signature="void(uint32[:, ::1], float32, float32, float32, float32, float32, float32, int32, int32)",
              dynamic_shared=_none, traffic=_julia_traffic, default_n=_JULIA_IMAGE[0] * _JULIA_IMAGE[1])

CATALOG: dict[tuple[str, str], KernelDecl] = {
    ("reduction", "per-thread-partials"): _reduction(
        "per_thread_partials_kernel", dynamic=_none, extra_write_per_block=0, per_thread=8,
        words="and writes one int64 partial per thread (the host adds them)"),
    ("reduction", "block-serial"): _reduction("block_serial_kernel"),
    ("reduction", "tree-mask"): _reduction("tree_mask_kernel"),
    ("reduction", "interleaved-divergent"): _reduction("interleaved_divergent_kernel"),
    ("reduction", "sequential"): _reduction("sequential_kernel"),
    ("reduction", "two-kernel"): _reduction(
        "block_sums_kernel", extra_write_per_block=16, grid=2 * _H100_SMS,
        words="and writes one int64 partial per block, which the second pass (same kernel, one block) reads"),
    ("reduction", "last-block"): _reduction(
        "last_block_kernel", signature=_RED_LAST_SIG, extra_write_per_block=16, grid=2 * _H100_SMS,
        words="and writes one int64 partial per block, which the last block reads back"),
    ("reduction", "warp-shuffle"): _reduction(
        "warp_shuffle_kernel", dynamic=_none, signature=_RED_SLOT_SIG, extra_write_per_block=0, per_warp=8, grid=8 * _H100_SMS,
        words="and adds one int64 atomic per warp"),
    ("reduction", "best"): _reduction(
        "best_kernel", dynamic=_none, signature=_RED_SLOT_SIG, args=("sum", "int32", 8), grid=-(-_RED_N // (256 * 8)),
        words="and adds one int64 atomic per block"),
    ("histogram", "global-atomics"): KernelDecl(
        "kernels.histogram", "_seed_kernels", (), _HIST_SIG, (256,), _none, _histogram_traffic(True), _HIST_N, item=1,
        grid=2 * _H100_SMS),
    ("histogram", "shared-atomics"): KernelDecl(
        "kernels.histogram", "_seed_kernels", (), _HIST_SIG, (256,), _none, _histogram_traffic(False), _HIST_N, item=2,
        grid=2 * _H100_SMS),
    ("histogram", "best"): KernelDecl(
        "kernels.histogram", "_best_kernel", (8,), "void(uint32[::1], uint8[::1], int64, uint32[::1])", (1024,),
        _none, _histogram_traffic(False), _HIST_N, grid=2 * _H100_SMS),
    ("hashtable", "gpu-locks"): KernelDecl(
        "kernels.hashtable", "_gpu_kernels", (),
        "void(uint32[::1], uint32[::1], int32[::1], int32[::1], int32[::1])", (256,), _none, _hash_traffic(True),
        1 << 24, item=1, grid=60),
    ("hashtable", "gpu-lockfree"): KernelDecl(
        "kernels.hashtable", "_gpu_kernels", (), "void(uint32[::1], uint32[::1], int32[::1], int32[::1])", (256,),
        _none, _hash_traffic(False), 1 << 24, item=2, grid=60),
    ("hashtable", "gpu-counting-sort"): KernelDecl(
        "kernels.hashtable", "_counting_sort_kernels", (), "void(uint32[::1], uint32[::1], int32[::1], uint32)", (512,),
        lambda threads: 4 * 1024, _counting_scatter_traffic, 1 << 24, item=5, grid=4 * _H100_SMS,
        note="the scatter with shared-memory counters (up to 8192 buckets; 1024 here, 4 KiB of dynamic shared memory); "
             "before it run a zeroing kernel, the count (the same tiles, one shared atomic per key) and the scan"),
    ("raytrace", "spheres-global"): KernelDecl(
        "kernels.raytrace", "_render_spheres_global", None, _SPHERES_SIG, (16, 16), _none, _spheres_traffic, 20),
    ("raytrace", "spheres-constant"): KernelDecl(
        "kernels.raytrace", "_render_spheres_constant", None, "void(int32, boolean, uint32[:, ::1])", (16, 16),
        _none, _spheres_traffic, 20),
    ("raytrace", "spheres-shared"): KernelDecl(
        "kernels.raytrace", "_render_spheres_shared", None, _SPHERES_SIG, (16, 16), _none, _spheres_traffic, 2000),
    ("raytrace", "spheres-binned"): KernelDecl(
        "kernels.raytrace_binned", "_shade_tiles", None,
        "void(float32[::1], int32, boolean, int64[::1], int32[::1], int32[::1], uint32[:, ::1])", (16, 16), _none,
        _binned_traffic, 100_000,
        note="the shading kernel, the one that grows with the image; binning runs three small kernels before it "
             "(count per tile, a prefix sum, fill the lists)"),
    ("raytrace", "spheres-frame-to-host"): KernelDecl(
        "kernels.raytrace", "_render_spheres_constant", None, "void(int32, boolean, uint32[:, ::1])", (16, 16),
        _none, _spheres_traffic, 20, note="the constant-memory kernel; the copy to the host is not a kernel"),
    ("julia", "julia-book"): KernelDecl(default_block=(1, 1), fixed_block=True,
                                        note="the book's launch: one thread per block", **_JULIA),
    ("julia", "julia-2d"): KernelDecl(default_block=(16, 16), **_JULIA),
    ("julia", "julia-2d-float64"): KernelDecl(
        default_block=(16, 16), **{**_JULIA, "traffic": _julia64_traffic,
                                   "signature": "void(uint32[:, ::1], float64, float64, float64, float64, float64, "
                                                "float64, int32, int32)"}),
}


def variants(target: str) -> list[str]:
    if target not in TARGETS:
        raise InputError(f"unknown target {target!r}; allowed: {', '.join(TARGETS)}")
    return [name for (t, name) in CATALOG if t == target]


def declaration(target: str, variant: str) -> KernelDecl:
    names = variants(target)
    if variant not in names:
        raise InputError(f"{target} has no GPU variant {variant!r} to inspect; known: {', '.join(names)}")
    decl = CATALOG[(target, variant)]
    rule = _launch_rule(target, variant)
    if rule is None:
        return decl
    # the block a variant runs with by default is its own launch rule's, not a second copy of it here
    block = rule.block if isinstance(rule.block, tuple) else (rule.block,)
    return replace(decl, default_block=block, fixed_block=rule.fixed)


def _launch_rule(target: str, variant: str):
    from kernels.algorithms import by_name

    for v in by_name(target).variants:
        if v.name == variant:
            return v.launch
    return None


def threads(block: tuple[int, ...]) -> int:
    total = 1
    for b in block:
        total *= b
    return total
