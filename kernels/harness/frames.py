"""What every render returns (:class:`Frame`), how its kernel and whole frame are timed, and the image size
checks that all renders share."""

from __future__ import annotations

import re
import statistics
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from kernels.backend import memory
from kernels.errors import InputError, shown, whole
from kernels.timing import EventTimer, Timing, check_repeats, warmups

MAX_SIDE = 4096
SIM_IMAGE_SIZE = (32, 32)  # the simulator's default: every GPU thread runs in Python


@dataclass
class Frame:
    """One rendered image: row-major RGBA uint8 of shape (height, width, 4), row 0 at the top.

    ``kernel`` is the kernel-only timing (CUDA events on a GPU, wall time elsewhere), None for a GPU frame
    rendered untimed; ``frame_ms`` is the median time of one whole frame: the launch, the kernel and the
    copy back to the host, measured over the same repeats as the kernel, so it is never shorter than its
    kernel (see :func:`time_frames`).
    On the GPU path ``image`` lies in one of three pinned host buffers used in turn (:class:`HostFrames`),
    so the next two frames never overwrite it."""

    image: np.ndarray
    kernel: Timing | None
    frame_ms: float
    backend: str
    device: str
    block: tuple[int, int] | None
    grid: tuple[int, int] | None
    meta: dict = field(default_factory=dict)  # what was rendered: scene, memory, c, ... (PNG metadata)
    frame_timing: Timing | None = None  # every whole frame's time; frame_ms is its median
    preview: bool = False  # drawn by the numpy reference before the kernel was ready: no kernel time
    # the render kind that drew it (kernels.harness.renderable.Renderable): how its timing row reads
    renderable: object = field(default=None, repr=False, compare=False)

    @property
    def outside_kernel_ms(self) -> float | None:
        """Time per frame spent outside the kernel (launch and copy back), median over the repeats; None
        when the kernel was not timed."""
        if self.kernel is None:
            return None
        if self.frame_timing is None:
            return max(0.0, self.frame_ms - self.kernel.median_ms)
        return statistics.median(f - k for f, k in zip(self.frame_timing.samples_ms, self.kernel.samples_ms))

    @property
    def size(self) -> tuple[int, int]:
        return self.image.shape[1], self.image.shape[0]


class HostFrames:
    """Three page-locked (pinned) host images per shape, handed out in turn: the GPU copies a frame into
    pinned memory by DMA at full link speed, and a frame handed out stays intact while the next two are
    rendered (a viewer shows or saves frame N while frame N+1 waits to be shown and N+2 is copied back)."""

    COUNT = 3

    def __init__(self):
        self._buffers: list[np.ndarray] = []
        self._turn = 0
        self._stream = None

    def copy_stream(self):
        """The CUDA stream untimed frames are copied back on (:func:`launch_untimed`), made on first use."""
        if self._stream is None:
            self._stream = memory.stream()
        return self._stream

    def next_buffer(self, height: int, width: int) -> np.ndarray:
        if not self._buffers or self._buffers[0].shape != (height, width):
            self._buffers = [memory.pinned_empty((height, width), np.uint32) for _ in range(self.COUNT)]
        buffer = self._buffers[self._turn]
        self._turn = (self._turn + 1) % self.COUNT
        return buffer


def time_frames(backend, launch, image_dev, host: np.ndarray | None, repeats: int, warmup: int = 1,
                timed: bool = True) -> tuple[Timing | None, Timing]:
    """Kernel and whole-frame timings taken from the same ``repeats`` frames, the last image left in
    ``host``. Each frame's time is its host launch time, plus its kernel, plus its copy back, so no frame
    is ever shorter than its own kernel (and the frames' median is never below the kernels' median).

    On a GPU the kernel is timed with CUDA events behind a short sleeping kernel that keeps the GPU busy
    while Python queues the launch (see kernels.timing), then the image is copied into pinned ``host``.
    That sleep (0.2 ms) and the event calls cost a frame far more than its kernel at hundreds of frames a
    second, so ``timed=False`` skips them: the kernel is not timed (None) and each frame is the wall time of
    its launch and copy back, as a viewer without timing renders. Elsewhere timing costs nothing and
    ``timed`` is ignored.
    In the simulator the kernel is wall time up to a synchronize. On the CPU (``image_dev`` None) the kernel writes
    host memory itself: a frame is its kernel."""
    check_repeats(repeats)
    warmup = warmups(warmup)
    for _ in range(warmup):
        launch()
    kernel_ms, frame_ms = [], []
    if backend.is_gpu:
        if warmup:
            memory.synchronize()
        if not timed:
            for _ in range(repeats):
                t0 = time.perf_counter()
                launch()
                memory.to_host(image_dev, host)  # waits for the kernel
                frame_ms.append((time.perf_counter() - t0) * 1e3)
            return None, Timing(tuple(frame_ms), "wall")
        timer = _event_timer(backend)
        for _ in range(repeats):
            k, launched = timer(launch)
            t1 = time.perf_counter()
            memory.to_host(image_dev, host)
            copy = time.perf_counter() - t1
            kernel_ms.append(k)
            frame_ms.append((launched + copy) * 1e3 + k)
        return Timing(tuple(kernel_ms), "cuda-events"), Timing(tuple(frame_ms), "launch+events+copy")
    sync = memory.synchronize if backend.is_simulator else None
    for _ in range(repeats):
        t0 = time.perf_counter()
        launch()
        if sync:
            sync()
        t1 = time.perf_counter()
        if image_dev is not None:
            memory.to_host(image_dev, host)
        t2 = time.perf_counter()
        kernel_ms.append((t1 - t0) * 1e3)
        frame_ms.append((t2 - t0) * 1e3)
    return Timing(tuple(kernel_ms), "wall"), Timing(tuple(frame_ms), "wall")


