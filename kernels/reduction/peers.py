"""The reduction's library peers: what a user would pick instead of our kernels (numba's cuda.reduce, CuPy,
CUB through cuda.compute, a plain Triton kernel, PyTorch), run on the same device arrays, verified like
ours and timed by the same CUDA events. A missing library is ``Skip(MISSING_LIBRARY)``; an op or dtype a
peer cannot do is ``Skip(NOT_APPLICABLE)`` with the reason. Each ``*_call`` factory returns the whole call
as a user writes it (launch and the result on the host), for :mod:`kernels.reduction.whole_call`.
"""

from __future__ import annotations

import functools

import numpy as np

from kernels.backend import Skip, SkipKind, memory, not_applicable
from kernels.backend.peers import cuda_compute, first_skip, optional_module, torch_module, torch_view
from kernels.harness.rows import Outcome
from kernels.reduction.problem import FLOAT_RTOL
from kernels.timing import time_kernel, time_kernel_with_result

TRITON_BLOCKS = (1024, 2048, 4096, 8192)


def _add(x, y):
    return x + y


@functools.lru_cache(maxsize=None)
def _builtin_reducer():
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    return cuda.reduce(_add)  # one object, so numba compiles its kernel once


def run_cuda_reduce(problem, launch, backend, repeats):
    if problem.op != "sum":
        return not_applicable(f"numba's cuda.reduce only sums the input; {problem.op} would need an extra pass "
                               "(see the GPU variants)")
    if problem.dtype == "float32":
        return not_applicable(f"numba's cuda.reduce accumulates float32 in float32, which cannot meet this "
                               f"benchmark's float64 tolerance ({FLOAT_RTOL:g} x sum of |terms|); it runs on int32 only")
    d_a, _ = problem.device_inputs(backend)
    reducer = _builtin_reducer()
    out = memory.empty(1, d_a.dtype)
    a_numba, out_numba = memory.as_numba(d_a), memory.as_numba(out)  # cuda.reduce takes numba's arrays only
    timing = time_kernel(backend, lambda: reducer(a_numba, res=out_numba), repeats)
    # numba's own launch shape: 128-thread blocks, at most 64 of them, plus its finishing launches
    return Outcome(problem.as_result(memory.to_host(out)[0]), timing, 128, max(1, min(problem.n // 128, 64)))


def _cupy_inputs(problem, backend):
    cupy = optional_module("cupy")
    d_a, d_b = problem.device_inputs(backend)
    return cupy.asarray(d_a), cupy.asarray(d_b)  # zero-copy views of our device arrays


def run_cupy_sum(problem, launch, backend, repeats):
    cupy = optional_module("cupy")
    if isinstance(cupy, Skip):
        return cupy
    if problem.op != "sum":
        return not_applicable(f"cupy-sum runs sum only; {problem.op} would need a temporary or a custom kernel "
                               "(see cupy-dot for dot)")
    x, _ = _cupy_inputs(problem, backend)
    # CuPy's own reduction kernel, int64 / float64
    timing, total = time_kernel_with_result(backend, lambda: cupy.sum(x, dtype=problem.accumulator), repeats)
    return Outcome(problem.as_result(total.get()), timing)


def run_cupy_dot(problem, launch, backend, repeats):
    cupy = optional_module("cupy")
    if isinstance(cupy, Skip):
        return cupy
    if problem.op != "dot":
        return not_applicable(f"cupy-dot runs dot only, not {problem.op}")
    if problem.dtype == "float32":
        return not_applicable(f"cupy.dot of float32 is cuBLAS sdot, which accumulates in float32 and cannot meet "
                               f"this benchmark's float64 tolerance ({FLOAT_RTOL:g} x sum of |terms|); it runs on "
                               "int32 only")
    x, y = _cupy_inputs(problem, backend)
    timing, total = time_kernel_with_result(backend, lambda: cupy.dot(x, y), repeats)
    return Outcome(problem.as_result(total.get()), timing)


# --- CUB through cuda.compute -----------------------------------------------------------------------------


class _CubReduce:
    """CUB's DeviceReduce::Reduce with PLUS, int32 -> int64 (float32 -> float64): temp storage allocated
    once, so a call is CUB's two kernels and nothing else. cuda.compute 1.2 takes keyword arguments only;
    a mixed scalar input / accumulator type is allowed (the accumulator is h_init's type)."""

    def __init__(self, compute, d_in, n: int, accumulator, widen: bool = False):
        self.n = n
        self.h_init = np.zeros(1, dtype=accumulator)
        self.d_out = memory.empty(1, accumulator)
        self.op = compute.OpKind.PLUS
        self.note = ""
        if widen:  # each element widened on load by a transform iterator
            d_in = compute.TransformIterator(d_in, _to_int64 if np.dtype(accumulator) == np.int64 else _to_float64)
            self.note = "input through a TransformIterator widening each element"
        self.d_in = d_in
        self.reducer = compute.make_reduce_into(d_in=d_in, d_out=self.d_out, op=self.op, h_init=self.h_init)
        nbytes = self._call(None)
        self.temp = memory.empty(max(1, int(nbytes)), np.uint8)

    def _call(self, temp):
        return self.reducer(temp_storage=temp, d_in=self.d_in, d_out=self.d_out, num_items=self.n, op=self.op,
                            h_init=self.h_init)

    def __call__(self):
        self._call(self.temp)


def _to_int64(x):
    return np.int64(x)


def _to_float64(x):
    return np.float64(x)


def _cub_reduce(problem, backend):
    compute = cuda_compute()
    if isinstance(compute, Skip):
        return compute
    if problem.op != "sum":
        return not_applicable(f"cub-reduce runs CUB's plain sum; {problem.op} would need a transform iterator "
                               "in front of it, which this benchmark does not build")
    cache = problem.__dict__.setdefault("_peer_cache", {})
    key = ("cub-reduce", backend.device)
    if key not in cache:
        d_a, _ = problem.device_inputs(backend)
        cache[key] = _checked_cub_reduce(compute, problem, d_a)
    return cache[key]


def _checked_cub_reduce(compute, problem, d_a):
    """The plain int32 -> int64 build when it builds and gives the right sum once; else the same reduction
    with each element widened by a TransformIterator (the note says which ran)."""
    why = ""
    try:
        reducer = _CubReduce(compute, d_a, problem.n, problem.accumulator)
        reducer()
        ok, detail = problem.verify(problem.as_result(memory.to_host(reducer.d_out)[0]))
        if ok:
            return reducer
        why = f"the plain build gave a wrong sum ({detail})"
    except Exception as exc:  # noqa: BLE001 - e.g. a build that wants the input in the accumulator type
        why = f"the plain build failed ({type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''})"
    reducer = _CubReduce(compute, d_a, problem.n, problem.accumulator, widen=True)
    reducer.note += f"; {why}"
    return reducer


def run_cub_reduce(problem, launch, backend, repeats):
    reducer = _cub_reduce(problem, backend)
    if isinstance(reducer, Skip):
        return reducer
    timing = time_kernel(backend, reducer, repeats)
    return Outcome(problem.as_result(memory.to_host(reducer.d_out)[0]), timing, note=reducer.note)


def cub_reduce_call(problem, backend):
    reducer = _cub_reduce(problem, backend)
    if isinstance(reducer, Skip):
        return reducer

    def call():
        reducer()
        return problem.as_result(memory.to_host(reducer.d_out)[0])

    return call


# --- PyTorch ---------------------------------------------------------------------------------------------


def _torch_dtype(torch, problem):
    return torch.int64 if problem.is_integer else torch.float64


def _torch_sum(problem, backend):
    torch = torch_module()
    if isinstance(torch, Skip):
        return torch
    if problem.op != "sum":
        return not_applicable(f"torch-sum runs torch.sum; {problem.op} would need a temporary product "
                               "(torch.dot of int32 also accumulates in int32)")
    d_a, _ = problem.device_inputs(backend)
    x, acc = torch_view(torch, d_a), _torch_dtype(torch, problem)
    return torch, x, acc


def run_torch_sum(problem, launch, backend, repeats):
    got = _torch_sum(problem, backend)
    if isinstance(got, Skip):
        return got
    torch, x, acc = got
    # the widening is fused into torch's reduction kernel
    timing, total = time_kernel_with_result(backend, lambda: torch.sum(x, dtype=acc), repeats)
    return Outcome(problem.as_result(total.item()), timing)


def torch_sum_call(problem, backend):
    got = _torch_sum(problem, backend)
    if isinstance(got, Skip):
        return got
    torch, x, acc = got
    return lambda: problem.as_result(torch.sum(x, dtype=acc).item())


# --- Triton ----------------------------------------------------------------------------------------------

_OP_CODES = {"sum": 0, "sumsq": 1, "dot": 2}


@functools.lru_cache(maxsize=None)
def _triton_kernel():
    import triton
    import triton.language as tl

    @triton.autotune(
        configs=[triton.Config({"BLOCK": b}, num_warps=4 if b <= 2048 else 8) for b in TRITON_BLOCKS],
        key=["n"],
        reset_to_zero=["out_ptr"],  # the autotuner's trial runs add into the result too
    )
    @triton.jit
    def tiled_sum(a_ptr, b_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        offsets = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        acc_type = out_ptr.dtype.element_ty
        x = tl.load(a_ptr + offsets, mask=mask, other=0).to(acc_type)
        if OP == 1:
            x = x * x
        elif OP == 2:
            x = x * tl.load(b_ptr + offsets, mask=mask, other=0).to(acc_type)
        tl.atomic_add(out_ptr, tl.sum(x, axis=0))

    return tiled_sum


class _TritonSum:
    def __init__(self, torch, problem, backend):
        import triton

        d_a, d_b = problem.device_inputs(backend)
        self.a, self.b = torch_view(torch, d_a), torch_view(torch, d_b)
        self.n, self.op = problem.n, _OP_CODES[problem.op]
        self.out = torch.zeros(1, dtype=_torch_dtype(torch, problem), device=self.a.device)
        self.kernel = _triton_kernel()
        self.grid = lambda meta: (triton.cdiv(self.n, meta["BLOCK"]),)

    def __call__(self):
        self.out.zero_()  # part of the call: an atomic result must start at zero
        self.kernel[self.grid](self.a, self.b, self.out, self.n, OP=self.op)

    @property
    def block(self):
        best = getattr(self.kernel, "best_config", None)
        return best.kwargs.get("BLOCK", "") if best is not None else ""


def _triton_sum(problem, backend):
    triton, torch = optional_module("triton"), torch_module()
    skip = first_skip(triton, torch)
    if skip is not None:
        if skip is torch:
            return Skip(SkipKind.MISSING_LIBRARY, "PyTorch is not installed (the Triton kernel takes torch tensors)")
        return skip
    cache = problem.__dict__.setdefault("_peer_cache", {})
    key = ("triton-sum", backend.device)
    if key not in cache:
        cache[key] = _TritonSum(torch, problem, backend)
    return cache[key]


def run_triton_sum(problem, launch, backend, repeats):
    call = _triton_sum(problem, backend)
    if isinstance(call, Skip):
        return call
    timing = time_kernel(backend, call, repeats)  # the warm-up call runs the autotuner
    return Outcome(problem.as_result(call.out.item()), timing, call.block, "n / BLOCK")


def triton_sum_call(problem, backend):
    call = _triton_sum(problem, backend)
    if isinstance(call, Skip):
        return call

    def whole():
        call()
        return problem.as_result(call.out.item())

    return whole


# --- CuPy with CUB as its accelerator ---------------------------------------------------------------------


def _cupy_cub_refusal(x_dtype, acc_dtype) -> str:
    """Why CuPy's device-wide CUB reduction would not take this sum ('' when it would or CuPy cannot say)."""
    try:
        from cupy.cuda import cub
    except Exception:  # noqa: BLE001 - a CuPy built without CUB
        return "this CuPy has no CUB module (cupy.cuda.cub)"
    can_use = getattr(cub, "can_use_device_reduce", None)
    if can_use is None:
        return ""
    try:
        usable = can_use(cub.CUPY_CUB_SUM, np.dtype(x_dtype), 0, np.dtype(acc_dtype))
    except Exception:  # noqa: BLE001 - the helper's signature changed: the note then says nothing
        return ""
    if usable:
        return ""
    return (f"CuPy's device-wide CUB path refuses {np.dtype(x_dtype).name} -> {np.dtype(acc_dtype).name} (it "
            "needs equal dtypes), so this ran CuPy's reduction kernel with CUB block reductions")


def _cupy_sum_input(problem, backend, name: str):
    """(cupy, a zero-copy CuPy view of the first vector) for a CuPy sum, or the Skip saying why not."""
    cupy = optional_module("cupy")
    if isinstance(cupy, Skip):
        return cupy
    if problem.op != "sum":
        return not_applicable(f"{name} runs sum only, not {problem.op}")
    d_a, _ = problem.device_inputs(backend)
    return cupy, cupy.asarray(d_a)


def run_cupy_sum_cub(problem, launch, backend, repeats):
    found = _cupy_sum_input(problem, backend, "cupy-sum-cub")
    if isinstance(found, Skip):
        return found
    cupy, x = found
    from cupy._core import _accelerator

    saved = (_accelerator.get_routine_accelerators(), _accelerator.get_reduction_accelerators())
    _accelerator.set_routine_accelerators(["cub"])  # both, as CUPY_ACCELERATORS=cub sets them
    _accelerator.set_reduction_accelerators(["cub"])
    try:
        timing, total = time_kernel_with_result(backend, lambda: cupy.sum(x, dtype=problem.accumulator), repeats)
        value = total.get()
    finally:
        _accelerator.set_routine_accelerators([_accelerator_name(a) for a in saved[0]])
        _accelerator.set_reduction_accelerators([_accelerator_name(a) for a in saved[1]])
    note = _cupy_cub_refusal(problem.a.dtype, problem.accumulator) or "CuPy's device-wide CUB reduction"
    return Outcome(problem.as_result(value), timing, note=note)


_ACCELERATOR_NAMES = {1: "cub", 2: "cutensor", 3: "cutensornet"}  # cupy/_core/_accelerator.pyx


def _accelerator_name(a) -> str:
    """CuPy reports accelerators as ints and takes names back."""
    return _ACCELERATOR_NAMES.get(a, a) if isinstance(a, int) else a


def cupy_sum_call(problem, backend):
    found = _cupy_sum_input(problem, backend, "cupy-sum")
    if isinstance(found, Skip):
        return found
    cupy, x = found
    return lambda: problem.as_result(cupy.sum(x, dtype=problem.accumulator).get())
