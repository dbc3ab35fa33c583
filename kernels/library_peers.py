"""Library peers: what a user would pick instead of our kernels, run on the same device arrays, verified
like ours and timed by the same CUDA events.

- CUB through ``cuda.compute`` (package cuda-cccl): ``reduce_into`` with the built-in PLUS into an int64 /
  float64 result, and ``histogram_even`` with 257 levels (256 bins) over the bytes.
- A plain Triton sum kernel: one tile of BLOCK elements per program, ``tl.sum`` in the accumulator type and
  one atomic add per program (BLOCK autotuned over 1024..8192, as a Triton user would write it).
- ``torch.sum(dtype=int64 / float64)`` and ``torch.bincount(minlength=256)``.
- ``cupy.sum`` with CUB as CuPy's only accelerator, where CuPy's CUB path applies.
- For the hash table, the structure a torch or CuPy user builds instead (neither has a GPU hash table): the
  keys sorted by bucket into a static CSR table (sort, bincount, cumsum), verified by
  ``HashProblem.check_grouped``.

Inputs are zero-copy views of numba's device arrays (``__cuda_array_interface__``). A missing library is
``Skip(MISSING_LIBRARY)``; an op or dtype a peer cannot do is ``Skip(NOT_APPLICABLE)`` with the reason.
Each ``*_call`` factory returns the whole call as a user writes it (launch and the result on the host),
for :mod:`kernels.whole_call`.
"""

from __future__ import annotations

import functools

import numpy as np

from kernels.backend import Skip, SkipKind, not_applicable
from kernels.bench import Outcome
from kernels.peers import optional_module

HISTOGRAM_BINS = 256
TRITON_BLOCKS = (1024, 2048, 4096, 8192)


def _first_skip(*modules):
    return next((m for m in modules if isinstance(m, Skip)), None)


# --- CUB through cuda.compute -----------------------------------------------------------------------------


def _compute_module():
    mod = optional_module("cuda.compute")
    if isinstance(mod, Skip):
        return Skip(SkipKind.MISSING_LIBRARY, "cuda.compute (package cuda-cccl) is not installed")
    if not getattr(mod, "_BINDINGS_AVAILABLE", True):
        return Skip(SkipKind.MISSING_LIBRARY, "cuda.compute is installed but cannot load its CUDA bindings here")
    return mod


class _CubReduce:
    """CUB's DeviceReduce::Reduce with PLUS, int32 -> int64 (float32 -> float64): temp storage allocated
    once, so a call is CUB's two kernels and nothing else. cuda.compute 1.2 takes keyword arguments only;
    a mixed scalar input / accumulator type is allowed (the accumulator is h_init's type)."""

    def __init__(self, compute, d_in, n: int, accumulator, widen: bool = False):
        from numba import cuda

        self.n = n
        self.h_init = np.zeros(1, dtype=accumulator)
        self.d_out = cuda.device_array(1, accumulator)
        self.op = compute.OpKind.PLUS
        self.note = ""
        if widen:  # each element widened on load by a transform iterator
            d_in = compute.TransformIterator(d_in, _to_int64 if np.dtype(accumulator) == np.int64 else _to_float64)
            self.note = "input through a TransformIterator widening each element"
        self.d_in = d_in
        self.reducer = compute.make_reduce_into(d_in=d_in, d_out=self.d_out, op=self.op, h_init=self.h_init)
        nbytes = self._call(None)
        self.temp = cuda.device_array(max(1, int(nbytes)), np.uint8)

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
    compute = _compute_module()
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
        ok, detail = problem.verify(problem.as_result(reducer.d_out.copy_to_host()[0]))
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
    timing = backend.time(reducer, repeats)
    return Outcome(problem.as_result(reducer.d_out.copy_to_host()[0]), timing, note=reducer.note)


def cub_reduce_call(problem, backend):
    reducer = _cub_reduce(problem, backend)
    if isinstance(reducer, Skip):
        return reducer

    def call():
        reducer()
        return problem.as_result(reducer.d_out.copy_to_host()[0])

    return call


def _level(dtype, value):
    return np.array([value], dtype=dtype)


