"""The Julia set as a benchmark: the problem (a view, checked against the scalar CPU twin's image) and how
each variant renders it."""

from __future__ import annotations

from dataclasses import replace

from kernels.backend import HOST
from kernels.harness import render as render_bench
from kernels.harness.frames import check_size
from kernels.julia.params import IMAGE_SIZE, JuliaParams
from kernels.julia.renderer import JuliaRenderer
from kernels.launch import DEFAULT_BLOCK_2D


def make_bench_problem(size=IMAGE_SIZE, params: JuliaParams = JuliaParams()) -> render_bench.RenderProblem:
    """The Julia view ``params`` at ``size``, checked against the scalar CPU twin (``julia-cpu``)."""
    size = check_size(*size)
    params = params.checked()
    reference = lambda precision: render_bench.renderer_for(  # noqa: E731
        HOST.kind, 0, JuliaRenderer).render(replace(params, precision=precision), size, twin="scalar").image.copy()
    return render_bench.RenderProblem("julia", size, "julia", size[0] * size[1], reference, params)


def _julia(launch_kind: str, on_cpu: bool = False, precision: str = "float32", twin: str = "scalar"):
    def run(problem, launch, backend, repeats):
        renderer = render_bench.renderer_for(HOST.kind if on_cpu else backend.kind, backend.device,
                                             JuliaRenderer)
        params = replace(problem.subject, precision=precision)
        frame = renderer.render(params, problem.size, launch_kind, launch.block or DEFAULT_BLOCK_2D, repeats, twin)
        return render_bench.outcome(problem, frame, precision)
    return run


run_book, run_2d, run_2d_float64 = _julia("book"), _julia("2d"), _julia("2d", precision="float64")
run_grouped, run_grouped_float64 = _julia("grouped"), _julia("grouped", precision="float64")
run_cpu, run_cpu_float64 = _julia("2d", on_cpu=True), _julia("2d", on_cpu=True, precision="float64")
run_cpu_simd = _julia("2d", on_cpu=True, twin="simd")
run_cpu_simd_float64 = _julia("2d", on_cpu=True, precision="float64", twin="simd")
