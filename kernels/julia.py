"""The Julia set of seed 003 (CUDA by Example, ch. 4) on CUDA, in the simulator, and on the CPU.

The book's mapping for pixel (x, y): jx = scale * (W/2 - x) / (W/2), jy = scale * (H/2 - y) / (H/2) in
float32, scale 1.5, c = -0.8 + 0.156i, z = z*z + c for 200 iterations, escape when |z|^2 > 1000; the
``classic`` colormap paints bounded points red on black exactly as the book does. Here ``center`` shifts
and ``zoom`` divides the scale, and the divisor is min(W, H) / 2 so pixels stay square.

Launches: ``book`` is the book's ``<<<dim3(W, H), 1>>>`` (one thread per block); ``2d`` uses 2-D blocks.
Both run the same kernel, so the difference you time is the launch shape alone.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numba
import numpy as np
from numba import cuda

from kernels import backend as backends
from kernels.devices import device_name, limits_for
from kernels.errors import InputError
from kernels.frames import Frame, check_block, check_size, frame_to_host, grid_for, rgba_view
from kernels.timing import time_kernel

COLORMAPS = ("classic", "smooth")
LAUNCHES = ("book", "2d")
MAX_ITERATIONS = 100_000
ESCAPE = np.float32(1000.0)


@dataclass(frozen=True)
class JuliaParams:
    c: complex = complex(-0.8, 0.156)
    center: tuple[float, float] = (0.0, 0.0)
    zoom: float = 1.0
    scale: float = 1.5
    iterations: int = 200
    colormap: str = "classic"

    def checked(self) -> "JuliaParams":
        if not isinstance(self.iterations, (int, np.integer)) or not 1 <= self.iterations <= MAX_ITERATIONS:
            raise InputError(f"iterations {self.iterations} is out of range; allowed 1..{MAX_ITERATIONS}")
        if not (math.isfinite(self.zoom) and self.zoom > 0):
            raise InputError(f"zoom {self.zoom} must be a positive number")
        if self.colormap not in COLORMAPS:
            raise InputError(f"colormap {self.colormap!r} is not one of {', '.join(COLORMAPS)}")
        for what, v in (("c", self.c.real), ("c", self.c.imag), ("center", self.center[0]), ("center", self.center[1])):
            if not math.isfinite(v):
                raise InputError(f"{what} {v} must be finite")
        return self

    def panned(self, dx_pixels: float, dy_pixels: float, *, width: int, height: int) -> "JuliaParams":
        """The view moved by a drag of (dx, dy) pixels (image content follows the pointer)."""
        step = self.scale / self.zoom / (min(width, height) // 2)
        # the mapping runs right-to-left and bottom-to-top (W/2 - x), so a drag right raises jx
        return replace(self, center=(self.center[0] + dx_pixels * step, self.center[1] + dy_pixels * step))

    def zoomed(self, factor: float, px: float, py: float, *, width: int, height: int) -> "JuliaParams":
        """Zoom by ``factor`` keeping the point under pixel (px, py) fixed."""
        half = min(width, height) // 2
        step = self.scale / self.zoom / half
        jx = self.center[0] + step * (width // 2 - px)
        jy = self.center[1] + step * (height // 2 - py)
        new_step = step / factor
        return replace(self, zoom=self.zoom * factor,
                       center=(jx - new_step * (width // 2 - px), jy - new_step * (height // 2 - py)))


def parse_complex(text: str) -> complex:
    """'RE,IM' -> complex."""
    try:
        re_, im = (float(p) for p in str(text).split(","))
    except ValueError:
        raise InputError(f"c {text!r} is malformed; use RE,IM, e.g. -0.8,0.156") from None
    return complex(re_, im)


@numba.jit(nopython=True)
def julia_escape(jx, jy, cr, ci, iterations):
    """Iterations until |z|^2 > 1000 (``iterations`` when the point stays bounded), and the final |z|^2.
    Written as the book's cuComplex operations, in float32."""
    ar = jx
    ai = jy
    for i in range(iterations):
        nr = ar * ar - ai * ai + cr
        ni = ai * ar + ar * ai + ci
        ar = nr
        ai = ni
        mag2 = ar * ar + ai * ai
        if mag2 > ESCAPE:
            return i, mag2
    return iterations, ar * ar + ai * ai


