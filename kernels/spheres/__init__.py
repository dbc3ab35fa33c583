"""The sphere ray tracer of seed 001 (CUDA by Example, ch. 6): one kernel reading the spheres from
global memory, one from a real ``__constant__`` array, one culling them per tile into shared memory, and
two CPU twins; all of them share the per-sphere math.

The GPU kernels and the CPU twins read the spheres packed as hot and cold records (``pack_spheres``);
scenes keep the book's whole records.

The definition: rays go along z through pixel (x, y), one world unit per pixel, origin at the image
centre (ox = x - W/2, oy = y - H/2); the nearest sphere hit (largest dz + z) shades the pixel with
``color * dz / radius``; each byte is ``int(value * 255)``. Row 0 of the image is y = 0.

Memories: ``global`` and ``constant`` are the book's two kernels; ``shared`` culls the spheres per block and
stages the survivors in shared memory; ``binned`` first sorts the spheres into screen tiles, then shades
each tile from its own list (:mod:`.binned`). How many spheres each takes: ``max_spheres``.

Access patterns: ``uniform`` visits spheres 0..N-1 in every thread, so a warp reads one address at a time
(constant memory broadcasts it); ``staggered`` starts each thread of a warp at a different sphere, so a
warp reads up to 32 addresses at once (constant memory serialises them). Both give the same image.

This module declares everything about the algorithm and imports no numba: the variants with their launch
rules and inspector entries, and the descriptor. The buffer layout is :mod:`.layout`, the shared
per-pixel math :mod:`.shading` (``@numba.jit``), the kernels :mod:`.gpu` and :mod:`.binned`, the CPU twins
:mod:`.cpu` (rows) and :mod:`.tiles` (binned tiles; the renderer's CPU path), the renderer
:mod:`.renderer`, the numpy reference renderer :mod:`.reference` and the benchmark runs :mod:`.runs`,
imported when first used.
"""

from __future__ import annotations

from kernels.backend import Backend
from kernels.harness.ceilings import Ceiling, Judge
from kernels.harness.descriptor import Algorithm, Option, SizeAxis
from kernels.harness.frames import SIM_IMAGE_SIZE
from kernels.harness.kernel_decl import KernelDecl, Traffic, no_dynamic_shared
from kernels.harness.render import PIXELS_UNIT
from kernels.harness.renderable import Control, Renderable
from kernels.harness.variants import Variant
from kernels.launch import DEFAULT_BLOCK_2D, LaunchRule
from kernels.launch.images import KernelImage
from kernels.lazy import entry
from kernels.spheres.layout import PATTERNS
from kernels.spheres.params import DEFAULT_COUNT, IMAGE_SIZE, SphereParams
from kernels.spheres.scene import MAX_SPHERES, MEMORIES
from kernels.harness.frames import parse_size

IMAGE_LAUNCH = LaunchRule(block=DEFAULT_BLOCK_2D, shape_2d=True)


def _run(name: str):
    return entry("kernels.spheres.runs", name)


# --- what the inspector compiles for each GPU variant (1024x1024 images) ---------------------------------------

_IMAGE = (1024, 1024)
_SPHERES_SIG = "void(float32[::1], int32, boolean, uint32[:, ::1])"
_CONSTANT_SIG = "void(int32, boolean, uint32[:, ::1])"

# per memory: the kernels shipped compiled, which draw a window's first frames on a GPU while numba compiles
# them (kernels/launch/images.py; built by scripts/kernel_images.py)
IMAGES = {memory: KernelImage(f"spheres-{memory}", "kernels.spheres", "kernels.spheres.gpu",
                              f"render_spheres_{memory}", _CONSTANT_SIG if memory == "constant" else _SPHERES_SIG)
          for memory in ("global", "constant", "shared")}


def _spheres_traffic(n, threads, blocks):
    pixels = _IMAGE[0] * _IMAGE[1]
    return Traffic(4 * pixels + 28 * n, 8 * pixels * n, "fp32",
                   "writes one 4-byte pixel each and reads the 28-byte spheres once (caches absorb the rest); "
                   "8 FP32 operations per pixel and sphere (the hit test)")


