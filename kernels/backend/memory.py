"""The one memory seam: every device allocation, host<->device copy, pinned host buffer and stream the
kernels use goes through these functions, so that leaving numba-cuda's host-side array API (deprecated by
its maintainers in favour of CuPy arrays or ``cuda.core`` buffers, numba-cuda RFC #471) is a change here.

Two implementations, chosen once per process by ``RAYTRACER_MEMORY``:

- ``numba`` (the default): numba-cuda's device arrays, pinned arrays and streams;
- ``cuda-core``: buffers from the device's memory resource, pinned host memory and streams of NVIDIA's
  ``cuda.core`` (:mod:`kernels.backend.memory_cuda_core`).

The CUDA simulator always uses numba's: its kernels take its fake arrays only. Under numba-cuda-mlir
(kernels/backend/compiler.py) ``numba`` means its own copy of numba-cuda's host-side API: its kernels type
their arguments by its own types (a numba-cuda array would carry numba-cuda's), and ``cuda-core`` is refused.

What callers may rely on, whichever implementation: a device array has ``shape``, ``dtype``, ``ndim``,
``size``, ``nbytes`` and ``len()``; ``a[i:j]`` (the leading axis, step 1) and, above one dimension, ``a[i]``
are views; ``a.view(dtype)`` reads its bytes as another type; ``__cuda_array_interface__`` hands it to numba
kernels, CuPy and torch without a copy. Copies and element reads go through the functions here. Pinned host
arrays are numpy arrays; streams are only handed back to the functions here. Work is ordered on the legacy
default stream, where numba launches kernels; a stream made here waits for it (a blocking stream).

Imports numba (or cuda.core) only when called.
"""

from __future__ import annotations

import functools
import os
from typing import Callable

import numpy as np

from kernels.backend.simulator import simulator_active
from kernels.errors import BackendUnavailable, one_of

ENV = "RAYTRACER_MEMORY"
IMPLEMENTATIONS = ("numba", "cuda-core")


def choose(value: str | None) -> str:
    """The implementation a value of ``RAYTRACER_MEMORY`` names (unset or empty: numba); InputError else."""
    if not value:
        return IMPLEMENTATIONS[0]
    return one_of(value.strip(), IMPLEMENTATIONS, ENV)


@functools.lru_cache(maxsize=1)
def implementation() -> str:
    """The implementation this process uses: numba's in the simulator, else ``RAYTRACER_MEMORY``'s."""
    if simulator_active():
        return IMPLEMENTATIONS[0]
    chosen = choose(os.environ.get(ENV))
    from kernels.backend.compiler import uses_mlir

    if chosen == "cuda-core" and uses_mlir():
        raise BackendUnavailable(f"{ENV}=cuda-core hands kernels numba-cuda's array types, which numba-cuda-mlir's "
                                 f"kernels cannot take: leave {ENV} unset under it")
    return chosen


@functools.lru_cache(maxsize=1)
def _arrays():
    if implementation() == "numba":
        return _NumbaArrays()
    try:
        from kernels.backend.memory_cuda_core import CudaCoreArrays, CudaCoreDriver

        return CudaCoreArrays(CudaCoreDriver())
    except ImportError as exc:
        raise BackendUnavailable(f"{ENV}=cuda-core needs NVIDIA's cuda.core (numba-cuda installs it): "
                                 f"{type(exc).__name__}: {exc}") from exc


def describe() -> str:
    """One line: the implementation in use and what it is made of (result logs, the GPU stage)."""
    return _arrays().describe()


def empty(shape, dtype):
    """An uninitialised device array."""
    return _arrays().empty(shape, np.dtype(dtype))


def empty_like(array):
    """An uninitialised device array of ``array``'s shape and dtype."""
    return empty(array.shape, array.dtype)


def zeros(shape, dtype):
    """A zeroed device array."""
    return _arrays().zeros(shape, np.dtype(dtype))


def to_device(host: np.ndarray, stream=None):
    """A device copy of host array ``host`` (asynchronous on ``stream``: keep ``host`` until it is done)."""
    return _arrays().to_device(host, stream)


def to_host(device_array, out: np.ndarray | None = None, stream=None) -> np.ndarray:
    """The device array's contents in host memory, into ``out`` (its shape and dtype) when given; waits
    for the copy, or on a ``stream`` copies asynchronously (``out`` pinned, read after
    :func:`synchronize` of that stream)."""
    return _arrays().to_host(device_array, out, stream)


