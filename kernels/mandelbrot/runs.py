"""The Mandelbrot set as a benchmark: the problem (a view, checked against the CPU twin's image) and how each
variant renders it."""

from __future__ import annotations

from dataclasses import replace

from kernels.backend import HOST
from kernels.harness import render as render_bench
from kernels.harness.frames import check_size
from kernels.launch import DEFAULT_BLOCK_2D
from kernels.mandelbrot.params import DEFAULT_VIEW, IMAGE_SIZE, MandelbrotParams
from kernels.mandelbrot.renderer import MandelbrotRenderer


def make_bench_problem(size=IMAGE_SIZE, params: MandelbrotParams = DEFAULT_VIEW) -> render_bench.RenderProblem:
    """The view ``params`` at ``size``, checked against the CPU twin (``mandelbrot-cpu``) in each precision."""
    size = check_size(*size)
    params = params.checked()
    reference = lambda precision: render_bench.renderer_for(  # noqa: E731
        HOST.kind, 0, MandelbrotRenderer).render(replace(params, precision=precision), size).image.copy()
    return render_bench.RenderProblem("mandelbrot", size, "mandelbrot", size[0] * size[1], reference, params)


def _mandelbrot(precision: str = "float32", on_cpu: bool = False):
    def run(problem, launch, backend, repeats):
        renderer = render_bench.renderer_for(HOST.kind if on_cpu else backend.kind, backend.device, MandelbrotRenderer)
        params = replace(problem.subject, precision=precision)
        frame = renderer.render(params, problem.size, launch.block or DEFAULT_BLOCK_2D, repeats)
        return render_bench.outcome(problem, frame, precision)
    return run


run_2d, run_2d_float64 = _mandelbrot(), _mandelbrot("float64")
run_cpu, run_cpu_float64 = _mandelbrot(on_cpu=True), _mandelbrot("float64", on_cpu=True)
