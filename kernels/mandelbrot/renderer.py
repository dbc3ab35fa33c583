"""Renders Mandelbrot views on one backend: the CUDA kernel (:mod:`.gpu`, also in the simulator) or the CPU
twin (:mod:`.cpu`), imported on the first frame that needs them; this module imports no numba. What it
shares with the Julia set's renderer is :class:`kernels.harness.image_renderer.ImageRenderer`."""

from __future__ import annotations

from kernels.harness.frames import Frame
from kernels.harness.image_renderer import ImageRenderer
from kernels.lazy import entry
from kernels.mandelbrot import RENDERABLE
from kernels.mandelbrot.params import DEFAULT_VIEW, IMAGE_SIZE, MandelbrotParams

HOST_TWINS = ("scalar",)  # the CPU code that draws on the host


class MandelbrotRenderer(ImageRenderer):
    """Renders Mandelbrot views on one backend, reusing the device image between frames."""

    renderable = RENDERABLE
    gpu_kernel = entry("kernels.mandelbrot.gpu", "gpu_kernel")
    twins = {"scalar": entry("kernels.mandelbrot.cpu", "render_mandelbrot_cpu")}  # HOST_TWINS' code

    def render(self, params: MandelbrotParams = DEFAULT_VIEW, size=IMAGE_SIZE, block=(16, 16),
               repeats: int = 1, twin: str = HOST_TWINS[0], timed: bool = True) -> Frame:
        """One frame; on a GPU ``timed=False`` leaves the kernel untimed (see :func:`time_frames`)."""
        return self._render(params, size, None, block, repeats, twin, timed, False)

    def start(self, params: MandelbrotParams = DEFAULT_VIEW, size=IMAGE_SIZE, block=(16, 16),
              repeats: int = 1, twin: str = HOST_TWINS[0], timed: bool = True):
        """Begin one frame; calling the result completes it (see :meth:`ImageRenderer._start`)."""
        return self._start(params, size, None, block, repeats, twin, timed, False)

    def _kernel_args(self, params: MandelbrotParams, width: int, height: int) -> tuple:
        return params.kernel_args(width, height)

    def _kernel_key(self, params: MandelbrotParams, launch) -> tuple:
        return (params.precision,)

    def _meta(self, params: MandelbrotParams, launch) -> dict:
        return {"center": f"{params.center[0]!r},{params.center[1]!r}", "zoom": params.zoom,
                "iterations": params.iterations, "precision": params.precision}