def host_copier(out: np.ndarray, device_array, stream=None) -> Callable[[], None]:
    """A call copying ``device_array``'s bytes into pinned host array ``out``, checked here once (both
    C-contiguous, the same number of bytes) and never per call, for copies made every frame or call:
    synchronous, or asynchronous on ``stream``. The call keeps both arrays alive."""
    if not (isinstance(out, np.ndarray) and out.flags.c_contiguous and out.nbytes == device_array.nbytes):
        raise ValueError(f"host_copier needs a C-contiguous host array of {device_array.nbytes} bytes")
    return _arrays().host_copier(out, device_array, stream)


def copy(dst, src) -> None:
    """Device-to-device copy of ``src`` into ``dst`` (same size), ordered on the default stream."""
    _arrays().copy(dst, src)


def pinned_empty(shape, dtype) -> np.ndarray:
    """A page-locked host array: the GPU copies into it by DMA at full link speed."""
    return _arrays().pinned_empty(shape, np.dtype(dtype))


def stream():
    """A new CUDA stream that waits for the default stream's work (for asynchronous copies)."""
    return _arrays().stream()


def synchronize(stream=None) -> None:
    """Wait for ``stream``'s work, or without one for all work queued on the current device."""
    _arrays().synchronize(stream)


def device_pointer(device_array) -> int:
    """The address of the array's first element (to check alignment, or to hand to a C library)."""
    return _arrays().device_pointer(device_array)


def as_numba(device_array):
    """The array as numba's own device array (no copy), for numba library functions that take nothing
    else (``cuda.reduce``)."""
    return _arrays().as_numba(device_array)


class _NumbaArrays:
    """numba-cuda's host-side array API (in the simulator, its fake arrays; under numba-cuda-mlir, its copy)."""

    def __init__(self):
        from kernels.backend.compiler import cuda_module, uses_mlir

        self.cuda, self.mlir = cuda_module(), uses_mlir()

    def describe(self) -> str:
        if self.mlir:
            from kernels.backend.mlir_private import numba_cuda_mlir_version

            return f"numba (numba-cuda-mlir {numba_cuda_mlir_version()} device arrays, pinned arrays and streams)"
        from kernels.backend.numba_private import numba_cuda_version

        return f"numba (numba-cuda {numba_cuda_version()} device arrays, pinned arrays and streams)"

    def empty(self, shape, dtype):
        return self.cuda.device_array(shape, dtype)

    def zeros(self, shape, dtype):
        return self.cuda.to_device(np.zeros(shape, dtype))

    def to_device(self, host, stream):
        return self.cuda.to_device(host, stream=_numba_stream(stream))

    def to_host(self, device_array, out, stream):
        if out is None:
            return device_array.copy_to_host(stream=_numba_stream(stream))
        device_array.copy_to_host(out, stream=_numba_stream(stream))
        return out

    def host_copier(self, out, device_array, stream):
        if simulator_active():  # no driver: the simulator's own copy
            return lambda: device_array.copy_to_host(out)
        if self.mlir:  # numba-cuda's private copy does not know numba-cuda-mlir's arrays: the public one
            return lambda kept=(out, device_array): device_array.copy_to_host(out, stream=_numba_stream(stream))
        from kernels.backend.numba_private import device_to_host

        nbytes, s = out.nbytes, _numba_stream(stream)

        def copy_back(kept=(out, device_array)) -> None:
            device_to_host(out, device_array, nbytes, s)

        return copy_back

    def copy(self, dst, src):
        dst.copy_to_device(src)

    def pinned_empty(self, shape, dtype):
        return self.cuda.pinned_array(shape, dtype)

    def stream(self):
        return self.cuda.stream()

    def synchronize(self, stream):
        if stream is None:
            self.cuda.synchronize()
        else:
            stream.synchronize()

    def device_pointer(self, device_array) -> int:
        pointer = getattr(device_array, "device_ctypes_pointer", None)
        return pointer.value if pointer is not None else device_array.ctypes.data  # the simulator's numpy

    def as_numba(self, device_array):
        return device_array


def _numba_stream(stream):
    return 0 if stream is None else stream
