"""The sphere ray tracer as a benchmark: the problem (a random scene, checked against the row CPU twin's
image) and how each variant renders it."""

from __future__ import annotations

from kernels.backend import HOST, not_applicable
from kernels.harness import render as render_bench
from kernels.harness.rows import Outcome
from kernels.harness.frames import check_size
from kernels.launch import DEFAULT_BLOCK_2D, grid_for
from kernels.spheres.layout import check_pattern
from kernels.spheres.params import IMAGE_SIZE
from kernels.spheres.renderer import SphereRenderer
from kernels.spheres.scene import generate_scene


def make_bench_problem(spheres: int, size=IMAGE_SIZE, pattern: str = "uniform",
                       seed: int = 0) -> render_bench.RenderProblem:
    """A random scene of ``spheres`` spheres to render at ``size``, checked against the row CPU twin
    (``spheres-cpu``)."""
    check_pattern(pattern)
    size = check_size(*size)
    scene = generate_scene(spheres, seed)  # validates the count now, before anything runs
    reference = lambda precision: render_bench.renderer_for(  # noqa: E731
        HOST.kind, 0, SphereRenderer).render(scene, size, twin="rows").image.copy()
    return render_bench.RenderProblem("spheres", size, pattern, spheres, reference, scene, pattern)


def _spheres(memory: str, on_cpu: bool = False, twin: str = "rows"):
    def run(problem, launch, backend, repeats):
        renderer = render_bench.renderer_for(HOST.kind if on_cpu else backend.kind, backend.device,
                                             SphereRenderer)
        if problem.n > renderer.max_spheres(memory):  # a sweep past constant memory's capacity
            return not_applicable(f"{memory} memory holds at most {renderer.max_spheres(memory)} spheres")
        block = launch.block or DEFAULT_BLOCK_2D
        frame = renderer.render(problem.subject, problem.size, memory, block, problem.pattern, repeats, twin)
        return render_bench.outcome(problem, frame)
    return run


def run_frame_to_host(problem, launch, backend, repeats):
    renderer = render_bench.renderer_for(backend.kind, backend.device, SphereRenderer)
    if problem.pattern != "uniform":
        return not_applicable("frame-to-host is timed with the uniform pattern only")
    if problem.n > renderer.max_spheres("constant"):  # its kernel reads constant memory: a skip, as spheres-constant
        return not_applicable(f"constant memory holds at most {renderer.max_spheres('constant')} spheres")
    block = launch.block or DEFAULT_BLOCK_2D
    image, timing = renderer.time_frames(problem.subject, problem.size, "constant", block, max(repeats, 50))
    grid = grid_for(*problem.size, block)
    return Outcome(render_bench.matching_pixels(problem, image), timing, f"{block[0]}x{block[1]}",
                   f"{grid[0]}x{grid[1]}")


run_global, run_constant, run_shared, run_binned, run_sorted = (
    _spheres(m) for m in ("global", "constant", "shared", "binned", "sorted"))
run_cpu = _spheres("global", on_cpu=True)
run_cpu_tiles = _spheres("global", on_cpu=True, twin="tiles")
run_cpu_serial = _spheres("global", on_cpu=True, twin="rows-serial")
