"""Slot loads of the open-addressing hash tables, of 8 and 16 bytes, under either compiler.

- ``load_pair(slots, i)``: slots i and i + 1 (i even) with one 16-byte load (``ld.global.v2.u64``): a group
  of B / 2 lanes reads a bucket of B slots in one coalesced request.
- ``load_pair_fresh`` and ``load_fresh``: the same through L2 only (``ld.global.cg``, volatile), for the
  kernels that change the table: the L1 of an SM is not kept coherent with other SMs' atomics, and a
  probe that read a stale slot there again and again after a lost compare-and-swap would never end.

Under numba-cuda they are intrinsics (an LLVM vector load, PTX inline assembly). numba-cuda-mlir reaches
neither numba's ``@intrinsic`` nor llvmlite: there ``load_pair`` is ``cuda.vector.load(..., alignment=16)``
and the fresh loads are ``cuda.ldcg`` (``ld.global.cg``), one slot at a time. In the simulator they are
plain reads. Importing this module imports the active compiler's ``cuda``: kernel modules import it on
their first use.
"""

from __future__ import annotations

from kernels.backend import simulator_active
from kernels.backend.compiler import uses_mlir


def _load_pair_simulated(slots, i):
    return slots[i], slots[i + 1]


def _load_simulated(slots, i):
    return slots[i]


def _intrinsics():
    """numba-cuda's intrinsics: one LLVM vector load, or PTX inline assembly for the loads through L2."""
    from llvmlite import ir
    from numba.cuda import types  # numba-cuda's own: these are its intrinsics
    from numba.cuda.extending import intrinsic

    def _slot_pointer(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i = context.cast(builder, args[1], sig.args[1], types.int64)
        return builder.gep(ary.data, [i])

    def _uint64_array(arr):
        return isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C" and arr.dtype == types.uint64

    @intrinsic
    def load_pair(typingctx, slots, index):
        """slots[i], slots[i + 1] in one aligned 16-byte load (i even)."""
        if not _uint64_array(slots) or not isinstance(index, types.Integer):
            return None
        sig = types.UniTuple(types.uint64, 2)(slots, index)

        def codegen(context, builder, sig, args):
            vector = ir.VectorType(ir.IntType(64), 2)
            loaded = builder.load(builder.bitcast(_slot_pointer(context, builder, sig, args), vector.as_pointer()),
                                  align=16)
            lanes = [builder.extract_element(loaded, ir.Constant(ir.IntType(32), k)) for k in range(2)]
            return context.make_tuple(builder, sig.return_type, lanes)

        return sig, codegen

    @intrinsic
    def load_pair_fresh(typingctx, slots, index):
        """slots[i], slots[i + 1] in one 16-byte load through L2 (i even), never cached, moved or merged."""
        if not _uint64_array(slots) or not isinstance(index, types.Integer):
            return None
        sig = types.UniTuple(types.uint64, 2)(slots, index)

        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            pair = ir.LiteralStructType([i64, i64])
            load = ir.InlineAsm(ir.FunctionType(pair, [i64.as_pointer()]), "ld.global.cg.v2.u64 {$0, $1}, [$2];",
                                "=l,=l,l", side_effect=True)
            loaded = builder.call(load, [_slot_pointer(context, builder, sig, args)])
            return context.make_tuple(builder, sig.return_type, [builder.extract_value(loaded, k) for k in range(2)])

        return sig, codegen

    @intrinsic
    def load_fresh(typingctx, slots, index):
        """slots[i] through L2, never cached, moved or merged."""
        if not _uint64_array(slots) or not isinstance(index, types.Integer):
            return None
        sig = types.uint64(slots, index)

        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            load = ir.InlineAsm(ir.FunctionType(i64, [i64.as_pointer()]), "ld.global.cg.u64 $0, [$1];", "=l,l",
                                side_effect=True)
            return builder.call(load, [_slot_pointer(context, builder, sig, args)])

        return sig, codegen

    return load_pair, load_pair_fresh, load_fresh


def _mlir_device_functions():
    """numba-cuda-mlir's public loads in device functions with the intrinsics' names and results."""
    from kernels.backend.compiler import cuda

    @cuda.jit(device=True, forceinline=True)
    def load_pair(slots, index):
        v = cuda.vector.load(slots, index, 2, alignment=16)
        return v.x, v.y

    @cuda.jit(device=True, forceinline=True)
    def load_pair_fresh(slots, index):
        return cuda.ldcg(slots, index), cuda.ldcg(slots, index + 1)

    @cuda.jit(device=True, forceinline=True)
    def load_fresh(slots, index):
        return cuda.ldcg(slots, index)

    return load_pair, load_pair_fresh, load_fresh


if simulator_active():
    load_pair, load_pair_fresh, load_fresh = _load_pair_simulated, _load_pair_simulated, _load_simulated
elif uses_mlir():
    load_pair, load_pair_fresh, load_fresh = _mlir_device_functions()
else:
    load_pair, load_pair_fresh, load_fresh = _intrinsics()
