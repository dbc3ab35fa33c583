from dataclasses import replace

import numpy as np
import pytest

from kernels import InputError
from kernels.julia import JuliaParams, parse_complex
from kernels.julia.renderer import JuliaRenderer
from tests.references import julia_book_picture, julia_complex, julia_plane_float64, julia_view


@pytest.mark.slow
def test_cpu_twin_reproduces_the_book_at_1000(cpu_backend):
    """The book's view is the book's picture (its bitmap shown with row 0 at the bottom), pixel for pixel."""
    frame = JuliaRenderer(cpu_backend).render(JuliaParams(), (1000, 1000))
    ref = julia_book_picture(1000, 1000)
    np.testing.assert_array_equal(frame.image, ref)
    assert 0.01 < (ref[..., 0] == 255).mean() < 0.2  # the set is there, and not everywhere


@pytest.mark.parametrize("launch, block", [("book", None), ("2d", (8, 4))])
def test_cuda_kernel_matches_reference_and_cpu(cuda_backend, cpu_backend, launch, block):
    w, h = 40, 30
    frame = JuliaRenderer(cuda_backend).render(JuliaParams(iterations=50), (w, h), launch=launch, block=block or (16, 16))
    ref = julia_book_picture(w, h, iterations=50)
    cpu = JuliaRenderer(cpu_backend).render(JuliaParams(iterations=50), (w, h)).image
    np.testing.assert_array_equal(cpu, ref)
    if cuda_backend.kind == "sim":
        np.testing.assert_array_equal(frame.image, ref)
    else:  # fused multiply-adds on a GPU can flip a few boundary points of a chaotic iteration
        assert (frame.image != ref).any(axis=2).mean() < 0.01
    assert frame.block == ((1, 1) if launch == "book" else block)
    assert frame.grid == ((w, h) if launch == "book" else (5, 8))


def test_smooth_colormap_is_identical_on_cuda_kernel_and_cpu(cuda_backend, cpu_backend):
    params = JuliaParams(colormap="smooth", iterations=40)
    a = JuliaRenderer(cuda_backend).render(params, (24, 24), block=(8, 8)).image
    b = JuliaRenderer(cpu_backend).render(params, (24, 24)).image
    assert np.abs(a.astype(int) - b).max() <= 1
    assert len(np.unique(b[..., :3].reshape(-1, 3), axis=0)) > 10  # a gradient, not two colours


def test_center_and_zoom_move_the_view(cpu_backend):
    r = JuliaRenderer(cpu_backend)
    base = r.render(JuliaParams(), (200, 200)).image
    moved = r.render(JuliaParams(center=(0.3, 0.1)), (200, 200)).image
    zoomed = r.render(JuliaParams(zoom=4.0), (200, 200)).image
    assert not np.array_equal(base, moved) and not np.array_equal(base, zoomed)


