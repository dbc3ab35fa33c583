"""The memory seam's cuda.core implementation (``RAYTRACER_MEMORY=cuda-core``, :mod:`kernels.backend.memory`):
what numba-cuda's maintainers recommend in place of its deprecated host-side array API where CuPy is not
wanted.

- Device memory: ``cuda.core`` Buffers from the current device's memory resource (its stream-ordered memory
  pool), allocated and freed on the legacy default stream, where numba launches kernels.
- Device arrays: :class:`DeviceArray`, a C-contiguous shape and dtype over such a buffer, shown to numba
  kernels, CuPy and torch through ``__cuda_array_interface__`` (version 3, no stream: the legacy default
  stream orders the work), and launched by numba as it launches its own arrays
  (:class:`~kernels.backend.numba_private.NumbaArrayProtocol`).
- Pinned host memory: cuda.core's ``PinnedMemoryResource`` (a host memory pool) where the device has host
  memory pools, else its ``LegacyPinnedMemoryResource`` (``cuMemAllocHost``), seen as numpy arrays.
- Streams: cuda.core Streams, blocking (they wait for the legacy default stream, as numba's did).
- Copies and zeroing: one driver call each through ``cuda.bindings`` (``cuMemcpyHtoD``/``DtoH``/``DtoD``,
  their ``Async`` forms on a stream, ``cuMemsetD8Async``), the calls numba's copies and cuda.core's
  ``Buffer.copy_from`` make, without a Buffer object per copy.

Launch cost: numba turns an argument it knows only by ``__cuda_array_interface__`` into a StridedMemoryView
on every launch (numba-cuda 0.30, ``devicearray._to_strided_memory_view``: a driver call among it), where
its own arrays carry a ready view; ours carry one too (NumbaArrayProtocol), and a packed launch
(:mod:`kernels.launch.packed`) converts its arguments once anyway. :class:`CudaCoreDriver` is the only code here that calls cuda.core and cuda.bindings (the tests
run the rest against a host-memory stand-in).
"""

from __future__ import annotations

import math
import operator
import threading

import numpy as np

from kernels.backend.numba_private import NumbaArrayProtocol