class _CubHistogram:
    """CUB's DeviceHistogram::HistogramEven over the bytes: 257 levels 0..256 (256 bins of width 1), int32
    counters, temp storage allocated once. The levels need a type wider than uint8 (256 does not fit);
    int32 is tried first, then float32 (CUB casts the samples to the level type). Keyword arguments only,
    as cuda.compute 1.2 takes them."""

    def __init__(self, compute, samples, n: int):
        from numba import cuda

        self.samples, self.n = samples, n
        self.counts = cuda.device_array(HISTOGRAM_BINS, np.int32)
        self.levels = np.array([HISTOGRAM_BINS + 1], dtype=np.int32)
        errors = []
        for level_type in (np.int32, np.float32):
            self.lower, self.upper = _level(level_type, 0), _level(level_type, HISTOGRAM_BINS)
            try:
                self.hist = compute.make_histogram_even(
                    d_samples=samples, d_histogram=self.counts, h_num_output_levels=self.levels,
                    h_lower_level=self.lower, h_upper_level=self.upper, num_samples=n)
                nbytes = self._call(None)
            except Exception as exc:  # noqa: BLE001 - this level type is refused; try the next one
                errors.append(f"{np.dtype(level_type).name} levels: {type(exc).__name__}: {exc}")
                continue
            self.level_type = np.dtype(level_type).name
            self.temp = cuda.device_array(max(1, int(nbytes)), np.uint8)
            return
        raise RuntimeError("cuda.compute histogram_even refused every level type: " + "; ".join(errors))

    def _call(self, temp):
        return self.hist(temp_storage=temp, d_samples=self.samples, d_histogram=self.counts,
                         h_num_output_levels=self.levels, h_lower_level=self.lower, h_upper_level=self.upper,
                         num_samples=self.n)

    def __call__(self):
        self._call(self.temp)


def run_cub_histogram(problem, launch, backend, repeats):
    compute = _compute_module()
    if isinstance(compute, Skip):
        return compute
    backend.activate()
    samples = problem.device_bytes()[: problem.n]
    hist = _CubHistogram(compute, samples, problem.n)
    timing = backend.time(hist, repeats)  # CUB zeroes its counters itself: nothing else to time
    return Outcome(problem.score(hist.counts.copy_to_host()), timing, note=f"{hist.level_type} levels")


# --- PyTorch ---------------------------------------------------------------------------------------------


def _torch():
    return optional_module("torch")


def _torch_view(torch, device_array):
    return torch.as_tensor(device_array, device="cuda")  # zero-copy through __cuda_array_interface__


def _torch_dtype(torch, problem):
    return torch.int64 if problem.is_integer else torch.float64


def _torch_sum(problem, backend):
    torch = _torch()
    if isinstance(torch, Skip):
        return torch
    if problem.op != "sum":
        return not_applicable(f"torch-sum runs torch.sum; {problem.op} would need a temporary product "
                               "(torch.dot of int32 also accumulates in int32)")
    d_a, _ = problem.device_inputs(backend)
    x, acc = _torch_view(torch, d_a), _torch_dtype(torch, problem)
    return torch, x, acc


def run_torch_sum(problem, launch, backend, repeats):
    got = _torch_sum(problem, backend)
    if isinstance(got, Skip):
        return got
    torch, x, acc = got
    out = [None]

    def launch_sum():
        out[0] = torch.sum(x, dtype=acc)  # the widening is fused into torch's reduction kernel

    timing = backend.time(launch_sum, repeats)
    return Outcome(problem.as_result(out[0].item()), timing)


def torch_sum_call(problem, backend):
    got = _torch_sum(problem, backend)
    if isinstance(got, Skip):
        return got
    torch, x, acc = got
    return lambda: problem.as_result(torch.sum(x, dtype=acc).item())


def run_torch_bincount(problem, launch, backend, repeats):
    torch = _torch()
    if isinstance(torch, Skip):
        return torch
    backend.activate()
    x = _torch_view(torch, problem.device_bytes()[: problem.n])
    out = [None]

    def count():
        out[0] = torch.bincount(x, minlength=HISTOGRAM_BINS)

    timing = backend.time(count, repeats)
    return Outcome(problem.score(out[0].cpu().numpy()), timing)


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
        self.a, self.b = _torch_view(torch, d_a), _torch_view(torch, d_b)
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
    triton, torch = optional_module("triton"), _torch()
    skip = _first_skip(triton, torch)
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
    timing = backend.time(call, repeats)  # the warm-up call runs the autotuner
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
        out = [None]

        def launch_sum():
            out[0] = cupy.sum(x, dtype=problem.accumulator)

        timing = backend.time(launch_sum, repeats)
        value = out[0].get()
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


