"""16-byte loads for Numba CUDA kernels: ``load_vector(a, j)`` reads elements 4j..4j+3 of a 1-D C array of
4-byte elements (int32, uint32, float32) with one ``ld.global.v4`` instruction, where Numba emits one
4-byte load per element. A quarter as many load instructions keep more bytes in flight per thread; CUB
and Triton read this way. Used by the reductions' and the histogram's ``best``.

The array's data must be 16-byte aligned: every device allocation is (its start is 256-byte aligned).
In the simulator ``load_vector`` is a plain Python function, so the same kernel source runs there. Under
numba-cuda-mlir, where numba's ``@intrinsic`` and llvmlite do not reach, it is a device function around
``cuda.vector.load(..., alignment=16)`` (the same ``ld.global.v4``), its lanes ``.x .y .z .w`` as the tuple.
Importing this module imports the active compiler's ``cuda``: kernel modules import it on their first GPU use.
"""

from __future__ import annotations

from kernels.backend import memory, simulator_active
from kernels.backend.compiler import uses_mlir
from kernels.errors import InputError

VECTOR_BYTES = 16  # ld.global.v4.b32: the widest load one thread can issue
VECTOR_LANES = 4  # 4-byte elements (int32, float32) per load


def _load_vector_intrinsic():
    """The intrinsic: one aligned LLVM load of a <4 x T> vector at element 4j, split into a tuple."""
    from llvmlite import ir
    from numba.cuda import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def load_vector(typingctx, arr, index):
        if not isinstance(arr, types.Array) or arr.ndim != 1 or arr.layout != "C" or arr.dtype.bitwidth != 32:
            return None
        sig = types.UniTuple(arr.dtype, VECTOR_LANES)(arr, index)

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            j = context.cast(builder, args[1], sig.args[1], types.int64)
            first = builder.gep(ary.data, [builder.mul(j, ir.Constant(ir.IntType(64), VECTOR_LANES))])
            vector = ir.VectorType(context.get_data_type(sig.args[0].dtype), VECTOR_LANES)
            loaded = builder.load(builder.bitcast(first, vector.as_pointer()), align=VECTOR_BYTES)
            lanes = [builder.extract_element(loaded, ir.Constant(ir.IntType(32), k)) for k in range(VECTOR_LANES)]
            return context.make_tuple(builder, sig.return_type, lanes)

        return sig, codegen

    return load_vector


def _load_vector_mlir():
    """numba-cuda-mlir's aligned vector load of elements 4j..4j+3, as the intrinsic's tuple."""
    from kernels.backend.compiler import cuda

    @cuda.jit(device=True, forceinline=True)
    def load_vector(arr, index):
        v = cuda.vector.load(arr, index * VECTOR_LANES, VECTOR_LANES, alignment=VECTOR_BYTES)
        return v.x, v.y, v.z, v.w

    return load_vector


def check_aligned(arrays, who: str) -> None:
    """Raises InputError when a device array's data does not start on a 16-byte boundary (a view at an
    odd offset: our own allocations never are)."""
    for d in arrays:
        if memory.device_pointer(d) % VECTOR_BYTES:
            raise InputError(f"{who} loads {VECTOR_BYTES} bytes at a time and needs its inputs aligned to that")


def _load_vector_simulated(a, j):
    return a[4 * j], a[4 * j + 1], a[4 * j + 2], a[4 * j + 3]


if simulator_active():
    load_vector = _load_vector_simulated
elif uses_mlir():
    load_vector = _load_vector_mlir()
else:
    load_vector = _load_vector_intrinsic()
