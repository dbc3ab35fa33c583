"""The Julia set of seed 003 (CUDA by Example, ch. 4) on CUDA, in the simulator, and on the CPU.

The mapping, in the standard orientation of the complex plane (real to the right, imaginary up; row 0 of
the image at the top): pixel (x, y) is the point
    re = cx + s * (x - W/2) / h,    im = cy + s * (H/2 - 1 - y) / h
with s = scale / zoom (scale 1.5), h = min(W, H) / 2 (integer halves; pixels stay square), each product
and quotient rounded in the chosen precision. c = -0.8 + 0.156i, z = z*z + c for 200 iterations, escape
when |z|^2 > 1000; the ``classic`` colormap paints bounded points red on black as the book does.

The book computes jx = scale * (W/2 - x) / (W/2), jy = scale * (H/2 - y) / (H/2) and shows row 0 at the
bottom: that picture is the one above turned by 180 degrees, and every Julia set is symmetric under that
turn (z -> -z commutes with z*z + c; in floating point too, as negation is exact), so the book's view
here is the book's picture pixel for pixel.

Precision: ``float32`` (the book's) or ``float64``. float32 runs out of resolution near a zoom of 10^4:
neighbouring pixels then round to the same point and the set shows blocks (``precision_for`` tells when).

Launches: ``book`` is the book's ``<<<dim3(W, H), 1>>>`` (one thread per block); ``2d`` uses 2-D blocks.
Both run the same kernel, so the difference you time is the launch shape alone.

This module declares everything about the algorithm and imports no numba: the variants with their launch
rules and inspector entries, and the descriptor. The view is :mod:`.params`, the shared per-pixel math
:mod:`.shading` (``@numba.jit``), the kernel :mod:`.gpu`, the CPU twins :mod:`.cpu` (a pixel at a time)
and :mod:`.simd` (many pixels per vector register; the renderer's CPU path), the renderer
:mod:`.renderer`, the numpy reference renderer :mod:`.reference` and the benchmark runs :mod:`.runs`.
"""

from __future__ import annotations

from kernels.harness.descriptor import Algorithm, Option
from kernels.harness.frames import SIM_IMAGE_SIZE
from kernels.harness.kernel_decl import KernelDecl, Traffic, no_dynamic_shared
from kernels.harness.render import PIXELS_UNIT, escape_time_judge
from kernels.harness.renderable import Control, Renderable
from kernels.harness.variants import Variant
from kernels.julia.params import (COLORMAPS, DTYPES, IMAGE_SIZE, LAUNCHES, MAX_ITERATIONS, PRECISIONS, JuliaParams,
                                  check_launch, parse_complex)
from kernels.harness.frames import parse_size
from kernels.launch import DEFAULT_BLOCK_2D, LaunchRule
from kernels.launch.images import KernelImage
from kernels.lazy import entry

IMAGE_LAUNCH = LaunchRule(block=DEFAULT_BLOCK_2D, shape_2d=True)
BOOK_LAUNCH = LaunchRule(block=(1, 1), shape_2d=True, fixed=True, note="the book's <<<dim3(W, H), 1>>>")


def _run(name: str):
    return entry("kernels.julia.runs", name)


# --- what the inspector compiles for each GPU variant (1000x1000 images, 200 iterations) -----------------------

_PIXELS = 1000 * 1000
_ITERATIONS = 200


def _traffic(kind: str):
    def traffic(n, threads, blocks):
        return Traffic(4 * n, 10 * _ITERATIONS * n, kind,
                       f"writes one 4-byte pixel each; at most {_ITERATIONS} iterations of 10 {kind.upper()} "
                       "operations per pixel (bounded points run all of them)")
    return traffic


def kernel_signature(precision: str) -> str:
    """numba's signature of the Julia kernel at ``precision``."""
    f = precision
    return f"void(uint32[:, ::1], {f}, {f}, {f}, {f}, {f}, {f}, int32, int32)"


def _inspect(block, precision: str = "float32", **extra) -> KernelDecl:
    return KernelDecl("kernels.julia.gpu", "render_julia", None, kernel_signature(precision), block,
                      no_dynamic_shared, _traffic("fp64" if precision == "float64" else "fp32"), _PIXELS, **extra)


# per precision: the kernels shipped compiled, which draw a window's first frames on a GPU while numba compiles
# them (kernels/launch/images.py; built by scripts/kernel_images.py)
IMAGES = {p: KernelImage(f"julia-{p}", "kernels.julia", "kernels.julia.gpu", "render_julia", kernel_signature(p))
          for p in PRECISIONS}


