"""Renders Julia views on one backend: the CUDA kernel (:mod:`.gpu`) or a CPU twin, imported on the first
frame that needs them; this module imports no numba. On the host the SIMD twin (:mod:`.simd`) draws by
default; the scalar twin (:mod:`.cpu`) draws the same image, a pixel at a time (``twin="scalar"``). What it
shares with the Mandelbrot set's renderer is :class:`kernels.harness.image_renderer.ImageRenderer`."""

from __future__ import annotations

import numpy as np

from kernels.harness.frames import Frame
from kernels.harness.image_renderer import ImageRenderer
from kernels.julia import RENDERABLE
from kernels.julia.params import COLORMAPS, DTYPES, HOST_TWINS, JuliaParams, check_launch, launch_block
from kernels.lazy import entry


def kernel_args(params: JuliaParams, width: int, height: int) -> tuple:
    """The kernel's (and the twins') arguments after the image: c, the centre, the step scale, the half side
    (in the precision), the iteration count and the colormap's index."""
    f = DTYPES[params.precision]
    return (f(params.c.real), f(params.c.imag), f(params.center[0]), f(params.center[1]),
            f(params.scale / params.zoom), f(min(width, height) // 2), np.int32(params.iterations),
            np.int32(COLORMAPS.index(params.colormap)))


class JuliaRenderer(ImageRenderer):
    """Renders Julia views on one backend, reusing the device image between frames."""

    renderable = RENDERABLE
    gpu_kernel = entry("kernels.julia.gpu", "gpu_kernel")
    twins = {"simd": entry("kernels.julia.simd", "render_julia_simd"),
             "scalar": entry("kernels.julia.cpu", "render_julia_cpu")}  # in HOST_TWINS' order: the default first

    def render(self, params: JuliaParams = JuliaParams(), size=(1000, 1000), launch: str = "2d",
               block=(16, 16), repeats: int = 1, twin: str = HOST_TWINS[0], timed: bool = True,
               shipped_image: bool = False) -> Frame:
        """One frame; on the host ``twin`` picks the CPU code ('simd' or 'scalar': the same image). On a GPU,
        ``timed=False`` leaves the kernel untimed (see :func:`time_frames`), and ``shipped_image`` draws a
        single frame with the kernel's shipped image where one runs on this GPU (kernels/launch/images.py)."""
        return self._render(params, size, launch, block, repeats, twin, timed, shipped_image)

    def start(self, params: JuliaParams = JuliaParams(), size=(1000, 1000), launch: str = "2d",
              block=(16, 16), repeats: int = 1, twin: str = HOST_TWINS[0], timed: bool = True,
              shipped_image: bool = False):
        """Begin one frame; calling the result completes it (see :meth:`ImageRenderer._start`)."""
        return self._start(params, size, launch, block, repeats, twin, timed, shipped_image)

    def _request_launch(self, params: JuliaParams) -> str:
        return params.launch

    def _check_launch(self, launch: str) -> None:
        check_launch(launch)

    def _block(self, launch: str, block) -> tuple[int, int]:
        return launch_block(launch, block)

    def _kernel_args(self, params: JuliaParams, width: int, height: int) -> tuple:
        return kernel_args(params, width, height)

    def _kernel_key(self, params: JuliaParams, launch: str) -> tuple:
        return params.precision, launch

    def _kernel_image(self, params: JuliaParams, launch: str):
        # the images are render_julia's, which the book's and the 2-D launches run; grouped has its own kernel
        return None if launch == "grouped" else self.renderable.images[params.precision]

    def _meta(self, params: JuliaParams, launch: str) -> dict:
        return {"c": f"{params.c.real!r},{params.c.imag!r}", "center": f"{params.center[0]!r},{params.center[1]!r}",
                "zoom": params.zoom, "iterations": params.iterations, "colormap": params.colormap,
                "precision": params.precision, "launch": launch if self.backend.runs_cuda_kernels else "host"}
