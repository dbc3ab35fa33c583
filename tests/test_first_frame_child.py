"""The CPU backend's first frame from a child process (raytracer_app/gui/child_process.py): the child loads
the CPU twins while the window is built, renders that one frame, and is ended; the render worker renders
every later frame itself, and any frame the child cannot give."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from kernels.julia import JuliaParams
from kernels.scene import generate_scene
from raytracer_app.gui.child_process import ChildFailed, ChildProcess
from raytracer_app.gui.requests import RenderRequest, warm_request
from tests.conftest import run_fresh_python
from tests.references import julia_book_picture, spheres_reference

WAIT_MS = 60000


def test_a_warm_request_is_a_tiny_frame_of_its_tab(cpu_backend):
    for tab in ("spheres", "julia"):
        r = warm_request(cpu_backend, tab)
        assert r.kind == tab and r.size == (8, 8) and r.backend == cpu_backend
    assert warm_request(cpu_backend, "julia").julia == JuliaParams()


def test_a_warmed_child_renders_what_this_process_renders(cpu_backend):
    from raytracer_app.gui.child_process import render_frame

    scene = generate_scene(12, seed=5, size=(96, 64))
    spheres = RenderRequest("spheres", cpu_backend, (96, 64), (8, 8), scene=scene)
    julia = RenderRequest("julia", cpu_backend, (96, 64), (8, 8), julia=JuliaParams())
    child = ChildProcess(simulator=False, warm=(warm_request(cpu_backend, "spheres"),))
    child.start()
    try:
        never = threading.Event().is_set
        frames = [child.call("render", (r, None, None), never) for r in (spheres, julia)]
    finally:
        child.end()
    assert not child.running()
    here = [render_frame({}, r) for r in (spheres, julia)]
    for there, local in zip(frames, here):
        np.testing.assert_array_equal(there.image, local.image)
    ref = spheres_reference(scene.spheres, 96, 64)
    assert np.abs(frames[0].image.astype(int) - ref).max() <= 1
    assert (frames[0].image != ref).mean() < 1e-3
    book = julia_book_picture(96, 64)  # red where the point stays bounded
    assert (frames[1].image[..., 0] == 255).mean() == pytest.approx((book[..., 0] == 255).mean(), abs=0.01)


class FakeChild:
    """Stands in for the first-frame child: answers ``call`` with ``answer`` (or raises it)."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []
        self.ended = False

    def call(self, kind, payload, should_stop, on_message=None):
        self.calls.append((kind, payload))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def end(self):
        self.ended = True


def _run_worker(qtbot, worker, requests):
    from raytracer_app.gui.workers import WorkerThread

    shown, failed = [], []
    worker.frameReady.connect(lambda frame, request: (shown.append(frame), worker.ack()))
    worker.renderFailed.connect(lambda text, request: (failed.append(text), worker.ack()))
    thread = WorkerThread(worker, "test-first-frame")
    thread.start()
    try:
        for r in requests:
            worker.submit(r)
            count = len(shown) + len(failed)
            qtbot.waitUntil(lambda: len(shown) + len(failed) > count and worker.idle(), timeout=WAIT_MS)
    finally:
        assert thread.shutdown()
    return shown, failed


def test_the_worker_takes_its_first_cpu_frame_from_the_child_then_renders_itself(qtbot, cpu_backend):
    from raytracer_app.gui.workers import RenderWorker

    scene = generate_scene(5, seed=1, size=(40, 30))
    r = RenderRequest("spheres", cpu_backend, (40, 30), (8, 8), scene=scene)
    child = FakeChild("frame from the child")
    worker = RenderWorker(child)
    shown, failed = _run_worker(qtbot, worker, [r, r])
    assert not failed
    assert shown[0] == "frame from the child" and len(child.calls) == 1
    assert child.ended and worker.first_frame_child is None
    ref = spheres_reference(scene.spheres, 40, 30)
    assert np.abs(shown[1].image.astype(int) - ref).max() <= 1  # the second one: this process's twin


def test_a_child_that_fails_costs_only_its_head_start(qtbot, cpu_backend):
    from raytracer_app.gui.workers import RenderWorker

    scene = generate_scene(5, seed=2, size=(40, 30))
    r = RenderRequest("spheres", cpu_backend, (40, 30), (8, 8), scene=scene)
    child = FakeChild(ChildFailed("the first-frame process ended unexpectedly"))
    worker = RenderWorker(child)
    shown, failed = _run_worker(qtbot, worker, [r])
    assert not failed and child.ended and worker.first_frame_child is None
    ref = spheres_reference(scene.spheres, 40, 30)
    assert np.abs(shown[0].image.astype(int) - ref).max() <= 1


def test_while_the_child_warms_the_twins_the_worker_does_not(cpu_backend, monkeypatch):
    """Loading the twins in this process too would hold the GIL the window is being built with."""
    from raytracer_app.gui import workers

    warmed = []
    monkeypatch.setattr(workers, "warm_renderers", lambda renderers, request: warmed.append(request))
    worker = workers.RenderWorker(FakeChild("unused"))
    request = warm_request(cpu_backend)
    worker._warm(request)  # the slot prewarm() reaches on the worker's thread
    assert warmed == []
    worker.first_frame_child = None  # as after the first frame
    worker._warm(request)
    assert warmed == [request]


def _fresh_python(code: str) -> list[str]:
    proc = run_fresh_python(code)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_the_first_frame_child_is_forked_only_from_a_window_still_starting():
    """A fork copies the whole process: only while it is one thread, with no numba and no QApplication."""
    import sys

    out = _fresh_python(
        "import threading, time\n"
        "from raytracer_app.gui.child_process import start_method\n"
        "print(start_method(False), start_method(True))\n"
        "t = threading.Thread(target=time.sleep, args=(0.5,)); t.start(); print(start_method(False)); t.join()\n"
        "from PyQt6.QtCore import QCoreApplication\n"
        "print(start_method(False)); app = QCoreApplication([]); print(start_method(False)); del app\n")
    fork = "fork" if sys.platform.startswith("linux") else "spawn"
    assert out == [fork, "spawn", "spawn", fork, "spawn"]
    out = _fresh_python("import numba\nfrom raytracer_app.gui.child_process import start_method\n"
                        "print(start_method(False))")
    assert out == ["spawn"]


def test_the_first_frame_child_sets_numba_up_as_without_scipy():
    """numba's only use of SciPy at start is a BLAS probe the twins never need (where SciPy is installed,
    as on the GPU hosts, it costs 0.3 s); the twin still renders the definition's image."""
    out = _fresh_python(
        "import sys\n"
        "from raytracer_app.gui.child_process import prepare_child\n"
        "prepare_child(False)\n"
        "from numba.np import arraymath\n"
        "from kernels import backend\n"
        "from kernels.raytrace import SphereRenderer\n"
        "from kernels.scene import generate_scene\n"
        "from tests.references import spheres_reference\n"
        "scene = generate_scene(9, seed=4, size=(64, 48))\n"
        "image = SphereRenderer(backend.resolve('cpu')).render(scene, (64, 48)).image\n"
        "print(arraymath._HAVE_BLAS, 'scipy.linalg' in sys.modules,\n"
        "      int(abs(image.astype(int) - spheres_reference(scene.spheres, 64, 48)).max()))\n")
    assert out == ["False", "False", "0"] or out == ["False", "False", "1"]
