"""Reductions: sum, sum of squares (seed 000) and dot product (seed 003) of int32 or float32 vectors, as
the seeds' kernels (000, 002, 003, 004), faster ones, and CPU and library references.

- :func:`make_problem` builds a :class:`ReductionProblem` (inputs, an independent numpy reference, verify).
- ``VARIANTS`` is the registry the CLI, the GUI and :func:`kernels.bench.run` read; each variant's
  ``run(problem, launch, backend, repeats)`` returns a :class:`kernels.bench.Outcome`, or a string saying
  why it does not apply (the runner reports a skipped row).

Results are exact for int32 input (int64 accumulation everywhere; the seeds' int accumulators overflow).
float32 input is accumulated in float64 and verified against a float64 reference within
``FLOAT_RTOL`` x the sum of the absolute terms. The kernels are in :mod:`kernels.reduction_kernels`,
imported only when a GPU variant runs, because importing numba must wait until the backend is chosen.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from kernels.backend import HOST, Skip, not_applicable
from kernels import library_peers
from kernels.bench import Launch, Outcome
from kernels.descriptor import Algorithm, Option, SizeAxis
from kernels.errors import InputError
from kernels.launch import BLOCK_POWER_OF_TWO, BLOCK_WHOLE_WARPS, LaunchRule, resident_blocks
from kernels.peers import optional_module
from kernels.variants import Variant

OPS = ("sum", "sumsq", "dot")
DTYPES = ("int32", "float32")
MAX_N = 2**31 - 1
FLOAT_RTOL = 1e-9  # float64 accumulation stays far inside this; float32 accumulation does not
MIN_BLOCK = 32
# best: elements per thread, loaded 4 at a time (16 bytes); 8 = two loads in flight per thread, the fastest
# untuned choice on an H100 from 2^20 to 2^28 elements. A GPU run without a launch tunes it per size.
DEFAULT_ITEMS_PER_THREAD = 8
MAX_ITEMS_PER_THREAD = 64
BEST_KERNEL = "best: tiles of 16-byte loads"  # in the tuning cache's key: another kernel tunes afresh

ACCUMULATOR_DTYPE = {"int32": np.dtype(np.int64), "float32": np.dtype(np.float64)}
_INT32 = np.iinfo(np.int32)
_REFERENCE_CHUNK = 1 << 22  # elements per step of the reference, so a 1 GiB input needs no 2 GiB temporaries


# --- problems -------------------------------------------------------------------------------------------


class ReductionProblem:
    """One reduction to run: host inputs, their device copies (made once, on first use), the numpy
    reference and the check of a result against it."""

    algorithm = "reduction"

    def __init__(self, op: str, dtype: str, a: np.ndarray, b: np.ndarray | None):
        self.op = op
        self.dtype = dtype
        self.a = a
        self.b = b  # the second vector of dot; None for sum and sumsq
        self.n = int(a.size)
        self.bytes_read = self.n * a.itemsize * (2 if b is not None else 1)
        self.accumulator = ACCUMULATOR_DTYPE[dtype]
        self._device_inputs: dict[int, tuple] = {}

    def __repr__(self) -> str:
        return f"ReductionProblem(op={self.op!r}, dtype={self.dtype!r}, n={self.n})"

    @property
    def is_integer(self) -> bool:
        return self.dtype == "int32"

    @property
    def host_inputs(self) -> tuple[np.ndarray, np.ndarray]:
        """(a, b) as kernels take them: sum and sumsq pass ``a`` twice and never read the second."""
        return self.a, (self.b if self.b is not None else self.a)

    def device_inputs(self, backend) -> tuple:
        """Device copies of :attr:`host_inputs`, uploaded once per GPU so repeats and variants share them."""
        backend.activate()
        key = backend.device
        if key not in self._device_inputs:
            from numba import cuda

            d_a = cuda.to_device(self.a)
            d_b = cuda.to_device(self.b) if self.b is not None else d_a
            self._device_inputs[key] = (d_a, d_b)
        return self._device_inputs[key]

    @functools.cached_property
    def _reference(self) -> tuple:
        """(exact or float64 total, sum of |terms|), computed with numpy in chunks."""
        acc = self.accumulator.type
        total, abs_total = 0, 0.0
        a, b = self.host_inputs
        for start in range(0, self.n, _REFERENCE_CHUNK):
            x = a[start:start + _REFERENCE_CHUNK].astype(acc)
            if self.op == "sum":
                terms = x
            elif self.op == "sumsq":
                terms = x * x
            else:
                terms = x * b[start:start + _REFERENCE_CHUNK].astype(acc)
            if self.is_integer:
                total += int(terms.sum())  # Python int across chunks: exact
            else:
                total += float(terms.sum())
                abs_total += float(np.abs(terms).sum())
        return (np.int64(total) if self.is_integer else np.float64(total)), abs_total

    @property
    def expected(self):
        """The reference result: np.int64 (exact) for int32 input, np.float64 for float32 input."""
        return self._reference[0]

    @property
    def tolerance(self) -> float:
        """Largest accepted |result - expected|: 0 for int32, FLOAT_RTOL x sum of |terms| for float32."""
        return 0.0 if self.is_integer else FLOAT_RTOL * self._reference[1]

    def verify(self, result) -> tuple[bool, str]:
        expected = self.expected
        if self.is_integer:
            if not isinstance(result, (numbers.Integral, np.integer)) or isinstance(result, bool):
                return False, f"expected an integer result, got {type(result).__name__} {result!r}"
            diff = int(result) - int(expected)
            return (True, "exact (int64 accumulation)") if diff == 0 else (False, f"off by {diff}")
        try:
            value = float(result)
        except (TypeError, ValueError):
            return False, f"expected a number, got {type(result).__name__} {result!r}"
        if not math.isfinite(value):
            return False, f"result is {value}"
        err, tol = abs(value - float(expected)), self.tolerance
        rule = f"tolerance {tol:.3g} = {FLOAT_RTOL:g} x sum of |terms|, float64 reference"
        if err <= tol:
            return True, f"|error| {err:.3g} within {rule}"
        return False, f"|error| {err:.3g} exceeds {rule}"

    def as_result(self, value):
        """A reduction's value as variants return it: Python int for int32 input, float for float32."""
        return int(value) if self.is_integer else float(value)


