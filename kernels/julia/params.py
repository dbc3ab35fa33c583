"""The Julia view: its parameters, the mapping from pixels to the complex plane, and the checks on them."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from kernels.errors import InputError, one_of, shown

IMAGE_SIZE = (1000, 1000)  # the seed's image
COLORMAPS = ("classic", "smooth")
LAUNCHES = ("book", "2d", "grouped")  # grouped: 2-D blocks, the escape tested every few iterations
PRECISIONS = ("float32", "float64")
HOST_TWINS = ("simd", "scalar")  # the CPU code that draws on the host: the first is the renderer's default
DTYPES = {"float32": np.float32, "float64": np.float64}
# float32 is trusted while a pixel spans at least this many units in the last place of the view's
# largest coordinate: closer, rounding shows as bands and then as blocks of identical pixels.
FLOAT32_MIN_ULPS_PER_PIXEL = 16
MAX_ITERATIONS = 100_000
ESCAPE = np.float32(1000.0)
# The largest |coordinate| (c, the centre, and any pixel's point: centre + the view's half-span) per
# precision: its square must stay finite, so the first iteration never overflows (float32: 3.4e38).
MAX_COORDINATE = {"float32": 1e18, "float64": 1e150}


def launch_block(launch: str, block: tuple[int, int]) -> tuple[int, int]:
    """The block a launch runs with: the book's one thread per block, else the chosen 2-D block."""
    return (1, 1) if one_of(launch, LAUNCHES, "launch") == "book" else tuple(block)


@dataclass(frozen=True)
class JuliaParams:
    c: complex = complex(-0.8, 0.156)
    center: tuple[float, float] = (0.0, 0.0)
    zoom: float = 1.0
    scale: float = 1.5
    iterations: int = 200
    colormap: str = "classic"
    precision: str = "float32"
    launch: str = "2d"  # the launch shape on a GPU: the book's one thread per block, or 2-D blocks

    def checked(self, flag: str = "") -> "JuliaParams":
        """Self, or InputError; messages name each field as ``flag + name`` (the CLI passes '--')."""
        if not isinstance(self.iterations, (int, np.integer)) or not 1 <= self.iterations <= MAX_ITERATIONS:
            raise InputError(f"{flag}iterations {self.iterations} is out of range; allowed 1..{MAX_ITERATIONS}")
        if not (math.isfinite(self.zoom) and self.zoom > 0):
            raise InputError(f"{flag}zoom {self.zoom} must be a positive number")
        one_of(self.colormap, COLORMAPS, f"{flag}colormap")
        one_of(self.precision, PRECISIONS, f"{flag}precision")
        one_of(self.launch, LAUNCHES, f"{flag}launch")
        bound = MAX_COORDINATE[self.precision]
        for what, v in (("c", self.c.real), ("c", self.c.imag), ("center", self.center[0]), ("center", self.center[1])):
            if not math.isfinite(v):
                raise InputError(f"{flag}{what} {v} must be finite")
            if abs(v) > bound:
                raise InputError(f"{flag}{what} {v!r} is too large for {self.precision}: |value| at most {bound:.0e}, "
                                 "so its square stays finite")
        # the view's half-span over the longest image side (4096 pixels over a side of at least 2)
        span = self.scale / self.zoom * 4096
        if not span <= bound:
            raise InputError(f"{flag}zoom {self.zoom!r} is too small for {self.precision}: the view would reach beyond "
                             f"|value| {bound:.0e}")
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
        raise InputError(f"{option} {shown(text)} is malformed; use RE,IM, e.g. -0.8,0.156") from None
    bound = max(MAX_COORDINATE.values())
    if not (math.isfinite(re_) and math.isfinite(im)) or max(abs(re_), abs(im)) > bound:
        raise InputError(f"{option} {shown(text)} is out of range: both parts finite with |value| at most "
                         f"{bound:.0e} (float32 views: {MAX_COORDINATE['float32']:.0e}), so their squares stay finite")
    return complex(re_, im)


def check_twin(twin: str) -> str:
    return one_of(twin, HOST_TWINS, "CPU twin")


def check_launch(launch: str) -> str:
    return one_of(launch, LAUNCHES, "launch")
