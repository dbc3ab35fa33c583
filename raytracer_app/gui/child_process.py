"""Render and benchmark work in a child process, for two reasons.

The CUDA simulator runs every GPU thread in Python: one kernel launch can take minutes and a thread cannot
be interrupted inside it. A process can: ``terminate()`` ends it within ``POLL_S``. The simulator child
switches numba to the simulator before anything imports numba, and serves jobs until it is ended.

The CPU backend's first frame: the CPU twin needs numba's CPU target (about 0.5 s to import numba, set it
up and load the twin from numba's cache), work that holds the GIL as importing Qt and building the window
do, so a thread cannot overlap them. A child process can: started as the window starts, it loads the twins
while the window is built, renders the first frame and is ended; the worker then loads the twins itself.

The simulator child is started with the 'spawn' context (a fresh interpreter, no copied Qt state). The
first-frame child is forked where that is safe (see ``start_method``): a fork starts in milliseconds with
what the window has imported already, where a spawned interpreter takes 0.3 s to start and import the
app again. Results (Frames, benchmark rows) come back pickled. This module imports neither Qt nor numba at
module level.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import warnings

POLL_S = 0.05  # how often the parent checks for Stop while the child works


class Cancelled(Exception):
    """The job was stopped; its child process has been ended."""


class ChildFailed(RuntimeError):
    """The job raised in the child; the message is the one line to show."""


# ---------------------------------------------------------------------------------------------- child side
def renderers_for(renderers: dict, backend):
    """(SphereRenderer, JuliaRenderer) for ``backend`` from ``renderers`` (a cache: backend -> both)."""
    if backend not in renderers:
        from kernels.julia import JuliaRenderer
        from kernels.raytrace import SphereRenderer

        renderers[backend] = (SphereRenderer(backend), JuliaRenderer(backend))
    return renderers[backend]


def first_frame_by_driver(renderers: dict, r) -> bool:
    """Whether rendering RenderRequest ``r`` next would launch a saved kernel image through the CUDA driver
    instead of numba (a renderer's first GPU frame: see SphereRenderer.first_frame_by_driver)."""
    spheres, julia = renderers_for(renderers, r.backend)
    if r.kind == "spheres":
        return spheres.first_frame_by_driver(r.memory, r.repeats)
    return julia.first_frame_by_driver(r.julia.precision, r.repeats)


def render_frame(renderers: dict, r, memory=None, repeats=None):
    """Render a RenderRequest ``r`` with ``renderers`` (a cache: backend -> (spheres, julia))."""
    spheres, julia = renderers_for(renderers, r.backend)
    if r.kind == "spheres":
        return spheres.render(r.scene, size=r.size, memory=memory or r.memory, block=r.block,
                              pattern=r.pattern, repeats=repeats or r.repeats)
    block = r.block if r.launch == "2d" else (1, 1)
    return julia.render(r.julia, size=r.size, launch=r.launch, block=block, repeats=repeats or r.repeats)


def run_bench(fields: dict, send, should_stop=lambda: False) -> list:
    """One benchmark panel Run described by plain fields (algorithm, backend, sizes, options, launches,
    variant_names, repeats, want_peak); ``send(kind, value)`` streams 'peak', 'row' and 'progress'."""
    import dataclasses

    from kernels import bench
    from kernels.algorithms import by_name

    spec = by_name(fields["algorithm"])
    backend = fields["backend"]
    backend.activate()
    wrap = fields.get("wrap_run", lambda run: run)  # e.g. a lock around each compute call
    options = spec.options_for(fields["options"], backend)
    for n in fields["sizes"]:
        spec.check_memory(n, options, backend, spec.size.label)
    peak = None
    if fields["want_peak"] and not should_stop():
        peak = wrap(bench.copy_peak)(backend)
        send("peak", peak)
    variants_by_name = {v.name: v for v in spec.variants}
    variants = [dataclasses.replace(variants_by_name[n], run=wrap(variants_by_name[n].run))
                for n in fields["variant_names"]]
    # each size's input is built when its turn comes, not all up front
    problems = (spec.make_problem(n, options, 0) for n in fields["sizes"])
    return bench.run(problems, variants, fields["launches"], backend, fields["repeats"], peak=peak, unit=spec.unit,
                     on_row=lambda row: send("row", row), on_progress=lambda d, t: send("progress", (d, t)),
                     should_stop=should_stop, problem_count=len(fields["sizes"]))


def _one_line(exc: BaseException) -> str:
    from kernels.errors import InputError

    if isinstance(exc, InputError):
        return str(exc)
    from kernels.bench import one_line

    return one_line(exc)


def warm_renderers(renderers: dict, request) -> None:
    """Get the kernel RenderRequest ``request`` needs ready by rendering a tiny copy of it (the CPU twin
    loads from numba's cache, a GPU kernel compiles or loads); any failure is left to the real frame."""
    from dataclasses import replace

    from kernels.scene import generate_scene

    scene = generate_scene(1, 0) if request.kind == "spheres" else None
    tiny = replace(request, size=(8, 8), block=(8, 8), scene=scene, repeats=1)
    try:
        render_frame(renderers, tiny)
    except Exception:  # noqa: BLE001 - only a head start: the real frame reports any failure
        pass


def start_method(simulator: bool) -> str:
    """'fork' for a first-frame child on Linux while this process has one Python thread, no numba and no
    QApplication: the window's start, where a fork copies no lock another thread holds, no threading
    layer and no Qt threads. (Native threads may exist: numpy's BLAS pool, which re-forms itself after a
    fork, and a CUDA driver's; the child calls neither.) 'spawn' otherwise, and always for the
    simulator, which must import numba afresh in simulator mode."""
    if simulator or not sys.platform.startswith("linux"):
        return "spawn"
    qt_app = "PyQt6.QtCore" in sys.modules and sys.modules["PyQt6.QtCore"].QCoreApplication.instance() is not None
    alone = threading.active_count() == 1 and "numba" not in sys.modules and not qt_app
    return "fork" if alone else "spawn"


def prepare_child(simulator: bool) -> None:
    """What a child sets before it imports numba."""
    if simulator:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        # numba's CPU target imports SciPy only to see whether BLAS is there (0.3 s on the GPU hosts, half
        # this child's start); the twins call no BLAS, so this child runs as numba does without SciPy
        sys.modules.setdefault("scipy.linalg.cython_blas", None)


def _child_main(conn, simulator: bool, warm: tuple) -> None:
    prepare_child(simulator)
    renderers: dict = {}
    for request in warm:  # before the first job arrives: that is what this child is for
        warm_renderers(renderers, request)
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):  # the parent has gone
            return
        try:
            if kind == "render":
                result = render_frame(renderers, *payload)
            else:
                result = run_bench(payload, lambda k, v: conn.send((k, v)))
            conn.send(("result", result))
        except Exception as exc:
            conn.send(("error", _one_line(exc)))


