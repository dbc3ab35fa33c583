"""Compiled kernels kept as cubins, so that a new process can launch one through the CUDA driver before
numba.cuda is loaded: the window's first frame (issue 13's start under a second).

numba.cuda costs about 0.3 s to import and 0.45 s more to set up its target before the first launch, even
when its on-disk cache holds the kernel. So every time the numba path has a kernel ready (``save``, called
where the kernel is compiled), its cubin, entry name and argument types are written under
``<cache>/kernel-images``; ``launch`` loads that cubin with the driver (kernels/cuda_driver.py) and runs it
with the arguments flattened as numba passes them.

A saved image is used only when everything that could change the code matches: the kernel's name and
signature, the GPU's compute capability, the numba and numba-cuda versions, and the bytes of every module
in ``kernels/`` (the kernels and their device functions live there). The parameter sizes are checked
against the loaded function before each launch. Anything unusual (a kernel with module set-up functions,
a debug build) is not saved, and any failure means: use numba.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from kernels import cuda_driver
from kernels.cache import cache_root

FORMAT = 1  # bump when what is saved, or how arguments are flattened, changes


def images_dir() -> Path:
    return cache_root() / "kernel-images"


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """What the saved machine code depends on besides the kernel itself: the numba versions and every
    module of the kernels package. The versions come from the installed packages' metadata: importing
    numba to ask would cost the 0.3 s the first frame avoids."""
    from importlib.metadata import version

    h = hashlib.sha256(f"{FORMAT} {version('numba')} {version('numba-cuda')}".encode())
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _paths(name: str, signature: str, cc: tuple[int, int]) -> tuple[Path, Path]:
    key = hashlib.sha256(f"{name} {signature} {cc} {_code_digest()}".encode()).hexdigest()[:24]
    stem = f"{name}-sm{cc[0]}{cc[1]}-{key}"  # names hold dots (raytrace.global): no with_suffix
    return images_dir() / f"{stem}.cubin", images_dir() / f"{stem}.json"


def save(name: str, signature: str, dispatcher, cc: tuple[int, int] | None = None) -> bool:
    """Keep the cubin of ``dispatcher`` (a numba CUDA kernel compiled for ``signature``) for compute
    capability ``cc`` (default: numba's current GPU's). Returns True when an image is (already) saved;
    never raises, since it is only a head start for the next process (and does nothing in the simulator)."""
    try:
        if cc is None:
            from numba import cuda

            cc = cuda.get_current_device().compute_capability
        cc = tuple(cc)
        cubin_path, meta_path = _paths(name, signature, cc)
        if meta_path.exists():
            return True
        (kernel,) = dispatcher.overloads.values()
        library = kernel.library
        if kernel.debug or kernel.cooperative or kernel.extensions or library._setup_functions:
            return False  # something the plain driver launch below would not reproduce
        cubin = library.get_cubin(cc=cc)
        cubin = getattr(cubin, "code", cubin)  # numba-cuda 0.30 hands out a cuda.core ObjectCode
        images_dir().mkdir(parents=True, exist_ok=True)
        for path, data in ((cubin_path, bytes(cubin)),
                           (meta_path, json.dumps({"entry": kernel.entry_name, "name": name,
                                                   "signature": signature}).encode())):
            tmp = path.with_name(f".{path.name}.{os.getpid()}")
            tmp.write_bytes(data)
            os.replace(tmp, path)  # the json last: a reader never sees it without its cubin
        return True
    except Exception:  # noqa: BLE001 - a cache that could not be written costs only the head start
        return False


def usable(name: str, signature: str, device: int = 0) -> bool:
    """True when launching through the driver pays, and ``launch`` would find a saved image for this kernel
    on this device. It pays only before numba.cuda is loaded: afterwards numba launches just as fast."""
    if "numba.cuda" in sys.modules:
        return False
    try:
        return _paths(name, signature, cuda_driver.compute_capability(device))[1].exists()
    except Exception:  # noqa: BLE001
        return False


class Output:
    """A kernel argument the kernel writes: ``host``, a new C-contiguous array of ``shape`` and ``dtype``,
    filled from the device after the launch."""

    def __init__(self, shape: tuple[int, ...], dtype):
        self.host = np.empty(shape, dtype)


@dataclass
class DriverLaunch:
    """What one launch through the driver returned."""

    outputs: list[np.ndarray]
    kernel_ms: float  # CUDA events around the kernel
    frame_ms: float  # the whole call: uploads, launch, kernel and copies back (no module load)


def flatten(value, address: int | None = None) -> list[np.generic]:
    """One argument as numba passes it to a kernel: an array (an Output's host array) as (meminfo, parent,
    size, itemsize, data, *shape, *strides), 64-bit each, ``address`` being its device copy; a numpy scalar
    as itself (a boolean as one byte)."""
    if isinstance(value, Output):
        value = value.host
    if isinstance(value, np.ndarray):
        return [np.uint64(0), np.uint64(0), np.int64(value.size), np.int64(value.itemsize), np.uint64(address),
                *[np.int64(e) for e in value.shape], *[np.int64(s) for s in value.strides]]
    if isinstance(value, (bool, np.bool_)):
        return [np.uint8(bool(value))]
    if isinstance(value, np.generic):
        return [value]
    raise TypeError(f"cannot pass {type(value).__name__} to a kernel through the driver; use a numpy scalar")


def launch(name: str, signature: str, args: list, grid: tuple[int, int], block: tuple[int, int], device: int = 0,
           constants: tuple[tuple[str, int, np.ndarray], ...] = ()) -> DriverLaunch | None:
    """Run the saved kernel ``name`` once: ``args`` are numpy arrays (copied to the device), Output
    markers (allocated, brought back) and numpy scalars; ``constants`` are (symbol, byte offset, values)
    copied into the module's ``__constant__`` arrays first. Returns None when no image is saved for it; a
    driver failure raises cuda_driver.DriverError."""
    cc = cuda_driver.compute_capability(device)
    cubin_path, meta_path = _paths(name, signature, cc)
    try:
        entry = json.loads(meta_path.read_text())["entry"]
        cubin = cubin_path.read_bytes()
    except (OSError, ValueError, KeyError):
        return None
    cuda_driver.retain_primary_context(device, make_current=True)
    buffers: list = []
    kernel = None
    try:
        kernel = cuda_driver.LoadedKernel(cubin, entry)
        for symbol, offset, values in constants:
            address, nbytes = kernel.symbol(symbol)
            values = np.ascontiguousarray(values)
            if offset + values.nbytes > nbytes:
                raise cuda_driver.DriverError(f"{values.nbytes} bytes at {offset} overflow {symbol} ({nbytes} bytes)")
            cuda_driver.copy_to_device(address + offset, values)
        t0 = time.perf_counter()
        params, outputs = [], []
        for value in args:
            address = None
            if isinstance(value, (np.ndarray, Output)):
                host = value.host if isinstance(value, Output) else np.ascontiguousarray(value)
                buffers.append(buffer := cuda_driver.DeviceBuffer(host.nbytes))
                address = buffer.ptr
                if isinstance(value, Output):
                    outputs.append((buffer, host))
                else:
                    buffer.upload(host)
                value = host  # flattened as the contiguous copy the kernel sees
            params.extend(flatten(value, address))
        kernel_ms = kernel.launch(grid, block, params)
        for buffer, host in outputs:
            buffer.download(host)
        frame_ms = (time.perf_counter() - t0) * 1e3
        return DriverLaunch([host for _, host in outputs], kernel_ms, max(frame_ms, kernel_ms))
    finally:
        for buffer in buffers:
            buffer.free()
        if kernel is not None:
            kernel.close()
        cuda_driver.release_primary_context(device)
