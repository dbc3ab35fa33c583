"""Renders Mandelbrot views on one backend: the CUDA kernel (:mod:`.gpu`, also in the simulator) or the CPU
twin (:mod:`.cpu`), imported on the first frame that needs them; this module imports no numba."""

from __future__ import annotations

import numpy as np

from kernels.backend import HOST, Backend, memory
from kernels.harness.frames import Frame, HostFrames, Queued, check_size, launch_untimed, rgba_view, time_frames
from kernels.launch import grid_for
from kernels.launch.packed import LastLaunch
from kernels.mandelbrot.params import DEFAULT_VIEW, IMAGE_SIZE, MandelbrotParams

HOST_TWINS = ("scalar",)  # the CPU code that draws on the host


class MandelbrotRenderer:
    """Renders Mandelbrot views on one backend, reusing the device image between frames."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.limits = backend.limits
        self._image_dev = None
        self._warm: set = set()
        self._host_frames = HostFrames()  # pinned, three in turn
        self._launches = LastLaunch()  # the last launch, its arguments converted once

    def render(self, params: MandelbrotParams = DEFAULT_VIEW, size=IMAGE_SIZE, block=(16, 16),
               repeats: int = 1, twin: str = HOST_TWINS[0], timed: bool = True) -> Frame:
        """One frame; on a GPU ``timed=False`` leaves the kernel untimed (see :func:`time_frames`)."""
        width, height, args = self._checked(params, size, twin)
        if self.backend.runs_cuda_kernels:
            launch, image_dev, host, block, grid = self._prepare_gpu(params, width, height, block, args)
            warm_key = params.precision
            timing, frame_time = time_frames(self.backend, launch, image_dev, host, repeats,
                                             0 if warm_key in self._warm else 1, timed)
            image = rgba_view(host)
        else:
            from kernels.mandelbrot.cpu import render_mandelbrot_cpu

            warm_key = (twin, params.precision)
            pixels = np.empty((height, width), np.uint32)
            launch = lambda: render_mandelbrot_cpu(pixels, *args)  # noqa: E731
            timing, frame_time = time_frames(HOST, launch, None, None, repeats, 0 if warm_key in self._warm else 1)
            image = rgba_view(pixels)
            block = grid = None
        self._warm.add(warm_key)
        return self._frame(image, timing, frame_time, params, twin, block, grid)

    def start(self, params: MandelbrotParams = DEFAULT_VIEW, size=IMAGE_SIZE, block=(16, 16),
              repeats: int = 1, twin: str = HOST_TWINS[0], timed: bool = True):
        """Begin one frame; calling the result completes it (a single untimed frame of a warm kernel on a GPU
        is queued here, anything else drawn by the call)."""
        if timed or repeats != 1 or not self.backend.is_gpu or params.precision not in self._warm:
            return lambda: self.render(params, size, block, repeats, twin, timed)
        width, height, args = self._checked(params, size, twin)
        launch, image_dev, host, block, grid = self._prepare_gpu(params, width, height, block, args)
        wait = launch_untimed(launch, image_dev, host, self._host_frames.copy_stream())
        return Queued(lambda: self._frame(rgba_view(host), None, wait(), params, twin, block, grid))

    def start_request(self, params, size, block, repeats, timed, shipped_image, twin=None):
        """:meth:`start` for a request's params (the render kind's path; no kernel image is shipped)."""
        return self.start(params, size, block, repeats, twin or HOST_TWINS[0], timed)

    def _checked(self, params, size, twin):
        """(width, height, the kernel's arguments after the image) once every value is valid."""
        from kernels.errors import one_of

        params.checked()
        width, height = check_size(*size)
        one_of(twin, HOST_TWINS, "CPU twin")
        return width, height, params.kernel_args(width, height)

    def _prepare_gpu(self, params, width, height, block, args):
        """(launch, device image, the next pinned host image, block, grid) for one GPU frame."""
        from kernels.mandelbrot.gpu import gpu_kernel

        block = tuple(block)  # checked by the request (or the bench's launch) already
        grid = grid_for(width, height, block)
        self.backend.activate()
        if self._image_dev is None or self._image_dev.shape != (height, width):
            self._image_dev = memory.empty((height, width), np.uint32)
        image_dev, kernel = self._image_dev, gpu_kernel(params.precision)
        launch = self._launches(kernel, grid, block, (image_dev, *args))
        return launch, image_dev, self._host_frames.next_buffer(height, width), block, grid

    def _frame(self, image, timing, frame_time, params, twin, block, grid) -> Frame:
        from kernels.mandelbrot import RENDERABLE

        meta = {"kind": RENDERABLE.name, "center": f"{params.center[0]!r},{params.center[1]!r}", "zoom": params.zoom,
                "iterations": params.iterations, "precision": params.precision}
        if not self.backend.runs_cuda_kernels:
            meta["twin"] = twin
        return Frame(image, timing, frame_time.median_ms, self.backend.kind, self.backend.device_name, block, grid,
                     meta, frame_time, renderable=RENDERABLE)
