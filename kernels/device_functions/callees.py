"""``for_kernels(fn)``: a shared ``@numba.jit`` function (the per-pixel and per-key math a CUDA kernel and its
CPU twins share, :func:`kernels.backend.simulator.shared_jit`) as the active compiler's kernels call it.

- numba-cuda compiles a ``@numba.jit`` callee for the device itself: the function as it is.
- numba-cuda-mlir does not know numba's dispatchers: the function and every ``@numba.jit`` function it
  calls, recursively, re-wrapped as its device functions.
- The simulator runs Python: plain Python all the way down (its arrays are wrappers compiled CPU code
  cannot take).
"""

from __future__ import annotations

from kernels.backend.compiler import uses_mlir
from kernels.backend.simulator import rebuilt_callees, simulator_active


def for_kernels(fn, takes_arrays: bool = True):
    """``takes_arrays=False``: ``fn`` takes scalars only, so the simulator may call the compiled function
    itself (faster, and with compiled integer arithmetic: uint32 products wrap without numpy's overflow
    warnings)."""
    if simulator_active():
        return rebuilt_callees(fn, lambda clone: clone) if takes_arrays else fn
    if uses_mlir():
        from kernels.backend.compiler import cuda

        return rebuilt_callees(fn, lambda clone: cuda.jit(device=True)(clone))
    return fn
