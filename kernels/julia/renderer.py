"""Renders Julia views on one backend: the CUDA kernel (:mod:`.gpu`) or a CPU twin, imported on the first
frame that needs them; this module imports no numba. On the host the SIMD twin (:mod:`.simd`) draws by
default; the scalar twin (:mod:`.cpu`) draws the same image, a pixel at a time (``twin="scalar"``)."""

from __future__ import annotations

import numpy as np

from kernels.backend import HOST, Backend, memory
from kernels.harness.frames import (Frame, HostFrames, Queued, check_size, frame_by_image, launch_untimed, rgba_view,
                                   time_frames)
from kernels.julia.params import COLORMAPS, DTYPES, HOST_TWINS, JuliaParams, check_launch, check_twin, launch_block
from kernels.launch import grid_for
from kernels.launch.packed import LastLaunch


class JuliaRenderer:
    """Renders Julia views on one backend, reusing the device image between frames."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.limits = backend.limits
        self._image_dev = None
        self._warm: set = set()
        self._host_frames = HostFrames()  # pinned, three in turn
        self._launches = LastLaunch()  # the last launch, its arguments converted once (see SphereRenderer)

    def render(self, params: JuliaParams = JuliaParams(), size=(1000, 1000), launch: str = "2d",
               block=(16, 16), repeats: int = 1, twin: str = HOST_TWINS[0], timed: bool = True,
               shipped_image: bool = False) -> Frame:
        """One frame; on the host ``twin`` picks the CPU code ('simd' or 'scalar': the same image). On a GPU,
        ``timed=False`` leaves the kernel untimed (see :func:`time_frames`), and ``shipped_image`` draws a
        single frame with the kernel's shipped image where one runs on this GPU (kernels/launch/images.py)."""
        width, height, args = self._checked(params, size, launch, twin)
        drawn = None
        if shipped_image and repeats == 1 and self.backend.is_gpu and launch != "grouped":  # images: render_julia's
            drawn = self._render_image(params, width, height, launch, block, args)
        if drawn is not None:
            image, timing, frame_time, block, grid = drawn
            return self._frame(image, timing, frame_time, params, launch, twin, block, grid)
        if self.backend.runs_cuda_kernels:
            launch_kernel, image_dev, host, block, grid = self._prepare_gpu(params, width, height, launch, block, args)
            warm_key = params.precision
            warmup = 0 if warm_key in self._warm else 1
            timing, frame_time = time_frames(self.backend, launch_kernel, image_dev, host, repeats, warmup,
                                             timed)
            image = rgba_view(host)
        else:
            if twin == "simd":
                from kernels.julia.simd import render_julia_simd as render_host
            else:
                from kernels.julia.cpu import render_julia_cpu as render_host

            warm_key = (twin, params.precision)
            warmup = 0 if warm_key in self._warm else 1
            pixels = np.empty((height, width), np.uint32)
            launch_kernel = lambda: render_host(pixels, *args)  # noqa: E731
            timing, frame_time = time_frames(HOST, launch_kernel, None, None, repeats, warmup)  # no copy back
            image = rgba_view(pixels)
            block = grid = None
        self._warm.add(warm_key)
        return self._frame(image, timing, frame_time, params, launch, twin, block, grid)

    def start(self, params: JuliaParams = JuliaParams(), size=(1000, 1000), launch: str = "2d",
              block=(16, 16), repeats: int = 1, twin: str = HOST_TWINS[0], timed: bool = True,
              shipped_image: bool = False):
        """Begin one frame; calling the result completes it (see SphereRenderer.start: a single untimed
        frame of a warm kernel on a GPU is queued here, anything else drawn by the call)."""
        if shipped_image or timed or repeats != 1 or not self.backend.is_gpu or params.precision not in self._warm:
            return lambda: self.render(params, size, launch, block, repeats, twin, timed, shipped_image)
        width, height, args = self._checked(params, size, launch, twin)
        launch_kernel, image_dev, host, block, grid = self._prepare_gpu(params, width, height, launch, block, args)
        wait = launch_untimed(launch_kernel, image_dev, host, self._host_frames.copy_stream())
        return Queued(lambda: self._frame(rgba_view(host), None, wait(), params, launch, twin, block, grid))

    def start_request(self, params, size, block, repeats, timed, shipped_image, twin=None):
        """:meth:`start` for a request's JuliaParams, its launch among them (the render kind's path)."""
        return self.start(params, size, params.launch, block, repeats, twin or HOST_TWINS[0], timed, shipped_image)

    def _checked(self, params, size, launch, twin):
        """(width, height, the kernel's arguments after the image) once every value is valid."""
        params.checked()
        width, height = check_size(*size)
        check_launch(launch)
        check_twin(twin)
        f = DTYPES[params.precision]
        args = (f(params.c.real), f(params.c.imag), f(params.center[0]), f(params.center[1]),
                f(params.scale / params.zoom), f(min(width, height) // 2), np.int32(params.iterations),
                np.int32(COLORMAPS.index(params.colormap)))
        return width, height, args

    def _render_image(self, params, width, height, launch, block, args):
        """(image, kernel and frame Timing, block, grid) from the kernel's shipped image, or None where it has
        none that runs here (numba draws then)."""
        from kernels.julia import IMAGES
        from kernels.launch.images import Output

        block = launch_block(launch, block)  # checked by the request (or the bench's launch) already
        grid = grid_for(width, height, block)
        drawn = frame_by_image(IMAGES[params.precision], self.backend.device, grid, block,
                               (Output((height, width), np.uint32), *args))
        return None if drawn is None else (*drawn, block, grid)

    def _prepare_gpu(self, params, width, height, launch, block, args):
        """(launch, device image, the next pinned host image, block, grid) for one GPU frame."""
        from kernels.julia.gpu import gpu_kernel

        block = launch_block(launch, block)  # checked by the request (or the bench's launch) already
        grid = grid_for(width, height, block)
        self.backend.activate()
        if self._image_dev is None or self._image_dev.shape != (height, width):
            self._image_dev = memory.empty((height, width), np.uint32)
        image_dev, kernel = self._image_dev, gpu_kernel(params.precision, launch)
        launch_kernel = self._launches(kernel, grid, block, (image_dev, *args))
        return launch_kernel, image_dev, self._host_frames.next_buffer(height, width), block, grid

    def _frame(self, image, timing, frame_time, params, launch, twin, block, grid) -> Frame:
        meta = {"kind": "julia", "c": f"{params.c.real!r},{params.c.imag!r}",
                "center": f"{params.center[0]!r},{params.center[1]!r}", "zoom": params.zoom,
                "iterations": params.iterations, "colormap": params.colormap, "precision": params.precision,
                "launch": launch if self.backend.runs_cuda_kernels else "host"}
        if not self.backend.runs_cuda_kernels:
            meta["twin"] = twin
        from kernels.julia import RENDERABLE

        return Frame(image, timing, frame_time.median_ms, self.backend.kind, self.backend.device_name, block, grid,
                     meta, frame_time, renderable=RENDERABLE)
