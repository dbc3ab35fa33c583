"""Rendering a RenderRequest: the one path the CLI's `render`, the window's worker and the simulator's child
process all take, for every render kind of the registry (each a :class:`kernels.harness.renderable.Renderable`
whose kind module holds its paths). Renderers are kept per (backend, kind) in ``renderers`` (a dict the
caller owns) so device buffers and compiled kernels are reused between frames."""

from __future__ import annotations

from dataclasses import replace

from kernels.service.requests import renderable


def renderer_for(renderers: dict, backend, kind: str):
    """The renderer of ``kind`` on ``backend`` from ``renderers`` (a cache: (backend, kind) -> renderer)."""
    key = (backend, kind)
    if key not in renderers:
        renderers[key] = renderable(kind).renderer(backend)
    return renderers[key]


_CHILD_RENDERERS: dict = {}  # the simulator child's renderers, kept between its render jobs


def render_job(payload, send):
    """The simulator child's side of a render: ``payload`` is (request, repeats)."""
    return render_frame(_CHILD_RENDERERS, *payload)


def render_frame(renderers: dict, r, repeats=None, twin=None):
    """Render RenderRequest ``r`` (optionally with another repeat count, or on the host another twin) into a
    Frame."""
    return start_frame(renderers, r, repeats, twin)()


# --- a cold start on the host: the quickest twin first, the default one compiled in the background ----------
# The CPU twins draw the same image; their first compiles differ by seconds (docs/measurements.md, start-up):
# each kind names its quick twin (the spheres' serial row twin, the scalar Julia twin). A window's first kernel
# frame takes the quick one while the default one compiles in another process (warm_twin_job), which leaves it
# in numba's cache for the frames after.


def quick_twin(kind: str) -> str:
    return renderable(kind).quick_twin


def default_twin(kind: str) -> str:
    return renderable(kind).default_twin


def twin_cached(kind: str, twin: str) -> bool:
    """Whether numba's cache holds the host twin's compiled functions (its first frame then loads, not
    compiles). Imports no numba."""
    import importlib.util

    from kernels.io.numba_cache import has_entry

    module, functions = renderable(kind).twin_functions(twin)
    spec = importlib.util.find_spec(module)
    return spec is not None and spec.origin is not None and all(has_entry(spec.origin, f) for f in functions)


def warm_twin_job(payload, send):
    """A child process's job: compile host twin ``payload`` = (kind, twin) by drawing a tiny frame with it
    (numba saves it in its cache, where the window's process loads it). Returns the seconds it took."""
    import time

    from kernels.backend import HOST

    kind, twin = payload
    t0 = time.perf_counter()
    r = renderable(kind)
    params = r.tiny(r.params())
    r.start(renderer_for({}, HOST, kind), params, (16, 16), (16, 16), 1, True, False, twin)()
    return time.perf_counter() - t0


def start_frame(renderers: dict, r, repeats=None, twin=None, shipped_image=False):
    """Begin rendering RenderRequest ``r``; calling the result completes it and returns the Frame. An untimed
    frame on a GPU is queued at once, so the caller can do other work meanwhile (renderers' ``start``).
    ``twin`` picks the host's CPU code (default: the renderer's); a GPU ignores it. ``shipped_image``: a
    GPU frame from the kernel's shipped image where one runs there (see :func:`shipped_image_for`)."""
    return r.renderable.start(renderer_for(renderers, r.backend, r.kind), r.params, r.size, r.block,
                              repeats or r.repeats, r.timed, shipped_image, twin)


# --- a cold start on a GPU: the kernel's shipped image first, numba's kernel compiled in the background -------
# numba-cuda's import and a kernel's compile take 2-3 s before a first frame (docs/measurements.md); the kernels
# a window opens with are shipped compiled too (kernels/launch/images.py), and draw until numba's are ready.


def gpu_kernel_key(r) -> tuple:
    """(kind, what picks its CUDA kernel): the spheres' memory, the Julia set's precision, ..."""
    return (r.kind, r.renderable.gpu_kernel_key(r.params))


def shipped_image_for(r):
    """The shipped kernel image that can draw RenderRequest ``r`` on its GPU, or None (numba draws it)."""
    if not r.backend.is_gpu:
        return None
    from kernels.launch import images

    _, key = gpu_kernel_key(r)
    image = r.renderable.images.get(key)
    return image if image is not None and images.why_not(image, r.backend.device) is None else None


def compile_gpu_kernel(r) -> None:
    """Compile, or load from numba's cache, the numba kernel that draws RenderRequest ``r``, drawing nothing:
    safe beside frames drawn from its shipped image on another thread."""
    _, key = gpu_kernel_key(r)
    r.backend.activate()
    r.renderable.compile_gpu_kernel(key)


def warm_renderers(renderers: dict, request) -> None:
    """Get the kernel ``request`` needs ready by rendering a tiny copy of it (the CPU twin loads from numba's
    cache, a GPU kernel compiles or loads); any failure is left to the real frame to report."""
    try:
        tiny = replace(request, size=(8, 8), block=(8, 8), params=request.renderable.tiny(request.params), repeats=1)
        render_frame(renderers, tiny)
    except Exception:  # noqa: BLE001 - only a head start: the real frame reports any failure
        pass
