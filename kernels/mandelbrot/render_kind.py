"""The Mandelbrot set as a render kind: the paths :class:`kernels.harness.renderable.Renderable` calls (see
its docstring), for the CLI's `render mandelbrot`, the window's tab and the service. Imports no numba."""

from __future__ import annotations

from kernels.harness import escape_kind
from kernels.harness.escape_kind import PREVIEW_WORK, checked, gpu_kernel_key, tiny  # noqa: F401 - hooks
from kernels.mandelbrot.params import MandelbrotParams
from kernels.mandelbrot.renderer import HOST_TWINS

QUICK_TWIN = DEFAULT_TWIN = HOST_TWINS[0]
TWIN_FUNCTIONS = {"scalar": ("kernels.mandelbrot.cpu", ("render_mandelbrot_cpu",))}


def launch_block(params: MandelbrotParams, block) -> tuple[int, int]:
    return tuple(block)  # 2-D blocks as chosen


def renderer(backend):
    from kernels.mandelbrot.renderer import MandelbrotRenderer

    return MandelbrotRenderer(backend)


def preview(params: MandelbrotParams, size):
    from kernels.mandelbrot import reference

    return escape_kind.preview(reference.render, params, size, "mandelbrot",
                               {"center": f"{params.center[0]!r},{params.center[1]!r}"}, PREVIEW_WORK)


def compile_gpu_kernel(key) -> None:
    from kernels.mandelbrot.gpu import gpu_kernel

    gpu_kernel(key)


def row(meta: dict, size) -> tuple[str, int, str]:
    """(op, n, what) of a frame's row: 'mandelbrot' and the pixel count."""
    return escape_kind.row("mandelbrot", meta, size, f"centre {meta.get('center')}")


def variant(meta: dict) -> str:
    """A frame's variant: the 2-D kernel on a GPU, the twin on the host (the plain name for float32)."""
    return ("mandelbrot-cpu" if "twin" in meta else "mandelbrot-2d") + ("-float64" if meta.get("precision") == "float64" else "")


def notes(params: MandelbrotParams, size, out: str, values: dict) -> list[str]:
    return [f"view: centre {params.center[0]!r}, {params.center[1]!r}  zoom {params.zoom!r}  {params.precision}"]
