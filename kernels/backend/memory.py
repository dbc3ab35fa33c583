"""The one memory seam: every device allocation, host<->device copy, pinned host buffer and stream the
kernels use goes through these functions, so that leaving numba-cuda's host-side array API (deprecated by
its maintainers in favour of CuPy arrays or ``cuda.core`` buffers, numba-cuda RFC #471) is a change to this
module alone. Kernels take whatever these return: numba launches any object with
``__cuda_array_interface__``.

Works on a real GPU and in numba's CUDA simulator alike; imports numba only when called."""

from __future__ import annotations

import numpy as np


def _cuda():
    from numba import cuda

    return cuda


def empty(shape, dtype):
    """An uninitialised device array."""
    return _cuda().device_array(shape, np.dtype(dtype))


def empty_like(array):
    """An uninitialised device array of ``array``'s shape and dtype."""
    return empty(array.shape, array.dtype)


def zeros(shape, dtype):
    """A zeroed device array."""
    return _cuda().to_device(np.zeros(shape, np.dtype(dtype)))


def to_device(host: np.ndarray, stream=0):
    """A device copy of host array ``host``."""
    return _cuda().to_device(host, stream=stream)


def to_host(device_array, out: np.ndarray | None = None, stream=0) -> np.ndarray:
    """The device array's contents in host memory (into ``out`` when given; asynchronous on a non-default
    ``stream`` into pinned ``out``)."""
    if out is None:
        return device_array.copy_to_host(stream=stream)
    device_array.copy_to_host(out, stream=stream)
    return out


def copy(dst, src) -> None:
    """Device-to-device copy of ``src`` into ``dst`` (same size)."""
    dst.copy_to_device(src)


def pinned_empty(shape, dtype) -> np.ndarray:
    """A page-locked host array: the GPU copies into it by DMA at full link speed."""
    return _cuda().pinned_array(shape, np.dtype(dtype))


def stream():
    """A new CUDA stream."""
    return _cuda().stream()


def synchronize() -> None:
    """Wait for all work queued on the current device."""
    _cuda().synchronize()