class DeviceArray(NumbaArrayProtocol):
    """``shape`` elements of ``dtype``, C-contiguous from device address ``ptr``; ``owner`` (the Buffer)
    keeps the memory alive as long as any array viewing it."""

    def __init__(self, ptr: int, shape, dtype, owner):
        self.ptr, self.owner = int(ptr), owner
        self.shape = tuple(operator.index(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.ndim = len(self.shape)
        self.size = math.prod(self.shape)
        self.nbytes = self.size * self.dtype.itemsize
        self.__cuda_array_interface__ = {"shape": self.shape, "strides": None, "typestr": self.dtype.str,
                                         "data": (self.ptr, False), "version": 3, "stream": None}

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    def __getitem__(self, key) -> DeviceArray:
        """A view: a slice of the leading axis (step 1), or above one dimension one row."""
        if not self.shape:
            raise TypeError("a 0-d device array cannot be indexed")
        row = self.nbytes // self.shape[0] if self.shape[0] else 0
        if isinstance(key, slice):
            start, stop, step = key.indices(self.shape[0])
            if step != 1:
                raise TypeError("device arrays are sliced with step 1 only")
            return DeviceArray(self.ptr + start * row, (max(stop - start, 0), *self.shape[1:]), self.dtype, self.owner)
        if self.ndim > 1 and isinstance(key, (int, np.integer)):
            i = operator.index(key)
            if not -self.shape[0] <= i < self.shape[0]:
                raise IndexError(f"row {i} of a device array of {self.shape[0]} rows")
            return DeviceArray(self.ptr + (i % self.shape[0]) * row, self.shape[1:], self.dtype, self.owner)
        raise TypeError("a device array takes a slice, or above one dimension a row index; read its elements "
                        "on the host (kernels.backend.memory.to_host)")

    def view(self, dtype) -> DeviceArray:
        """The same bytes read as ``dtype`` (the last axis rescaled, as numpy's ``view``)."""
        dtype = np.dtype(dtype)
        last = self.shape[-1] * self.dtype.itemsize if self.shape else self.dtype.itemsize
        if last % dtype.itemsize:
            raise ValueError(f"{last} bytes per row cannot be read as {dtype.name}")
        return DeviceArray(self.ptr, (*self.shape[:-1], last // dtype.itemsize), dtype, self.owner)

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype.name}, ptr={self.ptr:#x})"


class _HostView:
    """A numpy array's view of pinned memory: ``np.asarray`` of it keeps it, and so ``owner``, alive."""

    def __init__(self, ptr: int, shape, dtype, owner):
        self.__array_interface__ = {"data": (ptr, False), "shape": tuple(shape), "typestr": dtype.str,
                                    "version": 3}
        self.owner = owner


class CudaCoreArrays:
    """The seam's functions (see :mod:`kernels.backend.memory`) over a driver (:class:`CudaCoreDriver`)."""

    def __init__(self, driver):
        self.driver = driver

    def describe(self) -> str:
        return f"cuda-core ({self.driver.describe()})"

    def empty(self, shape, dtype) -> DeviceArray:
        shape = _shape(shape)
        ptr, owner = self.driver.allocate(math.prod(shape) * dtype.itemsize)
        return DeviceArray(ptr, shape, dtype, owner)

    def zeros(self, shape, dtype) -> DeviceArray:
        array = self.empty(shape, dtype)
        self.driver.memset_zero(array.ptr, array.nbytes)
        return array

    def to_device(self, host, stream) -> DeviceArray:
        contiguous = np.ascontiguousarray(host)
        array = self.empty(contiguous.shape, contiguous.dtype)
        self.driver.host_to_device(array.ptr, contiguous.ctypes.data, contiguous.nbytes, stream)
        if stream is not None and contiguous is not host:  # our own copy of ``host`` goes now: wait for it
            self.driver.synchronize(stream)
        return array

    def to_host(self, device_array, out, stream) -> np.ndarray:
        if out is None:
            out = np.empty(device_array.shape, device_array.dtype)
        elif not (isinstance(out, np.ndarray) and out.shape == device_array.shape and out.dtype == device_array.dtype
                  and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"to_host needs a writeable C-contiguous host array of shape {device_array.shape} "
                             f"and dtype {device_array.dtype.name}")
        self.driver.device_to_host(out.ctypes.data, device_array.ptr, device_array.nbytes, stream)
        return out

    def host_copier(self, out, device_array, stream):
        return self.driver.device_to_host_call(out.ctypes.data, device_array.ptr, out.nbytes, stream,
                                               kept=(out, device_array))

    def copy(self, dst, src) -> None:
        if dst.nbytes != src.nbytes:
            raise ValueError(f"copy of {src.nbytes} bytes into a device array of {dst.nbytes}")
        self.driver.device_to_device(dst.ptr, src.ptr, src.nbytes)

    def pinned_empty(self, shape, dtype) -> np.ndarray:
        shape = _shape(shape)
        ptr, owner = self.driver.allocate_pinned(math.prod(shape) * dtype.itemsize)
        return np.asarray(_HostView(ptr, shape, dtype, owner))

    def stream(self):
        return self.driver.stream()

    def synchronize(self, stream) -> None:
        self.driver.synchronize(stream)

    def device_pointer(self, device_array) -> int:
        return device_array.ptr

    def as_numba(self, device_array):
        from numba import cuda

        return cuda.from_cuda_array_interface(device_array.__cuda_array_interface__, owner=device_array, sync=False)


def _shape(shape) -> tuple[int, ...]:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(operator.index(s) < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    return tuple(operator.index(s) for s in shape)


class CudaCoreDriver:
    """The GPU side: cuda.core for memory resources, streams and the device; cuda.bindings for the single
    driver calls (copies, zeroing, synchronising)."""

    def __init__(self):
        from cuda import core
        from cuda.bindings import driver

        self.core, self.cu = core, driver
        self.legacy = core.LEGACY_DEFAULT_STREAM
        self.ok = driver.CUresult.CUDA_SUCCESS
        self._local = threading.local()  # cuda.core wants set_current() once per thread and device
        self._pinned = None  # the pinned memory resource, made on first use
        self.pinned_kind = "not used yet"
        self._lock = threading.Lock()

    def describe(self) -> str:
        return (f"cuda.core {getattr(self.core, '__version__', '?')} device memory resource, pinned memory "
                f"{self.pinned_kind}; copies through cuda.bindings")

    def check(self, result, call: str) -> None:
        if result[0] != self.ok:
            raise RuntimeError(f"{call}: {getattr(result[0], 'name', result[0])}")

    def device(self):
        """The device of the current context (numba's, made current by Backend.activate), set current for
        cuda.core in this thread."""
        dev = self.core.Device()
        ready = self._local.__dict__.setdefault("ready", set())
        if dev.device_id not in ready:
            dev.set_current()
            ready.add(dev.device_id)
        return dev

    def allocate(self, nbytes: int):
        buffer = self.device().allocate(max(nbytes, 1), stream=self.legacy)  # cuda.core refuses 0 bytes
        return int(buffer.handle), buffer

    def allocate_pinned(self, nbytes: int):
        self.device()
        with self._lock:
            if self._pinned is None:
                self._pinned = self._pinned_resource()
        buffer = self._pinned.allocate(max(nbytes, 1), stream=self.legacy)
        self.legacy.sync()  # a pool's allocation is stream-ordered: the host touches it only once made
        return int(buffer.handle), buffer

    def _pinned_resource(self):
        """cuda.core's pinned memory resource (a host memory pool) where this device has host memory pools
        and it allocates, else its legacy one (cuMemAllocHost)."""
        dev = self.device()
        if getattr(dev.properties, "host_memory_pools_supported", False):
            try:
                resource = self.core.PinnedMemoryResource()
                resource.allocate(1, stream=self.legacy).close(self.legacy)
                self.pinned_kind = "PinnedMemoryResource (host memory pool)"
                return resource
            except Exception as exc:  # noqa: BLE001 - an older cuda.core or driver: the legacy resource
                why = f"{type(exc).__name__}: {exc}"
        else:
            why = "no host memory pools on this device"
        self.pinned_kind = f"LegacyPinnedMemoryResource ({why})"
        return self.core.LegacyPinnedMemoryResource()

    def memset_zero(self, ptr: int, nbytes: int) -> None:
        self.check(self.cu.cuMemsetD8Async(ptr, 0, nbytes, 0), "cuMemsetD8Async")

    def host_to_device(self, dst: int, src: int, nbytes: int, stream=None) -> None:
        if stream is None:
            self.check(self.cu.cuMemcpyHtoD(dst, src, nbytes), "cuMemcpyHtoD")
        else:
            self.check(self.cu.cuMemcpyHtoDAsync(dst, src, nbytes, stream.handle), "cuMemcpyHtoDAsync")

    def device_to_host(self, dst: int, src: int, nbytes: int, stream=None) -> None:
        self.device_to_host_call(dst, src, nbytes, stream)()

    def device_to_host_call(self, dst: int, src: int, nbytes: int, stream=None, kept=None):
        """The copy as a call with its arguments made once (the caller keeps the memory alive, or ``kept``)."""
        ok = self.ok
        if stream is None:
            copy, args, name = self.cu.cuMemcpyDtoH, (dst, src, nbytes), "cuMemcpyDtoH"
        else:
            copy, args, name = self.cu.cuMemcpyDtoHAsync, (dst, src, nbytes, stream.handle), "cuMemcpyDtoHAsync"

        def call(kept=kept) -> None:
            result = copy(*args)
            if result[0] != ok:
                self.check(result, name)

        return call

    def device_to_device(self, dst: int, src: int, nbytes: int) -> None:
        self.check(self.cu.cuMemcpyDtoD(dst, src, nbytes), "cuMemcpyDtoD")

    def stream(self):
        return self.device().create_stream(options=self.core.StreamOptions(nonblocking=False))

    def synchronize(self, stream=None) -> None:
        if stream is None:
            self.check(self.cu.cuCtxSynchronize(), "cuCtxSynchronize")
        else:
            stream.sync()
