"""Cold runs: flush the GPU's L2 between samples, as NVBench's cold runs do."""

from __future__ import annotations

import functools
from typing import Callable

from kernels.backend import memory

FLUSH_FALLBACK_BYTES = 2 * 64 * 2**20  # when the driver does not say how large L2 is


@functools.lru_cache(maxsize=None)
def _flush_kernel():
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    @cuda.jit("void(int32[::1], int32)")
    def overwrite(buffer, value):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < buffer.size:
            buffer[i] = value
            i += stride

    return overwrite


_FLUSH_BUFFERS: dict = {}


def l2_flusher(device: int | None = None) -> Callable[[], None]:
    """A call that writes a buffer twice the L2 size (or 128 MiB), evicting everything else from L2,
    as NVBench's cold runs do. The buffer is allocated once per device."""
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    from kernels.backend import devices

    if device is None:
        device = cuda.get_current_device().id
    if device not in _FLUSH_BUFFERS:
        l2 = devices.gpu_l2_bytes(device)
        nbytes = max(2 * l2, FLUSH_FALLBACK_BYTES) if l2 else FLUSH_FALLBACK_BYTES
        _FLUSH_BUFFERS[device] = memory.empty(nbytes // 4, "int32")
    buffer = _FLUSH_BUFFERS[device]
    kernel = _flush_kernel()[1024, 256]
    value = [0]

    def flush():
        value[0] ^= 1
        kernel(buffer, value[0])

    return flush
