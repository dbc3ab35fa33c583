"""The app's start: what a CPU window loads before its first frame, which GPU's driver starts early, and
the shared start that scripts/gui_fps.py measures."""

from __future__ import annotations

import threading

import pytest

from kernels import backend as backends
from kernels import cuda_driver
from tests.conftest import run_fresh_python

CHILD = r"""
import sys, tempfile
from PyQt6.QtCore import QSettings
QSettings.setDefaultFormat(QSettings.Format.IniFormat)
QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, sys.argv[1])
from raytracer_app.gui import open_window
from raytracer_app.gui.settings import Keys, make_settings
s = make_settings(); s.setValue(Keys.SIZE.format("spheres"), "64x64"); s.sync()
app, window = open_window("cpu")
while window.first_frame_s is None:
    app.processEvents()
print("cuda-before-first-frame", "numba.cuda" in sys.modules, window.controls.backends_checked)
print("numba-before-first-frame", "numba" in sys.modules)  # the frame came from the first-frame child
first = window.last["spheres"][0]
window.request_render(force=True)  # the next frame comes from this process's own CPU twin
while window.last["spheres"][0] is first:
    app.processEvents()
print("numba-second-frame-same", bool((first.image == window.last["spheres"][0].image).all()),
      window.worker.first_frame_child is None)
while not window.controls.backends_checked:
    app.processEvents()
item = window.controls.backend.model().item(1)
print("cuda-entry", item.isEnabled(), item.toolTip().splitlines()[-1])
window.close()
while not window.render_thread.isFinished():
    app.processEvents()
"""


def test_a_cpu_window_shows_its_first_frame_without_numba_cuda(tmp_path):
    """numba.cuda costs 0.3 s to import; a CPU window's first frame needs none of it. The GPU check for the
    backend list comes after that frame and then says what it found. The frame itself comes from the
    first-frame child (this process has not even imported numba); the next one, from this process's own
    twin, is the same."""
    proc = run_fresh_python(CHILD, str(tmp_path), timeout=300, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if line.startswith(("cuda-", "numba-")))
    assert lines["cuda-before-first-frame"] == "False False", proc.stdout
    assert lines["numba-before-first-frame"] == "False", proc.stdout
    assert lines["numba-second-frame-same"] == "True True", proc.stdout
    enabled, tip = lines["cuda-entry"].split(" ", 1)
    has_gpu = backends.gpu_count() > 0
    assert enabled == str(has_gpu)
    assert "checking" not in tip and (has_gpu or "needs a CUDA GPU" in tip)


@pytest.mark.parametrize("choice, device, saved, expected", [
    ("cpu", None, {}, None),
    ("sim", None, {}, None),
    ("cuda", None, {}, 0),
    ("cuda", 1, {}, 1),
    ("auto", None, {}, 0),
    ("auto", None, {"backend/name": "cpu"}, None),
    ("auto", None, {"backend/name": "sim"}, None),
    ("auto", None, {"backend/name": "cuda", "backend/device": 3}, 3),
    ("auto", None, {"backend/name": "cuda", "backend/device": "garbage"}, 0),
    ("auto", 2, {"backend/name": "cpu"}, 2),
    ("auto", None, {"backend/name": "garbage"}, 0),
    ("auto", None, {"backend/name": "auto", "backend/device": 3}, 0),
])
def test_which_gpu_starts_early(choice, device, saved, expected, qapp, tmp_path):
    from PyQt6.QtCore import QSettings

    from raytracer_app.gui import _gpu_to_start

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    for key, value in saved.items():
        settings.setValue(key, value)
    assert _gpu_to_start(choice, device, settings) == expected


def _driver_threads():
    return [t for t in threading.enumerate() if t.name == backends.DRIVER_THREAD]


def test_no_driver_no_early_start(monkeypatch):
    monkeypatch.setattr(cuda_driver, "library", lambda: None)
    before = len(_driver_threads())
    backends.start_driver_in_background(0)
    assert len(_driver_threads()) == before
    assert backends.gpu_count() == 0  # and no numba asked


@pytest.mark.gpu
def test_early_driver_start_leaves_numba_a_working_context(cuda_backend):
    from numba import cuda

    backends.start_driver_in_background(cuda_backend.device)
    for t in _driver_threads():
        t.join(timeout=60)
    with cuda.gpus[cuda_backend.device]:
        a = cuda.to_device([1, 2, 3])
        assert list(a.copy_to_host()) == [1, 2, 3]


def test_every_algorithm_module_loads_without_numba():
    """What the window imports before its first frame imports no numba at all (0.3 s), let alone numba.cuda:
    kernel modules bind numba.cuda on their first GPU use (backend.bind_numba_cuda), raytrace and julia make
    their jit functions on first use (kernels/lazy_jit.py), and the kernel-image key reads numba's version
    from package metadata."""
    code = ("import sys, kernels.algorithms, kernels.bench, kernels.render_bench, kernels.kernel_images as k; "
            "import raytracer_app.gui.models, raytracer_app.gui.settings, raytracer_app.gui.timing_log; "
            "from kernels import raytrace, julia; raytrace.shade_pixel.py_func; julia.julia_pixel.__doc__; "
            "k._code_digest(); print(sorted(m for m in sys.modules if m == 'numba' or m.startswith('numba.')))")
    proc = run_fresh_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


GPU_CHILD = r"""
import sys, time
from PyQt6.QtCore import QSettings
QSettings.setDefaultFormat(QSettings.Format.IniFormat)
QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, sys.argv[1])
from raytracer_app.gui import open_window
from raytracer_app.gui.settings import Keys, make_settings
s = make_settings()
s.setValue(Keys.SIZE.format("spheres"), "320x200"); s.setValue(Keys.MEMORY, sys.argv[2]); s.setValue(Keys.TAB, "spheres")
s.sync()
app, window = open_window("cuda")
deadline = time.monotonic() + 120
while window.first_frame_s is None and time.monotonic() < deadline:
    app.processEvents()
first = window.last["spheres"][0]
print("at-first-frame numba.cuda", "numba.cuda" in sys.modules, "numba", "numba" in sys.modules)
window.request_render(force=True)  # the next frame comes from numba's kernel
while window.last["spheres"][0] is first and time.monotonic() < deadline:
    app.processEvents()
second = window.last["spheres"][0]
print("second-frame same", bool((first.image == second.image).all()), "numba.cuda", "numba.cuda" in sys.modules)
window.close()
while not window.render_thread.isFinished() and time.monotonic() < deadline:
    app.processEvents()
"""


@pytest.mark.gpu
@pytest.mark.parametrize("memory", ["global", "constant"])
def test_a_gpu_window_shows_its_first_frame_without_numba_cuda(cuda_backend, memory, tmp_path):
    """With a kernel image saved by an earlier process (here: this one), a GPU window's first frame comes
    through the driver before numba (let alone numba.cuda) is loaded; the next frame comes from numba and
    is the same."""
    from kernels import raytrace

    raytrace.gpu_kernel(memory)  # compiled here, which saves its image for the child
    proc = run_fresh_python(GPU_CHILD, str(tmp_path), memory, timeout=300, QT_QPA_PLATFORM="offscreen",
                            HOME=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "at-first-frame numba.cuda False numba False" in proc.stdout, proc.stdout + proc.stderr
    assert "second-frame same True numba.cuda True" in proc.stdout, proc.stdout + proc.stderr
