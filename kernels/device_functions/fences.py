"""``threadfence()``: what ``cuda.threadfence()`` (``__threadfence()`` in C) does, under either compiler.

numba-cuda lowers ``cuda.threadfence`` to ``membar.gl``; numba-cuda-mlir 0.6.0 types it but does not lower
it, so there the same instruction comes from its inline PTX. Under numba-cuda the fence is a device
function that numba inlines, so the kernels' PTX is what a direct ``cuda.threadfence()`` makes. In the
simulator it does nothing: its threads are Python threads, which see each other's writes in order.
Importing this module imports the active compiler's ``cuda``: kernel modules import it on their first use.
"""

from __future__ import annotations

from kernels.backend import simulator_active
from kernels.backend.compiler import uses_mlir


def _threadfence_simulated():
    pass


def _threadfence_device():
    from kernels.backend.compiler import cuda

    if uses_mlir():
        @cuda.jit(device=True, forceinline=True)
        def threadfence():
            cuda.experimental.inline_ptx("membar.gl;")
    else:
        @cuda.jit(device=True, forceinline=True)
        def threadfence():
            cuda.threadfence()

    return threadfence


threadfence = _threadfence_simulated if simulator_active() else _threadfence_device()
