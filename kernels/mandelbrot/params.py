"""The Mandelbrot view: its parameters, the mapping from pixels to the complex plane, and the checks on them.

Pixel (x, y), row 0 at the top, is the point c = x0 + i y0 with
    x0 = cx + s * (x - W/2) / h,    y0 = cy + s * (H/2 - 1 - y) / h
with s = scale / zoom and h = min(W, H) / 2 (integer halves; pixels stay square), as the Julia set maps its
pixels (kernels/julia/params.py), each product and quotient rounded in the chosen precision."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from kernels.errors import InputError, one_of

IMAGE_SIZE = (1024, 768)
PRECISIONS = ("float32", "float64")
DTYPES = {"float32": np.float32, "float64": np.float64}
MAX_ITERATIONS = 100_000
ESCAPE = 4.0  # |z|^2 beyond 4 (|z| > 2): the orbit escapes to infinity
# the largest |coordinate| of the centre per precision: far outside the set (|c| > 2 escapes at once), and
# its square stays finite
MAX_CENTER = 1e6
MAX_ZOOM = {"float32": 1e6, "float64": 1e15}  # past these a pixel is below the precision's resolution


@dataclass(frozen=True)
class MandelbrotParams:
    center: tuple[float, float] = (-0.5, 0.0)
    zoom: float = 1.0
    scale: float = 1.5
    iterations: int = 256
    precision: str = "float32"

    def checked(self, flag: str = "") -> "MandelbrotParams":
        """Self, or InputError; messages name each field as ``flag + name`` (the CLI passes '--')."""
        if not isinstance(self.iterations, (int, np.integer)) or not 1 <= self.iterations <= MAX_ITERATIONS:
            raise InputError(f"{flag}iterations {self.iterations} is out of range; allowed 1..{MAX_ITERATIONS}")
        one_of(self.precision, PRECISIONS, f"{flag}precision")
        if not (math.isfinite(self.zoom) and 0 < self.zoom <= MAX_ZOOM[self.precision]):
            raise InputError(f"{flag}zoom {self.zoom!r} is out of range for {self.precision}; allowed above 0 up to "
                             f"{MAX_ZOOM[self.precision]:.0e}")
        for v in self.center:
            if not (math.isfinite(v) and abs(v) <= MAX_CENTER):
                raise InputError(f"{flag}center {v!r} is out of range: finite with |value| at most {MAX_CENTER:.0e}")
        return self

    def pixel_step(self, width: int, height: int) -> float:
        """The distance between neighbouring pixels in the complex plane."""
        return self.scale / self.zoom / (min(width, height) // 2)

    def pixel_to_plane(self, px: float, py: float, *, width: int, height: int) -> tuple[float, float]:
        """The point (re, im) at pixel (px, py) of a W x H image, row 0 at the top (float64)."""
        step = self.pixel_step(width, height)
        return (self.center[0] + step * (px - width // 2), self.center[1] + step * (height // 2 - 1 - py))

    def panned(self, dx_pixels: float, dy_pixels: float, *, width: int, height: int) -> "MandelbrotParams":
        """The view moved by a drag of (dx, dy) pixels, y down (the picture follows the pointer)."""
        step = self.pixel_step(width, height)
        return replace(self, center=(self.center[0] - dx_pixels * step, self.center[1] + dy_pixels * step))

    def zoomed(self, factor: float, px: float, py: float, *, width: int, height: int) -> "MandelbrotParams":
        """Zoom by ``factor`` keeping the point under pixel (px, py) fixed."""
        x, y = self.pixel_to_plane(px, py, width=width, height=height)
        new_step = self.pixel_step(width, height) / factor
        return replace(self, zoom=self.zoom * factor,
                       center=(x - new_step * (px - width // 2), y - new_step * (height // 2 - 1 - py)))

    def kernel_args(self, width: int, height: int) -> tuple:
        """The kernel's arguments after the image: cx, cy, the step scale, the half side (in the precision),
        the iteration count."""
        f = DTYPES[self.precision]
        return (f(self.center[0]), f(self.center[1]), f(self.scale / self.zoom), f(min(width, height) // 2),
                np.int32(self.iterations))


DEFAULT_VIEW = MandelbrotParams()  # the whole set; one shared instance for defaults (frozen, so safe)
