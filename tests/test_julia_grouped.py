"""The Julia set's grouped loop (launch 'grouped', ``julia-grouped``): the escape tested every GROUP iterations,
the escaping group run again testing each one. Its counts and |z|^2 are julia_escape's, and its image the
definition's."""

import numba
import numpy as np
import pytest

from kernels.julia.params import JuliaParams
from kernels.julia.renderer import JuliaRenderer
from kernels.julia.shading import GROUP, julia_escape, julia_escape_grouped
from tests.references import julia_book_picture, julia_plane_float64


@numba.njit
def both_escapes(points, cr, ci, iterations):  # compiled callers: the shared functions have no Python wrapper
    out = np.empty((points.shape[0], 4), np.float64)
    for k in range(points.shape[0]):
        n, mag2 = julia_escape(points[k, 0], points[k, 1], cr, ci, iterations)
        m, mag2_grouped = julia_escape_grouped(points[k, 0], points[k, 1], cr, ci, iterations)
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = n, mag2, m, mag2_grouped
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("iterations", [1, GROUP - 1, GROUP, GROUP + 1, 2 * GROUP + 3, 200])
@pytest.mark.parametrize("c", [complex(-0.8, 0.156), complex(-0.123, 0.745), complex(3e17, -2e17)])
def test_grouped_escape_counts_as_julia_escape(dtype, iterations, c):
    """Every count and |z|^2 alike: points escaping at every step of a group, bounded ones, and (with a huge c)
    points overflowing to infinity and NaN inside the group after they escaped."""
    rng = np.random.default_rng(iterations)
    grid = np.stack(np.meshgrid(np.linspace(-1.6, 1.6, 61), np.linspace(-1.2, 1.2, 41)), -1).reshape(-1, 2)
    points = np.concatenate([grid, rng.uniform(-2, 2, (500, 2)), [[0, 0], [1e17, 1e17], [-3e17, 0]]]).astype(dtype)
    out = both_escapes(points, dtype(c.real), dtype(c.imag), iterations)
    np.testing.assert_array_equal(out[:, 2], out[:, 0])
    np.testing.assert_array_equal(out[:, 3], out[:, 1])  # NaN equals NaN here
    counts = out[:, 0]
    if c == complex(-0.8, 0.156) and iterations == 200:  # every count occurs: escapes inside groups, and bounded
        assert {int(n) % GROUP for n in counts[counts < iterations]} == set(range(GROUP))
        assert (counts == iterations).any()


@pytest.mark.parametrize("colormap", ["classic", "smooth"])
def test_grouped_kernel_is_the_definition(cuda_backend, cpu_backend, colormap):
    w, h = 40, 30
    params = JuliaParams(iterations=50, colormap=colormap)
    frame = JuliaRenderer(cuda_backend).render(params, (w, h), launch="grouped", block=(8, 4))
    cpu = JuliaRenderer(cpu_backend).render(params, (w, h)).image
    if colormap == "classic":  # every product rounded on its own on a GPU too: the same counts, pixel for pixel
        np.testing.assert_array_equal(frame.image, julia_book_picture(w, h, iterations=50))
        np.testing.assert_array_equal(frame.image, cpu)
    else:  # the palette's log and cos may differ by a level between libdevice and the host's libm
        assert np.abs(frame.image.astype(int) - cpu).max() <= 1
    assert frame.meta["launch"] == "grouped" and frame.block == (8, 4)


def test_grouped_kernel_in_float64_at_a_deep_zoom(cuda_backend):
    from tests.test_julia import RABBIT, boundary_point

    w, h, iterations = 16, 12, 200
    x = boundary_point(RABBIT, iterations)
    params = JuliaParams(c=RABBIT, center=(x, 0.0), zoom=1e12, iterations=iterations, precision="float64")
    frame = JuliaRenderer(cuda_backend).render(params, (w, h), launch="grouped", block=(8, 4))
    np.testing.assert_array_equal(frame.image, julia_plane_float64(w, h, RABBIT, (x, 0.0), 1e12, iterations))


def test_bench_runs_the_grouped_variants_and_verifies_them(cuda_backend):
    from kernels.julia import VARIANTS
    from kernels.julia.runs import make_bench_problem
    from kernels.launch import Launch

    by_name = {v.name: v for v in VARIANTS}
    problem = make_bench_problem((24, 16))
    for name in ("julia-grouped", "julia-grouped-float64"):
        outcome = by_name[name].run(problem, Launch((8, 8)), cuda_backend, 1)
        assert outcome.result == problem.expected == 24 * 16, name


@pytest.mark.gpu
@pytest.mark.parametrize("size", [(1000, 1000), (4096, 4096)])
def test_gpu_grouped_kernel_is_the_cpu_twin_pixel_for_pixel(cuda_backend, cpu_backend, size):
    for precision in ("float32", "float64"):
        params = JuliaParams(precision=precision)
        gpu = JuliaRenderer(cuda_backend).render(params, size, launch="grouped").image
        np.testing.assert_array_equal(gpu, JuliaRenderer(cpu_backend).render(params, size).image)


def test_each_launchs_kernel_is_warmed_up_once(cuda_backend, monkeypatch):
    """The 2-D and grouped launches are two kernels: the first frame of each gets its warm-up call (a compile
    left out of the timing), the next frame of either none."""
    from kernels.harness import image_renderer

    warmups = []
    real = image_renderer.time_frames

    def counting(backend, launch, image_dev, host, repeats, warmup, *rest):
        warmups.append(warmup)
        return real(backend, launch, image_dev, host, repeats, warmup, *rest)

    monkeypatch.setattr(image_renderer, "time_frames", counting)
    renderer = JuliaRenderer(cuda_backend)
    params = JuliaParams(iterations=8)
    for launch in ("2d", "grouped", "2d", "grouped"):
        renderer.render(params, (8, 8), launch, (8, 8))
    assert warmups == [1, 1, 0, 0]


def test_the_grouped_launch_is_compiled_ahead_as_its_own_kernel_with_no_shipped_image(monkeypatch):
    """A cold start on a GPU draws from a shipped image while numba compiles the frame's kernel: the grouped
    launch has its own kernel, which no image ships, so none may stand in for it."""
    from kernels.julia import RENDERABLE, gpu, render_kind

    compiled = []
    monkeypatch.setattr(gpu, "gpu_kernel", lambda precision, launch="2d": compiled.append((precision, launch)))
    for launch, precision in (("2d", "float32"), ("book", "float64"), ("grouped", "float64")):
        key = render_kind.gpu_kernel_key(JuliaParams(launch=launch, precision=precision))
        render_kind.compile_gpu_kernel(key)
        assert (RENDERABLE.images.get(key) is not None) == (launch != "grouped")
    assert compiled == [("float32", "2d"), ("float64", "2d"), ("float64", "grouped")]
