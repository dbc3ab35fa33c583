"""The Mandelbrot set: escape time on CUDA, in the simulator, and on the CPU; a render kind declared in one
package (its window tab, `render mandelbrot`, `bench mandelbrot` and its inspector entries all read this).

Pixel (x, y), row 0 at the top, is the point c = x0 + i y0 of :mod:`.params` (the Julia set's mapping, with
its centre and zoom); z = z*z + c from z = 0 until |z|^2 > 4 or ``iterations``; escaped points are coloured
by their count, bounded ones black. Precision ``float32`` or ``float64`` (float32 blocks up past a zoom of
about 10^4, as the Julia set's does).

This module declares everything about the algorithm and imports no numba: the variants with their launch
rules and inspector entries, the descriptor and the render kind. The view is :mod:`.params`, the shared
per-pixel math :mod:`.shading` (``@numba.jit``: the CUDA kernel :mod:`.gpu` and the CPU twin :mod:`.cpu`
both call it, the seam the Julia set uses), the renderer :mod:`.renderer`, the numpy reference
:mod:`.reference`, the render kind's paths :mod:`.render_kind` and the benchmark runs :mod:`.runs`.
"""

from __future__ import annotations

from kernels.harness.descriptor import Algorithm, Option
from kernels.harness.frames import SIM_IMAGE_SIZE, parse_size
from kernels.harness.kernel_decl import KernelDecl, Traffic, no_dynamic_shared
from kernels.harness.render import PIXELS_UNIT, escape_time_judge
from kernels.harness.renderable import Control, Renderable
from kernels.harness.variants import Variant
from kernels.launch import DEFAULT_BLOCK_2D, LaunchRule
from kernels.lazy import entry
from kernels.mandelbrot.params import IMAGE_SIZE, MAX_ITERATIONS, PRECISIONS, MandelbrotParams

NAME = "mandelbrot"
IMAGE_LAUNCH = LaunchRule(block=DEFAULT_BLOCK_2D, shape_2d=True)


def _run(name: str):
    return entry("kernels.mandelbrot.runs", name)


# --- what the inspector compiles for each GPU variant (1024x768 images, 256 iterations) --------------------------

_PIXELS = IMAGE_SIZE[0] * IMAGE_SIZE[1]
_ITERATIONS = MandelbrotParams().iterations


def _traffic(kind: str):
    def traffic(n, threads, blocks):
        return Traffic(4 * n, 8 * _ITERATIONS * n, kind,
                       f"writes one 4-byte pixel each; at most {_ITERATIONS} iterations of 8 {kind.upper()} "
                       "operations per pixel (bounded points run all of them)")
    return traffic


def kernel_signature(precision: str) -> str:
    """numba's signature of the Mandelbrot kernel at ``precision``."""
    f = precision
    return f"void(uint32[:, ::1], {f}, {f}, {f}, {f}, int32)"


def _inspect(precision: str = "float32") -> KernelDecl:
    return KernelDecl("kernels.mandelbrot.gpu", "render_mandelbrot", None, kernel_signature(precision), (16, 16),
                      no_dynamic_shared, _traffic("fp64" if precision == "float64" else "fp32"), _PIXELS)


VARIANTS: tuple[Variant, ...] = (
    Variant(f"{NAME}-2d", "escape time, one thread per pixel in 2-D blocks of BXxBY threads", "gpu",
            launch=IMAGE_LAUNCH, run=_run("run_2d"), inspect=_inspect()),
    Variant(f"{NAME}-2d-float64", "the same kernel in float64, as deep zooms need", "gpu", launch=IMAGE_LAUNCH,
            run=_run("run_2d_float64"), inspect=_inspect("float64")),
    Variant(f"{NAME}-cpu", "the CPU twin: the same per-pixel function with Numba's parallel loop over rows", "cpu",
            run=_run("run_cpu")),
    Variant(f"{NAME}-cpu-float64", "the CPU twin in float64", "cpu", run=_run("run_cpu_float64")),
)

# per iteration: two squares, their sum, 2 zr zi + y0, zr^2 - zi^2 + x0: 8 FP-pipe issues
FP_OPS_PER_ITERATION = 8

ALGORITHM = Algorithm(
    name=NAME, title="Mandelbrot set",
    summary="the Mandelbrot set's escape time: 2-D blocks in float32 and float64, and the CPU twin",
    variants=VARIANTS,
    make_problem=lambda n, options, seed, data=None: _make(options["size"]),
    options=(Option("size", "image size WxH", default={"cuda": IMAGE_SIZE, "cpu": IMAGE_SIZE, "sim": SIM_IMAGE_SIZE},
                    parse=parse_size),),
    unit=PIXELS_UNIT, measures_copy_peak=False, panel=False, block_shape_2d=True,
    # judged against the FMA issue rate in the row's precision: iterations (counted by kernels/mandelbrot/work.py)
    # times FP_OPS_PER_ITERATION
    judge=escape_time_judge("kernels.mandelbrot.work", FP_OPS_PER_ITERATION),
)


def _make(size):
    from kernels.mandelbrot.runs import make_bench_problem

    return make_bench_problem(size)


# --- the render kind: the window's tab, `render mandelbrot` -------------------------------------------------------

RENDERABLE = Renderable(
    name=NAME, title="Mandelbrot", summary="the Mandelbrot set (escape time)", params=MandelbrotParams,
    default_size=IMAGE_SIZE, kind_module="kernels.mandelbrot.render_kind", pan_zoom=True,
    tip="Mandelbrot set: drag to pan, wheel to zoom about the cursor",
    controls=(
        Control("center", "Centre", "point", (-0.5, 0.0), help="view centre as X,Y (default -0.5,0)"),
        Control("zoom", "Zoom", "float", 1.0, 1e-3, 1e15, log=True, help="zoom factor (default 1)"),
        Control("iterations", "Iterations", "int", 256, 1, MAX_ITERATIONS,
                help=f"iterations before a point counts as bounded, 1..{MAX_ITERATIONS} (default 256)"),
        Control("precision", "Precision", "choice", "float32", choices=PRECISIONS,
                help="float32 (default) or float64 for deep zooms (float32 shows blocks past a zoom of about 10^4)"),
    ),
)
