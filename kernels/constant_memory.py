"""A runtime-writable ``__constant__`` array for Numba CUDA kernels: what ``cudaMemcpyToSymbol`` does in C.

``cuda.const.array_like`` bakes the values into the PTX at compile time (new data means a recompile,
0.8 s on an H200). Here a kernel reads ``ConstantArray.get()``, an intrinsic that declares an externally
visible global in the constant address space (PTX ``.visible .const``, loads become ``ld.const``); after
the kernel is compiled, :meth:`ConstantArray.write` copies new values into the loaded module's symbol
(27 us on an H200), once per compiled kernel and device.

In the simulator the same kernel source reads a plain numpy array instead (``get`` is then an ordinary
Python function), so the constant-memory kernel runs there unchanged.
"""

from __future__ import annotations

import numpy as np

from kernels.backend import simulator_active


class ConstantArray:
    """A named float32 ``__constant__`` array of shape ``(rows, cols)``."""

    def __init__(self, name: str, rows: int, cols: int):
        self.name, self.rows, self.cols = name, rows, cols
        self.host = np.zeros((rows, cols), np.float32)  # the simulator's "constant memory"
        self._written: dict[tuple[int, int], bytes] = {}  # (kernel id, device id) -> bytes last written
        self.get = self._simulated_get if simulator_active() else self._make_intrinsic()

    def _simulated_get(self):
        return self.host

    def _make_intrinsic(self):
        from llvmlite import ir
        from numba.cuda import types
        from numba.cuda.extending import intrinsic

        name, rows, cols = self.name, self.rows, self.cols

        @intrinsic
        def constant_array(typingctx):
            arrty = types.Array(types.float32, 2, "C")

            def codegen(context, builder, sig, args):
                llty = ir.ArrayType(ir.FloatType(), rows * cols)
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
                    ary, data=builder.bitcast(genptr, ary.data.type), shape=[intp(rows), intp(cols)],
                    strides=[intp(cols * 4), intp(4)], itemsize=intp(4), meminfo=None, parent=None,
                )
                return ary._getvalue()

            return arrty(), codegen

        return constant_array

    def write(self, values: np.ndarray, kernel=None) -> bool:
        """Copy ``values`` (first rows of the array) into constant memory as read by ``kernel`` (a
        compiled dispatcher). Returns False when those bytes were already there (nothing copied)."""
        values = np.ascontiguousarray(values, np.float32)
        if values.shape[1] != self.cols or values.shape[0] > self.rows:
            raise ValueError(f"{values.shape} does not fit the constant array {self.rows}x{self.cols}")
        data = values.tobytes()
        if kernel is None or simulator_active():
            self.host[: values.shape[0]] = values
            return True
        from numba import cuda

        dev = cuda.get_current_device().id
        written = False
        for compiled in kernel.overloads.values():
            key = (id(compiled), dev)
            if self._written.get(key) == data:
                continue
            symbol, size = compiled.library.get_cufunc().module.get_global_symbol(self.name)
            if len(data) > size:
                raise ValueError(f"{len(data)} bytes do not fit the {size}-byte constant symbol {self.name}")
            cuda.driver.host_to_device(symbol, values, len(data))
            self._written[key] = data
            written = True
        return written
