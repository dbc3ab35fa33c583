"""GPU count, names and limits from the CUDA driver API through NVIDIA's own bindings (``cuda.bindings``,
which numba-cuda installs), for what must be known before numba.cuda loads: which backend to open with, its
launch limits, and the calls that launch a shipped kernel image (kernels/launch/images.py). numba.cuda takes
about 0.3 s to import; ``cuda.bindings.driver`` 60-85 ms (measured in docs/architecture.md). Everything here
is numba-free; numba remains the path for all other GPU work.
"""

from __future__ import annotations

import functools


class DriverError(RuntimeError):
    """A driver call failed, or there is no driver; the message names the call and the driver's error."""


@functools.lru_cache(maxsize=1)
def _driver():
    """``cuda.bindings.driver`` after a successful cuInit, or a DriverError saying why there is none."""
    try:
        from cuda.bindings import driver
    except Exception as exc:  # noqa: BLE001 - not installed, or built for another CUDA: no GPU through it
        return DriverError(f"cuda.bindings cannot be loaded: {type(exc).__name__}: {exc}")
    try:
        status, = driver.cuInit(0)
    except Exception as exc:  # noqa: BLE001 - the driver library itself is missing (no NVIDIA driver installed)
        return DriverError(f"the CUDA driver cannot be loaded: {type(exc).__name__}")
    if status != driver.CUresult.CUDA_SUCCESS:
        return DriverError(f"cuInit: {status.name}")
    return driver


def call(name: str, *args):
    """``driver.<name>(*args)``'s values (one value alone), or DriverError naming the call and the error."""
    driver = _driver()
    if isinstance(driver, DriverError):
        raise driver
    status, *values = getattr(driver, name)(*args)
    if status != driver.CUresult.CUDA_SUCCESS:
        raise DriverError(f"{name}: {status.name}")
    return values[0] if len(values) == 1 else tuple(values)


def device_count() -> int:
    """Real GPUs this process can use; 0 without a working driver."""
    try:
        return int(call("cuDeviceGetCount"))
    except DriverError:
        return 0


def device_name(ordinal: int) -> str:
    raw = call("cuDeviceGetName", 256, call("cuDeviceGet", ordinal))
    return bytes(raw).split(b"\0", 1)[0].decode(errors="replace")


def attribute(ordinal: int, name: str) -> int:
    """A CUdevice_attribute by its name without the prefix, e.g. 'MAX_THREADS_PER_BLOCK'."""
    driver = _driver()
    if isinstance(driver, DriverError):
        raise driver
    attr = getattr(driver.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
    return int(call("cuDeviceGetAttribute", attr, call("cuDeviceGet", ordinal)))


def compute_capability(ordinal: int) -> tuple[int, int]:
    return attribute(ordinal, "COMPUTE_CAPABILITY_MAJOR"), attribute(ordinal, "COMPUTE_CAPABILITY_MINOR")
