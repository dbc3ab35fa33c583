"""Products that no compiler fuses into an FMA, for shared per-pixel math whose GPU result must be the CPU's bit
for bit (the Julia set's grouped kernel, :mod:`kernels.julia.gpu`).

NVVM contracts a multiplication and the addition after it into one FMA, rounded once: a different value from
the CPU's two roundings. Where the product feeds a chaotic iteration, one such rounding moves a point's escape.
PTX's ``mul.rn`` (libdevice's ``__nv_fmul_rn`` / ``__nv_dmul_rn``, CUDA C's ``__fmul_rn``) is never contracted,
so a device function built here calls it wherever the shared math calls its ``product(a, b)``.
"""

from __future__ import annotations

from kernels.backend import simulator_active
from kernels.backend.compiler import uses_mlir
from kernels.backend.simulator import rebuilt_callees
from kernels.device_functions.callees import for_kernels


def with_rounded_products(fn, product, precision: str):
    """``fn`` (a ``@numba.jit`` shared function) as a device function in which every call of ``product`` (the
    shared ``a * b``) is ``mul.rn`` at ``precision`` ('float32' or 'float64'), in ``fn`` and every function it
    calls. In the simulator, where every product is rounded on its own already, :func:`for_kernels`'s ``fn``
    without numpy's overflow warnings (a GPU overflows silently, as the grouped Julia loop does by design); under
    numba-cuda-mlir, whose libdevice spelling this module does not know, :func:`for_kernels`'s ``fn``."""
    if simulator_active():
        return _quiet(for_kernels(fn))
    if uses_mlir():
        return for_kernels(fn)
    from kernels.backend.compiler import cuda
    from numba.cuda import libdevice

    if precision == "float32":
        @cuda.jit(device=True, forceinline=True)
        def rounded(a, b):
            return libdevice.fmul_rn(a, b)
    else:
        @cuda.jit(device=True, forceinline=True)
        def rounded(a, b):
            return libdevice.dmul_rn(a, b)

    return rebuilt_callees(fn, lambda clone: cuda.jit(device=True)(clone), {product: rounded})


def _quiet(fn):
    import functools

    import numpy as np

    @functools.wraps(fn)
    def quiet(*args):
        with np.errstate(over="ignore", invalid="ignore"):  # per simulated thread: the state is thread-local
            return fn(*args)
    return quiet