def _binned_traffic(n, threads, blocks):
    pixels = _IMAGE[0] * _IMAGE[1]
    return Traffic(4 * pixels + 28 * n, 8 * pixels * n, "fp32",
                   "the shading pass: writes one 4-byte pixel each and reads each tile's own list (at most every "
                   "sphere); 8 FP32 operations per pixel and listed sphere (an upper bound: lists are short)")


def _kernel(function: str, signature: str, default_n: int, module: str = "kernels.spheres.gpu", **extra) -> KernelDecl:
    traffic = extra.pop("traffic", _spheres_traffic)
    return KernelDecl(module, function, None, signature, (16, 16), no_dynamic_shared, traffic, default_n, **extra)


_INSPECT = {
    "global": _kernel("render_spheres_global", _SPHERES_SIG, 20),
    "constant": _kernel("render_spheres_constant", _CONSTANT_SIG, 20),
    "shared": _kernel("render_spheres_shared", _SPHERES_SIG, 2000),
    "binned": _kernel("shade_tiles", "void(float32[::1], int32, boolean, int64[::1], int32[::1], int32[::1], uint32[:, ::1])",
                      100_000, module="kernels.spheres.binned", traffic=_binned_traffic,
                      note="the shading kernel, the one that grows with the image; binning runs three small kernels "
                           "before it (count per tile, a prefix sum, fill the lists)"),
    "frame-to-host": _kernel("render_spheres_constant", _CONSTANT_SIG, 20,
                             note="the constant-memory kernel; the copy to the host is not a kernel"),
}


# --- the variants -------------------------------------------------------------------------------------------

# the run-time __constant__ array (kernels/device_functions/constant_memory.py) has no numba-cuda-mlir spelling yet
# (the words of kernels.device_functions.constant_memory.MLIR_LACKS: this package imports no numba)
MLIR_LACKS_CONSTANT = "a run-time-writable __constant__ array (cudaMemcpyToSymbol)"

VARIANTS: tuple[Variant, ...] = (
    Variant("spheres-global", "spheres read from global memory (seed 001's first kernel): each thread loads them "
            "through the caches", "gpu", "001", launch=IMAGE_LAUNCH, run=_run("run_global"),
            inspect=_INSPECT["global"]),
    Variant("spheres-constant", "spheres read from __constant__ memory filled like cudaMemcpyToSymbol (seed 001): "
            "one address is broadcast to a whole warp", "gpu", "001", launch=IMAGE_LAUNCH, run=_run("run_constant"),
            inspect=_INSPECT["constant"], mlir_lacks=MLIR_LACKS_CONSTANT),
    Variant("spheres-shared", "per-tile culling: each block keeps only the spheres that can touch its pixels, staged "
            "in shared memory chunk by chunk, so a pixel tests a few dozen spheres instead of all",
            "gpu", "", launch=IMAGE_LAUNCH, run=_run("run_shared"),
            inspect=_INSPECT["shared"]),
    Variant("spheres-binned", "binned tiles, as tiled GPU rasterisers work: the spheres are first sorted into screen "
            "tiles (counts, a prefix sum, then lists), then each block shades its tile from its own list; binning is "
            "part of every frame", "gpu", "", "the block is the tile", launch=IMAGE_LAUNCH, run=_run("run_binned"),
            inspect=_INSPECT["binned"]),
    Variant("spheres-frame-to-host", "whole frames as a viewer needs them: the constant-memory kernel plus the copy "
            "back into pinned host memory, wall time (1000 / ms = frames per second)",
            "gpu", "", "real GPU only", sim_skip="wall time of frames means nothing in the simulator",
            launch=IMAGE_LAUNCH, run=_run("run_frame_to_host"),
            inspect=_INSPECT["frame-to-host"], mlir_lacks=MLIR_LACKS_CONSTANT),
    Variant("spheres-cpu", "the CPU twin: the same per-pixel code with Numba's parallel loop over rows, each row "
            "culling the spheres it misses", "cpu", run=_run("run_cpu")),
    Variant("spheres-cpu-serial", "the row twin in one thread: numba compiles it about a second sooner than the "
            "parallel loop, so a window with an empty numba cache draws its first frames with it",
            "cpu", run=_run("run_cpu_serial")),
    Variant("spheres-cpu-tiles", "the tiled CPU twin: spheres binned into 16x16 tiles nearest first (binning in every "
            "frame), tiles shaded in parallel, each pixel stopping at the first sphere that cannot be nearer; the same "
            "image (the window's CPU path)", "cpu", run=_run("run_cpu_tiles")),
)

