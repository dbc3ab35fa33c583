"""The render kernels as benchmark variants, so `bench raytrace|julia` and the GUI time them with the
same runner, rows and CSV as the reductions. Every GPU image is checked against the CPU twin's image
(at most one level apart per channel: a GPU may fuse multiply-adds)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import numpy as np

from kernels.bench import Outcome
from kernels.frames import check_block, check_size, grid_for
from kernels.julia import JuliaParams, JuliaRenderer
from kernels.raytrace import SphereRenderer, check_pattern
from kernels.scene import generate_scene
from kernels.variants import Variant


@dataclass
class RenderProblem:
    algorithm: str  # 'raytrace' or 'julia'
    size: tuple[int, int]
    spheres: int = 0  # raytrace: the scene's sphere count (the row's n)
    pattern: str = "uniform"
    seed: int = 0
    params: JuliaParams = JuliaParams()
    dtype: str = "rgba8"
    bytes_read: int = 0  # a render reads next to nothing: no GB/s figure
    _reference: dict | None = field(default=None, repr=False)  # the CPU twin's image per precision

    @property
    def op(self) -> str:
        return self.pattern if self.algorithm == "raytrace" else "julia"

    @property
    def n(self) -> int:
        return self.spheres if self.algorithm == "raytrace" else self.size[0] * self.size[1]

    @property
    def expected(self) -> int:
        return self.size[0] * self.size[1]  # pixels that must match the CPU twin

    @functools.cached_property
    def scene(self):
        return generate_scene(self.spheres, self.seed)

    def reference(self, precision: str = "float32") -> np.ndarray:
        if self._reference is None:
            self._reference = {}
        if precision not in self._reference:
            if self.algorithm == "raytrace":
                image = _renderer("cpu", 0, SphereRenderer).render(self.scene, self.size).image
            else:
                params = replace(self.params, precision=precision)
                image = _renderer("cpu", 0, JuliaRenderer).render(params, self.size).image
            self._reference[precision] = image.copy()
        return self._reference[precision]

    def verify(self, result) -> tuple[bool, str]:
        ok = result == self.expected
        return ok, "" if ok else f"{self.expected - result} pixels differ from the CPU twin by more than 1 level"


def make_raytrace_problem(spheres: int, size=(1024, 1024), pattern: str = "uniform", seed: int = 0) -> RenderProblem:
    check_pattern(pattern)
    problem = RenderProblem("raytrace", check_size(*size), spheres, pattern, seed)
    problem.scene  # validates the count now, before anything runs
    return problem


def make_julia_problem(size=(1000, 1000), params: JuliaParams = JuliaParams()) -> RenderProblem:
    return RenderProblem("julia", check_size(*size), params=params.checked())


@functools.lru_cache(maxsize=None)
def _renderer(kind: str, device: int, cls):
    from kernels.backend import Backend

    return cls(Backend(kind, device))


def _matching_pixels(problem: RenderProblem, image: np.ndarray, precision: str = "float32") -> int:
    diff = np.abs(image.astype(np.int16) - problem.reference(precision)).max(axis=2)
    return int((diff <= 1).sum())


def _outcome(problem, frame, precision: str = "float32") -> Outcome:
    block = f"{frame.block[0]}x{frame.block[1]}" if frame.block else ""
    grid = f"{frame.grid[0]}x{frame.grid[1]}" if frame.grid else ""
    return Outcome(_matching_pixels(problem, frame.image, precision), frame.kernel, block, grid)


def _spheres(memory: str, on_cpu: bool = False):
    def run(problem, launch, backend, repeats):
        renderer = _renderer("cpu" if on_cpu else backend.kind, backend.device, SphereRenderer)
        if problem.spheres > renderer.max_spheres(memory):  # a sweep past constant memory's capacity
            return f"{memory} memory holds at most {renderer.max_spheres(memory)} spheres"
        frame = renderer.render(problem.scene, problem.size, memory, launch.block or (16, 16), problem.pattern, repeats)
        return _outcome(problem, frame)
    return run


def _frame_to_host(problem, launch, backend, repeats):
    renderer = _renderer(backend.kind, backend.device, SphereRenderer)
    if problem.pattern != "uniform":
        return "frame-to-host is timed with the uniform pattern only"
    block = launch.block or (16, 16)
    image, timing = renderer.time_frames(problem.scene, problem.size, "constant", block, max(repeats, 50))
    grid = grid_for(*problem.size, block)
    return Outcome(_matching_pixels(problem, image), timing, f"{block[0]}x{block[1]}", f"{grid[0]}x{grid[1]}")


def _julia(launch_kind: str, on_cpu: bool = False, precision: str = "float32"):
    def run(problem, launch, backend, repeats):
        renderer = _renderer("cpu" if on_cpu else backend.kind, backend.device, JuliaRenderer)
        params = replace(problem.params, precision=precision)
        return _outcome(problem, renderer.render(params, problem.size, launch_kind, launch.block or (16, 16), repeats), precision)
    return run


def _check_block(launch, backend):
    if launch.block is not None:
        from kernels.devices import limits_for

        check_block(launch.block, limits_for(backend))


RAYTRACE_VARIANTS: tuple[Variant, ...] = (
    Variant("spheres-global", "spheres read from global memory (seed 001's first kernel): each thread loads them through the caches",
            "gpu", "001", "block BXxBY, BX*BY <= max threads per block", check=_check_block, run=_spheres("global")),
    Variant("spheres-constant", "spheres read from __constant__ memory filled like cudaMemcpyToSymbol (seed 001): one address is broadcast to a whole warp",
            "gpu", "001", "block BXxBY, BX*BY <= max threads per block", check=_check_block, run=_spheres("constant")),
    Variant("spheres-shared", "per-tile culling: each block keeps only the spheres that can touch its pixels, staged in shared memory chunk by chunk, so a pixel tests a few dozen spheres instead of all",
            "gpu", "", "block BXxBY, BX*BY <= max threads per block", check=_check_block, run=_spheres("shared")),
    Variant("spheres-binned", "binned tiles, as tiled GPU rasterisers work: the spheres are first sorted into screen tiles (counts, a prefix sum, then lists), then each block shades its tile from its own list; binning is part of every frame",
            "gpu", "", "block BXxBY (the tile), BX*BY <= max threads per block", check=_check_block, run=_spheres("binned")),
    Variant("spheres-frame-to-host", "whole frames as a viewer needs them: the constant-memory kernel plus the copy back into pinned host memory, wall time (1000 / ms = frames per second)",
            "gpu", "", "block BXxBY; real GPU only", sim_skip="wall time of frames means nothing in the simulator",
            check=_check_block, run=_frame_to_host),
    Variant("spheres-cpu", "the CPU twin: the same per-pixel code with Numba's parallel loop over rows, each row culling the spheres it misses",
            "cpu", run=_spheres("global", on_cpu=True)),
)

JULIA_VARIANTS: tuple[Variant, ...] = (
    Variant("julia-book", "the book's launch <<<dim3(W, H), 1>>>: one thread per block leaves 31 of every 32 lanes of a warp idle",
            "gpu", "003", run=_julia("book")),
    Variant("julia-2d", "2-D blocks of BXxBY threads: full warps, the same kernel",
            "gpu", "003", "block BXxBY, BX*BY <= max threads per block", check=_check_block, run=_julia("2d")),
    Variant("julia-2d-float64", "the same 2-D launch in float64, as deep zooms need: an H100 runs float64 at about half float32's rate, consumer GPUs at 1/32 or 1/64",
            "gpu", "", "block BXxBY, BX*BY <= max threads per block", check=_check_block, run=_julia("2d", precision="float64")),
    Variant("julia-cpu", "the CPU twin: the same per-pixel function with Numba's parallel loop over rows", "cpu", run=_julia("2d", on_cpu=True)),
    Variant("julia-cpu-float64", "the CPU twin in float64", "cpu", run=_julia("2d", on_cpu=True, precision="float64")),
)
