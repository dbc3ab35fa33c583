"""The Julia set's CUDA kernels (seed 003): one thread per pixel, launched as the book's one-thread blocks or
as 2-D blocks (the same kernel: the difference you time is the launch shape alone); and the ``grouped`` launch's
kernel, 2-D blocks testing the escape every few iterations (:func:`.shading.julia_escape_grouped`)."""

from __future__ import annotations

import functools

from kernels.backend.compiler import cuda
from kernels.device_functions.callees import for_kernels
from kernels.device_functions.unfused import with_rounded_products
from kernels.julia import kernel_signature
from kernels.julia.shading import julia_pixel, julia_pixel_grouped, product
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run

_julia_pixel = for_kernels(julia_pixel)  # compiled on a GPU, plain Python in the simulator


def render_julia(pixels, cr, ci, cx, cy, scale, half, iterations, colormap):
    # blockIdx * blockDim + threadIdx: with the book's one-thread blocks this is blockIdx alone
    x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if x < pixels.shape[1] and y < pixels.shape[0]:
        _julia_pixel(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap)


# the grouped pixel per precision, every product rounded on its own: its z is the CPU's, bit for bit
_grouped_pixel = with_rounded_products(julia_pixel_grouped, product, "float32")
_grouped_pixel_float64 = with_rounded_products(julia_pixel_grouped, product, "float64")


def render_julia_grouped(pixels, cr, ci, cx, cy, scale, half, iterations, colormap):
    x, y = cuda.grid(2)
    if x < pixels.shape[1] and y < pixels.shape[0]:
        _grouped_pixel(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap)


def render_julia_grouped_float64(pixels, cr, ci, cx, cy, scale, half, iterations, colormap):
    x, y = cuda.grid(2)
    if x < pixels.shape[1] and y < pixels.shape[0]:
        _grouped_pixel_float64(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap)


@functools.lru_cache(maxsize=None)
def gpu_kernel(precision: str = "float32", launch: str = "2d"):
    """The kernel of a launch ('book' and '2d' share one), compiled once per process and kept in numba's
    on-disk cache (the next start loads it)."""
    if launch == "grouped":  # not cached on disk: its device functions are rebuilt copies
        grouped = render_julia_grouped if precision == "float32" else render_julia_grouped_float64
        return cuda.jit(kernel_signature(precision))(grouped)
    return cuda.jit(kernel_signature(precision), cache=True)(render_julia)
