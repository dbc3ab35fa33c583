"""The user-variant child's warm-up on a GPU, imported only there: a first compile in a process pays once for
setting up numba's CUDA target, NVVM and the linker; this tiny kernel pays it before any Run, so a Run's
compile is its file's own."""

import numpy as np
from numba import cuda

from kernels.backend import memory


@cuda.jit
def add_one(out):
    cuda.atomic.add(out, 0, 1)


def first_compile() -> int:
    """Compile and launch the tiny kernel; returns what it added (1 per thread: 32)."""
    out = memory.zeros(1, np.int64)
    add_one[1, 32](out)
    return int(memory.to_host(out)[0])
