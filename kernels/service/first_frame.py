"""The fast start, behind one seam: ``first_frame(request)`` is the window's first picture, drawn by the
render kind's numpy reference renderer (its ``preview``) while numba loads and the kernel compiles or loads
from its cache in the background. Importing numba and numba.cuda takes 0.3-0.8 s and a cold compile seconds;
numpy draws the spheres in milliseconds and the Julia set at reduced resolution in tens of them, so the first
picture arrives in about the time Qt takes to open the window, warm or cold (figures in docs/measurements.md).

The frame is marked ``preview``: it carries no kernel time and is never logged as a measurement; the
kernel's own frame replaces it as soon as it is ready. ``RAYTRACER_FAST_START=0`` switches the preview off
(the window then waits for the kernel's frame)."""

from __future__ import annotations

import os
import time

from kernels.harness.frames import Frame
from kernels.timing import Timing

FAST_START_ENV = "RAYTRACER_FAST_START"


def enabled() -> bool:
    return os.environ.get(FAST_START_ENV, "1").strip() not in ("0", "false", "no", "off")


def first_frame(request) -> Frame | None:
    """A preview of RenderRequest ``request`` from the numpy reference, or None when the fast start is off
    or the request is too costly to preview (a huge scene, a deep iteration count)."""
    if not enabled():
        return None
    t0 = time.perf_counter()
    drawn = request.renderable.preview(request.params, request.size)
    if drawn is None:
        return None
    image, meta = drawn
    elapsed = Timing(((time.perf_counter() - t0) * 1e3,), "numpy preview")
    meta["preview"] = True
    return Frame(image, elapsed, elapsed.median_ms, "preview", "numpy reference (preview)", None, None, meta,
                 preview=True, renderable=request.renderable)
