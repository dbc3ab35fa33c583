"""A histogram problem: the bytes (seeded random patterns, or a file's bytes), their device copy, and the
independent reference (``np.bincount``) every variant's counts are scored against."""

from __future__ import annotations

import numpy as np

from kernels.backend import memory
from kernels.errors import InputError

BINS = 256
# CUB's histogram benchmark draws its inputs at these bit entropies (nvbench_helper's bit_entropy): each
# level ANDs this many more uniform random words together, so every bit is 1 with probability 2**-(k+1)
# and the bytes' Shannon entropy is 8 x H(2**-(k+1)) bits; entropy 0 is one value repeated. 1.000 is
# "uniform" (k = 0).
ENTROPY_ANDS = {"entropy-0.811": 1, "entropy-0.544": 2, "entropy-0.337": 3, "entropy-0.201": 4}
ENTROPY_ZERO = "entropy-0.000"
PATTERNS = ("uniform", "low-entropy", *ENTROPY_ANDS, ENTROPY_ZERO)
LOW_ENTROPY_SHARE = 0.9  # share of bytes that hold the one dominant value in the "low-entropy" pattern
LOW_ENTROPY_VALUE = 0
MAX_BYTES = 2**32 - 1  # the counters are 32-bit, as in the seed (unsigned int histo[256])


class HistogramProblem:
    algorithm = "histogram"
    op = "histogram"
    dtype = "uint8"

    def __init__(self, data: np.ndarray, source: str):
        self.data = data
        self.source = source  # "uniform", "low-entropy" or where the bytes came from
        self.n = int(data.size)
        self.bytes_read = self.n
        self.expected = BINS  # bins that must match
        self.reference = np.bincount(data, minlength=BINS)
        self.last_counts = None  # the counts of the last run, as scored
        self.last_mismatch = ""
        self._device_bytes = None
        self._device_counts = None
        self._device_guarded_counts = None

    def device_bytes(self):
        """The data on the GPU, copied once, zero-padded to a multiple of 4 bytes so that kernels can
        also read it as uint32 words (``.view(np.uint32)``); kernels still stop at ``n``."""
        if self._device_bytes is None:
            padded = np.zeros(-(-self.n // 4) * 4, np.uint8)
            padded[: self.n] = self.data
            self._device_bytes = memory.to_device(padded)
        return self._device_bytes

    def device_counts(self):
        """The GPU variants' 256 output counters, allocated once and zeroed by each timed launch. They sit
        after 256 guard words of their own allocation: a compiler that sign-extends a byte index
        (numba-cuda-mlir 0.6.0, docs/compilers.md) counts bytes 128..255 there, not in another array."""
        if self._device_counts is None:
            self._device_guarded_counts = memory.zeros(2 * BINS, np.uint32)
            self._device_counts = self._device_guarded_counts[BINS:]
        return self._device_counts

    def device_guard(self):
        """The guard words below :meth:`device_counts` (zeroed before a variant runs, read after)."""
        self.device_counts()
        return self._device_guarded_counts[:BINS]

    def note_stray_counts(self, guard) -> None:
        """Adds to the mismatch how many counts landed below the counters (a negative index), given the
        guard words read back after a run."""
        stray = int(np.asarray(guard, dtype=np.int64).sum())
        if stray:
            self.last_mismatch += (f"{'; ' if self.last_mismatch else ''}{stray} counts landed in the {BINS} "
                                   f"words below the counters (a negative index)")

    def score(self, counts) -> int:
        """Number of bins of ``counts`` that equal the reference; remembers what differed."""
        counts = self.last_counts = np.asarray(counts, dtype=np.int64)
        differ = np.flatnonzero(counts != self.reference)
        if differ.size:
            b = int(differ[0])
            self.last_mismatch = (
                f"{differ.size} bins differ (first: bin {b} got {counts[b]} expected {self.reference[b]})"
            )
        else:
            self.last_mismatch = ""
        return BINS - int(differ.size)

    def verify(self, result) -> tuple[bool, str]:
        if result == BINS:
            return True, ""
        return False, self.last_mismatch or f"{BINS - int(result)} bins differ"


def make_problem(n: int | None = None, seed: int = 0, data=None, pattern: str = "uniform") -> HistogramProblem:
    """Seeded random bytes (``n`` of them, ``pattern`` 'uniform' or 'low-entropy'), or given ``data``
    (bytes, bytearray or a uint8 numpy array, e.g. a file's bytes from :func:`load_input`)."""
    if data is not None:
        if isinstance(data, (bytes, bytearray, memoryview)):
            arr = np.frombuffer(bytes(data), dtype=np.uint8)
        else:
            arr = np.asarray(data)
            if arr.dtype != np.uint8:
                raise InputError(f"histogram data must be bytes or a uint8 array, not {arr.dtype}")
            arr = arr.ravel()
        if arr.size == 0:
            raise InputError("histogram data is empty; give at least 1 byte")
        _check_size(arr.size)
        return HistogramProblem(np.ascontiguousarray(arr), "data")
    if n is None or isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"histogram size n={n!r} must be a whole number of bytes, at least 1")
    _check_size(int(n))
    if pattern not in PATTERNS:
        raise InputError(f"unknown histogram pattern {pattern!r}; known: {', '.join(PATTERNS)}")
    rng = np.random.default_rng(seed)
    data = rng.integers(0, BINS, int(n), dtype=np.uint8)
    if pattern == "low-entropy":
        # one draw in ten keeps its uniform byte; the other nine become the dominant value
        keep_uniform = rng.integers(0, 10, int(n), dtype=np.uint8) >= round(10 * LOW_ENTROPY_SHARE)
        data = np.where(keep_uniform, data, np.uint8(LOW_ENTROPY_VALUE))
    elif pattern in ENTROPY_ANDS:
        for _ in range(ENTROPY_ANDS[pattern]):  # CUB's construction, on bytes: AND in another random byte
            data &= rng.integers(0, BINS, int(n), dtype=np.uint8)
    elif pattern == ENTROPY_ZERO:
        data = np.full(int(n), data[0], np.uint8)  # one value (the first random byte) everywhere
    return HistogramProblem(data, pattern)


def _check_size(n: int) -> None:
    if n > MAX_BYTES:
        raise InputError(f"histogram of {n} bytes is too large: at most {MAX_BYTES} (32-bit counters)")
