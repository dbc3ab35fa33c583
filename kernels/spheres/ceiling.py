"""The ray tracer's compute ceiling: ray-sphere tests per second in a tight loop of the spheres' own hit test
(:func:`kernels.spheres.shading.visit_all_spheres`, so the same ``sphere_step``), with the spheres in shared
memory on a GPU (staged once per block) and in a small array on the CPU. Each thread casts ``rays`` rays
through consecutive pixels of a 1024x1024 view of a fixed scene of ``CEILING_SPHERES`` spheres (the book's
random scene, seed 0) and keeps the sum of their colours, so nothing is optimised away. Tests per launch:
threads x rays x CEILING_SPHERES. Imported on the first measurement (numba)."""

from __future__ import annotations

import functools
import time

import numba
import numpy as np

from kernels.backend.compiler import cuda
from kernels.backend.simulator import shared_jit
from kernels.device_functions.callees import for_kernels
from kernels.io.numba_cache import heal
from kernels.spheres.layout import COLD, HOT, MISS, pack_spheres
from kernels.spheres.scene import generate_scene
from kernels.spheres.shading import visit_all_spheres

heal()  # a damaged entry of numba's cache is compiled again, not a failed run

CEILING_SPHERES = 64
SHARED_FLOATS = CEILING_SPHERES * (HOT + COLD)  # one compile-time constant: a shared array's size
VIEW = (1024, 1024)
THREADS = 256
GPU_RAYS = 16
CPU_RAYS = 4
CPU_LANES = 1 << 14
TIMED = 5



@shared_jit
def traced_ray(spheres, p, width, height):
    """The colour sum of ray ``p`` (pixels of the view in row order, wrapping) through every sphere: one
    ray's work, the same in the kernel and its CPU twin."""
    ox = np.float32(p % width - width // 2)
    oy = np.float32((p // width) % height - height // 2)
    r, g, b, maxz, nearest = visit_all_spheres(spheres, CEILING_SPHERES * HOT, CEILING_SPHERES, 0, ox, oy,
                                               np.float32(0.0), np.float32(0.0), np.float32(0.0), MISS,
                                               CEILING_SPHERES)
    return r + g + b


_traced_ray = for_kernels(traced_ray)


def ceiling_scene() -> np.ndarray:
    """The packed spheres every measurement tests (hot records, then cold ones)."""
    return pack_spheres(generate_scene(CEILING_SPHERES, 0).spheres)


@cuda.jit
def ray_sphere_tests(spheres, rays, width, height, out):
    tile = cuda.shared.array(SHARED_FLOATS, np.float32)
    for k in range(cuda.threadIdx.x, SHARED_FLOATS, cuda.blockDim.x):
        tile[k] = spheres[k]
    cuda.syncthreads()
    i = cuda.grid(1)
    if i >= out.size:
        return
    acc = np.float32(0.0)
    for ray in range(rays):
        acc += _traced_ray(tile, i * rays + ray, width, height)
    out[i] = acc


@numba.jit(nopython=True, nogil=True, parallel=True, cache=True)
def ray_sphere_tests_cpu(spheres, rays, width, height, out):
    for i in numba.prange(out.size):
        acc = np.float32(0.0)
        for ray in range(rays):
            acc += traced_ray(spheres, i * rays + ray, width, height)
        out[i] = acc


def measure_gpu() -> tuple[float, str]:
    """(ray-sphere tests per second, how) on the current GPU."""
    from kernels.backend import memory
    from kernels.timing import time_cuda_events

    spheres = memory.to_device(ceiling_scene())
    threads = cuda.get_current_device().MULTIPROCESSOR_COUNT * 2048 * 4
    out = memory.empty(threads, np.float32)
    grid = -(-threads // THREADS)
    ms = time_cuda_events(lambda: ray_sphere_tests[grid, THREADS](spheres, GPU_RAYS, *VIEW, out), TIMED).min_ms
    return (threads * GPU_RAYS * CEILING_SPHERES / (ms * 1e-3),
            f"{threads:,} threads x {GPU_RAYS} rays x {CEILING_SPHERES} spheres in shared memory, the spheres' own "
            f"hit test (sphere_step), best of {TIMED} (CUDA events)")


@functools.lru_cache(maxsize=1)
def measure_cpu() -> tuple[float, str]:
    """(ray-sphere tests per second, how) on this CPU."""
    spheres = ceiling_scene()
    out = np.empty(CPU_LANES, np.float32)
    best = float("inf")
    for k in range(TIMED + 1):  # the first call compiles or loads the twin: not timed
        t0 = time.perf_counter()
        ray_sphere_tests_cpu(spheres, CPU_RAYS, VIEW[0], VIEW[1], out)
        if k:
            best = min(best, time.perf_counter() - t0)
    return (CPU_LANES * CPU_RAYS * CEILING_SPHERES / best,
            f"{CPU_LANES:,} lanes x {CPU_RAYS} rays x {CEILING_SPHERES} spheres, the spheres' own hit test in "
            f"Numba's parallel loop, best of {TIMED} (wall time)")


def measure(backend, table_bytes: int = 0) -> tuple[float, str]:
    return measure_cpu() if backend.is_host else measure_gpu()
