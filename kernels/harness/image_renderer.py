"""The renderer of a 2-D image kernel (the Julia and Mandelbrot sets): one uint32 pixel a thread, one launch a
frame, or on the host a CPU twin drawing the same image. :class:`ImageRenderer` holds what such renderers
share: the backend, the device image reused between frames, the kernels already warm, the pinned host frames,
the last launch, timed and untimed frames and the shipped kernel images' path; a subclass says only what is
its own (the hooks below). Imports no numba: the kernels and twins are imported on the first frame that
needs them."""

from __future__ import annotations

import numpy as np

from kernels.backend import HOST, Backend, memory
from kernels.errors import one_of
from kernels.harness.frames import (Frame, HostFrames, Queued, check_size, frame_by_image, launch_untimed, rgba_view,
                                   time_frames)
from kernels.launch import grid_for
from kernels.launch.packed import LastLaunch


class ImageRenderer:
    """Renders a kind's views on one backend, reusing the device image between frames.

    A subclass sets ``renderable`` (its kind's Renderable), ``gpu_kernel`` (an Entry to its ``gpu_kernel``
    maker) and ``twins`` ({twin name: Entry to its host function}, the default first), and defines the
    hooks: :meth:`_kernel_args`, :meth:`_kernel_key`, :meth:`_meta`, and where it has launches or shipped
    images :meth:`_check_launch`, :meth:`_block` and :meth:`_kernel_image`. ``launch`` is the subclass's own
    value (None where it has one launch); the base only passes it on."""

    renderable = None
    gpu_kernel = None
    twins: dict = {}

    def __init__(self, backend: Backend):
        self.backend = backend
        self.limits = backend.limits
        self._image_dev = None
        self._warm: set = set()
        self._host_frames = HostFrames()  # pinned, three in turn
        self._launches = LastLaunch()  # the last launch, its arguments converted once (see SphereRenderer)

    @property
    def host_twins(self) -> tuple[str, ...]:
        return tuple(self.twins)

    def start_request(self, params, size, block, repeats, timed, shipped_image, twin=None):
        """:meth:`_start` for a request's params (the render kind's path); a kind that ships no kernel image
        draws as if none were asked for."""
        shipped_image = shipped_image and bool(self.renderable.images)
        return self._start(params, size, self._request_launch(params), block, repeats, twin or self.host_twins[0],
                           timed, shipped_image)

    def _render(self, params, size, launch, block, repeats: int, twin: str, timed: bool,
                shipped_image: bool) -> Frame:
        """One frame; on the host ``twin`` picks the CPU code. On a GPU, ``timed=False`` leaves the kernel
        untimed (see :func:`time_frames`), and ``shipped_image`` draws a single frame with the kernel's
        shipped image where one runs on this GPU (kernels/launch/images.py)."""
        width, height, args = self._checked(params, size, launch, twin)
        kernel_image = None
        if shipped_image and repeats == 1 and self.backend.is_gpu:
            kernel_image = self._kernel_image(params, launch)
        drawn = None if kernel_image is None else self._render_image(kernel_image, width, height, launch, block, args)
        if drawn is not None:
            image, timing, frame_time, block, grid = drawn
            return self._frame(image, timing, frame_time, params, launch, twin, block, grid)
        if self.backend.runs_cuda_kernels:
            launch_kernel, image_dev, host, block, grid = self._prepare_gpu(params, width, height, launch, block, args)
            warm_key = self._kernel_key(params, launch)  # each kernel warms once (Julia's launches are two)
            warmup = 0 if warm_key in self._warm else 1
            timing, frame_time = time_frames(self.backend, launch_kernel, image_dev, host, repeats, warmup, timed)
            image = rgba_view(host)
        else:
            render_host = self.twins[twin].resolve()
            warm_key = (twin, params.precision)
            warmup = 0 if warm_key in self._warm else 1
            pixels = np.empty((height, width), np.uint32)
            launch_kernel = lambda: render_host(pixels, *args)  # noqa: E731
            timing, frame_time = time_frames(HOST, launch_kernel, None, None, repeats, warmup)  # no copy back
            image = rgba_view(pixels)
            block = grid = None
        self._warm.add(warm_key)
        return self._frame(image, timing, frame_time, params, launch, twin, block, grid)

    def _start(self, params, size, launch, block, repeats: int, twin: str, timed: bool, shipped_image: bool):
        """Begin one frame; calling the result completes it (see SphereRenderer.start: a single untimed
        frame of a warm kernel on a GPU is queued here, anything else drawn by the call)."""
        if (shipped_image or timed or repeats != 1 or not self.backend.is_gpu
                or self._kernel_key(params, launch) not in self._warm):
            return lambda: self._render(params, size, launch, block, repeats, twin, timed, shipped_image)
        width, height, args = self._checked(params, size, launch, twin)
        launch_kernel, image_dev, host, block, grid = self._prepare_gpu(params, width, height, launch, block, args)
        wait = launch_untimed(launch_kernel, image_dev, host, self._host_frames.copy_stream())
        return Queued(lambda: self._frame(rgba_view(host), None, wait(), params, launch, twin, block, grid))

    def _checked(self, params, size, launch, twin):
        """(width, height, the kernel's arguments after the image) once every value is valid."""
        params.checked()
        width, height = check_size(*size)
        self._check_launch(launch)
        one_of(twin, self.host_twins, "CPU twin")
        return width, height, self._kernel_args(params, width, height)

    def _render_image(self, kernel_image, width, height, launch, block, args):
        """(image, kernel and frame Timing, block, grid) from a kernel's shipped image, or None where it has
        none that runs here (numba draws then)."""
        from kernels.launch.images import Output

        block = self._block(launch, block)  # checked by the request (or the bench's launch) already
        grid = grid_for(width, height, block)
        drawn = frame_by_image(kernel_image, self.backend.device, grid, block,
                               (Output((height, width), np.uint32), *args))
        return None if drawn is None else (*drawn, block, grid)

    def _prepare_gpu(self, params, width, height, launch, block, args):
        """(launch, device image, the next pinned host image, block, grid) for one GPU frame."""
        gpu_kernel = self.gpu_kernel.resolve()  # imported before the device is chosen, compiled after

        block = self._block(launch, block)  # checked by the request (or the bench's launch) already
        grid = grid_for(width, height, block)
        self.backend.activate()
        if self._image_dev is None or self._image_dev.shape != (height, width):
            self._image_dev = memory.empty((height, width), np.uint32)
        image_dev, kernel = self._image_dev, gpu_kernel(*self._kernel_key(params, launch))
        launch_kernel = self._launches(kernel, grid, block, (image_dev, *args))
        return launch_kernel, image_dev, self._host_frames.next_buffer(height, width), block, grid

    def _frame(self, image, timing, frame_time, params, launch, twin, block, grid) -> Frame:
        meta = {"kind": self.renderable.name, **self._meta(params, launch)}
        if not self.backend.runs_cuda_kernels:
            meta["twin"] = twin
        return Frame(image, timing, frame_time.median_ms, self.backend.kind, self.backend.device_name, block, grid,
                     meta, frame_time, renderable=self.renderable)

    # --- what a subclass says ----------------------------------------------------------------------------------

    def _kernel_args(self, params, width: int, height: int) -> tuple:
        """The kernel's (and the twins') arguments after the image, in the params' precision."""
        raise NotImplementedError

    def _kernel_key(self, params, launch) -> tuple:
        """The arguments of ``gpu_kernel`` for the kernel that draws ``params`` with ``launch``."""
        raise NotImplementedError

    def _meta(self, params, launch) -> dict:
        """A frame's metadata after its kind (the host twin is added after it on the host)."""
        raise NotImplementedError

    def _request_launch(self, params):
        """The launch a request's params ask for."""
        return None

    def _check_launch(self, launch) -> None:
        """InputError where ``launch`` is not one of the kind's."""

    def _block(self, launch, block) -> tuple[int, int]:
        """The block ``launch`` runs with (checked by the request already)."""
        return tuple(block)

    def _kernel_image(self, params, launch):
        """The shipped KernelImage that draws ``params`` with ``launch``, or None."""
        return None