# --- the variants -------------------------------------------------------------------------------------------

VARIANTS: tuple[Variant, ...] = (
    Variant("julia-book", "the book's launch <<<dim3(W, H), 1>>>: one thread per block leaves 31 of every 32 lanes "
            "of a warp idle", "gpu", "003", launch=BOOK_LAUNCH, run=_run("run_book"),
            inspect=_inspect((1, 1), fixed_block=True, note="the book's launch: one thread per block")),
    Variant("julia-2d", "2-D blocks of BXxBY threads: full warps, the same kernel", "gpu", "003",
            launch=IMAGE_LAUNCH, run=_run("run_2d"),
            inspect=_inspect((16, 16))),
    Variant("julia-2d-float64", "the same 2-D launch in float64, as deep zooms need: an H100 runs float64 at about "
            "half float32's rate, consumer GPUs at 1/32 or 1/64", "gpu", "", launch=IMAGE_LAUNCH,
            run=_run("run_2d_float64"), inspect=_inspect((16, 16), "float64")),
    Variant("julia-cpu", "the CPU twin: the same per-pixel function with Numba's parallel loop over rows", "cpu",
            run=_run("run_cpu")),
    Variant("julia-cpu-float64", "the CPU twin in float64", "cpu", run=_run("run_cpu_float64")),
    Variant("julia-cpu-simd", "the SIMD CPU twin: blocks of 16x2 pixels iterate together in vector registers, the "
            "escape test a per-lane mask; the same image (the window's CPU path)", "cpu", run=_run("run_cpu_simd")),
    Variant("julia-cpu-simd-float64", "the SIMD CPU twin in float64: 8x2 pixels per block", "cpu",
            run=_run("run_cpu_simd_float64")),
)

# z^2 + c and |z|^2 per iteration: 3 multiplies, 3 FMAs, 2 adds, each one FP-pipe issue
FP_OPS_PER_ITERATION = 8

ALGORITHM = Algorithm(
    name="julia", title="Julia set",
    summary="the Julia set of seed 003: the book's one-thread blocks against 2-D blocks, and the CPU twins",
    variants=VARIANTS,
    make_problem=lambda n, options, seed, data=None: _make(options["size"]),
    options=(Option("size", "image size WxH", default={**{k: IMAGE_SIZE for k in ("cuda", "cpu")},
                                                        "sim": SIM_IMAGE_SIZE}, parse=parse_size),),
    unit=PIXELS_UNIT, measures_copy_peak=False, panel=False, block_shape_2d=True,
    # judged against the FMA issue rate in the row's precision: iterations (counted by kernels/julia/work.py)
    # times FP_OPS_PER_ITERATION
    judge=escape_time_judge("kernels.julia.work", FP_OPS_PER_ITERATION),
)


def _make(size):
    from kernels.julia.runs import make_bench_problem

    return make_bench_problem(size)


# --- the render kind: the window's tab, `render julia` ----------------------------------------------------------

RENDERABLE = Renderable(
    name=ALGORITHM.name, title="Julia", summary="the Julia set of seed 003", params=JuliaParams,
    default_size=IMAGE_SIZE, kind_module="kernels.julia.render_kind", images=IMAGES, pan_zoom=True,
    tip="Julia set: drag to pan, wheel to zoom about the cursor",
    controls=(
        Control("c", "c", "point", (-0.8, 0.156), help="the constant c as RE,IM (default -0.8,0.156)"),
        Control("center", "Centre", "point", (0.0, 0.0), help="view centre as X,Y (default 0,0)"),
        Control("zoom", "Zoom", "float", 1.0, 1e-3, 1e15, log=True, help="zoom factor (default 1)"),
        Control("iterations", "Iterations", "int", 200, 1, MAX_ITERATIONS,
                help=f"iterations, 1..{MAX_ITERATIONS} (default 200)"),
        Control("colormap", "Colormap", "choice", "classic", choices=COLORMAPS,
                help="classic: the book's red on black (default)"),
        Control("precision", "Precision", "choice", "float32", choices=PRECISIONS,
                help="float32 (the book's, default) or float64 for deep zooms (float32 shows blocks past a zoom of "
                     "about 10^4)"),
        Control("launch", "Launch", "choice", None, choices=LAUNCHES, gpu_only=True,
                help="book: one thread per block as in the book; 2d: 2-D blocks (default; cuda/sim only)"),
    ),
)
