"""The app's start: the fast start's preview (kernels/service/first_frame.py) is the window's first picture,
drawn without numba; the kernel's own frame follows by itself; RAYTRACER_FAST_START=0 switches it off."""

from __future__ import annotations

import numpy as np
import pytest

from kernels import backend as backends
from kernels.backend import Backend
from kernels.julia.params import JuliaParams
from kernels.spheres.scene import generate_scene
from kernels.service import first_frame as fast_start
from kernels.service.requests import RenderRequest
from tests import references
from tests.conftest import run_fresh_python


CHILD = r"""
import sys, time
from PyQt6.QtCore import QSettings
QSettings.setDefaultFormat(QSettings.Format.IniFormat)
QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, sys.argv[1])
from raytracer_app.gui import open_window
from raytracer_app.gui.common.settings import Keys, make_settings
s = make_settings(); s.setValue(Keys.SIZE.format(sys.argv[3]), "64x48"); s.setValue(Keys.TAB, sys.argv[3]); s.sync()
app, window = open_window(sys.argv[2])
deadline = time.monotonic() + 240
while window.first_frame_s is None and time.monotonic() < deadline:
    app.processEvents()
tab = sys.argv[3]
first = window.last[tab][0]
print("first preview", first.preview, "numba", "numba" in window.first_frame_loaded)
while first.preview and window.last[tab][0] is first and time.monotonic() < deadline:  # the kernel's follows
    app.processEvents()
second = window.last[tab][0]
diff = int(abs(first.image.astype(int) - second.image.astype(int)).max())
print("second preview", second.preview, "diff", diff, "logged", len(window.log.rows))
window.close()
while not window.render_thread.isFinished() and time.monotonic() < deadline:
    app.processEvents()
"""


def _start(tmp_path, backend: str, tab: str, **env):
    proc = run_fresh_python(CHILD, str(tmp_path), backend, tab, timeout=300, QT_QPA_PLATFORM="offscreen",
                            HOME=str(tmp_path), **env)
    assert proc.returncode == 0, proc.stderr
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines() if line.startswith(("first ", "second ")))


@pytest.mark.slow
@pytest.mark.parametrize("tab", ["spheres", "julia"])
def test_a_cpu_window_starts_with_a_preview_without_numba_then_the_kernel_frame(tmp_path, tab):
    lines = _start(tmp_path, "cpu", tab)
    assert lines["first"] == "preview True numba False"
    second = lines["second"].split()
    assert second[:2] == ["preview", "False"]
    assert int(second[3]) <= (1 if tab == "spheres" else 255)  # the Julia preview is coarser than the frame
    assert second[5] == "1"  # only the kernel's frame is a timing row


@pytest.mark.slow
def test_fast_start_off_waits_for_the_kernel(tmp_path):
    lines = _start(tmp_path, "cpu", "spheres", RAYTRACER_FAST_START="0")
    assert lines["first"].startswith("preview False")


@pytest.mark.slow
@pytest.mark.gpu
@pytest.mark.parametrize("tab", ["spheres", "julia"])
def test_a_gpu_window_starts_with_a_preview_then_the_kernel_frame(cuda_backend, tmp_path, tab):
    lines = _start(tmp_path, "cuda", tab)
    assert lines["first"] == "preview True numba False"
    assert lines["second"].startswith("preview False")


@pytest.mark.slow
def test_every_algorithm_package_and_the_window_load_without_numba():
    """What the window imports before its first frame imports no numba (0.3 s, and numba.cuda more)."""
    code = ("import sys, kernels.registry, kernels.harness.bench, kernels.service.first_frame, "
            "kernels.service.render, kernels.service.requests, kernels.spheres.renderer, kernels.julia.renderer, "
            "kernels.inspector.declarations, raytracer_app.gui.shell.main_window; "
            "from kernels.registry import ALGORITHMS; [v.run for a in ALGORITHMS for v in a.variants]; "
            "print(sorted(m for m in sys.modules if m == 'numba' or m.startswith('numba.')))")
    proc = run_fresh_python(code, QT_QPA_PLATFORM="offscreen")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def _request(kind: str, size=(96, 64), scene=None, julia=None) -> RenderRequest:
    from kernels.spheres.params import SphereParams

    params = SphereParams(scene) if scene is not None else julia
    return RenderRequest(kind, Backend("cpu"), size, (16, 16), params)


def test_the_sphere_preview_is_the_independent_reference(monkeypatch):
    monkeypatch.delenv(fast_start.FAST_START_ENV, raising=False)
    scene = generate_scene(40, 3)
    frame = fast_start.first_frame(_request("spheres", scene=scene))
    assert frame.preview and frame.block is None and frame.meta["preview"]
    np.testing.assert_array_equal(frame.image, references.spheres_reference(scene.spheres, 96, 64))


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_the_julia_preview_at_full_resolution_is_the_reference(monkeypatch, precision):
    from kernels.julia import render_kind

    monkeypatch.setattr(render_kind, "PREVIEW_WORK", 1e12)  # step 1: every pixel
    params = JuliaParams(iterations=60, precision=precision)
    frame = fast_start.first_frame(_request("julia", julia=params))
    assert frame.meta["preview_step"] == 1
    expected = references.julia_plane_float64(96, 64, params.c, iterations=60)
    mismatch = (frame.image != expected).any(axis=2).mean()
    assert mismatch < (0.002 if precision == "float32" else 1e-9)


def test_the_julia_preview_samples_the_full_size_mapping(monkeypatch):
    from kernels.julia import reference

    params = JuliaParams(iterations=50)
    coarse = reference.render(params, (96, 64), step=4)
    full = reference.render(params, (96, 64), step=1)
    assert coarse.shape == full.shape
    np.testing.assert_array_equal(coarse[2::4, 2::4], full[2::4, 2::4])  # the sampled pixels are exact
    np.testing.assert_array_equal(coarse[0:4, 0:4], np.broadcast_to(full[2, 2], (4, 4, 4)))


def test_no_preview_when_off_or_too_costly(monkeypatch):
    monkeypatch.setenv(fast_start.FAST_START_ENV, "0")
    assert fast_start.first_frame(_request("spheres", scene=generate_scene(3, 0))) is None
    monkeypatch.setenv(fast_start.FAST_START_ENV, "1")
    assert fast_start.first_frame(_request("julia", size=(4096, 4096), julia=JuliaParams(iterations=100_000))) is None
    assert fast_start.first_frame(_request("spheres", scene=generate_scene(3, 0))) is not None


def test_backend_resolution_asks_the_driver_not_numba():
    code = ("import sys; from kernels import backend; backend.gpu_count(); backend.resolve('auto'); "
            "print('numba' in sys.modules)")
    proc = run_fresh_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
    assert backends.gpu_count() >= 0
