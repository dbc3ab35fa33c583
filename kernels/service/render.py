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


def render_frame(renderers: dict, r, memory=None, repeats=None):
    """Render RenderRequest ``r`` (optionally with another memory or repeat count) into a Frame."""
    return start_frame(renderers, r, memory, repeats)()


def start_frame(renderers: dict, r, memory=None, repeats=None):
    """Begin rendering RenderRequest ``r``; calling the result completes it and returns the Frame. An untimed
    frame on a GPU is queued at once, so the caller can do other work meanwhile (renderers' ``start``)."""
    spheres, julia = renderers_for(renderers, r.backend)
    if r.kind == "spheres":
        return spheres.start(r.scene, size=r.size, memory=memory or r.memory, block=r.block,
                             pattern=r.pattern, repeats=repeats or r.repeats, timed=r.timed)
    return julia.start(r.julia, size=r.size, launch=r.launch, block=r.block, repeats=repeats or r.repeats,
                       timed=r.timed)


def warm_renderers(renderers: dict, request) -> None:
    """Get the kernel ``request`` needs ready by rendering a tiny copy of it (the CPU twin loads from numba's
    cache, a GPU kernel compiles or loads); any failure is left to the real frame to report."""
    scene = generate_scene(1, 0) if request.kind == "spheres" else None
    tiny = replace(request, size=(8, 8), block=(8, 8), scene=scene, repeats=1)
    try:
        render_frame(renderers, tiny)
    except Exception:  # noqa: BLE001 - only a head start: the real frame reports any failure
        pass