@numba.jit(nopython=True)
def julia_pixel(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap):
    """Map pixel (x, y) to the plane, iterate, and write its RGBA bytes as one 32-bit word."""
    jx = cx + scale * np.float32((pixels.shape[1] >> 1) - x) / half
    jy = cy + scale * np.float32((pixels.shape[0] >> 1) - y) / half
    n, mag2 = julia_escape(jx, jy, cr, ci, iterations)
    r = g = b = np.uint8(0)
    if colormap == 0:  # classic: the book's red where bounded
        if n == iterations:
            r = np.uint8(255)
    elif n < iterations:  # smooth: normalised iteration count through a cosine palette
        mu = np.float32(n + 1) - np.float32(math.log2(math.log(mag2) * 0.5 / math.log(2.0) + 1e-9))
        v = np.float32(3.0) * np.float32(math.sqrt(max(mu, np.float32(0.0)) / np.float32(iterations)))
        r = np.uint8(255.0 * (0.5 + 0.5 * math.cos(6.2831853 * (v + 0.00))))
        g = np.uint8(255.0 * (0.5 + 0.5 * math.cos(6.2831853 * (v + 0.10))))
        b = np.uint8(255.0 * (0.5 + 0.5 * math.cos(6.2831853 * (v + 0.20))))
    pixels[y, x] = np.uint32(r) | (np.uint32(g) << np.uint32(8)) | (np.uint32(b) << np.uint32(16)) | np.uint32(0xFF000000)


_julia_pixel = backends.for_kernels(julia_pixel)  # compiled on a GPU, plain Python in the simulator


def _render_julia(pixels, cr, ci, cx, cy, scale, half, iterations, colormap):
    # blockIdx * blockDim + threadIdx: with the book's one-thread blocks this is blockIdx alone
    x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if x < pixels.shape[1] and y < pixels.shape[0]:
        _julia_pixel(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap)


@numba.njit(parallel=True, cache=True)
def render_julia_cpu(pixels, cr, ci, cx, cy, scale, half, iterations, colormap):
    """The CPU twin: the same per-pixel function over all pixels, rows in parallel."""
    for y in numba.prange(pixels.shape[0]):
        for x in range(pixels.shape[1]):
            julia_pixel(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap)


@functools.lru_cache(maxsize=None)
def gpu_kernel():
    return cuda.jit("void(uint32[:, ::1], float32, float32, float32, float32, float32, float32, int32, int32)")(_render_julia)


def check_launch(launch: str) -> str:
    if launch not in LAUNCHES:
        raise InputError(f"launch {launch!r} is not one of {', '.join(LAUNCHES)}")
    return launch