def make_problem(op: str, dtype, n: int | None, seed: int = 0, data=None) -> ReductionProblem:
    """A seeded random problem of ``n`` elements (ints in -100..100, floats uniform in [-1, 1)).

    ``data`` (1-D, e.g. loaded from .npy) replaces the first vector; ``n`` is then its length. dot's
    second vector is always generated from ``seed``."""
    if op not in OPS:
        raise InputError(f"unknown op {op!r}; allowed: {', '.join(OPS)}")
    dtype = _dtype_name(dtype)
    if not isinstance(seed, (numbers.Integral, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"seed {seed!r} must be a whole number >= 0")
    rng = np.random.default_rng(int(seed))
    if data is None:
        n = _check_n(n)
        a = _random_vector(rng, dtype, n)
    else:
        a = _as_input_vector(data, dtype)
        n = a.size
    b = _random_vector(rng, dtype, n) if op == "dot" else None
    if dtype == "int32":
        _check_int64_headroom(op, a, b)
    return ReductionProblem(op, dtype, a, b)


def _dtype_name(dtype) -> str:
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name not in DTYPES:
        raise InputError(f"unknown dtype {dtype!r}; allowed: {', '.join(DTYPES)}")
    return name


def _check_n(n) -> int:
    if not isinstance(n, (numbers.Integral, np.integer)) or isinstance(n, bool):
        raise InputError(f"n {n!r} must be a whole number of elements, 1..{MAX_N}")
    if not 1 <= n <= MAX_N:
        raise InputError(f"n {n} is out of range; allowed 1..{MAX_N}")
    return int(n)


def _random_vector(rng, dtype: str, n: int) -> np.ndarray:
    if dtype == "int32":
        return rng.integers(-100, 101, size=n, dtype=np.int32)
    return (rng.random(n, dtype=np.float32) * 2 - 1).astype(np.float32)


def _as_input_vector(data, dtype: str) -> np.ndarray:
    """``data`` as a contiguous 1-D vector of ``dtype``, refusing what that dtype cannot hold exactly."""
    arr = np.asarray(data)
    if arr.ndim != 1:
        raise InputError(f"data must be a 1-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise InputError("data is empty; a reduction needs at least 1 element")
    if arr.size > MAX_N:
        raise InputError(f"data has {arr.size} elements; allowed 1..{MAX_N}")
    kind = arr.dtype.kind
    if dtype == "int32":
        if kind == "f":
            if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
                raise InputError(
                    f"data of dtype {arr.dtype} has non-whole or non-finite values; int32 needs whole numbers"
                )
        elif kind not in "biu":
            raise InputError(f"data of dtype {arr.dtype} cannot be represented as int32")
        if arr.min() < _INT32.min or arr.max() > _INT32.max:
            raise InputError(f"data values {arr.min()}..{arr.max()} do not fit int32 ({_INT32.min}..{_INT32.max})")
        return np.ascontiguousarray(arr, dtype=np.int32)
    if kind not in "biuf":
        raise InputError(f"data of dtype {arr.dtype} cannot be represented as float32")
    with np.errstate(over="ignore"):
        vec = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.all(np.isfinite(vec)):
        raise InputError("data has values that are infinite or NaN as float32 (too large, or not numbers)")
    return vec


def _check_int64_headroom(op: str, a: np.ndarray, b: np.ndarray | None) -> None:
    """int64 accumulation is exact only while no partial sum can pass 2**63: refuse data that could."""
    amax = max(abs(int(a.min())), abs(int(a.max())))
    if op == "sumsq":  # every term >= 0: exact when the exact total fits, whatever the order
        total = _exact_sum_of_squares(a)
        if total >= 2**63:
            raise InputError(f"data too large for an exact sumsq: the sum of squares {total} does not fit int64 (at most {2**63 - 1})")
        return
    if op == "sum":
        largest = amax
    else:
        largest = amax * max(abs(int(b.min())), abs(int(b.max())))
    if largest * a.size >= 2**63:
        raise InputError(
            f"data too large for an exact {op}: {a.size} terms of up to {largest} could overflow the int64 accumulator"
        )


def _exact_sum_of_squares(a: np.ndarray) -> int:
    """The exact sum of squares of int32 data as a Python int: each square (< 2**62) split into 31-bit
    halves, so every chunk's int64 sums stay exact."""
    total = 0
    for start in range(0, a.size, _REFERENCE_CHUNK):
        sq = a[start:start + _REFERENCE_CHUNK].astype(np.int64) ** 2
        total += (int((sq >> 31).sum()) << 31) + int((sq & (2**31 - 1)).sum())
    return total


# --- launches ---------------------------------------------------------------------------------------------


def _seed_grid(n: int, block: int) -> int:
    return min(32, -(-n // block))  # seed 000's 32 blocks, but like seed 003 no more than the input fills


SEED_LAUNCH = LaunchRule(block=256, grid=32, grid_for_n=_seed_grid, min_block=MIN_BLOCK, note="as in seed 000")
SEED_TREE_LAUNCH = LaunchRule(block=256, grid=32, grid_for_n=_seed_grid, min_block=MIN_BLOCK,
                              block_rule=BLOCK_POWER_OF_TWO, note="as in seed 000")
# seed 004: 1024 threads, "#SM*2 is a good number"
GRID_BARRIER_LAUNCH = LaunchRule(block=1024, grid_sm=2, min_block=MIN_BLOCK, note="as in seed 004")
# 8 x 256 = 2048 threads per SM, a full wave if registers allow
WARP_LAUNCH = LaunchRule(block=256, grid_sm=8, min_block=MIN_BLOCK, block_rule=BLOCK_WHOLE_WARPS)
BEST_LAUNCH = LaunchRule(block=256, grid_sm=8, min_block=MIN_BLOCK, block_rule=BLOCK_WHOLE_WARPS, tiles=True,
                         items=(DEFAULT_ITEMS_PER_THREAD, 4, MAX_ITEMS_PER_THREAD), items_multiple=4)


# --- GPU variants ---------------------------------------------------------------------------------------


def _prepare(name: str, problem: ReductionProblem, launch: Launch, backend):
    resolved = VARIANT_BY_NAME[name].resolve(launch, backend.limits, problem.n)
    d_a, d_b = problem.device_inputs(backend)
    return resolved.block, resolved.grid, resolved.items, d_a, d_b


def _run_per_thread_partials(problem, launch, backend, repeats):
    from numba import cuda

    from kernels.reduction_kernels import per_thread_partials_kernel

    block, grid, _, d_a, d_b = _prepare("per-thread-partials", problem, launch, backend)
    kernel = per_thread_partials_kernel(problem.op, problem.dtype)
    partials = cuda.device_array(grid * block, problem.accumulator)
    configured = kernel[grid, block]  # configured once: less Python work inside the timed launches
    timing = backend.time(lambda: configured(d_a, d_b, partials), repeats)
    total = partials.copy_to_host().sum()  # the host adds grid x block partials (not timed, as in the seed)
    return Outcome(problem.as_result(total), timing, block, grid)


def _block_partials_runner(name: str, factory_name: str):
    """Runner for the kernels that leave one partial per block for the host to add (seeds 000 b/c, 002, 003)."""

    def run(problem, launch, backend, repeats):
        from numba import cuda

        from kernels import reduction_kernels

        block, grid, _, d_a, d_b = _prepare(name, problem, launch, backend)
        kernel = getattr(reduction_kernels, factory_name)(problem.op, problem.dtype)
        partials = cuda.device_array(grid, problem.accumulator)
        configured = kernel[grid, block, 0, block * problem.accumulator.itemsize]  # dynamic shared memory
        timing = backend.time(lambda: configured(d_a, d_b, partials), repeats)
        total = partials.copy_to_host().sum()  # the host adds one partial per block (not timed)
        return Outcome(problem.as_result(total), timing, block, grid)

    return run


def _run_two_kernel(problem, launch, backend, repeats):
    from numba import cuda

    from kernels.reduction_kernels import block_sums_kernel

    block, grid, _, d_a, d_b = _prepare("two-kernel", problem, launch, backend)
    first = block_sums_kernel(problem.op, problem.dtype)
    second = block_sums_kernel("sum", problem.accumulator.name)  # the same kernel, over the 64-bit partials
    partials = cuda.device_array(grid, problem.accumulator)
    out = cuda.device_array(1, problem.accumulator)
    shared_bytes = block * problem.accumulator.itemsize
    first_pass, second_pass = first[grid, block, 0, shared_bytes], second[1, block, 0, shared_bytes]

    def launch_both():
        first_pass(d_a, d_b, partials)
        second_pass(partials, partials, out)

    timing = backend.time(launch_both, repeats)
    return Outcome(problem.as_result(out.copy_to_host()[0]), timing, block, grid)


def _run_last_block(problem, launch, backend, repeats):
    from numba import cuda

    from kernels.reduction_kernels import last_block_kernel

    block, grid, _, d_a, d_b = _prepare("last-block", problem, launch, backend)
    kernel = last_block_kernel(problem.op, problem.dtype)
    partials = cuda.device_array(grid, problem.accumulator)
    out = cuda.device_array(1, problem.accumulator)
    tickets = cuda.to_device(np.zeros(1, np.int32))  # the last block resets it for the next launch
    configured = kernel[grid, block, 0, block * problem.accumulator.itemsize]
    timing = backend.time(lambda: configured(d_a, d_b, partials, out, tickets), repeats)
    return Outcome(problem.as_result(out.copy_to_host()[0]), timing, block, grid)


def _two_slot_runner(name: str, kernel_for):
    """Runner for the kernels that add atomically into a two-slot result (see reduction_kernels);
    ``kernel_for(op, dtype, items)`` returns the compiled kernel."""

    def run(problem, launch, backend, repeats):
        from numba import cuda

        block, grid, items, d_a, d_b = _prepare(name, problem, launch, backend)
        kernel = kernel_for(problem.op, problem.dtype, items)
        result = cuda.to_device(np.zeros(2, problem.accumulator))
        if VARIANT_BY_NAME[name].launch.resident_grid and backend.is_gpu and launch.grid is None and launch.grid_sm is None:
            grid = resident_blocks(kernel, (d_a, d_b, result, 0), block) or grid
        configured = kernel[grid, block]
        slot = [1]

        def launch_once():
            slot[0] ^= 1  # add into the slot the previous launch zeroed
            configured(d_a, d_b, result, slot[0])

        timing = backend.time(launch_once, repeats)
        return Outcome(problem.as_result(result.copy_to_host()[slot[0]]), timing, block, grid)

    return run


_run_best_tiles = _two_slot_runner("best", lambda op, dtype, items: _best_kernel(op, dtype, items))


def _run_best_at(problem, launch, backend, repeats):
    if backend.is_gpu:
        from kernels.vector_loads import check_aligned

        check_aligned(problem.device_inputs(backend), "best")
    return _run_best_tiles(problem, launch, backend, repeats)


def _run_best(problem, launch, backend, repeats):
    """best at the user's launch, or (on a GPU, no launch given) at the tuned one for this device and size."""
    if not backend.is_gpu or not launch.is_default:
        return _run_best_at(problem, launch, backend, repeats)
    import dataclasses

    choice, source = tuned_best_launch(problem, backend)
    out = _run_best_at(problem, Launch(block=choice.block, items_per_thread=choice.items), backend, repeats)
    return dataclasses.replace(out, note=choice.note(source))


def tuned_best_launch(problem, backend):
    """best's (Choice, 'cached' | 'tuned now') for this device, numba-cuda version, op, dtype and size."""
    from kernels import bench, timing, tuning

    def measure(items: int, block: int):
        if block > backend.limits.max_threads_per_block:
            return None
        try:
            with timing.measurement(timing.Policy()):  # a plain short timing, never cold
                out = _run_best_at(problem, Launch(block=block, items_per_thread=items), backend, tuning.SWEEP_REPEATS)
        except Exception:  # noqa: BLE001 - e.g. too many registers for this block size: not a candidate
            return None
        return out.timing.median_ms if problem.verify(out.result)[0] else None

    key = tuning.cache_key(backend.device_name, bench.versions()["numba_cuda"], problem.op, problem.dtype, problem.n,
                           kernel=BEST_KERNEL)
    return tuning.choose(key, measure)


def _best_kernel(op, dtype, items):
    from kernels.reduction_kernels import best_kernel

    return best_kernel(op, dtype, items)


def _warp_shuffle_kernel(op, dtype, items):
    from kernels.reduction_kernels import warp_shuffle_kernel

    return warp_shuffle_kernel(op, dtype)


# --- CPU references ---------------------------------------------------------------------------------------


def _run_numpy(problem, launch, backend, repeats):
    a, b = problem.host_inputs
    acc = problem.accumulator
    if problem.op == "sum":
        fn = lambda: np.sum(a, dtype=acc)  # noqa: E731
    else:  # einsum widens in buffered chunks: no full-size int64/float64 copies
        fn = lambda: np.einsum("i,i->", a, b, dtype=acc)  # noqa: E731
    timing = HOST.time(fn, repeats)
    return Outcome(problem.as_result(fn()), timing)


@functools.lru_cache(maxsize=None)
def _cpu_parallel_function(op: str, dtype: str):
    import numba

    acc = numba.from_dtype(ACCUMULATOR_DTYPE[dtype])
    prange = numba.prange
    if op == "sum":

        def reduce(a, b):
            total = acc(0)
            for i in prange(a.size):
                total += acc(a[i])
            return total

    elif op == "sumsq":

        def reduce(a, b):
            total = acc(0)
            for i in prange(a.size):
                x = acc(a[i])
                total += x * x
            return total

    else:

        def reduce(a, b):
            total = acc(0)
            for i in prange(a.size):
                total += acc(a[i]) * acc(b[i])
            return total

    return numba.njit(parallel=True)(reduce)


def _run_cpu_parallel(problem, launch, backend, repeats):
    a, b = problem.host_inputs
    fn = _cpu_parallel_function(problem.op, problem.dtype)
    timing = HOST.time(lambda: fn(a, b), repeats)  # the warmup call compiles
    return Outcome(problem.as_result(fn(a, b)), timing)


# --- library peers (real GPU only) ------------------------------------------------------------------------


def _add(x, y):
    return x + y


@functools.lru_cache(maxsize=None)
def _builtin_reducer():
    from numba import cuda

    return cuda.reduce(_add)  # one object, so numba compiles its kernel once


def _run_cuda_reduce(problem, launch, backend, repeats):
    if problem.op != "sum":
        return not_applicable(f"numba's cuda.reduce only sums the input; {problem.op} would need an extra pass "
                               "(see the GPU variants)")
    if problem.dtype == "float32":
        return not_applicable(f"numba's cuda.reduce accumulates float32 in float32, which cannot meet this "
                               f"benchmark's float64 tolerance ({FLOAT_RTOL:g} x sum of |terms|); it runs on int32 only")
    from numba import cuda

    d_a, _ = problem.device_inputs(backend)
    reducer = _builtin_reducer()
    out = cuda.device_array(1, d_a.dtype)
    timing = backend.time(lambda: reducer(d_a, res=out), repeats)
    # numba's own launch shape: 128-thread blocks, at most 64 of them, plus its finishing launches
    return Outcome(problem.as_result(out.copy_to_host()[0]), timing, 128, max(1, min(problem.n // 128, 64)))


def _cupy_inputs(problem, backend):
    cupy = optional_module("cupy")
    d_a, d_b = problem.device_inputs(backend)
    return cupy.asarray(d_a), cupy.asarray(d_b)  # zero-copy views of numba's device arrays


def _run_cupy_sum(problem, launch, backend, repeats):
    cupy = optional_module("cupy")
    if isinstance(cupy, Skip):
        return cupy
    if problem.op != "sum":
        return not_applicable(f"cupy-sum runs sum only; {problem.op} would need a temporary or a custom kernel "
                               "(see cupy-dot for dot)")
    x, _ = _cupy_inputs(problem, backend)
    out = [None]

    def launch_sum():
        out[0] = cupy.sum(x, dtype=problem.accumulator)  # CuPy's own reduction kernel, int64 / float64

    timing = backend.time(launch_sum, repeats)
    return Outcome(problem.as_result(out[0].get()), timing)


def _run_cupy_dot(problem, launch, backend, repeats):
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
    out = [None]

    def launch_dot():
        out[0] = cupy.dot(x, y)

    timing = backend.time(launch_dot, repeats)
    return Outcome(problem.as_result(out[0].get()), timing)


# --- the registry ---------------------------------------------------------------------------------------

_SHUFFLE_SKIP = "the CUDA simulator has no warp shuffles"


def _gpu(name: str, description: str, seed: str, launch: LaunchRule, run, sim_skip: str = "") -> Variant:
    return Variant(name, description, "gpu", seed, sim_skip=sim_skip, run=run, launch=launch)


VARIANTS: tuple[Variant, ...] = (
    _gpu("per-thread-partials",
         "Grid-stride loop, every thread writes its own partial and the host adds all grid x block of them "
         "(default 32 x 256, as in the seed)",
         "000 (a)", SEED_LAUNCH, _run_per_thread_partials),
    _gpu("block-serial",
         "Partials in shared memory, then thread 0 adds the whole block serially while the others wait",
         "000 (b)", SEED_LAUNCH, _block_partials_runner("block-serial", "block_serial_kernel")),
    _gpu("tree-mask",
         "Tree addition in shared memory: threads with (tid & mask) == 0 add their neighbour, log2(block) steps",
         "000 (c)", SEED_TREE_LAUNCH, _block_partials_runner("tree-mask", "tree_mask_kernel")),
    _gpu("interleaved-divergent",
         "Interleaved tree, if t % (2*stride) == 0: the active threads are scattered, so every warp diverges",
         "002", SEED_TREE_LAUNCH, _block_partials_runner("interleaved-divergent", "interleaved_divergent_kernel")),
    _gpu("sequential",
         "Sequential tree, if t < stride: the active threads are contiguous, so whole warps retire early",
         "002 (better version), 003 (dot)", SEED_TREE_LAUNCH, _block_partials_runner("sequential", "sequential_kernel")),
    _gpu("two-kernel",
         "Per-block partials, then the same kernel on one block reduces them: the launch boundary is the "
         "grid-wide barrier (default grid 2 x SMs, block 1024)",
         "004 (a)", GRID_BARRIER_LAUNCH, _run_two_kernel),
    _gpu("last-block",
         "One launch: threadfence, an atomic ticket and syncthreads_or let the last block add every partial; "
         "it strides over them, so unlike the seed any grid size works",
         "004 (b)", GRID_BARRIER_LAUNCH, _run_last_block),
    _gpu("warp-shuffle",
         "Grid-stride partials summed in registers with shfl_down_sync, then one 64-bit atomic per warp",
         "004 (hint)", WARP_LAUNCH, _two_slot_runner("warp-shuffle", _warp_shuffle_kernel), _SHUFFLE_SKIP),
    _gpu("best",
         "Fastest: one block per tile of block x items_per_thread (8) elements, each thread's items read by "
         "16-byte loads (4 elements each) issued at once, warp shuffles, one 64-bit atomic per block, no second "
         "pass; on a GPU with no launch given, items and block come from a short sweep cached per device and "
         "size (--retune redoes it)",
         "", BEST_LAUNCH, _run_best, _SHUFFLE_SKIP),
    Variant("numpy",
            "numpy on the host: np.sum, or np.einsum for sumsq and dot, accumulating in int64 / float64 (wall time)",
            "cpu", run=_run_numpy),
    Variant("cpu-parallel",
            "Numba @njit(parallel=True) prange reduction on all CPU cores, int64 / float64 accumulator (wall time)",
            "cpu", run=_run_cpu_parallel),
    Variant("cuda-reduce",
            "numba's builtin cuda.reduce (sum only, int32 only: it accumulates in the input type); CUDA events "
            "around the call, which includes its partials allocation",
            "peer", run=_run_cuda_reduce),
    Variant("cupy-sum",
            "cupy.sum(x, dtype=int64 / float64): CuPy's own reduction kernel, not CUB (CuPy's CUB path does not "
            "widen int32 -> int64 or float32 -> float64); sum only; CUDA events",
            "peer", run=_run_cupy_sum),
    Variant("cupy-dot",
            "CuPy's dot; dot only, int32 only (float32 goes to cuBLAS sdot, a float32 accumulator; the int32 result "
            "wraps past 2**31); CUDA events",
            "peer", run=_run_cupy_dot),
    Variant("cub-reduce",
            "CUB DeviceReduce (cuda.compute reduce_into, OpKind.PLUS) of the int32 / float32 array into an int64 / "
            "float64 result; temp storage allocated once; sum only; CUDA events",
            "peer", run=library_peers.run_cub_reduce),
    Variant("triton-sum",
            "A plain Triton kernel: one tile of BLOCK (autotuned 1024..8192) elements per program, tl.sum in "
            "int64 / float64, one atomic add per program, plus zeroing the result; sum, sumsq, dot; CUDA events",
            "peer", run=library_peers.run_triton_sum),
    Variant("torch-sum",
            "torch.sum(x, dtype=int64 / float64) on a zero-copy view; sum only; CUDA events",
            "peer", run=library_peers.run_torch_sum),
    Variant("cupy-sum-cub",
            "cupy.sum(x, dtype=int64 / float64) with CUB as CuPy's only routine and reduction accelerator (what "
            "CUPY_ACCELERATORS=cub sets), switched per call; the row's note says whether device-wide CUB ran or "
            "CuPy's kernel with CUB block reductions; sum only; CUDA events",
            "peer", run=library_peers.run_cupy_sum_cub),
)
VARIANT_BY_NAME = {v.name: v for v in VARIANTS}


# --- the descriptor -------------------------------------------------------------------------------------


def load_input(path) -> np.ndarray:
    """A 1-D array from a .npy file (``--input``), for :func:`make_problem`'s ``data``; bounded and checked
    by the one input reader."""
    from kernels.inputs import read_npy

    return read_npy(path, "--input")


def _memory(n: int, options: dict) -> tuple[int, int]:
    vectors = 2 if options["op"] == "dot" else 1
    # float32 inputs are drawn as float32 and scaled: about two temporaries of the vector on the way
    host = vectors * n * 4 * (3 if options["dtype"] == "float32" else 1) + 2 * _REFERENCE_CHUNK * 8
    return host, vectors * n * 4


def _make(n, options, seed, data=None) -> ReductionProblem:
    return make_problem(options["op"], options["dtype"], n, seed, data=data)


ALGORITHM = Algorithm(
    name="reduction", title="Reduction",
    summary="sum, sum of squares or dot product of int32 / float32 vectors (seeds 000, 002, 003, 004)",
    variants=VARIANTS, make_problem=_make,
    size=SizeAxis("N elements", "elements", default={"cuda": 100_000_000, "cpu": 16 * 2**20, "sim": 4096},
                  maximum={"cuda": MAX_N, "cpu": MAX_N, "sim": 65536},
                  gui_default={"cuda": 1 << 22, "cpu": 1 << 22, "sim": 4096}),
    options=(
        Option("op", "reduction operation", choices=OPS, default="sum"),
        Option("dtype", "element type; ints are summed exactly in 64 bits, floats in float64", choices=DTYPES,
               default="int32"),
    ),
    load_input=load_input, input_help="a .npy array of numbers (1-D) to reduce instead of random data",
    memory=_memory,
)
