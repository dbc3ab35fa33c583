"""The Mandelbrot set's CUDA kernel: one thread per pixel in 2-D blocks, the per-pixel math of :mod:`.shading`."""

from __future__ import annotations

import functools

from kernels.backend.compiler import cuda
from kernels.device_functions.callees import for_kernels
from kernels.io.numba_cache import heal
from kernels.mandelbrot import kernel_signature
from kernels.mandelbrot.shading import mandelbrot_pixel

heal()  # a damaged entry of numba's cache is compiled again, not a failed run

_mandelbrot_pixel = for_kernels(mandelbrot_pixel)  # compiled on a GPU, plain Python in the simulator


def render_mandelbrot(pixels, cx, cy, scale, half, iterations):
    x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if x < pixels.shape[1] and y < pixels.shape[0]:
        _mandelbrot_pixel(pixels, x, y, cx, cy, scale, half, iterations)


@functools.lru_cache(maxsize=None)
def gpu_kernel(precision: str = "float32"):
    """Compiled once per process and kept in numba's on-disk cache (the next start loads it)."""
    return cuda.jit(kernel_signature(precision), cache=True)(render_mandelbrot)