class JuliaRenderer:
    """Renders Julia views on one backend, reusing the device image between frames."""

    def __init__(self, backend: backends.Backend):
        self.backend = backend
        self.limits = limits_for(backend)
        self._image_dev = None
        self._warm = False

    def render(self, params: JuliaParams = JuliaParams(), size=(1000, 1000), launch: str = "2d",
               block=(16, 16), repeats: int = 1) -> Frame:
        params.checked()
        width, height = check_size(*size)
        check_launch(launch)
        f32 = np.float32
        args = (f32(params.c.real), f32(params.c.imag), f32(params.center[0]), f32(params.center[1]),
                f32(params.scale / params.zoom), f32(min(width, height) // 2), np.int32(params.iterations),
                np.int32(COLORMAPS.index(params.colormap)))
        warmup = 0 if self._warm else 1
        if self.backend.runs_cuda_kernels:
            block = (1, 1) if launch == "book" else check_block(tuple(block), self.limits)
            grid = grid_for(width, height, block)
            self.backend.activate()
            if self._image_dev is None or self._image_dev.shape != (height, width):
                self._image_dev = cuda.device_array((height, width), np.uint32)
            image_dev, kernel = self._image_dev, gpu_kernel()
            launch_kernel = lambda: kernel[grid, block](image_dev, *args)  # noqa: E731
            timing = time_kernel(self.backend, launch_kernel, repeats, warmup)
            image, frame_ms = frame_to_host(self.backend.kind, launch_kernel, image_dev, timing)
        else:
            pixels = np.empty((height, width), np.uint32)
            timing = time_kernel(backends.HOST, lambda: render_julia_cpu(pixels, *args), repeats, warmup)
            image, frame_ms = rgba_view(pixels), timing.samples_ms[-1]  # on the host: no copy back
            block = grid = None
        self._warm = True
        meta = {"kind": "julia", "c": f"{params.c.real},{params.c.imag}", "center": f"{params.center[0]},{params.center[1]}",
                "zoom": params.zoom, "iterations": params.iterations, "colormap": params.colormap,
                "launch": launch if self.backend.runs_cuda_kernels else "host"}
        return Frame(image, timing, frame_ms, self.backend.kind, device_name(self.backend), block, grid, meta)


# --- as a benchmark: variants and descriptor ------------------------------------------------------------

from kernels import render_bench  # noqa: E402  (below the kernels: render_bench imports nothing from here)
from kernels.descriptor import Algorithm, Option  # noqa: E402
from kernels.frames import DEFAULT_IMAGE_SIZES, SIM_IMAGE_SIZE, parse_size  # noqa: E402
from kernels.launch import DEFAULT_BLOCK_2D, LaunchRule  # noqa: E402
from kernels.variants import Variant  # noqa: E402

IMAGE_LAUNCH = LaunchRule(block=DEFAULT_BLOCK_2D, shape_2d=True)
BOOK_LAUNCH = LaunchRule(block=(1, 1), shape_2d=True, fixed=True, note="the book's <<<dim3(W, H), 1>>>")


def make_bench_problem(size=DEFAULT_IMAGE_SIZES["julia"], params: JuliaParams = JuliaParams()) -> render_bench.RenderProblem:
    """The Julia view ``params`` at ``size``, checked against the CPU twin."""
    size = check_size(*size)
    params = params.checked()
    reference = lambda: render_bench.renderer_for("cpu", 0, JuliaRenderer).render(params, size).image  # noqa: E731
    return render_bench.RenderProblem("julia", size, "julia", size[0] * size[1], reference, params)


def _julia(launch_kind: str, on_cpu: bool = False):
    def run(problem, launch, backend, repeats):
        renderer = render_bench.renderer_for(backends.HOST.kind if on_cpu else backend.kind, backend.device,
                                             JuliaRenderer)
        frame = renderer.render(problem.subject, problem.size, launch_kind, launch.block or DEFAULT_BLOCK_2D, repeats)
        return render_bench.outcome(problem, frame)
    return run


VARIANTS: tuple[Variant, ...] = (
    Variant("julia-book", "the book's launch <<<dim3(W, H), 1>>>: one thread per block leaves 31 of every 32 lanes "
            "of a warp idle", "gpu", "003", launch=BOOK_LAUNCH, run=_julia("book")),
    Variant("julia-2d", "2-D blocks of BXxBY threads: full warps, the same kernel", "gpu", "003",
            launch=IMAGE_LAUNCH, run=_julia("2d")),
    Variant("julia-cpu", "the CPU twin: the same per-pixel function with Numba's parallel loop over rows", "cpu",
            run=_julia("2d", on_cpu=True)),
)

ALGORITHM = Algorithm(
    name="julia", title="Julia set",
    summary="the Julia set of seed 003: the book's one-thread blocks against 2-D blocks, and the CPU twin",
    variants=VARIANTS,
    make_problem=lambda n, options, seed, data=None: make_bench_problem(options["size"]),
    options=(Option("size", "image size WxH", default={**{k: DEFAULT_IMAGE_SIZES["julia"] for k in ("cuda", "cpu")},
                                                        "sim": SIM_IMAGE_SIZE}, parse=parse_size),),
    unit=render_bench.PIXELS_UNIT, measures_copy_peak=False, panel=False, block_shape_2d=True,
)
