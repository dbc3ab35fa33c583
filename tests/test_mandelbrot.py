"""The Mandelbrot set, the third render kind, everywhere it appears (the CPU twin, the simulator, a GPU, the
CLI's render and bench, the window's tab, the inspector), each checked against escape-time counts from a
plain numpy loop written here from the set's definition."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.errors import InputError
from kernels.mandelbrot.params import MandelbrotParams
from kernels.service.render import render_frame
from kernels.service.requests import RenderRequest
from tests.test_gui import WAIT, make_window, preset, settings_dir, wait_frame  # noqa: F401 - fixtures

KIND = "mandelbrot"


def escape_counts(params: MandelbrotParams, width: int, height: int) -> np.ndarray:
    """(H, W) iterations before |z|^2 > 4, from z = 0 (``iterations``: bounded): every pixel iterated in a plain
    loop, in the view's precision, z*z + c computed as (zr^2 - zi^2 + x0, 2 zr zi + y0)."""
    f = np.float64 if params.precision == "float64" else np.float32
    step, half = f(params.scale / params.zoom), f(min(width, height) // 2)
    x0 = f(params.center[0]) + step * (np.arange(width) - width // 2).astype(np.float32).astype(f) / half
    y0 = f(params.center[1]) + step * (height // 2 - 1 - np.arange(height)).astype(np.float32).astype(f) / half
    x0, y0 = np.meshgrid(x0, y0)
    zr, zi = np.zeros_like(x0), np.zeros_like(y0)
    counts = np.full(x0.shape, params.iterations)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(params.iterations):
            zr2, zi2 = zr * zr, zi * zi
            counts[(zr2 + zi2 > 4) & (counts == params.iterations)] = i
            zr, zi = zr2 - zi2 + x0, zr * zi + zr * zi + y0
    return counts


def expected_image(params: MandelbrotParams, width: int, height: int) -> np.ndarray:
    """RGBA of the counts: black where bounded, else 9(1-t)t^3, 15(1-t)^2 t^2, 8.5(1-t)^3 t of t = count /
    iterations (in steps of 1/256) times 255, rounded down."""
    counts = escape_counts(params, width, height)
    out = np.zeros((height, width, 4), np.uint8)
    out[..., 3] = 255
    for (y, x), n in np.ndenumerate(counts):
        if n < params.iterations:
            t = n * 256 // params.iterations
            u = 256 - t
            out[y, x, :3] = (9 * u * t**3 * 255 // 2**32, 15 * u**2 * t**2 * 255 // 2**32, 17 * u**3 * t * 255 // 2**33)
    return out


VIEWS = [MandelbrotParams(iterations=40), MandelbrotParams(iterations=40, precision="float64"),
         MandelbrotParams(center=(-0.7436, 0.1318), zoom=60.0, iterations=90)]


def test_the_numpy_reference_is_the_plain_loop():
    from kernels.mandelbrot import reference

    for params in VIEWS:
        np.testing.assert_array_equal(reference.escape_counts(params, (37, 23)), escape_counts(params, 37, 23))
        np.testing.assert_array_equal(reference.render(params, (37, 23)), expected_image(params, 37, 23))


@pytest.mark.parametrize("params", VIEWS, ids=["float32", "float64", "zoomed"])
def test_the_cpu_twin_draws_the_plain_loops_counts(cpu_backend, params):
    frame = render_frame({}, RenderRequest(KIND, cpu_backend, (41, 27), params=params))
    np.testing.assert_array_equal(frame.image, expected_image(params, 41, 27))
    assert frame.block is None and frame.meta["kind"] == KIND and frame.meta["precision"] == params.precision


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_the_cuda_kernel_draws_the_plain_loops_counts(cuda_backend, precision):
    """In the simulator (this session without a GPU) pixel for pixel; on a GPU a fused multiply-add may move
    a boundary pixel's count, so nearly all."""
    params = MandelbrotParams(center=(-0.6, 0.3), zoom=2.0, iterations=30, precision=precision)
    frame = render_frame({}, RenderRequest(KIND, cuda_backend, (13, 10), (8, 4), params))
    mismatch = (frame.image != expected_image(params, 13, 10)).any(axis=2).mean()
    assert mismatch == 0 if cuda_backend.is_simulator else mismatch < 0.02
    assert frame.block == (8, 4) and frame.grid == (2, 3)


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_gpu_the_kernel_draws_the_set_at_full_size(cuda_backend, precision):
    params = MandelbrotParams(iterations=200, precision=precision)
    frame = render_frame({}, RenderRequest(KIND, cuda_backend, (320, 240), params=params))
    assert (frame.image != expected_image(params, 320, 240)).any(axis=2).mean() < 0.002
    assert frame.kernel.method == "cuda-events"


def test_a_request_refuses_a_bad_view(cpu_backend):
    with pytest.raises(InputError, match="iterations 0 is out of range"):
        RenderRequest(KIND, cpu_backend, (8, 8), params=MandelbrotParams(iterations=0))
    with pytest.raises(InputError, match="zoom 10000000.0 is out of range for float32"):
        RenderRequest(KIND, cpu_backend, (8, 8), params=MandelbrotParams(zoom=1e7))


def test_the_fast_start_preview_is_the_numpy_reference(cpu_backend, monkeypatch):
    from kernels.service import first_frame

    monkeypatch.delenv(first_frame.FAST_START_ENV, raising=False)
    params = MandelbrotParams(iterations=25)
    frame = first_frame.first_frame(RenderRequest(KIND, cpu_backend, (30, 20), params=params))
    assert frame.preview and frame.meta["preview_step"] == 1
    np.testing.assert_array_equal(frame.image, expected_image(params, 30, 20))


def test_a_frame_is_a_timing_row_named_by_its_variant(cpu_backend):
    from kernels.harness.render import frame_row

    row = frame_row(render_frame({}, RenderRequest(KIND, cpu_backend, (16, 8), params=MandelbrotParams(iterations=9))))
    assert (row.variant, row.op, row.n) == ("mandelbrot-cpu", "mandelbrot", 128)
    row64 = frame_row(render_frame({}, RenderRequest(KIND, cpu_backend, (16, 8), params=MandelbrotParams(precision="float64"))))
    assert row64.variant == "mandelbrot-cpu-float64"  # a name `bench mandelbrot` has
    assert "9 iterations" in row.note


# --- the CLI --------------------------------------------------------------------------------------------------


def test_cli_render_mandelbrot_writes_the_image(tmp_path, capsys):
    from raytracer_app.cli import main
    from raytracer_app.png import read_png_text

    out = tmp_path / "m.png"
    code = main(["render", KIND, "--backend", "cpu", "--size", "48x32", "--iterations", "50", "--center=-0.75,0.1",
                 "--zoom", "3", "--precision", "float64", "--repeats", "1", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and out.exists()
    assert "mandelbrot: center -0.75,0.1, zoom 3.0, iterations 50, precision float64" in text
    assert "view: centre -0.75, 0.1  zoom 3.0  float64" in text
    assert read_png_text(out)["raytracer:kind"] == KIND


@pytest.mark.parametrize("argv, message", [
    (["--iterations", "0"], "--iterations 0 is out of range; allowed 1..100000"),
    (["--zoom", "0"], "--zoom 0.0 is out of range"),
    (["--center", "1;2"], "--center '1;2' is malformed"),
    (["--precision", "float16"], "--precision: invalid choice: 'float16'"),
    (["--c", "0,1"], "--c does not apply to `render mandelbrot`"),
    (["--block", "8x8"], "--block 8x8 applies to CUDA kernels"),
])
def test_cli_render_mandelbrot_refuses_bad_input_in_one_line(tmp_path, capsys, argv, message):
    from raytracer_app.cli import main

    out = tmp_path / "m.png"
    code = main(["render", KIND, "--backend", "cpu", "--size", "8x8", *argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out.exists()


def test_cli_bench_mandelbrot_verifies_its_variants(capsys):
    from raytracer_app.cli import main

    code = main(["bench", KIND, "--backend", "cpu", "--size", "24x16", "--repeats", "1"])
    text = capsys.readouterr().out
    assert code == 0
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith(KIND)}
    assert set(rows) == {"mandelbrot-cpu", "mandelbrot-cpu-float64"}
    assert all("yes" in rows[v] for v in ("mandelbrot-cpu", "mandelbrot-cpu-float64"))
    skipped = [line for line in text.splitlines() if line.startswith("skipped")]  # said once per reason
    assert len(skipped) == 1 and "mandelbrot-2d, mandelbrot-2d-float64" in skipped[0]  # GPU variants on the cpu


# --- the inspector --------------------------------------------------------------------------------------------


def test_the_inspector_lists_the_gpu_variants():
    from kernels.inspector import declarations

    assert KIND in declarations.targets()
    assert declarations.variants(KIND) == ["mandelbrot-2d", "mandelbrot-2d-float64"]
    assert declarations.declaration(KIND, "mandelbrot-2d-float64").signature.count("float64") == 4


@pytest.mark.slow
def test_the_kernel_compiles_offline_for_sm90():
    from kernels.inspector.report import inspect

    report = inspect(KIND, "mandelbrot-2d", arch="sm_90", block=(16, 16))
    assert report.resources.registers > 0 and report.sass


# --- the window -----------------------------------------------------------------------------------------------


def test_the_window_has_its_tab_with_controls_made_from_the_descriptor(qtbot, make_window, cpu_backend):
    preset(**{"render/size_spheres": "16x16", "render/size_mandelbrot": "24x16"})
    w = make_window(cpu_backend)
    view = w.view
    assert view.tabText(view.NAMES.index(KIND)) == "Mandelbrot" and KIND in view.boxes  # it pans and zooms
    view.select(KIND)
    box = w.controls.kind_boxes[KIND]
    assert box.isVisible() and set(box.widgets) == {"center", "zoom", "iterations", "precision"}
    frame = wait_frame(qtbot, w, KIND)
    params = w.model.params[KIND]
    np.testing.assert_array_equal(frame.image, expected_image(params, 24, 16))
    box.widgets["iterations"].spin.setValue(33)  # the control writes the model, the window draws it
    frame = wait_frame(qtbot, w, KIND, iterations=33)
    np.testing.assert_array_equal(frame.image, expected_image(w.model.params[KIND], 24, 16))
    box.widgets["precision"].textActivated.emit("float64")
    assert w.model.params[KIND].precision == "float64"
    view.boxes[KIND].panRequested.emit(4.0, 0.0)  # a drag right shows points to the left
    assert w.model.params[KIND].center[0] < params.center[0]
    assert box.widgets["center"].boxes[0].value() == pytest.approx(w.model.params[KIND].center[0])
    wait_frame(qtbot, w, KIND, center=f"{w.model.params[KIND].center[0]!r},0.0")


def test_the_windows_values_of_a_generated_kind_are_saved_and_restored(tmp_path, qtbot, cpu_backend):
    from PyQt6.QtCore import QSettings

    from raytracer_app.gui.common.settings import Keys
    from raytracer_app.gui.render.model_settings import load_model, save_model
    from raytracer_app.gui.render.models import RenderModel

    model = RenderModel(cpu_backend)
    assert model.set_params(KIND, iterations=77, center=(0.25, -0.5), zoom=12.5, precision="float64")
    assert not model.set_params(KIND, iterations=0)  # refused, said, nothing changed
    s = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    save_model(s, model)
    again = RenderModel(cpu_backend)
    load_model(s, again)
    assert again.params[KIND] == MandelbrotParams(center=(0.25, -0.5), zoom=12.5, iterations=77, precision="float64")
    s.setValue(Keys.PARAM.format(KIND, "iterations"), "lots")  # a value the control cannot read keeps the default
    third = RenderModel(cpu_backend)
    load_model(s, third)
    assert third.params[KIND].iterations == MandelbrotParams().iterations and third.params[KIND].zoom == 12.5
