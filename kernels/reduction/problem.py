"""A reduction problem: seeded inputs, their device copies, and the independent reference (numpy in
chunks, Python integers across chunks) that every variant's result is checked against."""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from kernels.errors import InputError

OPS = ("sum", "sumsq", "dot")
DTYPES = ("int32", "float32")
MAX_N = 2**31 - 1
FLOAT_RTOL = 1e-9  # float64 accumulation stays far inside this; float32 accumulation does not
ACCUMULATOR_DTYPE = {"int32": np.dtype(np.int64), "float32": np.dtype(np.float64)}
_INT32 = np.iinfo(np.int32)
REFERENCE_CHUNK = 1 << 22  # elements per step of the reference, so a 1 GiB input needs no 2 GiB temporaries


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
            from kernels.backend import memory

            d_a = memory.to_device(self.a)
            d_b = memory.to_device(self.b) if self.b is not None else d_a
            self._device_inputs[key] = (d_a, d_b)
        return self._device_inputs[key]

    @functools.cached_property
    def _reference(self) -> tuple:
        """(exact or float64 total, sum of |terms|), computed with numpy in chunks."""
        acc = self.accumulator.type
        total, abs_total = 0, 0.0
        a, b = self.host_inputs
        for start in range(0, self.n, REFERENCE_CHUNK):
            x = a[start:start + REFERENCE_CHUNK].astype(acc)
            if self.op == "sum":
                terms = x
            elif self.op == "sumsq":
                terms = x * x
            else:
                terms = x * b[start:start + REFERENCE_CHUNK].astype(acc)
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
    for start in range(0, a.size, REFERENCE_CHUNK):
        sq = a[start:start + REFERENCE_CHUNK].astype(np.int64) ** 2
        total += (int((sq >> 31).sum()) << 31) + int((sq & (2**31 - 1)).sum())
    return total