# ---------------------------------------------------------------------------------------------- parent side
class ChildProcess:
    """One child process serving render and benchmark jobs, started on first use (or by ``start``) and
    again after it was ended. ``simulator``: it runs CUDA kernels in numba's simulator. ``warm``:
    RenderRequests whose kernels it gets ready as soon as it starts (``warm_renderers``).

    ``call`` blocks the calling (worker) thread, never the GUI thread."""

    def __init__(self, simulator: bool = True, warm: tuple = ()):
        self.simulator = simulator
        self.warm = tuple(warm)
        self._proc = None
        self._conn = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the child now (a no-op while it runs), so that its warm-up overlaps the caller's work."""
        with self._lock:
            self._ensure_started()

    def _ensure_started(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        self.end()
        ctx = multiprocessing.get_context(start_method(self.simulator))
        parent, child = ctx.Pipe()
        name = "cuda-simulator" if self.simulator else "first-frame"
        self._proc = ctx.Process(target=_child_main, args=(child, self.simulator, self.warm), name=name, daemon=True)
        with warnings.catch_warnings():  # Python 3.12 warns of any thread, native ones too: see start_method
            warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
            self._proc.start()
        child.close()
        self._conn = parent

    def call(self, kind: str, payload, should_stop, on_message=None):
        """Run one job ('render': (request, memory, repeats); 'bench': fields) and return its result.
        Messages the job streams go to ``on_message(kind, value)``. When ``should_stop()`` turns true the
        child is ended and Cancelled is raised."""
        with self._lock:
            self._ensure_started()
            conn, proc = self._conn, self._proc
            process_name = proc.name
            conn.send((kind, payload))
            while True:
                if should_stop():
                    self.end()
                    raise Cancelled()
                try:
                    ready = conn.poll(POLL_S)
                    message = conn.recv() if ready else None
                except (EOFError, OSError):
                    message = None
                    ready = True
                if message is None:
                    if ready or not proc.is_alive():
                        self.end()
                        raise ChildFailed(f"the {process_name} process ended unexpectedly")
                    continue
                what, value = message
                if what == "result":
                    return value
                if what == "error":
                    raise ChildFailed(value)
                if on_message is not None:
                    on_message(what, value)

    def end(self) -> None:
        """End the child now (a no-op when none runs); the next call starts a fresh one."""
        proc, conn, self._proc, self._conn = self._proc, self._conn, None, None
        if conn is not None:
            conn.close()
        if proc is not None and proc.is_alive():
            proc.terminate()
            proc.join(0.5)
            if proc.is_alive():
                proc.kill()
                proc.join(0.5)

    def running(self) -> bool:
        return self._proc is not None and self._proc.is_alive()
