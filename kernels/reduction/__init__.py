"""Reductions: sum, sum of squares (seed 000) and dot product (seed 003) of int32 or float32 vectors, as
the seeds' kernels (000, 002, 003, 004), faster ones, and CPU and library references.

This module declares everything about the algorithm and imports no numba: the problem and its independent
numpy reference (:mod:`.problem`), each variant with its launch rule and inspector entry, and the
descriptor. The code runs from its own modules, imported when a variant first runs: the CUDA kernels
(:mod:`.gpu`) and their launches (:mod:`.launches`), the CPU twins (:mod:`.cpu`), the library peers
(:mod:`.peers`).

Results are exact for int32 input (int64 accumulation everywhere; the seeds' int accumulators overflow).
float32 input is accumulated in float64 and verified against a float64 reference within
``FLOAT_RTOL`` x the sum of the absolute terms.
"""

from __future__ import annotations

import numpy as np

from kernels.harness.ceilings import copy_judge
from kernels.harness.descriptor import Algorithm, Option, SizeAxis, UserTarget
from kernels.harness.kernel_decl import KernelDecl, Traffic
from kernels.harness.variants import NO_WARP_SHUFFLES, Variant
from kernels.launch import BLOCK_POWER_OF_TWO, BLOCK_WHOLE_WARPS, LaunchRule
from kernels.lazy import entry
from kernels.reduction.problem import (ACCUMULATOR_DTYPE, DTYPES, FLOAT_RTOL, MAX_N, OPS, REFERENCE_CHUNK,
                                       ReductionProblem, make_problem)

MIN_BLOCK = 32
# best: elements per thread, loaded 4 at a time (16 bytes); 8 = two loads in flight per thread, the untuned
# choice (docs/measurements.md says how it compared). A GPU run without a launch tunes it per size.
DEFAULT_ITEMS_PER_THREAD = 8
MAX_ITEMS_PER_THREAD = 64
BEST_KERNEL = "best: tiles of 16-byte loads"  # in the tuning cache's key: another kernel tunes afresh

# --- launches ---------------------------------------------------------------------------------------------


