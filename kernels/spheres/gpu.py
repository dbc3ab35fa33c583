"""The sphere kernels of seed 001 on CUDA: spheres from global memory, from a runtime-writable
``__constant__`` array (what ``cudaMemcpyToSymbol`` fills in C), and culled per tile into shared memory.
The binned-tiles kernels are in :mod:`.binned`."""

from __future__ import annotations

import functools

import numpy as np
from kernels.backend.compiler import cuda
from kernels.device_functions.callees import for_kernels
from kernels.device_functions.constant_memory import ConstantArray
from kernels.spheres.layout import CONSTANT_COLD_AT, CONSTANT_FLOATS, CONSTANT_SYMBOL, HOT, MISS, TILE_CHUNK, TILE_FLOATS
from kernels.spheres.shading import pattern_start, stage_sphere, store_pixel, trace_pixel, visit_spheres
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run

CONSTANT_SPHERES = ConstantArray(CONSTANT_SYMBOL, CONSTANT_FLOATS)
constant_spheres = CONSTANT_SPHERES.get  # a module global the constant kernel calls (the intrinsic)
KERNEL_SIGNATURES = {  # per memory: what gpu_kernel compiles
    "global": "void(float32[::1], int32, boolean, uint32[:, ::1])",
    "shared": "void(float32[::1], int32, boolean, uint32[:, ::1])",
    "constant": "void(int32, boolean, uint32[:, ::1])",
}

# what the kernels call: compiled on a GPU, plain Python in the simulator
_trace_pixel, _store_pixel, _pattern_start, _visit_spheres, _stage_sphere = (
    for_kernels(f) for f in (trace_pixel, store_pixel, pattern_start, visit_spheres, stage_sphere))


def render_spheres_global(spheres, count, staggered, pixels):
    x, y = cuda.grid(2)
    lane = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    _trace_pixel(pixels, spheres, count * HOT, count, staggered, x, y, lane)


def render_spheres_constant(count, staggered, pixels):
    x, y = cuda.grid(2)
    lane = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    _trace_pixel(pixels, constant_spheres(), CONSTANT_COLD_AT, count, staggered, x, y, lane)


def render_spheres_shared(spheres, count, staggered, pixels):
    """Per-tile culling: the block's threads test the spheres against the block's pixel rectangle, chunk
    by chunk, and stage only those that can touch it in shared memory; each thread then shades from that
    short list. With 2000 spheres a 16x16 tile keeps a few dozen, so each pixel does a few dozen tests."""
    tile = cuda.shared.array(TILE_FLOATS, np.float32)  # hot records, then cold ones
    tile_index = cuda.shared.array(TILE_CHUNK, np.int32)
    kept = cuda.shared.array(1, np.int32)
    tid = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    threads = cuda.blockDim.x * cuda.blockDim.y
    x, y = cuda.grid(2)
    width, height = pixels.shape[1], pixels.shape[0]
    ox = np.float32(x - width // 2)
    oy = np.float32(y - height // 2)
    # the tile's rectangle in world units (a pixel-wide margin keeps the test conservative)
    left = np.float32(cuda.blockIdx.x * cuda.blockDim.x - width // 2 - 1)
    right = left + np.float32(cuda.blockDim.x + 1)
    bottom = np.float32(cuda.blockIdx.y * cuda.blockDim.y - height // 2 - 1)
    top = bottom + np.float32(cuda.blockDim.y + 1)
    r = g = b = np.float32(0.0)
    maxz = MISS
    nearest = count
    for base in range(0, count, TILE_CHUNK):
        if tid == 0:
            kept[0] = 0
        cuda.syncthreads()
        for j in range(base + tid, min(base + TILE_CHUNK, count), threads):
            sx, sy, radius = spheres[HOT * j], spheres[HOT * j + 1], spheres[HOT * j + 2]
            if sx + radius >= left and sx - radius <= right and sy + radius >= bottom and sy - radius <= top:
                _stage_sphere(tile, tile_index, cuda.atomic.add(kept, 0, 1), spheres, count, j)
        cuda.syncthreads()
        n = kept[0]
        start = _pattern_start(tid, n, staggered) if n > 0 else 0
        r, g, b, maxz, nearest = _visit_spheres(tile, TILE_CHUNK * HOT, n, start, tile_index, ox, oy, r, g, b, maxz,
                                                nearest)
        cuda.syncthreads()  # the next chunk overwrites the tile
    if x < width and y < height:
        _store_pixel(pixels, x, y, r, g, b)


@functools.lru_cache(maxsize=None)
def gpu_kernel(memory: str):
    """The compiled kernel for a memory kind (compiled once per process, eagerly for its one signature,
    and kept in numba's on-disk cache so that the next start of the app loads it instead)."""
    body = {"global": render_spheres_global, "shared": render_spheres_shared,
            "constant": render_spheres_constant}[memory]
    return cuda.jit(KERNEL_SIGNATURES[memory], cache=True)(body)


def constant_ptx() -> str:
    """PTX of the constant-memory kernel for the current GPU (shows ``.visible .const`` and ``ld.const``)."""
    kernel = gpu_kernel("constant")
    return next(iter(kernel.inspect_asm().values()))
