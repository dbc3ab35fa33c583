"""The fast start, behind one seam: ``first_frame(request)`` is the window's first picture, drawn by the
numpy reference renderer while numba loads and the kernel compiles or loads from its cache in the
background. Importing numba and numba.cuda takes 0.3-0.8 s and a cold compile seconds; numpy draws the
spheres in milliseconds and the Julia set at reduced resolution in tens of them, so the first picture
arrives in about the time Qt takes to open the window, warm or cold (figures in docs/measurements.md).

The frame is marked ``preview``: it carries no kernel time and is never logged as a measurement; the
kernel's own frame replaces it as soon as it is ready. ``RAYTRACER_FAST_START=0`` switches the preview off
(the window then waits for the kernel's frame)."""

from __future__ import annotations

import math
import os
import time

from kernels.harness.frames import Frame
from kernels.timing import Timing

FAST_START_ENV = "RAYTRACER_FAST_START"
JULIA_WORK = 1.5e7  # sampled pixels x iterations the Julia preview may cost (about 0.1 s of numpy)
MAX_JULIA_STEP = 16  # coarser than 16x16-pixel blocks is no picture: no preview then


def enabled() -> bool:
    return os.environ.get(FAST_START_ENV, "1").strip() not in ("0", "false", "no", "off")


def first_frame(request) -> Frame | None:
    """A preview of RenderRequest ``request`` from the numpy reference, or None when the fast start is off
    or the request is too costly to preview (a huge scene, a deep iteration count)."""
    if not enabled():
        return None
    t0 = time.perf_counter()
    width, height = request.size
    if request.kind == "spheres":
        from kernels.spheres import reference

        if request.scene is None or request.scene.count > 5000:
            return None
        image = reference.render(request.scene.spheres, width, height)
        meta = {"kind": "spheres", "scene": request.scene.name, "spheres": request.scene.count,
                "memory": request.memory, "pattern": request.pattern}
    else:
        from kernels.julia import reference

        params = request.julia
        step = max(1, math.ceil(math.sqrt(width * height * params.iterations / JULIA_WORK)))
        if step > MAX_JULIA_STEP:
            return None
        image = reference.render(params, (width, height), step)
        meta = {"kind": "julia", "c": f"{params.c.real!r},{params.c.imag!r}", "zoom": params.zoom,
                "iterations": params.iterations, "precision": params.precision, "preview_step": step}
    elapsed = Timing(((time.perf_counter() - t0) * 1e3,), "numpy preview")
    meta["preview"] = True
    return Frame(image, elapsed, elapsed.median_ms, "preview", "numpy reference (preview)", None, None, meta,
                 preview=True)
