"""The CUDA driver API through ctypes, for what must happen before numba.cuda is loaded: counting and
describing GPUs, starting the driver early, and launching a saved kernel image for the window's first frame
(kernels/kernel_images.py). numba.cuda costs 0.3 s to import and about 0.45 s more before its first
launch; these calls cost milliseconds, and ctypes lets go of the GIL inside each one.

Everything here is numba-free and answers None / raises DriverError; numba remains the path for all other
GPU work.
"""

from __future__ import annotations

import ctypes
import os
import sys
from functools import lru_cache

import numpy as np

# CUdevice_attribute values (cuda.h)
MAX_THREADS_PER_BLOCK, MAX_BLOCK_DIM_X, MAX_BLOCK_DIM_Y, MAX_BLOCK_DIM_Z = 1, 2, 3, 4
MAX_SHARED_MEMORY_PER_BLOCK, TOTAL_CONSTANT_MEMORY, WARP_SIZE, MULTIPROCESSOR_COUNT = 8, 9, 10, 16
COMPUTE_CAPABILITY_MAJOR, COMPUTE_CAPABILITY_MINOR = 75, 76


class DriverError(RuntimeError):
    """A driver call failed; the message names the call and the driver's error name."""


@lru_cache(maxsize=1)
def library():
    """libcuda through ctypes (the one NUMBA_CUDA_DRIVER names, as numba loads it), None when it cannot be
    loaded: no driver, so no GPU. Callers check for the simulator themselves."""
    default = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"
    try:
        return ctypes.CDLL(os.environ.get("NUMBA_CUDA_DRIVER") or default)
    except OSError:
        return None


def _fn(name: str):
    """A driver entry point by name (the _v2 symbol where the driver has one)."""
    lib = library()
    if lib is None:
        raise DriverError("the CUDA driver library cannot be loaded")
    for symbol in (f"{name}_v2", name):
        fn = getattr(lib, symbol, None)
        if fn is not None:
            return fn
    raise DriverError(f"the CUDA driver has no {name}")


def call(name: str, *args) -> None:
    """Call driver function ``name``; a non-zero CUresult raises DriverError naming it."""
    status = _fn(name)(*args)
    if status != 0:
        text = ctypes.c_char_p()
        error_name = getattr(library(), "cuGetErrorName", None)  # the library loaded: _fn found it
        if error_name is not None and error_name(status, ctypes.byref(text)) == 0:
            raise DriverError(f"{name}: {text.value.decode()}")
        raise DriverError(f"{name}: CUDA error {status}")


def init() -> None:
    call("cuInit", 0)


def device_count() -> int:
    """GPUs the driver sees (after CUDA_VISIBLE_DEVICES, in numba's order); 0 without a working driver."""
    if library() is None:
        return 0
    try:
        init()
        count = ctypes.c_int()
        call("cuDeviceGetCount", ctypes.byref(count))
        return count.value
    except DriverError:
        return 0


def _device(ordinal: int) -> ctypes.c_int:
    init()
    dev = ctypes.c_int()
    call("cuDeviceGet", ctypes.byref(dev), int(ordinal))
    return dev


def device_name(ordinal: int) -> str:
    name = ctypes.create_string_buffer(256)
    call("cuDeviceGetName", name, 256, _device(ordinal))
    return name.value.decode(errors="replace")


def attribute(ordinal: int, attr: int) -> int:
    value = ctypes.c_int()
    call("cuDeviceGetAttribute", ctypes.byref(value), attr, _device(ordinal))
    return value.value


def compute_capability(ordinal: int) -> tuple[int, int]:
    return attribute(ordinal, COMPUTE_CAPABILITY_MAJOR), attribute(ordinal, COMPUTE_CAPABILITY_MINOR)


def retain_primary_context(ordinal: int, make_current: bool = False) -> ctypes.c_void_p:
    """The device's primary context (the one numba uses too), retained, and with ``make_current`` made the
    calling thread's current context: pair with release_primary_context."""
    ctx = ctypes.c_void_p()
    call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), _device(ordinal))
    if make_current:
        call("cuCtxSetCurrent", ctx)
    return ctx


def release_primary_context(ordinal: int) -> None:
    call("cuDevicePrimaryCtxRelease", _device(ordinal))


