"""The sphere ray tracer of seed 001 (CUDA by Example, ch. 6): one kernel reading the spheres from
global memory, one from a real ``__constant__`` array, one culling them per tile into shared memory, and
a CPU twin; all of them share the per-sphere math.

The GPU kernels and the CPU twin read the spheres packed as hot and cold records (``pack_spheres``);
scenes keep the book's whole records.

The definition: rays go along z through pixel (x, y), one world unit per pixel, origin at the image
centre (ox = x - W/2, oy = y - H/2); the nearest sphere hit (largest dz + z) shades the pixel with
``color * dz / radius``; each byte is ``int(value * 255)``. Row 0 of the image is y = 0.

Memories: ``global`` and ``constant`` are the book's two kernels; ``shared`` culls the spheres per block and
stages the survivors in shared memory; ``binned`` first sorts the spheres into screen tiles, then shades
each tile from its own list (kernels/raytrace_binned.py). How many spheres each takes: ``max_spheres``.

Access patterns: ``uniform`` visits spheres 0..N-1 in every thread, so a warp reads one address at a time
(constant memory broadcasts it); ``staggered`` starts each thread of a warp at a different sphere, so a
warp reads up to 32 addresses at once (constant memory serialises them). Both give the same image.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from kernels import backend as backends
from kernels import kernel_images, lazy_jit
from kernels.constant_memory import ConstantArray
from kernels.errors import InputError
from kernels.frames import (Frame, HostFrames, check_block, check_size, frame_by_driver, grid_for, rgba_view,
                            time_frames)
from kernels.scene import CONSTANT_CAPACITY, MAX_SPHERES, MEMORIES, Scene, capacity, check_count, max_spheres
from kernels.timing import Timing

cuda = None  # numba.cuda, bound on first GPU use by bind_gpu_globals (the cpu backend never imports it)
numba = None  # bound with the jit functions below on their first use (lazy_jit.bind)
PATTERNS = ("uniform", "staggered")
MISS = np.float32(-2e10)  # the book's -INF
# The kernels read the spheres from one flat float32 buffer: first a hot record per sphere, read at every
# step (x, y, radius, z: 16 bytes, four to a 64-byte line), then a cold one read only for a nearer hit
# (r, g, b) from element ``cold_at`` on. Whole 28-byte records would stream 56 KB through each SM's small
# constant cache for 2000 spheres and thrash it when many blocks sit at different spheres; hot records
# halve that. One buffer, not two arrays: a second array argument makes the CPU twin 20x slower.
HOT, COLD = 4, 3
TILE_CHUNK = 256  # spheres culled and staged in shared memory per pass
TILE_FLOATS = TILE_CHUNK * (HOT + COLD)  # a shared array's size must be one compile-time constant
CONSTANT_SPHERES = ConstantArray("raytracer_constant_spheres", CONSTANT_CAPACITY * (HOT + COLD))
constant_spheres = None  # CONSTANT_SPHERES.get, a module global the kernel calls: see bind_gpu_globals
CONSTANT_COLD_AT = CONSTANT_CAPACITY * HOT
KERNEL_SIGNATURES = {  # per memory: what gpu_kernel compiles, and what kernel_images keeps
    "global": "void(float32[::1], int32, boolean, uint32[:, ::1])",
    "shared": "void(float32[::1], int32, boolean, uint32[:, ::1])",
    "constant": "void(int32, boolean, uint32[:, ::1])",
}


def pack_spheres(spheres: np.ndarray, slots: int | None = None) -> np.ndarray:
    """The scene's (N, 7) records (r, g, b, radius, x, y, z) as the flat hot-then-cold buffer, with room
    for ``slots`` spheres (default N): hot x, y, radius, z at 4*i, cold r, g, b at 4*slots + 3*i."""
    n = spheres.shape[0]
    slots = n if slots is None else slots
    flat = np.zeros(slots * (HOT + COLD), np.float32)
    flat[: n * HOT] = spheres[:, [4, 5, 3, 6]].ravel()
    flat[slots * HOT: slots * HOT + n * COLD] = spheres[:, 0:3].ravel()
    return flat


def constant_values(spheres: np.ndarray) -> tuple[tuple[int, np.ndarray], ...]:
    """(element offset, values) to copy into the constant array for a scene: its hot records from 0, its
    cold ones from CONSTANT_COLD_AT (the constant kernel reads them there, whatever the count)."""
    packed = pack_spheres(spheres)
    hot_end = spheres.shape[0] * HOT
    return (0, packed[:hot_end]), (CONSTANT_COLD_AT, packed[hot_end:])


@lazy_jit.jit(nopython=True)
def sphere_step(spheres, cold_at, i, index, ox, oy, r, g, b, maxz, nearest):
    """The book's Sphere::hit for sphere row ``i`` (whose scene index is ``index``) and the ray through
    (ox, oy); returns the updated nearest-hit state. Ties in depth go to the lower scene index, so every
    visiting order gives the same pixel."""
    h = HOT * i
    dx = ox - spheres[h]
    dy = oy - spheres[h + 1]
    radius = spheres[h + 2]
    if dx * dx + dy * dy < radius * radius:
        dz = np.float32(math.sqrt(radius * radius - dx * dx - dy * dy))
        t = dz + spheres[h + 3]
        if t > maxz or (t == maxz and index < nearest):
            fscale = dz / np.float32(math.sqrt(radius * radius))
            c = cold_at + COLD * i
            return spheres[c] * fscale, spheres[c + 1] * fscale, spheres[c + 2] * fscale, t, index
    return r, g, b, maxz, nearest


@lazy_jit.jit(nopython=True)
def visit_spheres(spheres, cold_at, n, start, indices, ox, oy, r, g, b, maxz, nearest):
    """``sphere_step`` over rows 0..n-1 of ``spheres``, from row ``start`` on and wrapping around; a row's
    scene index is ``indices[row]``, or the row itself when ``indices`` is None (numba compiles each case
    on its own). Every kernel's loop over spheres: global, constant, shared tiles, binned tiles, the CPU."""
    for k in range(n):
        i = start + k
        if i >= n:
            i -= n
        if indices is None:
            index = i
        else:
            index = indices[i]
        r, g, b, maxz, nearest = sphere_step(spheres, cold_at, i, index, ox, oy, r, g, b, maxz, nearest)
    return r, g, b, maxz, nearest