class Queued:
    """What a renderer's ``start`` returns for a frame whose GPU work it has queued already: calling it
    waits for the GPU and returns the Frame, within about a frame's time (so a viewer need not show that
    it is busy). Anything else ``start`` returns draws the frame when called."""

    def __init__(self, complete):
        self._complete = complete

    def __call__(self):
        return self._complete()


def launch_untimed(launch, image_dev, host: np.ndarray, stream):
    """Queue one untimed GPU frame and return the call that completes it: ``launch()`` (on the default
    stream), then the copy back into pinned ``host`` on ``stream``, asynchronous, so the caller can do other
    work while the GPU draws (a viewer shows the previous frame). The legacy default stream orders the copy
    after the kernel. The completing call waits for the copy (without the GIL) and returns the frame's wall
    time from launch to the copy's end."""
    t0 = time.perf_counter()
    launch()
    memory.host_copier(host, image_dev, stream)()  # a raw copy: the sizes checked, nothing more

    def wait() -> Timing:
        memory.synchronize(stream)
        return Timing(((time.perf_counter() - t0) * 1e3,), "wall")

    return wait


_TIMERS = threading.local()  # per thread: the backend and its EventTimer


def _event_timer(backend) -> EventTimer:
    """One EventTimer per thread and backend, so a frame does not make (and a driver call wait on) two new
    CUDA events every time: at hundreds of frames a second those calls are a share of the frame."""
    cached = getattr(_TIMERS, "timer", None)
    if cached is None or cached[0] is not backend:
        cached = _TIMERS.timer = (backend, EventTimer())
    return cached[1]


def frame_by_image(image, device: int, grid, block, args, constants=()) -> tuple[np.ndarray, Timing, Timing] | None:
    """A renderer's GPU frame from a kernel's shipped image (kernels/launch/images.py): the RGBA image (from
    the one ``images.Output`` in ``args``) and the kernel's and the whole frame's Timing, labelled with the
    image's architecture; None where the image cannot draw here (numba draws the frame then)."""
    from kernels.backend.driver import DriverError
    from kernels.launch import images

    try:
        drawn = images.draw(image, device, grid, block, args, constants)
    except (images.ImageUnavailable, DriverError):
        return None
    shipped = f"shipped {drawn.arch} image"
    return (rgba_view(drawn.outputs[0]), Timing((drawn.kernel_ms,), f"cuda-events, {shipped}"),
            Timing((drawn.frame_ms,), f"launch+events+copy, {shipped}"))


def rgba_view(pixels: np.ndarray) -> np.ndarray:
    """(H, W) uint32 words written as r | g << 8 | b << 16 | a << 24 -> the (H, W, 4) RGBA bytes, no copy."""
    return pixels.view(np.uint8).reshape(pixels.shape[0], pixels.shape[1], 4)


def parse_size(text: str) -> tuple[int, int]:
    """'WxH' -> (W, H), each 1..4096."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", str(text))
    if not m:
        raise InputError(f"size {shown(text)} is malformed; use WxH, e.g. 1024x1024")
    return check_size(whole(m.group(1), "image width", 1, MAX_SIDE), whole(m.group(2), "image height", 1, MAX_SIDE))


def check_size(width: int, height: int) -> tuple[int, int]:
    for what, v in (("width", width), ("height", height)):
        if not 1 <= v <= MAX_SIDE:
            raise InputError(f"image {what} {v} is out of range; allowed 1..{MAX_SIDE}")
    return width, height