class LoadedKernel:
    """One kernel of a cubin loaded into the current context; ``close`` unloads the module."""

    def __init__(self, cubin: bytes, entry: str):
        self._image = ctypes.create_string_buffer(cubin, len(cubin))
        self.module, self.function = ctypes.c_void_p(), ctypes.c_void_p()
        call("cuModuleLoadData", ctypes.byref(self.module), self._image)
        try:
            call("cuModuleGetFunction", ctypes.byref(self.function), self.module, entry.encode())
        except DriverError:
            self.close()
            raise

    def param_sizes(self) -> list[int]:
        """Byte size of each kernel parameter, in order (cuFuncGetParamInfo, CUDA 12.4 and later)."""
        sizes, offset, size = [], ctypes.c_size_t(), ctypes.c_size_t()
        get = _fn("cuFuncGetParamInfo")
        while get(self.function, ctypes.c_size_t(len(sizes)), ctypes.byref(offset), ctypes.byref(size)) == 0:
            sizes.append(size.value)
        return sizes

    def symbol(self, name: str) -> tuple[int, int]:
        """(device address, bytes) of a global in the module, e.g. a ``__constant__`` array."""
        ptr, nbytes = ctypes.c_uint64(), ctypes.c_size_t()
        call("cuModuleGetGlobal", ctypes.byref(ptr), ctypes.byref(nbytes), self.module, name.encode())
        return ptr.value, nbytes.value

    def launch(self, grid: tuple[int, int], block: tuple[int, int], params: list[np.generic]) -> float:
        """Launch on the default stream with ``params`` (numpy scalars, one per kernel parameter, each of
        the parameter's exact size) and wait; returns the kernel's time in ms by CUDA events."""
        sizes = self.param_sizes()
        if [p.nbytes for p in params] != sizes:
            raise DriverError(f"kernel parameters do not match: {[p.nbytes for p in params]} bytes given, "
                              f"{sizes} expected")
        holders = [np.array(p) for p in params]  # keep the bytes alive during the launch
        pointers = (ctypes.c_void_p * max(len(holders), 1))(*[h.ctypes.data for h in holders])
        start, end = ctypes.c_void_p(), ctypes.c_void_p()
        call("cuEventCreate", ctypes.byref(start), 0)
        call("cuEventCreate", ctypes.byref(end), 0)
        try:
            call("cuEventRecord", start, None)
            call("cuLaunchKernel", self.function, grid[0], grid[1], 1, block[0], block[1], 1, 0, None, pointers, None)
            call("cuEventRecord", end, None)
            call("cuEventSynchronize", end)
            ms = ctypes.c_float()
            call("cuEventElapsedTime", ctypes.byref(ms), start, end)
            return ms.value
        finally:
            call("cuEventDestroy", start)
            call("cuEventDestroy", end)

    def close(self) -> None:
        if self.module:
            call("cuModuleUnload", self.module)
            self.module = ctypes.c_void_p()


class DeviceBuffer:
    """Device memory for one launch: ``upload`` / ``download`` copy numpy arrays; ``free`` releases it."""

    def __init__(self, nbytes: int):
        ptr = ctypes.c_uint64()
        call("cuMemAlloc", ctypes.byref(ptr), ctypes.c_size_t(max(nbytes, 1)))
        self.ptr = ptr.value

    def upload(self, host: np.ndarray) -> None:
        copy_to_device(self.ptr, host)

    def download(self, host: np.ndarray) -> None:
        call("cuMemcpyDtoH", ctypes.c_void_p(host.ctypes.data), ctypes.c_uint64(self.ptr), ctypes.c_size_t(host.nbytes))

    def free(self) -> None:
        if self.ptr:
            call("cuMemFree", ctypes.c_uint64(self.ptr))
            self.ptr = 0


def copy_to_device(address: int, values: np.ndarray) -> None:
    """Host bytes to a device address; to a module global's (LoadedKernel.symbol) it is cudaMemcpyToSymbol."""
    call("cuMemcpyHtoD", ctypes.c_uint64(address), ctypes.c_void_p(values.ctypes.data), ctypes.c_size_t(values.nbytes))
