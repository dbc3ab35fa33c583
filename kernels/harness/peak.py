"""The copy bandwidth a device reaches, measured once per process: the ceiling a bandwidth-bound kernel's GB/s
is judged against (a grid-stride copy kernel or the driver's memcpy on a GPU, numpy's copy on the CPU)."""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Peak:
    gbps: float | None
    how: str


def copy_peak(backend) -> Peak:
    """This device's practical bandwidth limit (see :func:`measure_copy_peak`)."""
    return measure_copy_peak(backend.kind, backend.device)


@functools.lru_cache(maxsize=None)
def measure_copy_peak(kind: str, device: int = 0) -> Peak:
    """Measured once per process and backend: a device-to-device copy (the faster of a grid-stride copy
    kernel and the driver's memcpy), or numpy's copy on the CPU."""
    import numpy as np

    from kernels.backend import Backend

    backend = Backend(kind, device)
    if backend.is_simulator:
        return Peak(None, "the simulator has no meaningful bandwidth")
    nbytes = 256 * 2**20
    if backend.is_host:
        a = np.ones(nbytes // 8, np.int64)
        b = np.empty_like(a)
        best = min(_timed(lambda: np.copyto(b, a)) for _ in range(5))
        return Peak(2 * nbytes / best / 1e9, "numpy copy of 256 MiB (read + write)")
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    from kernels.backend import memory
    from kernels.timing import time_cuda_events

    kernel = _copy_kernel()
    a = memory.to_device(np.ones(nbytes // 8, np.int64))
    b = memory.empty_like(a)
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    t_kernel = time_cuda_events(lambda: kernel[sms * 8, 512](a, b), 10).min_ms
    t_memcpy = time_cuda_events(lambda: memory.copy(b, a), 10).min_ms
    best = min(t_kernel, t_memcpy)
    how = "copy kernel" if t_kernel <= t_memcpy else "cudaMemcpy device-to-device"
    return Peak(2 * nbytes / (best * 1e-3) / 1e9, f"{how}, 256 MiB read + write, best of 10 (CUDA events)")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


@functools.lru_cache(maxsize=None)
def _copy_kernel():
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    @cuda.jit
    def copy_int64(src, dst):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < src.size:
            dst[i] = src[i]
            i += stride

    return copy_int64