def _seed_grid(n: int, block: int) -> int:
    return min(32, -(-n // block))  # seed 000's 32 blocks, but like seed 003 no more than the input fills


SEED_LAUNCH = LaunchRule(block=256, grid=32, grid_for_n=_seed_grid, min_block=MIN_BLOCK, note="as in seed 000")
SEED_TREE_LAUNCH = LaunchRule(block=256, grid=32, grid_for_n=_seed_grid, min_block=MIN_BLOCK,
                              block_rule=BLOCK_POWER_OF_TWO, note="as in seed 000")
# seed 004: 1024 threads, "#SM*2 is a good number"
GRID_BARRIER_LAUNCH = LaunchRule(block=1024, grid_sm=2, min_block=MIN_BLOCK, note="as in seed 004")
# 8 x 256 = 2048 threads per SM, a full wave if registers allow
WARP_LAUNCH = LaunchRule(block=256, grid_sm=8, min_block=MIN_BLOCK, block_rule=BLOCK_WHOLE_WARPS)
# Harris 2007: 128 threads per block in all of the paper's tests; kernels 1-3 one element per thread,
# kernels 4-6 two, kernel 7 a fixed grid (16 blocks of 128 threads fill an SM of 2048 threads), which the
# paper's sample caps at the blocks two elements per thread fill (min(maxBlocks, n / (2 x block))).
PAPER_BLOCK = 128


def _one_per_thread(n: int, block: int) -> int:
    return -(-n // block)


def _two_per_thread(n: int, block: int) -> int:
    return -(-n // (2 * block))


PAPER_ONE_LAUNCH = LaunchRule(block=PAPER_BLOCK, grid_for_n=_one_per_thread, min_block=MIN_BLOCK,
                              block_rule=BLOCK_POWER_OF_TWO, grid_text="n / block (one element per thread)",
                              note="as in the paper")
PAPER_TWO_LAUNCH = LaunchRule(block=PAPER_BLOCK, grid_for_n=_two_per_thread, min_block=MIN_BLOCK,
                              block_rule=BLOCK_POWER_OF_TWO, grid_text="n / (2 x block) (two elements per thread)",
                              note="as in the paper")
PAPER_FIXED_GRID_LAUNCH = LaunchRule(block=PAPER_BLOCK, grid_sm=16, grid_cap_for_n=_two_per_thread,
                                     min_block=MIN_BLOCK, block_rule=BLOCK_POWER_OF_TWO,
                                     note="a fixed grid, as in the paper")
BEST_LAUNCH = LaunchRule(block=256, grid_sm=8, min_block=MIN_BLOCK, block_rule=BLOCK_WHOLE_WARPS, tiles=True,
                         items=(DEFAULT_ITEMS_PER_THREAD, 4, MAX_ITEMS_PER_THREAD), items_multiple=4)


# --- what the inspector compiles for each GPU variant ------------------------------------------------------
# Declared for op 'sum' on int32 (int64 accumulators), as ``bench`` runs them by default, at 2^24 elements;
# grids the variants size from the SM count are modelled on an H100 (132 SMs).

_RED_SIG = "void(int32[::1], int32[::1], int64[::1])"
_H100_SMS = 132
_RED_N = 1 << 24


def _traffic(extra_write_per_block: int = 8, per_thread: int = 0, per_warp: int = 0,
             words: str = "and writes one int64 partial per block"):
    def traffic(n, threads, blocks):
        written = extra_write_per_block * blocks + per_thread * threads * blocks + per_warp * (threads // 32) * blocks
        return Traffic(4 * n + written, n, "int32", f"reads n int32 once {words}")
    return traffic


def _acc_per_thread(threads: int) -> int:
    return 8 * threads  # one int64 accumulator per thread (extern __shared__ in the seeds)


def _no_shared(threads: int) -> int:
    return 0


def _inspect(function: str, dynamic=_acc_per_thread, signature=_RED_SIG, args=("sum", "int32"), grid=32,
             note: str = "", module: str = "kernels.reduction.gpu", **traffic) -> KernelDecl:
    return KernelDecl(module, function, args, signature, (256,), dynamic, _traffic(**traffic),
                      _RED_N, grid=grid, note=note)


_UNROLLED_NOTE = (f"compiled for {PAPER_BLOCK} threads per block: the block size is a constant of this kernel, "
                  "so another --block inspects this compile at that launch")


# --- the variants -------------------------------------------------------------------------------------------

_SHUFFLE_SKIP = NO_WARP_SHUFFLES
HARRIS = 'Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007)'
_HARRIS_MODULE = "kernels.reduction.gpu_harris"
_ONE_PASS = "a grid-stride loop keeps any grid correct; at the default grid each thread makes one pass"


def _gpu(name: str, description: str, seed: str, launch: LaunchRule, run: str, inspect: KernelDecl,
         sim_skip: str = "") -> Variant:
    return Variant(name, description, "gpu", seed, sim_skip=sim_skip, run=entry("kernels.reduction.launches", run),
                   launch=launch, inspect=inspect)


def _cpu(name: str, description: str, run: str) -> Variant:
    return Variant(name, description, "cpu", run=entry("kernels.reduction.cpu", run))


def _peer(name: str, description: str, run: str) -> Variant:
    return Variant(name, description, "peer", run=entry("kernels.reduction.peers", run))


VARIANTS: tuple[Variant, ...] = (
    _gpu("per-thread-partials",
         "Grid-stride loop, every thread writes its own partial and the host adds all grid x block of them "
         "(default 32 x 256, as in the seed)",
         "000 (a)", SEED_LAUNCH, "run_per_thread_partials",
         _inspect("per_thread_partials_kernel", dynamic=_no_shared, extra_write_per_block=0, per_thread=8,
                  words="and writes one int64 partial per thread (the host adds them)")),
    _gpu("block-serial",
         "Partials in shared memory, then thread 0 adds the whole block serially while the others wait",
         "000 (b)", SEED_LAUNCH, "run_block_serial", _inspect("block_serial_kernel")),
    _gpu("tree-mask",
         "Tree addition in shared memory: threads with (tid & mask) == 0 add their neighbour, log2(block) steps",
         "000 (c)", SEED_TREE_LAUNCH, "run_tree_mask", _inspect("tree_mask_kernel")),
    _gpu("interleaved-divergent",
         "Interleaved tree, if t % (2*stride) == 0: the active threads are scattered, so every warp diverges",
         "002", SEED_TREE_LAUNCH, "run_interleaved_divergent", _inspect("interleaved_divergent_kernel")),
    _gpu("sequential",
         "Sequential tree, if t < stride: the active threads are contiguous, so whole warps retire early",
         "002 (better version), 003 (dot)", SEED_TREE_LAUNCH, "run_sequential", _inspect("sequential_kernel")),
    _gpu("interleaved-strided",
         "Harris kernel 2: interleaved tree with a strided index, index = 2*s*t: the active threads are "
         "contiguous (no divergence) but their shared-memory addresses spread, so they conflict on banks; "
         f"{_ONE_PASS}; {HARRIS}",
         "Harris 2007, kernel 2", PAPER_ONE_LAUNCH, "run_interleaved_strided",
         _inspect("interleaved_strided_kernel", module=_HARRIS_MODULE, grid=_RED_N // PAPER_BLOCK)),
    _gpu("first-add-load",
         "Harris kernel 4: kernel 3's sequential tree with half the blocks, each thread adding two elements as "
         f"it loads them (i and i + block), so no thread idles in the first step; {_ONE_PASS}; {HARRIS}",
         "Harris 2007, kernel 4", PAPER_TWO_LAUNCH, "run_first_add_load",
         _inspect("first_add_load_kernel", module=_HARRIS_MODULE, grid=_RED_N // (2 * PAPER_BLOCK))),
    _gpu("unroll-last-warp",
         "Harris kernel 5: kernel 4 with the tree stopping at 32 live threads; warp 0 does the last six steps "
         "unrolled with no syncthreads. Written with syncwarp between a step's reads and its writes: the paper's "
         "volatile warp-synchronous code assumed lockstep lanes, which Volta's independent thread scheduling "
         f"ended (a race since then); {HARRIS}",
         "Harris 2007, kernel 5", PAPER_TWO_LAUNCH, "run_unroll_last_warp",
         _inspect("unroll_last_warp_kernel", module=_HARRIS_MODULE, grid=_RED_N // (2 * PAPER_BLOCK))),
    _gpu("complete-unroll",
         "Harris kernel 6: kernel 5 with the block size a constant of the compiled kernel (the paper's C++ "
         "template: one kernel compiled per block size, cached), so the whole tree is straight-line code with "
         f"static shared memory; {_ONE_PASS}; {HARRIS}",
         "Harris 2007, kernel 6", PAPER_TWO_LAUNCH, "run_complete_unroll",
         _inspect("complete_unroll_kernel", module=_HARRIS_MODULE, dynamic=_no_shared, args=("sum", "int32", PAPER_BLOCK),
                  grid=_RED_N // (2 * PAPER_BLOCK), note=_UNROLLED_NOTE)),
    _gpu("multiple-elements",
         "Harris kernel 7: kernel 6's code at a small fixed grid (16 blocks of 128 threads per SM, fewer "
         "when two elements per thread fill fewer), so the "
         "grid-stride loop adds many elements per thread in registers before the unrolled tree (Brent's "
         f"theorem: O(n / log n) threads); {HARRIS}",
         "Harris 2007, kernel 7", PAPER_FIXED_GRID_LAUNCH, "run_multiple_elements",
         _inspect("complete_unroll_kernel", module=_HARRIS_MODULE, dynamic=_no_shared, args=("sum", "int32", PAPER_BLOCK),
                  grid=16 * _H100_SMS, note=_UNROLLED_NOTE)),
    _gpu("two-kernel",
         "Per-block partials, then the same kernel on one block reduces them: the launch boundary is the "
         "grid-wide barrier (default grid 2 x SMs, block 1024)",
         "004 (a)", GRID_BARRIER_LAUNCH, "run_two_kernel",
         _inspect("block_sums_kernel", extra_write_per_block=16, grid=2 * _H100_SMS,
                  words="and writes one int64 partial per block, which the second pass (same kernel, one block) "
                        "reads")),
    _gpu("last-block",
         "One launch: threadfence, an atomic ticket and syncthreads_or let the last block add every partial; "
         "it strides over them, so unlike the seed any grid size works",
         "004 (b)", GRID_BARRIER_LAUNCH, "run_last_block",
         _inspect("last_block_kernel", signature="void(int32[::1], int32[::1], int64[::1], int64[::1], int32[::1])",
                  extra_write_per_block=16, grid=2 * _H100_SMS,
                  words="and writes one int64 partial per block, which the last block reads back")),
    _gpu("warp-shuffle",
         "Grid-stride partials summed in registers with shfl_down_sync, then one 64-bit atomic per warp",
         "004 (hint)", WARP_LAUNCH, "run_warp_shuffle",
         _inspect("warp_shuffle_kernel", dynamic=_no_shared, signature="void(int32[::1], int32[::1], int64[::1], int64)",
                  extra_write_per_block=0, per_warp=8, grid=8 * _H100_SMS, words="and adds one int64 atomic per warp"),
         _SHUFFLE_SKIP),
    _gpu("best",
         "Fastest: one block per tile of block x items_per_thread (8) elements, each thread's items read by "
         "16-byte loads (4 elements each) issued at once, warp shuffles, one 64-bit atomic per block, no second "
         "pass; on a GPU with no launch given, items and block come from a short sweep cached per device and "
         "size (--retune redoes it)",
         "", BEST_LAUNCH, "run_best",
         _inspect("best_kernel", dynamic=_no_shared, signature="void(int32[::1], int32[::1], int64[::1], int64)",
                  args=("sum", "int32", DEFAULT_ITEMS_PER_THREAD), grid=-(-_RED_N // (256 * DEFAULT_ITEMS_PER_THREAD)),
                  words="and adds one int64 atomic per block"),
         _SHUFFLE_SKIP),
    _cpu("numpy",
         "numpy on the host: np.sum, or np.einsum for sumsq and dot, accumulating in int64 / float64 (wall time)",
         "run_numpy"),
    _cpu("cpu-parallel",
         "Numba @njit(parallel=True) prange reduction on all CPU cores, int64 / float64 accumulator (wall time)",
         "run_cpu_parallel"),
    _peer("cuda-reduce",
          "numba's builtin cuda.reduce (sum only, int32 only: it accumulates in the input type); CUDA events "
          "around the call, which includes its partials allocation", "run_cuda_reduce"),
    _peer("cupy-sum",
          "cupy.sum(x, dtype=int64 / float64): CuPy's own reduction kernel, not CUB (CuPy's CUB path does not "
          "widen int32 -> int64 or float32 -> float64); sum only; CUDA events", "run_cupy_sum"),
    _peer("cupy-dot",
          "CuPy's dot; dot only, int32 only (float32 goes to cuBLAS sdot, a float32 accumulator; the int32 result "
          "wraps past 2**31); CUDA events", "run_cupy_dot"),
    _peer("cub-reduce",
          "CUB DeviceReduce (cuda.compute reduce_into, OpKind.PLUS) of the int32 / float32 array into an int64 / "
          "float64 result; temp storage allocated once; sum only; CUDA events", "run_cub_reduce"),
    _peer("triton-sum",
          "A plain Triton kernel: one tile of BLOCK (autotuned 1024..8192) elements per program, tl.sum in "
          "int64 / float64, one atomic add per program, plus zeroing the result; sum, sumsq, dot; CUDA events",
          "run_triton_sum"),
    _peer("torch-sum", "torch.sum(x, dtype=int64 / float64) on a zero-copy view; sum only; CUDA events",
          "run_torch_sum"),
    _peer("cupy-sum-cub",
          "cupy.sum(x, dtype=int64 / float64) with CUB as CuPy's only routine and reduction accelerator (what "
          "CUPY_ACCELERATORS=cub sets), switched per call; the row's note says whether device-wide CUB ran or "
          "CuPy's kernel with CUB block reductions; sum only; CUDA events", "run_cupy_sum_cub"),
)
VARIANT_BY_NAME = {v.name: v for v in VARIANTS}


# --- the descriptor -------------------------------------------------------------------------------------


def load_input(path) -> np.ndarray:
    """A 1-D array from a .npy file (``--input``), for :func:`make_problem`'s ``data``; bounded and checked
    by the one input reader."""
    from kernels.io.reader import read_npy

    return read_npy(path, "--input")


def input_size(path, option: str) -> tuple[int, int]:
    """(n, host bytes beside the run's own) of a .npy ``--input`` from its header, before its data is read:
    the file's array, and as much again while it is checked and converted to the run's dtype."""
    from kernels.io.reader import npy_layout

    count, dtype = npy_layout(path, option)
    return count, 2 * count * dtype.itemsize + 2 * count


def _memory(n: int, options: dict) -> tuple[int, int]:
    vectors = 2 if options["op"] == "dot" else 1
    # float32 inputs are drawn as float32 and scaled: about two temporaries of the vector on the way
    host = vectors * n * 4 * (3 if options["dtype"] == "float32" else 1) + 2 * REFERENCE_CHUNK * 8
    return host, vectors * n * 4


def _make(n, options, seed, data=None) -> ReductionProblem:
    return make_problem(options["op"], options["dtype"], n, seed, data=data)


def _user_score(problem: ReductionProblem, raw):
    return problem.as_result(raw)


USER = UserTarget(
    time_run=entry("kernels.reduction.user_run", "time_run"), score=_user_score,
    arguments="run(a, b, out, launch, op): a and b the device vectors (b is a for sum and sumsq; dot's second "
              "vector for dot), out a zeroed one-element device accumulator (int64 for int32 input, float64 for "
              "float32), launch (block, grid, items), op 'sum', 'sumsq' or 'dot'",
    default_launch=WARP_LAUNCH, supports={"ops": "op", "dtypes": "dtype"},
)

ALGORITHM = Algorithm(
    name="reduction", title="Reduction",
    summary="sum, sum of squares or dot product of int32 / float32 vectors (seeds 000, 002, 003, 004)",
    variants=VARIANTS, make_problem=_make,
    size=SizeAxis("N elements", "elements", default={"cuda": 100_000_000, "cpu": 16 * 2**20, "sim": 4096},
                  maximum={"cuda": MAX_N, "cpu": MAX_N, "sim": 65536},
                  gui_default={"cuda": 1 << 22, "cpu": 1 << 22, "sim": 4096}),
    options=(
        Option("op", "reduction operation", choices=OPS, default="sum"),
        Option("dtype", "element type; ints are summed exactly in 64 bits, floats in float64", choices=DTYPES,
               default="int32"),
    ),
    load_input=load_input, input_size=input_size,
    input_help="a .npy array of numbers (1-D) to reduce instead of random data",
    memory=_memory, user=USER,
    judge=copy_judge(),  # bandwidth-bound: the copy bandwidth is its ceiling
)
