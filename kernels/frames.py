"""What every render returns, and the checks on image size and block shape that all renders share."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import numpy as np

from kernels.errors import InputError
from kernels.timing import Timing

MAX_SIDE = 4096
DEFAULT_IMAGE_SIZES = {"spheres": (1024, 1024), "julia": (1000, 1000)}  # the seeds' images
SIM_IMAGE_SIZE = (32, 32)  # the simulator's default: every GPU thread runs in Python


@dataclass
class Frame:
    """One rendered image: row-major RGBA uint8 of shape (height, width, 4), row 0 at the top.

    ``kernel`` is the kernel-only timing (CUDA events on a GPU, wall time elsewhere); ``frame_ms`` is the
    wall time of one whole frame: the kernel plus the copy back to the host (see :func:`frame_to_host`)."""

    image: np.ndarray
    kernel: Timing
    frame_ms: float
    backend: str
    device: str
    block: tuple[int, int] | None
    grid: tuple[int, int] | None
    meta: dict = field(default_factory=dict)  # what was rendered: scene, memory, c, ... (PNG metadata)

    @property
    def size(self) -> tuple[int, int]:
        return self.image.shape[1], self.image.shape[0]


def frame_to_host(kind: str, launch, image_dev, kernel: Timing) -> tuple[np.ndarray, float]:
    """The rendered image on the host, and the wall time of one whole frame. CUDA events leave out the
    launch and the copy back, so on a GPU one more frame is launched and copied under a wall clock (a few
    microseconds of GPU time); in the simulator, where a launch takes seconds, it is the kernel's wall
    time plus the copy."""
    t0 = time.perf_counter()
    if kind == "cuda":
        launch()
    pixels = image_dev.copy_to_host()
    ms = (time.perf_counter() - t0) * 1e3 + (0.0 if kind == "cuda" else kernel.median_ms)
    return rgba_view(pixels), ms


def rgba_view(pixels: np.ndarray) -> np.ndarray:
    """(H, W) uint32 words written as r | g << 8 | b << 16 | a << 24 -> the (H, W, 4) RGBA bytes, no copy."""
    return pixels.view(np.uint8).reshape(pixels.shape[0], pixels.shape[1], 4)


def parse_size(text: str) -> tuple[int, int]:
    """'WxH' -> (W, H), each 1..4096."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", str(text))
    if not m:
        raise InputError(f"size {text!r} is malformed; use WxH, e.g. 1024x1024")
    return check_size(int(m.group(1)), int(m.group(2)))


def check_size(width: int, height: int) -> tuple[int, int]:
    for what, v in (("width", width), ("height", height)):
        if not 1 <= v <= MAX_SIDE:
            raise InputError(f"image {what} {v} is out of range; allowed 1..{MAX_SIDE}")
    return width, height


def parse_block(text: str) -> tuple[int, int]:
    """'BXxBY' -> (BX, BY); limits are checked by :func:`check_block` against the device."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", str(text))
    if not m:
        raise InputError(f"block {text!r} is malformed; use BXxBY, e.g. 16x16")
    return int(m.group(1)), int(m.group(2))


def check_block(block: tuple[int, int], limits) -> tuple[int, int]:
    bx, by = block
    if bx < 1 or by < 1:
        raise InputError(f"block {bx}x{by} has a zero dimension; each must be at least 1")
    if bx > limits.max_block_dim[0] or by > limits.max_block_dim[1]:
        raise InputError(
            f"block {bx}x{by} exceeds the device's max block dims {limits.max_block_dim[0]}x{limits.max_block_dim[1]}"
        )
    if bx * by > limits.max_threads_per_block:
        raise InputError(
            f"block {bx}x{by} has {bx * by} threads; the device allows at most {limits.max_threads_per_block} per block"
        )
    return bx, by


def grid_for(width: int, height: int, block: tuple[int, int]) -> tuple[int, int]:
    return (width + block[0] - 1) // block[0], (height + block[1] - 1) // block[1]
