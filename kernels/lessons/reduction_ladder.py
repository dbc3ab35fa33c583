"""The reduction lesson: Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), kernels 1 to 7
as the paper launches them (128 threads per block), then the project's ``warp-shuffle`` and ``best``."""

from __future__ import annotations

from kernels.launch import Launch
from kernels.lessons.lesson import Lesson, Published, Step

PAPER_BLOCK = 128  # "block size 128 threads for all tests" in the paper


def one_per_thread(n: int) -> Launch:
    return Launch(block=PAPER_BLOCK, grid=-(-n // PAPER_BLOCK))


def two_per_thread(n: int) -> Launch:
    return Launch(block=PAPER_BLOCK, grid=-(-n // (2 * PAPER_BLOCK)))


def fixed_grid(n: int) -> Launch:
    return Launch(block=PAPER_BLOCK)  # the variant's own fixed grid: 16 blocks per SM, fewer on a small input


REDUCTION = Lesson(
    name="reduction", title="Optimizing parallel reduction, replayed", target="reduction",
    summary="Harris's seven reduction kernels, each adding one idea, then warp shuffles and the project's best: "
            "which ideas still pay on this GPU, and why",
    options={"op": "sum", "dtype": "int32"},
    sizes=(1 << 22, 1 << 26), sim_size=2048,
    source='Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007)',
    published_device="G80 (GeForce 8800 GTX), 2^22 ints, 86.4 GB/s peak",
    evidence=("registers", "occupancy", "shared", "instructions", "barrier", "branch", "shared load", "warp shuffle",
              "global atomic"),
    steps=(
        Step("interleaved-divergent", "1 interleaved addressing, divergent branch",
             "Each block sums its elements in a shared-memory tree where thread t adds when t % (2s) == 0: the "
             "active threads are scattered, so every warp diverges and the % is slow.",
             one_per_thread, published=Published(8.054, 2.083)),
        Step("interleaved-strided", "2 interleaved addressing, strided index",
             "index = 2 s t keeps the active threads contiguous (whole warps retire, no divergence), but their "
             "shared-memory addresses are strided: bank conflicts.",
             one_per_thread, published=Published(3.456, 4.854, 2.33, 2.33)),
        Step("sequential", "3 sequential addressing",
             "Partners half a tree apart (t and t + s): contiguous threads read contiguous words, no bank conflicts.",
             one_per_thread, published=Published(1.722, 9.741, 2.01, 4.68)),
        Step("first-add-load", "4 first add during global load",
             "Half the blocks, each thread adding two elements as it loads them: no thread idles in the tree's "
             "first step.", two_per_thread, published=Published(0.965, 17.377, 1.78, 8.34)),
        Step("unroll-last-warp", "5 unroll the last warp",
             "Once 32 threads remain, one warp finishes alone: no syncthreads and no loop test for the last six "
             "steps (here with syncwarp, which Volta's independent scheduling requires).",
             two_per_thread, published=Published(0.536, 31.289, 1.80, 15.01)),
        Step("complete-unroll", "6 completely unrolled",
             "The block size is a compile-time constant (the paper's template): the whole tree is straight-line "
             "code, every test on the block size folded away.",
             two_per_thread, published=Published(0.381, 43.996, 1.41, 21.16)),
        Step("multiple-elements", "7 multiple elements per thread",
             "A small fixed grid: each thread adds many elements in registers before the tree, so the tree's cost "
             "and the block launches are paid once per many loads (Brent's theorem).",
             fixed_grid, published=Published(0.268, 62.671, 1.42, 30.04)),
        Step("warp-shuffle", "warp shuffles (beyond the paper)",
             "Grid-stride partials summed in registers with shfl_down_sync and one 64-bit atomic per warp: no "
             "shared memory, no block tree, no second pass."),
        Step("best", "best (the project's fastest)",
             "One block per tile of 16-byte loads, several in flight per thread, warp shuffles, one atomic per "
             "block; the launch tuned per device."),
    ),
)