def test_zoom_about_a_pixel_keeps_that_point_fixed():
    p = JuliaParams()
    w, h, px, py = 400, 300, 120, 70

    def plane(q):  # real to the right, imaginary up, row 0 at the top
        step = q.scale / q.zoom / (min(w, h) // 2)
        return q.center[0] + step * (px - w // 2), q.center[1] + step * (h // 2 - 1 - py)

    q = p.zoomed(2.5, px, py, width=w, height=h)
    assert q.zoom == pytest.approx(2.5)
    assert plane(q) == pytest.approx(plane(p))


@pytest.mark.parametrize(
    "params, message",
    [
        (JuliaParams(iterations=-3), "iterations -3 is out of range"),
        (JuliaParams(iterations=0), "iterations 0 is out of range"),
        (JuliaParams(zoom=0.0), "zoom 0.0 must be a positive"),
        (JuliaParams(colormap="rainbow"), "colormap 'rainbow'"),
    ],
)
def test_bad_parameters(cpu_backend, params, message):
    with pytest.raises(InputError, match=message):
        JuliaRenderer(cpu_backend).render(params, (10, 10))


def test_bad_launch(cuda_backend):
    with pytest.raises(InputError, match="launch 'tiled'"):
        JuliaRenderer(cuda_backend).render(JuliaParams(), (8, 8), launch="tiled")


def test_parse_complex():
    assert parse_complex("-0.8,0.156") == complex(-0.8, 0.156)
    with pytest.raises(InputError, match="malformed"):
        parse_complex("1+2i")


@pytest.mark.gpu
@pytest.mark.parametrize("launch", ["book", "2d"])
def test_gpu_book_view_at_1000(cuda_backend, launch):
    frame = JuliaRenderer(cuda_backend).render(JuliaParams(), (1000, 1000), launch=launch)
    ref = julia_book_picture(1000, 1000)
    assert (frame.image != ref).any(axis=2).mean() < 0.001


@pytest.mark.gpu
def test_gpu_untimed_julia_frame_is_the_timed_image(cuda_backend):
    r = JuliaRenderer(cuda_backend)
    timed = r.render(JuliaParams(), (300, 200))
    untimed = r.render(JuliaParams(), (300, 200), timed=False)
    assert timed.kernel is not None and untimed.kernel is None
    np.testing.assert_array_equal(untimed.image, timed.image)
    assert (timed.image != julia_book_picture(300, 200)).any(axis=2).mean() < 0.001


RABBIT = complex(-0.123, 0.745)  # Douady's rabbit: not symmetric under a mirror, only under a half turn


def test_orientation_is_standard_against_complex_numbers(cpu_backend):
    """Real grows to the right and imaginary upwards: the picture matches a plain complex-number
    rendering, and clearly not its mirror image."""
    w, h = 120, 100
    frame = JuliaRenderer(cpu_backend).render(JuliaParams(c=RABBIT, precision="float64"), (w, h))
    bounded = frame.image[..., 0] == 255
    ref = julia_complex(w, h, RABBIT, step=1.5 / (min(w, h) // 2))
    assert 0.05 < ref.mean() < 0.6  # the set is in the picture
    assert (bounded == ref).mean() > 0.995
    assert (bounded == ref[:, ::-1]).mean() < 0.95  # the mirror (real to the left) is another picture


def test_pixel_to_plane_is_standard_and_pan_follows_the_pointer():
    p = JuliaParams(center=(0.25, -0.5), zoom=2.0)
    w, h = 200, 100
    left, top = p.pixel_to_plane(0, 0, width=w, height=h)
    right, bottom = p.pixel_to_plane(w - 1, h - 1, width=w, height=h)
    assert left < 0.25 < right and bottom < -0.5 < top
    assert p.pixel_to_plane(w // 2, h // 2 - 1, width=w, height=h) == pytest.approx((0.25, -0.5))
    q = p.panned(30, -12, width=w, height=h)  # the point under the pointer moves with it
    assert q.pixel_to_plane(40 + 30, 20 - 12, width=w, height=h) == pytest.approx(p.pixel_to_plane(40, 20, width=w, height=h))


def boundary_point(c, iterations, lo=0.0, hi=1.5):
    """A point of the real axis between a bounded start (lo) and an escaping one (hi), by bisection in
    float64 with plain complex numbers: any window around it shows both colours."""
    def bounded(x):
        z = complex(x, 0.0)
        for _ in range(iterations):
            z = z * z + c
            if abs(z) ** 2 > 1000:
                return False
        return True

    assert bounded(lo) and not bounded(hi)
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if bounded(mid) else (lo, mid)
    return lo


@pytest.mark.parametrize("zoom", [1e10, 1e13])
def test_float64_deep_zoom_matches_numpy_float64_where_float32_collapses(cpu_backend, zoom):
    w = h = 48
    iterations = 300
    x = boundary_point(RABBIT, iterations)
    params = JuliaParams(c=RABBIT, center=(x, 0.0), zoom=zoom, iterations=iterations)
    r = JuliaRenderer(cpu_backend)
    deep = r.render(replace(params, precision="float64"), (w, h)).image
    np.testing.assert_array_equal(deep, julia_plane_float64(w, h, RABBIT, (x, 0.0), zoom, iterations))
    assert 0.02 < (deep[..., 0] == 255).mean() < 0.98  # both sides of the boundary, pixel by pixel
    shallow = r.render(params, (w, h)).image  # float32: neighbouring pixels round to one point
    columns32 = len(np.unique(shallow[..., 0], axis=1)[0])
    columns64 = len(np.unique(deep[..., 0], axis=1)[0])
    assert columns32 <= 2 < columns64
    assert not params.float32_resolves(w, h) and params.precision_for(w, h) == "float64"
    assert params.ulps_per_pixel(w, h, "float64") >= 1


def test_float64_kernel_matches_numpy_float64(cuda_backend):
    w, h, iterations = 16, 12, 200
    x = boundary_point(RABBIT, iterations)
    params = JuliaParams(c=RABBIT, center=(x, 0.0), zoom=1e12, iterations=iterations, precision="float64")
    frame = JuliaRenderer(cuda_backend).render(params, (w, h), block=(8, 4))
    ref = julia_plane_float64(w, h, RABBIT, (x, 0.0), 1e12, iterations)
    if cuda_backend.kind == "sim":
        np.testing.assert_array_equal(frame.image, ref)
    else:  # fused multiply-adds on a GPU can flip a few boundary points
        assert (frame.image != ref).any(axis=2).mean() < 0.02


def test_precision_for_switches_when_float32_runs_out():
    book = JuliaParams()
    assert book.float32_resolves(1000, 1000) and book.precision_for(1000, 1000) == "float32"
    near = JuliaParams(center=(-0.39, 0.27), zoom=1e5)
    assert near.ulps_per_pixel(1000, 1000, "float32") < 16 and near.precision_for(1000, 1000) == "float64"
    assert JuliaParams(zoom=1e14, center=(0.4, 0.0)).ulps_per_pixel(1000, 1000, "float64") < 1  # float64's end


def test_view_text_and_command_line_keep_every_digit():
    p = JuliaParams(c=complex(-0.8, 0.156), center=(-0.388642123456789, 0.2671270000000001), zoom=12345.678,
                    precision="float64")
    text = p.view_text()
    assert "-0.388642123456789" in text and "0.2671270000000001" in text and "12345.678" in text
    line = p.command_line(640, 480, "view.png")
    assert line.startswith("raytracer-app render julia ")
    assert "--center=-0.388642123456789,0.2671270000000001" in line and "--precision float64" in line
    assert "--size 640x480" in line and "--c=-0.8,0.156" in line


def test_frame_time_is_never_below_kernel_time(cpu_backend, cuda_backend):
    for backend, size in ((cpu_backend, (64, 48)), (cuda_backend, (8, 8))):
        frame = JuliaRenderer(backend).render(JuliaParams(iterations=20), size, block=(8, 8), repeats=3)
        kernels, frames = frame.kernel.samples_ms, frame.frame_timing.samples_ms
        assert len(kernels) == len(frames) == 3
        assert all(f >= k for f, k in zip(frames, kernels))
        assert frame.frame_ms >= frame.kernel.median_ms and frame.outside_kernel_ms >= 0


def test_bad_precision(cpu_backend):
    with pytest.raises(InputError, match="precision 'float16' is not one of float32, float64"):
        JuliaRenderer(cpu_backend).render(JuliaParams(precision="float16"), (8, 8))


# --- the SIMD CPU twin (the renderer's host path) against the definition and the scalar twin ---------------

SIMD_VIEWS = {
    "book": {},
    "zoomed-panned": dict(center=(0.31, -0.17), zoom=6.5),
    "rabbit": dict(c=RABBIT, iterations=300),
    "dendrite-off-centre": dict(c=complex(0.0, 1.0), center=(-0.4, 0.55), zoom=2.0, iterations=120),
    "all-bounded": dict(c=complex(-0.1, 0.1), zoom=40.0, iterations=60),  # every lane runs every iteration
}


@pytest.mark.parametrize("colormap", ["classic", "smooth"])
@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("view", list(SIMD_VIEWS))
def test_simd_twin_matches_the_definition_and_the_scalar_twin(cpu_backend, view, precision, colormap):
    w, h = 203, 157  # neither a multiple of a block's 16 (8) columns nor of its 2 rows: lanes past the edges
    params = JuliaParams(precision=precision, colormap=colormap, **SIMD_VIEWS[view])
    r = JuliaRenderer(cpu_backend)
    simd = r.render(params, (w, h)).image
    ref = julia_view(w, h, precision=precision, colormap=colormap, **SIMD_VIEWS[view])
    if colormap == "classic":
        np.testing.assert_array_equal(simd, ref)
    else:  # numpy's log and cos may round the last bit otherwise: a level, at a few pixels
        diff = np.abs(simd.astype(int) - ref)
        assert diff.max() <= 1 and diff.any(axis=2).mean() < 1e-3
    np.testing.assert_array_equal(simd, r.render(params, (w, h), twin="scalar").image)  # today's twin's image


def test_simd_twin_deep_zoom_in_float64(cpu_backend):
    w = h = 40
    x = boundary_point(RABBIT, 300)
    params = JuliaParams(c=RABBIT, center=(x, 0.0), zoom=1e11, iterations=300, precision="float64")
    image = JuliaRenderer(cpu_backend).render(params, (w, h), twin="simd").image
    np.testing.assert_array_equal(image, julia_plane_float64(w, h, RABBIT, (x, 0.0), 1e11, 300))


def test_host_frames_say_which_twin_drew_them(cpu_backend):
    from kernels.harness.render import frame_row, frame_variant

    r = JuliaRenderer(cpu_backend)
    simd = r.render(JuliaParams(iterations=20), (32, 24))
    scalar = r.render(JuliaParams(iterations=20), (32, 24), twin="scalar")
    for frame, twin, name in ((simd, "simd", "julia-cpu-simd"), (scalar, "scalar", "julia-cpu")):
        assert frame.block is None and frame.grid is None and frame.meta["launch"] == "host"
        assert frame.meta["twin"] == twin and frame_variant(frame) == name == frame_row(frame).variant
    with pytest.raises(InputError, match="CPU twin 'avx' is not one of simd, scalar"):
        r.render(JuliaParams(), (8, 8), twin="avx")
