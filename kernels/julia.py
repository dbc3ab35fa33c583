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
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from kernels import backend as backends
from kernels import kernel_images, lazy_jit
from kernels.errors import InputError
from kernels.frames import (Frame, HostFrames, check_block, check_size, frame_by_driver, grid_for, rgba_view,
                            time_frames)

cuda = None  # numba.cuda, bound on first GPU use by bind_gpu_globals (the cpu backend never imports it)
numba = None  # bound with the jit functions below on their first use (lazy_jit.bind)
COLORMAPS = ("classic", "smooth")
LAUNCHES = ("book", "2d")
PRECISIONS = ("float32", "float64")
DTYPES = {"float32": np.float32, "float64": np.float64}
# float32 is trusted while a pixel spans at least this many units in the last place of the view's
# largest coordinate: closer, rounding shows as bands and then as blocks of identical pixels.
FLOAT32_MIN_ULPS_PER_PIXEL = 16
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
    precision: str = "float32"

    def checked(self) -> "JuliaParams":
        if not isinstance(self.iterations, (int, np.integer)) or not 1 <= self.iterations <= MAX_ITERATIONS:
            raise InputError(f"iterations {self.iterations} is out of range; allowed 1..{MAX_ITERATIONS}")
        if not (math.isfinite(self.zoom) and self.zoom > 0):
            raise InputError(f"zoom {self.zoom} must be a positive number")
        if self.colormap not in COLORMAPS:
            raise InputError(f"colormap {self.colormap!r} is not one of {', '.join(COLORMAPS)}")
        if self.precision not in PRECISIONS:
            raise InputError(f"precision {self.precision!r} is not one of {', '.join(PRECISIONS)}")
        for what, v in (("c", self.c.real), ("c", self.c.imag), ("center", self.center[0]), ("center", self.center[1])):
            if not math.isfinite(v):
                raise InputError(f"{what} {v} must be finite")
        return self

    def pixel_step(self, width: int, height: int) -> float:
        """The distance between neighbouring pixels in the complex plane."""
        return self.scale / self.zoom / (min(width, height) // 2)

    def pixel_to_plane(self, px: float, py: float, *, width: int, height: int) -> tuple[float, float]:
        """The point (re, im) at pixel (px, py) of a W x H image, row 0 at the top (float64; fractional
        pixels allowed, e.g. a cursor position)."""
        step = self.pixel_step(width, height)
        return (self.center[0] + step * (px - width // 2), self.center[1] + step * (height // 2 - 1 - py))

    def panned(self, dx_pixels: float, dy_pixels: float, *, width: int, height: int) -> "JuliaParams":
        """The view moved by a drag of (dx, dy) pixels, y down (image content follows the pointer)."""
        step = self.pixel_step(width, height)
        # real grows to the right and imaginary upwards: a drag right or down shows points left or above
        return replace(self, center=(self.center[0] - dx_pixels * step, self.center[1] + dy_pixels * step))

    def zoomed(self, factor: float, px: float, py: float, *, width: int, height: int) -> "JuliaParams":
        """Zoom by ``factor`` keeping the point under pixel (px, py) fixed."""
        jx, jy = self.pixel_to_plane(px, py, width=width, height=height)
        new_step = self.pixel_step(width, height) / factor
        return replace(self, zoom=self.zoom * factor,
                       center=(jx - new_step * (px - width // 2), jy - new_step * (height // 2 - 1 - py)))

    def ulps_per_pixel(self, width: int, height: int, precision: str = "float32") -> float:
        """How many representable numbers of ``precision`` lie between neighbouring pixels, at the
        view's largest coordinate (where the spacing of floats is widest). Below 1, pixels merge."""
        half_w = self.pixel_step(width, height) * (width / 2 + 1)
        half_h = self.pixel_step(width, height) * (height / 2 + 1)
        largest = max(abs(self.center[0]) + half_w, abs(self.center[1]) + half_h)
        return self.pixel_step(width, height) / float(np.spacing(DTYPES[precision](largest)))

    def float32_resolves(self, width: int, height: int) -> bool:
        """True while float32 draws this view without bands or blocks (see FLOAT32_MIN_ULPS_PER_PIXEL)."""
        return self.ulps_per_pixel(width, height, "float32") >= FLOAT32_MIN_ULPS_PER_PIXEL

    def precision_for(self, width: int, height: int) -> str:
        """The precision a viewer should use for this view: float32 while it resolves, then float64."""
        return "float32" if self.float32_resolves(width, height) else "float64"

    def view_text(self) -> str:
        """Centre, zoom and c with every digit needed to reproduce the view (shortest round-trip form)."""
        return (f"centre {self.center[0]!r}, {self.center[1]!r}  zoom {self.zoom!r}  "
                f"c {self.c.real!r}, {self.c.imag!r}  {self.precision}")

    def command_line(self, width: int, height: int, out: str = "julia.png") -> str:
        """The view as a `raytracer-app render julia` command that renders it again (values written with
        '=' so a negative number is not taken for an option)."""
        return (f"raytracer-app render julia --c={self.c.real!r},{self.c.imag!r} "
                f"--center={self.center[0]!r},{self.center[1]!r} --zoom {self.zoom!r} "
                f"--iterations {self.iterations} --colormap {self.colormap} --precision {self.precision} "
                f"--size {width}x{height} --out {out}")


def parse_complex(text: str, option: str = "c") -> complex:
    """'RE,IM' -> complex; errors name ``option`` (what the user typed it into)."""
    try:
        re_, im = (float(p) for p in str(text).split(","))
    except ValueError:
        raise InputError(f"{option} {text!r} is malformed; use RE,IM, e.g. -0.8,0.156") from None
    return complex(re_, im)


@lazy_jit.jit(nopython=True)
def julia_escape(jx, jy, cr, ci, iterations):
    """Iterations until |z|^2 > 1000 (``iterations`` when the point stays bounded), and the final |z|^2.
    Written as the book's cuComplex operations, in the precision of its arguments."""
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


@lazy_jit.jit(nopython=True)
def julia_pixel(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap):
    """Map pixel (x, y) to the plane, iterate, and write its RGBA bytes as one 32-bit word."""
    # the standard orientation (see the module's docstring); pixel offsets are exact in float32
    jx = cx + scale * np.float32(x - (pixels.shape[1] >> 1)) / half
    jy = cy + scale * np.float32((pixels.shape[0] >> 1) - 1 - y) / half
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


@lazy_jit.jit(nopython=True, parallel=True, cache=True)
def render_julia_cpu(pixels, cr, ci, cx, cy, scale, half, iterations, colormap):
    """The CPU twin: the same per-pixel function over all pixels, rows in parallel."""
    for y in numba.prange(pixels.shape[0]):
        for x in range(pixels.shape[1]):
            julia_pixel(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap)


def bind_gpu_globals() -> None:
    """Bind numba.cuda and the jit functions as this module's globals, where the kernel body looks them up
    when it compiles."""
    lazy_jit.bind(globals())
    backends.bind_numba_cuda(globals())


def kernel_signature(precision: str) -> str:
    f = precision
    return f"void(uint32[:, ::1], {f}, {f}, {f}, {f}, {f}, {f}, int32, int32)"


@functools.lru_cache(maxsize=None)
def gpu_kernel(precision: str = "float32"):
    bind_gpu_globals()
    # kept in numba's on-disk cache (the next start loads it instead of compiling) and as a cubin for the
    # next process's first frame (see raytrace.gpu_kernel)
    kernel = cuda.jit(kernel_signature(precision), cache=True)(_render_julia)
    kernel_images.save(f"julia.{precision}", kernel_signature(precision), kernel)
    return kernel


def check_launch(launch: str) -> str:
    if launch not in LAUNCHES:
        raise InputError(f"launch {launch!r} is not one of {', '.join(LAUNCHES)}")
    return launch


class JuliaRenderer:
    """Renders Julia views on one backend, reusing the device image between frames."""

    def __init__(self, backend: backends.Backend):
        self.backend = backend
        self.limits = backend.limits
        self._image_dev = None
        self._warm: set = set()
        self._host_frames = HostFrames()  # pinned, double-buffered
        self._first_gpu_frame = True

    def first_frame_by_driver(self, precision: str, repeats: int = 1) -> bool:
        """Like SphereRenderer.first_frame_by_driver: the first GPU frame may launch a saved cubin through
        the driver, before numba.cuda is loaded."""
        return (self._first_gpu_frame and repeats == 1 and self.backend.is_gpu
                and kernel_images.usable(f"julia.{precision}", kernel_signature(precision), self.backend.device))

    def render(self, params: JuliaParams = JuliaParams(), size=(1000, 1000), launch: str = "2d",
               block=(16, 16), repeats: int = 1) -> Frame:
        params.checked()
        width, height = check_size(*size)
        check_launch(launch)
        f = DTYPES[params.precision]
        args = (f(params.c.real), f(params.c.imag), f(params.center[0]), f(params.center[1]),
                f(params.scale / params.zoom), f(min(width, height) // 2), np.int32(params.iterations),
                np.int32(COLORMAPS.index(params.colormap)))
        warmup = 0 if params.precision in self._warm else 1
        done = None
        if self.backend.runs_cuda_kernels:
            block = (1, 1) if launch == "book" else check_block(tuple(block), self.limits)
            grid = grid_for(width, height, block)
            by_driver = self.first_frame_by_driver(params.precision, repeats)
            self._first_gpu_frame = False
            image_out = kernel_images.Output((height, width), np.uint32)
            done = frame_by_driver(f"julia.{params.precision}", kernel_signature(params.precision),
                                   [image_out, *args], grid, block, self.backend.device) if by_driver else None
            if done is not None:
                image, timing, frame_time = done
            else:
                self.backend.activate()
                if self._image_dev is None or self._image_dev.shape != (height, width):
                    self._image_dev = backends.bind_numba_cuda(globals()).device_array((height, width), np.uint32)
                image_dev, kernel = self._image_dev, gpu_kernel(params.precision)
                launch_kernel = lambda: kernel[grid, block](image_dev, *args)  # noqa: E731
                host = self._host_frames.next_buffer(height, width)
                timing, frame_time = time_frames(self.backend, launch_kernel, image_dev, host, repeats, warmup)
                image = rgba_view(host)
        else:
            pixels = np.empty((height, width), np.uint32)
            launch_kernel = lambda: render_julia_cpu(pixels, *args)  # noqa: E731
            timing, frame_time = time_frames(backends.HOST, launch_kernel, None, None, repeats, warmup)  # no copy back
            image = rgba_view(pixels)
            block = grid = None
        if done is None:  # numba's kernel has run: later frames need no warm-up launch
            self._warm.add(params.precision)
        meta = {"kind": "julia", "c": f"{params.c.real!r},{params.c.imag!r}",
                "center": f"{params.center[0]!r},{params.center[1]!r}", "zoom": params.zoom,
                "iterations": params.iterations, "colormap": params.colormap, "precision": params.precision,
                "launch": launch if self.backend.runs_cuda_kernels else "host"}
        return Frame(image, timing, frame_time.median_ms, self.backend.kind, self.backend.device_name, block, grid,
                     meta, frame_time)


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
    reference = lambda precision: render_bench.renderer_for(  # noqa: E731
        backends.HOST.kind, 0, JuliaRenderer).render(replace(params, precision=precision), size).image.copy()
    return render_bench.RenderProblem("julia", size, "julia", size[0] * size[1], reference, params)


def _julia(launch_kind: str, on_cpu: bool = False, precision: str = "float32"):
    def run(problem, launch, backend, repeats):
        renderer = render_bench.renderer_for(backends.HOST.kind if on_cpu else backend.kind, backend.device,
                                             JuliaRenderer)
        params = replace(problem.subject, precision=precision)
        frame = renderer.render(params, problem.size, launch_kind, launch.block or DEFAULT_BLOCK_2D, repeats)
        return render_bench.outcome(problem, frame, precision)
    return run


VARIANTS: tuple[Variant, ...] = (
    Variant("julia-book", "the book's launch <<<dim3(W, H), 1>>>: one thread per block leaves 31 of every 32 lanes "
            "of a warp idle", "gpu", "003", launch=BOOK_LAUNCH, run=_julia("book")),
    Variant("julia-2d", "2-D blocks of BXxBY threads: full warps, the same kernel", "gpu", "003",
            launch=IMAGE_LAUNCH, run=_julia("2d")),
    Variant("julia-2d-float64", "the same 2-D launch in float64, as deep zooms need: an H100 runs float64 at about "
            "half float32's rate, consumer GPUs at 1/32 or 1/64", "gpu", "", launch=IMAGE_LAUNCH,
            run=_julia("2d", precision="float64")),
    Variant("julia-cpu", "the CPU twin: the same per-pixel function with Numba's parallel loop over rows", "cpu",
            run=_julia("2d", on_cpu=True)),
    Variant("julia-cpu-float64", "the CPU twin in float64", "cpu", run=_julia("2d", on_cpu=True, precision="float64")),
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