# --- hash table: the grouped table a library user builds by sorting ---------------------------------------
#
# Neither torch nor CuPy has a GPU hash table; what a user of either builds from a batch of keys is a static
# table grouped by bucket (CSR): the keys sorted by bucket id, and each bucket's start in that order. Built
# in one batch, not a mutable chained table with per-insert links: the structure, not the same data
# structure. Everything from the device keys to the finished (sorted keys, offsets) is inside the timing.

GROUPBY_MAX_BUCKETS = 2**31  # bucket ids are 32-bit below this


def _groupby_skip(module, problem, name: str):
    """Why a sort-groupby peer does not run: its library is missing, or ``problem`` has more buckets than
    32-bit ids count; None when it runs."""
    if isinstance(module, Skip):
        return module
    if problem.buckets > GROUPBY_MAX_BUCKETS:
        return not_applicable(f"{name} keeps bucket ids in 32 bits: at most {GROUPBY_MAX_BUCKETS} buckets")
    return None


def _timed_groupby(problem, backend, repeats, group, to_host, note: str = "") -> Outcome:
    """Times ``group()`` (returning the device's (sorted keys, offsets)) and checks the last table it
    built, copied to the host by ``to_host``."""
    out = [None]

    def build():
        out[0] = group()

    timing = backend.time(build, repeats)
    sorted_keys, offsets = out[0]
    return Outcome(problem.check_grouped(to_host(sorted_keys), to_host(offsets)), timing, note=note)


def _torch_wide_keys(torch, d_keys):
    """(a function returning the keys as a new int64 tensor, a note). torch's uint32 support is partial:
    where this torch cannot view or cast uint32, the keys' bits are read as int32 and masked back."""
    try:
        keys = _torch_view(torch, d_keys)
        keys[:1].to(torch.int64)  # a torch that cannot cast uint32 refuses here, before the timing
        return (lambda: keys.to(torch.int64)), ""
    except (TypeError, RuntimeError, NotImplementedError) as exc:
        bits = _torch_view(torch, d_keys.view(np.int32))
        why = f"uint32 keys read as int32 and masked to 32 bits (torch refused uint32: {type(exc).__name__})"
        return (lambda: bits.to(torch.int64) & 0xFFFFFFFF), why


def run_torch_sort_groupby(problem, launch, backend, repeats):
    torch = _torch()
    skip = _groupby_skip(torch, problem, "torch-sort-groupby")
    if skip is not None:
        return skip
    backend.activate()
    wide_keys, note = _torch_wide_keys(torch, problem.device_keys())
    buckets = problem.buckets

    def group():
        keys = wide_keys()
        # int32 ids: the radix sort behind torch.sort makes half the passes it makes over int64
        ids = (keys % buckets).to(torch.int32)
        _, order = torch.sort(ids, stable=True)
        counts = torch.bincount(ids, minlength=buckets)
        offsets = torch.zeros(buckets + 1, dtype=torch.int64, device=keys.device)
        offsets[1:] = torch.cumsum(counts, 0)
        return keys[order], offsets

    return _timed_groupby(problem, backend, repeats, group, lambda t: t.cpu().numpy(), note)


def run_cupy_sort_groupby(problem, launch, backend, repeats):
    cupy = optional_module("cupy")
    skip = _groupby_skip(cupy, problem, "cupy-sort-groupby")
    if skip is not None:
        return skip
    backend.activate()
    keys = cupy.asarray(problem.device_keys())
    buckets = problem.buckets
    divisor = np.uint32(buckets)  # CuPy computes on uint32 itself: ids stay 32-bit, no widening

    def group():
        ids = keys % divisor
        order = cupy.argsort(ids)
        counts = cupy.bincount(ids, minlength=buckets)
        offsets = cupy.zeros(buckets + 1, dtype=cupy.int64)
        offsets[1:] = cupy.cumsum(counts)
        return keys[order], offsets

    return _timed_groupby(problem, backend, repeats, group, lambda a: a.get())
