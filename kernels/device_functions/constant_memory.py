"""A runtime-writable ``__constant__`` array for Numba CUDA kernels: what ``cudaMemcpyToSymbol`` does in C.

``cuda.const.array_like`` bakes the values into the PTX at compile time (new data means a recompile, which
takes the better part of a second). Here a kernel reads ``ConstantArray.get()``, an intrinsic that declares an externally
visible global in the constant address space (PTX ``.visible .const``, loads become ``ld.const``); after
the kernel is compiled, :meth:`ConstantArray.write` copies new values into the loaded module's symbol
(one small copy), once per compiled kernel and device.

In the simulator the same kernel source reads a plain numpy array instead (``get`` is then an ordinary
Python function), so the constant-memory kernel runs there unchanged. numba-cuda-mlir has no spelling of
either half yet (no ``@intrinsic``, no public symbol write): under it the variants reading the array are
skipped rows (``Variant.mlir_lacks``) and :meth:`ConstantArray.write` refuses, naming what is missing.
"""

from __future__ import annotations

import numpy as np

from kernels.backend import simulator_active
from kernels.backend.compiler import uses_mlir
from kernels.errors import BackendUnavailable

MLIR_LACKS = "a run-time-writable __constant__ array (cudaMemcpyToSymbol)"


class ConstantArray:
    """A named 1-D float32 ``__constant__`` array of ``length`` elements."""

    def __init__(self, name: str, length: int):
        self.name, self.length = name, length
        self.host = np.zeros(length, np.float32)  # the simulator's "constant memory"
        self._written: dict[tuple[int, int, int], bytes] = {}  # (kernel, device, offset) -> bytes last written
        self._get = None

    @property
    def get(self):
        """What a kernel calls to read the array: the intrinsic, made on first use (it imports numba.cuda,
        which a process on the cpu backend never needs), or in the simulator the host array's getter."""
        if self._get is None:
            if simulator_active():
                self._get = self._simulated_get
            elif uses_mlir():
                self._get = self._refused_get  # a kernel calling it does not compile under numba-cuda-mlir
            else:
                self._get = self._make_intrinsic()
        return self._get

    def _simulated_get(self):
        return self.host

    def _refused_get(self):
        raise BackendUnavailable(f"numba-cuda-mlir lacks {MLIR_LACKS}")

    def _make_intrinsic(self):
        from llvmlite import ir
        from numba.cuda import types
        from numba.cuda.extending import intrinsic

        name, length = self.name, self.length

        @intrinsic
        def constant_array(typingctx):
            arrty = types.Array(types.float32, 1, "C")

            def codegen(context, builder, sig, args):
                llty = ir.ArrayType(ir.FloatType(), length)
                gv = builder.module.globals.get(name)
                if gv is None:
                    # Default linkage with an initializer: a visible definition NVVM must keep, and not
                    # marked constant, so LLVM cannot fold the loads into the zero initializer.
                    gv = ir.GlobalVariable(builder.module, llty, name, addrspace=4)
                    gv.initializer = ir.Constant(llty, None)
                    gv.align = 16
                genptr = builder.addrspacecast(gv, ir.PointerType(ir.IntType(8)), "generic")
                ary = context.make_array(arrty)(context, builder)
                intp = lambda v: context.get_constant(types.intp, v)  # noqa: E731
                context.populate_array(
                    ary, data=builder.bitcast(genptr, ary.data.type), shape=[intp(length)], strides=[intp(4)],
                    itemsize=intp(4), meminfo=None, parent=None,
                )
                return ary._getvalue()

            return arrty(), codegen

        return constant_array

    def write(self, values: np.ndarray, kernel=None, offset: int = 0, device: int | None = None) -> bool:
        """Copy ``values`` into the constant array from element ``offset`` on, as read by ``kernel`` (a
        compiled dispatcher) on ``device`` (default: the current one, which the caller has made current).
        Returns False when those bytes were already there (nothing copied)."""
        values = np.ascontiguousarray(values, np.float32).ravel()
        if offset < 0 or offset + values.size > self.length:
            raise ValueError(f"{values.size} values at {offset} do not fit the constant array of {self.length}")
        if kernel is None or simulator_active():
            self.host[offset:offset + values.size] = values
            return True
        if uses_mlir():
            raise BackendUnavailable(f"numba-cuda-mlir lacks {MLIR_LACKS}: use numba-cuda for {self.name}")
        from numba import cuda

        from kernels.backend.numba_private import module_global, write_global

        data = values.tobytes()
        dev = cuda.get_current_device().id if device is None else device
        written = False
        for compiled in kernel.overloads.values():
            key = (id(compiled), dev, offset)
            if self._written.get(key) == data:
                continue
            symbol, size = module_global(compiled, self.name)
            if size != self.length * 4:
                raise ValueError(f"constant symbol {self.name} has {size} bytes, expected {self.length * 4}")
            write_global(symbol, offset * 4, values)
            self._written[key] = data
            written = True
        return written
