"""What the escape-time render kinds' kind modules (the Julia and Mandelbrot sets' ``render_kind.py``) share:
the hooks that are the same for both (:func:`checked`, :func:`gpu_kernel_key`, :func:`tiny`), the preview's
cost rule and its frame (:func:`preview`), and a frame's timing row (:func:`row`). Imports no numba."""

from __future__ import annotations

import math

PREVIEW_WORK = 1.5e7  # sampled pixels x iterations the preview may cost (about 0.1 s of numpy)
MAX_PREVIEW_STEP = 16  # coarser than 16x16-pixel blocks is no picture: no preview then


def checked(params, backend, words: dict):
    return params.checked()


def gpu_kernel_key(params):
    return params.precision


def tiny(params):
    return params


def preview(render_reference, params, size, kind: str, view: dict, work: float = PREVIEW_WORK):
    """(image, meta) of the numpy reference ``render_reference(params, size, step)`` drawing every step-th
    pixel, the step chosen so the preview costs about ``work``; None where that step would exceed
    MAX_PREVIEW_STEP. ``view``: the meta naming what the view shows besides its zoom."""
    width, height = size
    step = max(1, math.ceil(math.sqrt(width * height * params.iterations / work)))
    if step > MAX_PREVIEW_STEP:
        return None
    meta = {"kind": kind, **view, "zoom": params.zoom, "iterations": params.iterations,
            "precision": params.precision, "preview_step": step}
    return render_reference(params, (width, height), step), meta


def row(op: str, meta: dict, size, view: str) -> tuple[str, int, str]:
    """(op, n, what) of a frame's row: ``op`` and the pixel count, ``view`` then the zoom and iterations."""
    return op, size[0] * size[1], f"{view}, zoom {meta.get('zoom')}, {meta.get('iterations')} iterations"