@lazy_jit.jit(nopython=True)
def shade_pixel(spheres, cold_at, count, start, ox, oy):
    """Colour of the ray through (ox, oy) over all spheres, visiting them from ``start`` on."""
    r = g = b = np.float32(0.0)
    r, g, b, maxz, nearest = visit_spheres(spheres, cold_at, count, start, None, ox, oy, r, g, b, MISS, count)
    return r, g, b


@lazy_jit.jit(nopython=True)
def store_pixel(pixels, x, y, r, g, b):
    """Write int(value * 255) per channel as one 32-bit RGBA word: one store per pixel, not four."""
    red = np.uint32(np.uint8(r * np.float32(255.0)))
    green = np.uint32(np.uint8(g * np.float32(255.0)))
    blue = np.uint32(np.uint8(b * np.float32(255.0)))
    pixels[y, x] = red | (green << np.uint32(8)) | (blue << np.uint32(16)) | np.uint32(0xFF000000)


@lazy_jit.jit(nopython=True)
def pattern_start(lane, count, staggered):
    return lane % count if staggered else 0


@lazy_jit.jit(nopython=True)
def trace_pixel(pixels, spheres, cold_at, count, staggered, x, y, lane):
    """One kernel thread's work for pixel (x, y), ``lane`` being its index in the block."""
    if x < pixels.shape[1] and y < pixels.shape[0]:
        start = pattern_start(lane, count, staggered)
        ox = np.float32(x - pixels.shape[1] // 2)
        oy = np.float32(y - pixels.shape[0] // 2)
        r, g, b = shade_pixel(spheres, cold_at, count, start, ox, oy)
        store_pixel(pixels, x, y, r, g, b)


@lazy_jit.jit(nopython=True)
def stage_sphere(tile, tile_index, slot, spheres, count, j):
    """Copy sphere ``j``'s hot and cold records into row ``slot`` of a shared-memory tile laid out like the
    sphere buffer (TILE_CHUNK rows: hot records, then cold ones), and remember its scene index."""
    for f in range(HOT):
        tile[HOT * slot + f] = spheres[HOT * j + f]
    for f in range(COLD):
        tile[TILE_CHUNK * HOT + COLD * slot + f] = spheres[count * HOT + COLD * j + f]
    tile_index[slot] = j


# what the kernels call: compiled on a GPU, plain Python in the simulator
_trace_pixel, _store_pixel, _pattern_start, _visit_spheres, _stage_sphere = (
    backends.for_kernels(f) for f in (trace_pixel, store_pixel, pattern_start, visit_spheres, stage_sphere))


def _render_spheres_global(spheres, count, staggered, pixels):
    x, y = cuda.grid(2)
    lane = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    _trace_pixel(pixels, spheres, count * HOT, count, staggered, x, y, lane)


def _render_spheres_constant(count, staggered, pixels):
    x, y = cuda.grid(2)
    lane = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    _trace_pixel(pixels, constant_spheres(), CONSTANT_COLD_AT, count, staggered, x, y, lane)




def _render_spheres_shared(spheres, count, staggered, pixels):
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


@lazy_jit.jit(nopython=True, parallel=True, cache=True)
def render_spheres_cpu(spheres, count, staggered, pixels):
    """The CPU twin: the same per-pixel math with Numba's parallel loop over rows. Each row first keeps
    only the spheres it crosses (dy^2 < r^2, the hit test's own condition, in index order), which cuts
    the per-pixel work several-fold without changing a pixel. The staggered pattern uses the pixel's
    lane in a row of 32, as a warp of a 32-wide block would."""
    h, w = pixels.shape[0], pixels.shape[1]
    for y in numba.prange(h):
        oy = np.float32(y - h // 2)
        row = np.empty(count * (HOT + COLD), np.float32)  # the same layout, cold part from count * HOT
        crossing = 0
        for i in range(count):
            dy = oy - spheres[HOT * i + 1]
            if dy * dy < spheres[HOT * i + 2] * spheres[HOT * i + 2]:
                for f in range(HOT):
                    row[HOT * crossing + f] = spheres[HOT * i + f]
                for f in range(COLD):
                    row[count * HOT + COLD * crossing + f] = spheres[count * HOT + COLD * i + f]
                crossing += 1
        for x in range(w):
            start = pattern_start(x % 32, crossing, staggered) if crossing > 0 else 0
            r, g, b = shade_pixel(row, count * HOT, crossing, start, np.float32(x - w // 2), oy)
            store_pixel(pixels, x, y, r, g, b)


def bind_gpu_globals() -> None:
    """Bind the module globals the kernel bodies above look up when they compile: numba.cuda and the
    constant array's intrinsic (both import numba.cuda, which the cpu backend never needs)."""
    global constant_spheres
    lazy_jit.bind(globals())  # the kernels call the shared functions under other names (_trace_pixel...)
    backends.bind_numba_cuda(globals())
    constant_spheres = CONSTANT_SPHERES.get


@functools.lru_cache(maxsize=None)
def gpu_kernel(memory: str):
    """The compiled kernel for a memory kind (compiled once per process, eagerly for its one signature,
    and kept in numba's on-disk cache so that the next start of the app loads it instead: the first frame
    waits for it)."""
    bind_gpu_globals()
    body = {"global": _render_spheres_global, "shared": _render_spheres_shared,
            "constant": _render_spheres_constant}[memory]
    kernel = cuda.jit(KERNEL_SIGNATURES[memory], cache=True)(body)
    # and as a cubin, which the next process's first frame launches before numba.cuda is even loaded
    kernel_images.save(f"raytrace.{memory}", KERNEL_SIGNATURES[memory], kernel)
    return kernel


def constant_ptx() -> str:
    """PTX of the constant-memory kernel for the current GPU (shows ``.visible .const`` and ``ld.const``)."""
    kernel = gpu_kernel("constant")
    return next(iter(kernel.inspect_asm().values()))


def check_memory(memory: str) -> str:
    if memory not in MEMORIES:
        raise InputError(f"memory {memory!r} is not one of {', '.join(MEMORIES)}")
    return memory


def check_pattern(pattern: str) -> str:
    if pattern not in PATTERNS:
        raise InputError(f"pattern {pattern!r} is not one of {', '.join(PATTERNS)}")
    return pattern


class SphereRenderer:
    """Renders scenes on one backend, keeping device buffers between frames (safe to call from one
    worker thread). ``render`` validates everything first and raises InputError on a bad value."""

    def __init__(self, backend: backends.Backend):
        self.backend = backend
        self.limits = backend.limits
        self.capacity = capacity(self.limits)
        self._image_dev = None
        self._scene_dev = None  # the packed spheres of the last scene uploaded
        self._scene_host: np.ndarray | None = None
        self._warm: set = set()
        self._host_frames = HostFrames()  # pinned, double-buffered
        self._binned = None  # the binned-tiles kernel's buffers, made on first use
        self._first_gpu_frame = True  # may go through a saved kernel image: see first_frame_by_driver

    def render(self, scene: Scene, size=(1024, 1024), memory: str = "global", block=(16, 16),
               pattern: str = "uniform", repeats: int = 1) -> Frame:
        width, height = check_size(*size)
        check_memory(memory)
        check_count(scene.count, self.max_spheres(memory))
        check_pattern(pattern)
        staggered = pattern == "staggered"
        if self.backend.runs_cuda_kernels:
            block = check_block(tuple(block), self.limits)
            by_driver = self.first_frame_by_driver(memory, repeats)
            self._first_gpu_frame = False
            done = self._render_by_driver(scene, width, height, memory, block, staggered) if by_driver else None
            image, kernel_time, frame_time, grid = done or self._render_gpu(scene, width, height, memory, block,
                                                                            staggered, repeats)
        else:
            pixels = np.empty((height, width), np.uint32)
            spheres = pack_spheres(scene.spheres)
            warmup = 0 if "host" in self._warm else 1
            launch = lambda: render_spheres_cpu(spheres, scene.count, staggered, pixels)  # noqa: E731
            kernel_time, frame_time = time_frames(backends.HOST, launch, None, None, repeats, warmup)  # no copy back
            image = rgba_view(pixels)
            memory, block, grid = "host", None, None
            self._warm.add(memory)
        meta = {"kind": "spheres", "scene": scene.name, "spheres": scene.count, "memory": memory, "pattern": pattern}
        return Frame(image, kernel_time, frame_time.median_ms, self.backend.kind, self.backend.device_name, block, grid,
                     meta, frame_time)

    def max_spheres(self, memory: str) -> int:
        """Most spheres ``render`` accepts for a memory on this backend (the CPU twin takes any scene)."""
        return max_spheres(memory if self.backend.runs_cuda_kernels else "host", self.limits)

    def first_frame_by_driver(self, memory: str, repeats: int = 1) -> bool:
        """Whether the next render goes through the CUDA driver with a kernel image saved by an earlier
        process (kernels/kernel_images.py): only this renderer's first GPU frame, with one repeat, before
        numba.cuda is loaded, for the single-kernel memories. The window's first frame then comes without
        numba.cuda's 0.75 s start; the same cubin runs, so the image and the kernel time are the same."""
        return (self._first_gpu_frame and repeats == 1 and self.backend.is_gpu and memory in KERNEL_SIGNATURES
                and kernel_images.usable(f"raytrace.{memory}", KERNEL_SIGNATURES[memory], self.backend.device))

    def _render_by_driver(self, scene, width, height, memory, block, staggered):
        """One frame through frames.frame_by_driver, or None (then numba renders it)."""
        image = kernel_images.Output((height, width), np.uint32)
        count = np.int32(scene.count)
        if memory == "constant":  # the same arguments as the launches in _render_gpu
            args = [count, np.bool_(staggered), image]
            constants = tuple((CONSTANT_SPHERES.name, 4 * offset, values)
                              for offset, values in constant_values(scene.spheres))
        else:
            args, constants = [pack_spheres(scene.spheres), count, np.bool_(staggered), image], ()
        grid = grid_for(width, height, block)
        done = frame_by_driver(f"raytrace.{memory}", KERNEL_SIGNATURES[memory], args, grid, block, self.backend.device,
                               constants)
        return None if done is None else (*done, grid)

    def _render_gpu(self, scene, width, height, memory, block, staggered, repeats):
        self.backend.activate()
        backends.bind_numba_cuda(globals())
        if self._image_dev is None or self._image_dev.shape != (height, width):
            self._image_dev = cuda.device_array((height, width), np.uint32)
        image_dev = self._image_dev
        grid = grid_for(width, height, block)
        count = np.int32(scene.count)
        if memory == "binned":
            from kernels.raytrace_binned import BinnedTiles

            if self._binned is None:
                self._binned = BinnedTiles()
            spheres_dev = self._upload_global(scene.spheres)
            launch = self._binned.prepare(spheres_dev, scene.count, staggered, image_dev, block)
        elif memory in ("global", "shared"):
            kernel = gpu_kernel(memory)
            spheres_dev = self._upload_global(scene.spheres)
            launch = lambda: kernel[grid, block](spheres_dev, count, staggered, image_dev)  # noqa: E731
        else:
            kernel = gpu_kernel(memory)
            for offset, values in constant_values(scene.spheres):
                CONSTANT_SPHERES.write(values, kernel, offset=offset)  # cudaMemcpyToSymbol: no recompile
            launch = lambda: kernel[grid, block](count, staggered, image_dev)  # noqa: E731
        warmup = 0 if memory in self._warm else 1
        host = self._host_frames.next_buffer(height, width)
        kernel_time, frame_time = time_frames(self.backend, launch, image_dev, host, repeats, warmup)
        self._warm.add(memory)
        return rgba_view(host), kernel_time, frame_time, grid

    def time_frames(self, scene: Scene, size=(1024, 1024), memory: str = "constant", block=(16, 16),
                    repeats: int = 100) -> tuple[np.ndarray, Timing]:
        """Wall time of whole frames as an interactive viewer needs them: the kernel plus the copy back
        into pinned (page-locked) host memory, which the GPU writes by DMA at full link speed."""
        from kernels.timing import time_wall

        if not self.backend.is_gpu:
            raise InputError("frame-to-host timing needs a real GPU (the cuda backend)")
        self.render(scene, size, memory, block)  # validates, compiles, uploads the scene
        width, height = size
        kernel, grid, count = gpu_kernel(memory), grid_for(width, height, block), np.int32(scene.count)
        image_dev = self._image_dev
        host = cuda.pinned_array((height, width), np.uint32)
        args = (count, False, image_dev) if memory == "constant" else (self._scene_dev, count, False, image_dev)

        def frame():
            kernel[grid, block](*args)
            image_dev.copy_to_host(host)

        return rgba_view(host), time_wall(frame, repeats, warmup=3)

    def _upload_global(self, spheres: np.ndarray):
        if self._scene_host is None or not np.array_equal(self._scene_host, spheres):
            self._scene_dev = cuda.to_device(pack_spheres(spheres))
            self._scene_host = spheres.copy()
        return self._scene_dev


# --- as a benchmark: variants and descriptor ------------------------------------------------------------

from kernels import render_bench  # noqa: E402  (below the kernels: render_bench imports nothing from here)
from kernels.bench import Outcome  # noqa: E402
from kernels.descriptor import Algorithm, Option, SizeAxis  # noqa: E402
from kernels.frames import DEFAULT_IMAGE_SIZES, SIM_IMAGE_SIZE, parse_size  # noqa: E402
from kernels.launch import DEFAULT_BLOCK_2D, LaunchRule  # noqa: E402
from kernels.variants import Variant  # noqa: E402

IMAGE_LAUNCH = LaunchRule(block=DEFAULT_BLOCK_2D, shape_2d=True)


def make_bench_problem(spheres: int, size=DEFAULT_IMAGE_SIZES["spheres"], pattern: str = "uniform",
                       seed: int = 0) -> render_bench.RenderProblem:
    """A random scene of ``spheres`` spheres to render at ``size``, checked against the CPU twin."""
    from kernels.scene import generate_scene

    check_pattern(pattern)
    size = check_size(*size)
    scene = generate_scene(spheres, seed)  # validates the count now, before anything runs
    reference = lambda precision: render_bench.renderer_for(  # noqa: E731
        backends.HOST.kind, 0, SphereRenderer).render(scene, size).image.copy()
    return render_bench.RenderProblem("raytrace", size, pattern, spheres, reference, scene, pattern)


def _spheres(memory: str, on_cpu: bool = False):
    def run(problem, launch, backend, repeats):
        renderer = render_bench.renderer_for(backends.HOST.kind if on_cpu else backend.kind, backend.device,
                                             SphereRenderer)
        if problem.n > renderer.max_spheres(memory):  # a sweep past constant memory's capacity
            return backends.not_applicable(f"{memory} memory holds at most {renderer.max_spheres(memory)} spheres")
        block = launch.block or DEFAULT_BLOCK_2D
        frame = renderer.render(problem.subject, problem.size, memory, block, problem.pattern, repeats)
        return render_bench.outcome(problem, frame)
    return run


def _frame_to_host(problem, launch, backend, repeats):
    renderer = render_bench.renderer_for(backend.kind, backend.device, SphereRenderer)
    if problem.pattern != "uniform":
        return backends.not_applicable("frame-to-host is timed with the uniform pattern only")
    block = launch.block or DEFAULT_BLOCK_2D
    image, timing = renderer.time_frames(problem.subject, problem.size, "constant", block, max(repeats, 50))
    grid = grid_for(*problem.size, block)
    return Outcome(render_bench.matching_pixels(problem, image), timing, f"{block[0]}x{block[1]}",
                   f"{grid[0]}x{grid[1]}")


VARIANTS: tuple[Variant, ...] = (
    Variant("spheres-global", "spheres read from global memory (seed 001's first kernel): each thread loads them "
            "through the caches", "gpu", "001", launch=IMAGE_LAUNCH, run=_spheres("global")),
    Variant("spheres-constant", "spheres read from __constant__ memory filled like cudaMemcpyToSymbol (seed 001): "
            "one address is broadcast to a whole warp", "gpu", "001", launch=IMAGE_LAUNCH, run=_spheres("constant")),
    Variant("spheres-shared", "per-tile culling: each block keeps only the spheres that can touch its pixels, staged "
            "in shared memory chunk by chunk, so a pixel tests a few dozen spheres instead of all",
            "gpu", "", launch=IMAGE_LAUNCH, run=_spheres("shared")),
    Variant("spheres-binned", "binned tiles, as tiled GPU rasterisers work: the spheres are first sorted into screen "
            "tiles (counts, a prefix sum, then lists), then each block shades its tile from its own list; binning is "
            "part of every frame", "gpu", "", "the block is the tile", launch=IMAGE_LAUNCH, run=_spheres("binned")),
    Variant("spheres-frame-to-host", "whole frames as a viewer needs them: the constant-memory kernel plus the copy "
            "back into pinned host memory, wall time (1000 / ms = frames per second)",
            "gpu", "", "real GPU only", sim_skip="wall time of frames means nothing in the simulator",
            launch=IMAGE_LAUNCH, run=_frame_to_host),
    Variant("spheres-cpu", "the CPU twin: the same per-pixel code with Numba's parallel loop over rows, each row "
            "culling the spheres it misses", "cpu", run=_spheres("global", on_cpu=True)),
)

ALGORITHM = Algorithm(
    name="raytrace", title="Ray tracer",
    summary="the ray-traced spheres of seed 001: global, constant and shared-tile memory, frames to the host",
    variants=VARIANTS,
    make_problem=lambda n, options, seed, data=None: make_bench_problem(n, options["size"], options["pattern"], seed),
    size=SizeAxis("spheres", "spheres", default={"cuda": 20, "cpu": 20, "sim": 5},
                  maximum={"cuda": MAX_SPHERES, "cpu": MAX_SPHERES,
                           "sim": backends.Backend("sim").caps.max_spheres}),
    options=(
        Option("pattern", "uniform: a warp reads one sphere at a time (constant memory broadcasts it); staggered: "
               "each thread starts at a different sphere (constant memory serialises)", choices=PATTERNS,
               default="uniform"),
        Option("size", "image size WxH", default={**{k: DEFAULT_IMAGE_SIZES["spheres"] for k in ("cuda", "cpu")},
                                                  "sim": SIM_IMAGE_SIZE}, parse=parse_size),
    ),
    unit=render_bench.PIXELS_UNIT, measures_copy_peak=False, panel=False, block_shape_2d=True,
)
