"""The Julia set's CUDA kernel (seed 003): one thread per pixel, launched as the book's one-thread blocks or
as 2-D blocks (the same kernel: the difference you time is the launch shape alone)."""

from __future__ import annotations

import functools

from kernels.backend.compiler import cuda
from kernels.device_functions.callees import for_kernels
from kernels.julia import kernel_signature
from kernels.julia.shading import julia_pixel
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run

_julia_pixel = for_kernels(julia_pixel)  # compiled on a GPU, plain Python in the simulator


def render_julia(pixels, cr, ci, cx, cy, scale, half, iterations, colormap):
    # blockIdx * blockDim + threadIdx: with the book's one-thread blocks this is blockIdx alone
    x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if x < pixels.shape[1] and y < pixels.shape[0]:
        _julia_pixel(pixels, x, y, cr, ci, cx, cy, scale, half, iterations, colormap)


@functools.lru_cache(maxsize=None)
def gpu_kernel(precision: str = "float32"):
    """Compiled once per process and kept in numba's on-disk cache (the next start loads it)."""
    return cuda.jit(kernel_signature(precision), cache=True)(render_julia)
