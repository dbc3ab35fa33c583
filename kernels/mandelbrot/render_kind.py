"""The Mandelbrot set as a render kind: the paths :class:`kernels.harness.renderable.Renderable` calls (see
its docstring), for the CLI's `render mandelbrot`, the window's tab and the service. Imports no numba."""

from __future__ import annotations

import math

from kernels.mandelbrot.params import MandelbrotParams
from kernels.mandelbrot.renderer import HOST_TWINS

QUICK_TWIN = DEFAULT_TWIN = HOST_TWINS[0]
TWIN_FUNCTIONS = {"scalar": ("kernels.mandelbrot.cpu", ("render_mandelbrot_cpu",))}
PREVIEW_WORK = 1.5e7  # sampled pixels x iterations the preview may cost (about 0.1 s of numpy)
MAX_PREVIEW_STEP = 16  # coarser than 16x16-pixel blocks is no picture: no preview then


def checked(params: MandelbrotParams, backend, words: dict) -> MandelbrotParams:
    return params.checked()


def launch_block(params: MandelbrotParams, block) -> tuple[int, int]:
    return tuple(block)  # 2-D blocks as chosen


def renderer(backend):
    from kernels.mandelbrot.renderer import MandelbrotRenderer

    return MandelbrotRenderer(backend)


def preview(params: MandelbrotParams, size):
    from kernels.mandelbrot import reference

    step = max(1, math.ceil(math.sqrt(size[0] * size[1] * params.iterations / PREVIEW_WORK)))
    if step > MAX_PREVIEW_STEP:
        return None
    meta = {"kind": "mandelbrot", "center": f"{params.center[0]!r},{params.center[1]!r}", "zoom": params.zoom,
            "iterations": params.iterations, "precision": params.precision, "preview_step": step}
    return reference.render(params, size, step), meta


def gpu_kernel_key(params: MandelbrotParams):
    return params.precision


def compile_gpu_kernel(key) -> None:
    from kernels.mandelbrot.gpu import gpu_kernel

    gpu_kernel(key)


def tiny(params: MandelbrotParams) -> MandelbrotParams:
    return params


def row(meta: dict, size) -> tuple[str, int, str]:
    """(op, n, what) of a frame's row: 'mandelbrot' and the pixel count."""
    return ("mandelbrot", size[0] * size[1],
            f"centre {meta.get('center')}, zoom {meta.get('zoom')}, {meta.get('iterations')} iterations")


def variant(meta: dict) -> str:
    """A frame's variant: the 2-D kernel on a GPU, the twin on the host (the plain name for float32)."""
    return ("mandelbrot-cpu" if "twin" in meta else "mandelbrot-2d") + ("-float64" if meta.get("precision") == "float64" else "")


def notes(params: MandelbrotParams, size, out: str, values: dict) -> list[str]:
    return [f"view: centre {params.center[0]!r}, {params.center[1]!r}  zoom {params.zoom!r}  {params.precision}"]