# --- the ceiling: ray-sphere tests per second in a tight loop of the spheres' own hit test (.ceiling) -------------

RAY_SPHERE = Ceiling("ray-sphere", "ray-sphere tests in a tight loop of the spheres' own hit test, spheres in shared "
                     "memory", "G tests/s", 1e9, entry("kernels.spheres.ceiling", "measure"),
                     entry("kernels.spheres.ceiling", "measure"))
_work = entry("kernels.spheres.work", "tests_performed")
_all_tests = entry("kernels.spheres.work", "all_tests")


def _tests(problem, row) -> int:
    """Ray-sphere tests a frame of the row's variant performs (with its culling: .work)."""
    return _work(problem.subject.spheres, problem.size, row.variant, row.block)


# rows report primary rays (pixels), tests performed and every pixel x sphere test per second, and are judged
# by the tests they perform
JUDGE = Judge(ceiling=lambda problem, row: RAY_SPHERE, work=_tests,
              figures=lambda problem, row: {"rays": problem.pixels, "tests": _tests(problem, row),
                                            "all_tests": _all_tests(problem.subject.spheres, problem.size)})

ALGORITHM = Algorithm(
    name="spheres", title="Ray tracer",
    summary="the ray-traced spheres of seed 001: global, constant and shared-tile memory, frames to the host",
    variants=VARIANTS,
    make_problem=lambda n, options, seed, data=None: _make(n, options, seed),
    size=SizeAxis("spheres", "spheres", default={"cuda": 20, "cpu": 20, "sim": 5},
                  maximum={"cuda": MAX_SPHERES, "cpu": MAX_SPHERES,
                           "sim": Backend("sim").caps.max_spheres}),
    options=(
        Option("pattern", "uniform: a warp reads one sphere at a time (constant memory broadcasts it); staggered: "
               "each thread starts at a different sphere (constant memory serialises)", choices=PATTERNS,
               default="uniform"),
        Option("size", "image size WxH", default={**{k: IMAGE_SIZE for k in ("cuda", "cpu")},
                                                  "sim": SIM_IMAGE_SIZE}, parse=parse_size),
    ),
    unit=PIXELS_UNIT, measures_copy_peak=False, panel=False, block_shape_2d=True, judge=JUDGE,
)


def _make(n, options, seed):
    from kernels.spheres.runs import make_bench_problem

    return make_bench_problem(n, options["size"], options["pattern"], seed)


# earlier names still accepted (in scripts and result files): the ray tracer's target was `raytrace`
ALIASES = {"raytrace": ALGORITHM.name}

# --- the render kind: the window's tab, `render spheres` --------------------------------------------------------

RENDERABLE = Renderable(
    name=ALGORITHM.name, title="Spheres", summary="the ray-traced spheres of seed 001",
    params=SphereParams, default_size=IMAGE_SIZE, kind_module="kernels.spheres.render_kind", memories=MEMORIES,
    images=IMAGES, tip="Ray-traced spheres (wheel / drag to inspect pixels)",
    controls=(
        Control("spheres", "Spheres", "int", None,
                help=f"random scene with N spheres, 1..{MAX_SPHERES:,} (constant memory: up to its capacity, 2340 "
                     f"spheres in 64 KiB; default {DEFAULT_COUNT}; at most 64 in the simulator)"),
        Control("seed", "Seed", "int", 0, 0, help="seed of the random scene (default 0)"),
        Control("scene", "Scene file", "text", None, help="load the scene from a JSON file instead", file="in",
                supplies="spheres"),
        Control("save_scene", "Save scene", "text", None, help="also save the scene as JSON", window=False,
                file="out"),
        Control("memory", "Memory", "choice", None, choices=MEMORIES, gpu_only=True,
                help="where the kernel reads the spheres: " + "|".join(MEMORIES) + " (default global; cuda/sim only)"),
        Control("pattern", "Pattern", "choice", "uniform", choices=PATTERNS,
                help="sphere access order per warp (default uniform)"),
    ),
)
