import numpy as np
import pytest

from kernels import InputError
from kernels.julia import JuliaParams, JuliaRenderer, parse_complex
from tests.references import julia_reference


def test_cpu_twin_reproduces_the_book_at_1000(cpu_backend):
    frame = JuliaRenderer(cpu_backend).render(JuliaParams(), (1000, 1000))
    ref = julia_reference(1000, 1000)
    np.testing.assert_array_equal(frame.image, ref)
    assert 0.01 < (ref[..., 0] == 255).mean() < 0.2  # the set is there, and not everywhere


@pytest.mark.parametrize("launch, block", [("book", None), ("2d", (8, 4))])
def test_cuda_kernel_matches_reference_and_cpu(cuda_backend, cpu_backend, launch, block):
    w, h = 40, 30
    frame = JuliaRenderer(cuda_backend).render(JuliaParams(iterations=50), (w, h), launch=launch, block=block or (16, 16))
    ref = julia_reference(w, h, iterations=50)
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

    def plane(q):
        step = q.scale / q.zoom / (min(w, h) // 2)
        return q.center[0] + step * (w // 2 - px), q.center[1] + step * (h // 2 - py)

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
    ref = julia_reference(1000, 1000)
    assert (frame.image != ref).any(axis=2).mean() < 0.001
