"""Rendering a RenderRequest: the one path the CLI's `render`, the window's worker and the simulator's child
process all take. Renderers are kept per backend (``renderers``: a dict the caller owns) so device buffers
and compiled kernels are reused between frames."""

from __future__ import annotations

from dataclasses import replace

from kernels.spheres.scene import generate_scene


def renderers_for(renderers: dict, backend):
    """(SphereRenderer, JuliaRenderer) for ``backend`` from ``renderers`` (a cache: backend -> both)."""
    if backend not in renderers:
        from kernels.julia.renderer import JuliaRenderer
        from kernels.spheres.renderer import SphereRenderer

        renderers[backend] = (SphereRenderer(backend), JuliaRenderer(backend))
    return renderers[backend]


_CHILD_RENDERERS: dict = {}  # the simulator child's renderers, kept between its render jobs


def render_job(payload, send):
    """The simulator child's side of a render: ``payload`` is (request, memory, repeats)."""
    return render_frame(_CHILD_RENDERERS, *payload)


def render_frame(renderers: dict, r, memory=None, repeats=None, twin=None):
    """Render RenderRequest ``r`` (optionally with another memory or repeat count, or on the host another twin)
    into a Frame."""
    return start_frame(renderers, r, memory, repeats, twin)()


# --- a cold start on the host: the quickest twin first, the default one compiled in the background ----------
# The CPU twins draw the same image; their first compiles differ by seconds (docs/measurements.md, start-up):
# the serial row twin and the scalar Julia twin compile soonest. A window's first kernel frame takes the quick
# one while the default one compiles in another process (warm_twin_job), which leaves it in numba's cache for
# the frames after.
QUICK_TWINS = {"spheres": "rows-serial", "julia": "scalar"}
DEFAULT_TWINS = {"spheres": "tiles", "julia": "simd"}
_TWIN_FUNCTIONS = {("spheres", "tiles"): ("kernels.spheres.tiles", ("bin_spheres", "shade_tiles_cpu")),
                   ("spheres", "rows"): ("kernels.spheres.cpu", ("render_spheres_cpu",)),
                   ("spheres", "rows-serial"): ("kernels.spheres.cpu", ("render_spheres_cpu_serial",)),
                   ("julia", "simd"): ("kernels.julia.simd", ("render_julia_simd",)),
                   ("julia", "scalar"): ("kernels.julia.cpu", ("render_julia_cpu",))}


def twin_cached(kind: str, twin: str) -> bool:
    """Whether numba's cache holds the host twin's compiled functions (its first frame then loads, not
    compiles). Imports no numba."""
    import importlib.util

    from kernels.io.numba_cache import has_entry

    module, functions = _TWIN_FUNCTIONS[(kind, twin)]
    spec = importlib.util.find_spec(module)
    return spec is not None and spec.origin is not None and all(has_entry(spec.origin, f) for f in functions)


def warm_twin_job(payload, send):
    """A child process's job: compile host twin ``payload`` = (kind, twin) by drawing a tiny frame with it
    (numba saves it in its cache, where the window's process loads it). Returns the seconds it took."""
    import time

    kind, twin = payload
    t0 = time.perf_counter()
    from kernels.backend import HOST

    spheres, julia = renderers_for({}, HOST)
    if kind == "spheres":
        spheres.render(generate_scene(2, 0), (16, 16), twin=twin)
    else:
        from kernels.julia.params import JuliaParams

        julia.render(JuliaParams(iterations=8), (16, 16), twin=twin)
    return time.perf_counter() - t0


def start_frame(renderers: dict, r, memory=None, repeats=None, twin=None, shipped_image=False):
    """Begin rendering RenderRequest ``r``; calling the result completes it and returns the Frame. An untimed
    frame on a GPU is queued at once, so the caller can do other work meanwhile (renderers' ``start``).
    ``twin`` picks the host's CPU code (default: the renderer's); a GPU ignores it. ``shipped_image``: a
    GPU frame from the kernel's shipped image where one runs there (see :func:`shipped_image_for`)."""
    spheres, julia = renderers_for(renderers, r.backend)
    host = {"twin": twin} if twin is not None and r.backend.is_host else {}
    if r.kind == "spheres":
        return spheres.start(r.scene, size=r.size, memory=memory or r.memory, block=r.block,
                             pattern=r.pattern, repeats=repeats or r.repeats, timed=r.timed,
                             shipped_image=shipped_image, **host)
    return julia.start(r.julia, size=r.size, launch=r.launch, block=r.block, repeats=repeats or r.repeats,
                       timed=r.timed, shipped_image=shipped_image, **host)


# --- a cold start on a GPU: the kernel's shipped image first, numba's kernel compiled in the background -------
# numba-cuda's import and a kernel's compile take 2-3 s before a first frame (docs/measurements.md); the kernels
# a window opens with are shipped compiled too (kernels/launch/images.py), and draw until numba's are ready.


def gpu_kernel_key(r) -> tuple:
    """(kind, what picks its CUDA kernel): the spheres' memory, the Julia set's precision."""
    return (r.kind, r.memory if r.kind == "spheres" else r.julia.precision)


def shipped_image_for(r):
    """The shipped kernel image that can draw RenderRequest ``r`` on its GPU, or None (numba draws it)."""
    if not r.backend.is_gpu:
        return None
    from kernels import julia, spheres
    from kernels.launch import images

    kind, key = gpu_kernel_key(r)
    image = (spheres.IMAGES if kind == "spheres" else julia.IMAGES).get(key)
    return image if image is not None and images.why_not(image, r.backend.device) is None else None


def compile_gpu_kernel(r) -> None:
    """Compile, or load from numba's cache, the numba kernel that draws RenderRequest ``r``, drawing nothing:
    safe beside frames drawn from its shipped image on another thread."""
    kind, key = gpu_kernel_key(r)
    if kind == "spheres":
        from kernels.spheres.gpu import gpu_kernel
    else:
        from kernels.julia.gpu import gpu_kernel
    r.backend.activate()
    gpu_kernel(key)


def warm_renderers(renderers: dict, request) -> None:
    """Get the kernel ``request`` needs ready by rendering a tiny copy of it (the CPU twin loads from numba's
    cache, a GPU kernel compiles or loads); any failure is left to the real frame to report."""
    scene = generate_scene(1, 0) if request.kind == "spheres" else None
    tiny = replace(request, size=(8, 8), block=(8, 8), scene=scene, repeats=1)
    try:
        render_frame(renderers, tiny)
    except Exception:  # noqa: BLE001 - only a head start: the real frame reports any failure
        pass
