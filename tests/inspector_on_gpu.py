"""For the inspector's GPU test: on a real GPU, the loaded kernel's resources and the driver's occupancy for it,
to set against what the inspector computes offline (``cuOccupancyMaxActiveBlocksPerMultiprocessor`` through
numba's context)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kernels.inspector.declarations import declaration, threads
from kernels.inspector.offline_compile import resolve_kernel


@dataclass(frozen=True)
class LoadedKernel:
    arch: str  # of the current device, e.g. 'sm_90'
    registers: int
    static_shared: int
    local_per_thread: int
    max_threads_per_block: int
    compiled: object  # numba's compiled kernel (an overload of a CUDA dispatcher)

    def active_blocks_per_sm(self, block: tuple[int, ...], dynamic_shared: int) -> int:
        """The driver's occupancy API for this kernel at this block and dynamic shared memory."""
        from numba import cuda

        from kernels.backend.numba_private import loaded_function

        cufunc = loaded_function(self.compiled)
        return cuda.current_context().get_active_blocks_per_multiprocessor(cufunc, threads(block), dynamic_shared)


@functools.lru_cache(maxsize=None)
def load(target: str, variant: str) -> LoadedKernel:
    """The variant's kernel compiled for the current GPU with its declared signature (as the inspector
    compiles it: lineinfo on), and what the driver reports about it."""
    from numba import cuda

    decl = declaration(target, variant)
    job = {"module": decl.module, "function": decl.function,
           "args": list(decl.args) if decl.args is not None else None, "item": decl.item}
    dispatcher = cuda.jit(decl.signature, lineinfo=True)(resolve_kernel(job))
    compiled = next(iter(dispatcher.overloads.values()))
    major, minor = cuda.get_current_device().compute_capability
    return LoadedKernel(f"sm_{major}{minor}", compiled.regs_per_thread, compiled.shared_mem_per_block,
                        compiled.local_mem_per_thread, compiled.max_threads_per_block, compiled)
