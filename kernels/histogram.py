"""256-bin histogram of bytes (seed 003): numpy and parallel CPU twins, the seed's global-atomic and
shared-atomic kernels, a tuned kernel, and CuPy as a peer.

A run's result is the number of bins (0..256) that match ``np.bincount`` of the data; the problem keeps a
short description of the last mismatch for its verify note.
"""

from __future__ import annotations

import functools
import os

import numpy as np
from kernels import library_peers
from kernels.backend import HOST, Skip, bind_numba_cuda
from kernels.bench import Outcome
from kernels.descriptor import Algorithm, Option, SizeAxis
from kernels.errors import InputError
from kernels.launch import LaunchRule
from kernels.peers import optional_module
from kernels.variants import Variant

cuda = None  # numba.cuda, bound on first GPU use by bind_numba_cuda (the cpu backend never imports it)
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

    def device_bytes(self):
        """The data on the GPU, copied once, zero-padded to a multiple of 4 bytes so that kernels can
        also read it as uint32 words (``.view(np.uint32)``); kernels still stop at ``n``."""
        if self._device_bytes is None:
            padded = np.zeros(-(-self.n // 4) * 4, np.uint8)
            padded[: self.n] = self.data
            self._device_bytes = bind_numba_cuda(globals()).to_device(padded)
        return self._device_bytes

    def device_counts(self):
        """The GPU variants' 256 output counters, allocated once and zeroed by each timed launch."""
        if self._device_counts is None:
            self._device_counts = bind_numba_cuda(globals()).device_array(BINS, np.uint32)
        return self._device_counts

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


def load_input(path, option: str = "--input") -> np.ndarray:
    """Every byte of the regular file at ``path`` as a uint8 array, read through the one input reader
    (InputError if missing, not a regular file, empty, or larger than the counters or memory allow)."""
    from kernels.inputs import memory_limit, read_bytes

    limit, why = memory_limit()
    if limit >= MAX_BYTES:
        limit, why = MAX_BYTES, "the histogram's 32-bit counters"
    raw = read_bytes(path, option, limit, why)
    if not raw:
        raise InputError(f"{option} {os.fspath(path)!r} is empty; a histogram needs at least 1 byte")
    return np.frombuffer(raw, dtype=np.uint8)


# ---------------------------------------------------------------------------------------------- CPU


@functools.lru_cache(maxsize=None)
def _cpu_parallel_kernel():
    import numba

    @numba.njit(parallel=True, cache=False)
    def histogram_private_bins(data, chunks):
        # each chunk counts into its own row, so threads never write the same counter
        per_chunk = np.zeros((chunks, BINS), np.int64)
        size = data.size
        step = (size + chunks - 1) // chunks
        for c in numba.prange(chunks):
            row = per_chunk[c]
            for i in range(c * step, min(size, (c + 1) * step)):
                row[data[i]] += 1
        return per_chunk.sum(axis=0)

    return histogram_private_bins


def _run_cpu_numpy(problem, launch, backend, repeats):
    result = {}

    def count():
        result["counts"] = np.bincount(problem.data, minlength=BINS)

    timing = HOST.time(count, repeats)
    return Outcome(problem.score(result["counts"]), timing)


def _run_cpu_parallel(problem, launch, backend, repeats):
    import numba

    kernel = _cpu_parallel_kernel()
    chunks = 4 * numba.get_num_threads()  # a few chunks per thread evens out the load
    result = {}

    def count():
        result["counts"] = kernel(problem.data, chunks)

    timing = HOST.time(count, repeats)
    return Outcome(problem.score(result["counts"]), timing)


# ---------------------------------------------------------------------------------------------- GPU


@functools.lru_cache(maxsize=None)
def _seed_kernels():
    from numba import uint32

    bind_numba_cuda(globals())


    @cuda.jit
    def zero_counts(counts):
        i = cuda.grid(1)
        if i < counts.size:
            counts[i] = 0

    @cuda.jit
    def histo_global_atomics(buffer, size, histo):
        # seed 003, first kernel: thousands of threads contend for 256 global counters
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < size:
            cuda.atomic.add(histo, buffer[i], 1)
            i += stride

    @cuda.jit
    def histo_shared_atomics(buffer, size, histo):
        # seed 003, second kernel: a block's threads contend only for the block's shared counters;
        # the loops over bins let any block size work (the seed's 256 threads own one bin each)
        tmp = cuda.shared.array(BINS, uint32)
        for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
            tmp[b] = 0
        cuda.syncthreads()
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < size:
            cuda.atomic.add(tmp, buffer[i], 1)
            i += stride
        cuda.syncthreads()
        for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
            cuda.atomic.add(histo, b, tmp[b])

    return zero_counts, histo_global_atomics, histo_shared_atomics


@functools.lru_cache(maxsize=None)
def _best_kernel(words_per_thread: int):
    """The tuned kernel for one unroll depth (unrolled loops need a compile-time trip count)."""
    from numba import uint32

    from kernels.vector_loads import VECTOR_LANES, load_vector

    bind_numba_cuda(globals())

    lanes = 32
    sub_size = BINS * lanes  # 32 KiB of shared counters per block, whatever the block size
    vectors_per_thread = words_per_thread // VECTOR_LANES

    @cuda.jit(device=True, inline="always")
    def count_byte(sub, byte, lane):
        # lane l's counter for bin b is sub[b * 32 + l], in bank l: the 32 atomics of a warp never hit
        # the same bank or address, even when every lane sees the same byte (low-entropy data).
        # Unsigned indices also spare numba's negative-index wraparound code.
        cuda.atomic.add(sub, (uint32(byte) << uint32(5)) | lane, 1)

    @cuda.jit(device=True, inline="always")
    def count_word(sub, w, lane):
        count_byte(sub, w & 0xFF, lane)
        count_byte(sub, (w >> 8) & 0xFF, lane)
        count_byte(sub, (w >> 16) & 0xFF, lane)
        count_byte(sub, w >> 24, lane)

    @cuda.jit
    def histo_best(words, buffer, size, histo):
        sub = cuda.shared.array(sub_size, uint32)
        t = cuda.threadIdx.x
        for j in range(t, sub_size, cuda.blockDim.x):
            sub[j] = 0
        cuda.syncthreads()
        lane = uint32(t & 31)
        n_words = size // 4
        n_vectors = n_words // VECTOR_LANES
        stride = cuda.gridsize(1)
        i = cuda.grid(1)
        # main loop: vectors_per_thread 16-byte loads in flight before their 16 atomics each
        w0 = cuda.local.array(vectors_per_thread, uint32)
        w1 = cuda.local.array(vectors_per_thread, uint32)
        w2 = cuda.local.array(vectors_per_thread, uint32)
        w3 = cuda.local.array(vectors_per_thread, uint32)
        while i + (vectors_per_thread - 1) * stride < n_vectors:
            for k in range(vectors_per_thread):
                v = load_vector(words, i + k * stride)
                w0[k], w1[k], w2[k], w3[k] = v[0], v[1], v[2], v[3]
            for k in range(vectors_per_thread):
                count_word(sub, w0[k], lane)
                count_word(sub, w1[k], lane)
                count_word(sub, w2[k], lane)
                count_word(sub, w3[k], lane)
            i += vectors_per_thread * stride
        while i < n_vectors:
            v = load_vector(words, i)
            for k in range(VECTOR_LANES):
                count_word(sub, v[k], lane)
            i += stride
        # the 0..3 words after the last whole vector, then the 0..3 bytes after the last whole word
        word = n_vectors * VECTOR_LANES + cuda.grid(1)
        if word < n_words:
            count_word(sub, words[word], lane)
        tail = n_words * 4 + cuda.grid(1)
        if tail < size:
            count_byte(sub, buffer[tail], lane)
        cuda.syncthreads()
        # one global atomic per bin per block; each thread starts its 32 reads at a different lane so
        # that a warp's reads fall in 32 different banks
        for b in range(t, BINS, cuda.blockDim.x):
            total = uint32(0)
            for k in range(lanes):
                total += sub[b * lanes + ((k + b) & 31)]
            if total:
                cuda.atomic.add(histo, b, total)

    return histo_best


def _time_gpu(problem, backend, repeats, block, grid, count_into):
    """Times zeroing the counters plus ``count_into(counts)`` (what a real run needs), then scores.
    The caller has activated the backend and copied the data to the GPU (outside the timing)."""
    zero_counts = _seed_kernels()[0]
    counts = problem.device_counts()

    def launch_once():
        zero_counts[1, BINS](counts)
        count_into(counts)

    timing = backend.time(launch_once, repeats)
    return Outcome(problem.score(counts.copy_to_host()), timing, block, grid)


SEED_LAUNCH = LaunchRule(block=256, grid_sm=2, note="as in the seed")  # 256 threads, blocks = 2 x SM count


def _seed_runner(name: str, which: int):
    """Runner for the seed's kernel number ``which`` (1: global atomics, 2: shared atomics) at the
    seed's launch unless the Launch says otherwise."""

    def run(problem, launch, backend, repeats):
        backend.activate()
        resolved = _VARIANT_BY_NAME[name].resolve(launch, backend.limits, problem.n)
        block, grid = resolved.block, resolved.grid
        kernel, data = _seed_kernels()[which], problem.device_bytes()

        def count_into(counts):
            kernel[grid, block](data, problem.n, counts)

        return _time_gpu(problem, backend, repeats, block, grid, count_into)

    return run


_run_global_atomics, _run_shared_atomics = _seed_runner("global-atomics", 1), _seed_runner("shared-atomics", 2)


# 1024 threads x 2 blocks per SM is one full wave at 2048 resident threads per SM (H100/H200): fewer,
# longer-lived blocks spread each block's zeroing and merging of its 8192 counters over more bytes (on an
# H100, 100 MiB: 0.042 ms against 0.043-0.045 with 512 x 4 or 256 x 8). Words per thread per round come
# in 16-byte loads of 4 words: 8 words is two loads in flight, the fastest there at every entropy.
BEST_WORDS_PER_THREAD, MAX_WORDS_PER_THREAD = 8, 64
BEST_LAUNCH = LaunchRule(block=1024, grid_sm=2, items=(BEST_WORDS_PER_THREAD, 4, MAX_WORDS_PER_THREAD), items_multiple=4)


def _run_best(problem, launch, backend, repeats):
    backend.activate()
    resolved = _VARIANT_BY_NAME["best"].resolve(launch, backend.limits, problem.n)
    block, grid = resolved.block, resolved.grid
    kernel = _best_kernel(resolved.items)
    data = problem.device_bytes()
    words = data.view(np.uint32)  # same memory; the padding to a multiple of 4 makes the view legal
    if backend.is_gpu:
        from kernels.vector_loads import check_aligned

        check_aligned((words,), "best")

    def count_into(counts):
        kernel[grid, block](words, data, problem.n, counts)

    return _time_gpu(problem, backend, repeats, block, grid, count_into)


def _run_cupy(problem, launch, backend, repeats):
    cupy = optional_module("cupy")
    if isinstance(cupy, Skip):
        return cupy
    backend.activate()
    with cupy.cuda.Device(backend.device):
        data = cupy.asarray(problem.device_bytes())[: problem.n]  # zero-copy view of numba's buffer
        result = {}

        def count():
            result["counts"], _ = cupy.histogram(data, bins=BINS, range=(0, BINS))

        timing = backend.time(count, repeats)
        return Outcome(problem.score(cupy.asnumpy(result["counts"])), timing)


VARIANTS = (
    Variant(
        "cpu-numpy", "np.bincount on the host: the seed's CPU histogram, and the reference to match",
        "cpu", seed="003", run=_run_cpu_numpy,
    ),
    Variant(
        "cpu-parallel", "Numba parallel loop: each chunk counts into private bins, summed at the end (no atomics)",
        "cpu", run=_run_cpu_parallel,
    ),
    Variant(
        "global-atomics", "seed's first kernel: an atomic add on 256 global counters per byte, so threads queue up",
        "gpu", seed="003", launch=SEED_LAUNCH, run=_run_global_atomics,
    ),
    Variant(
        "shared-atomics", "seed's second kernel: atomics on a block's shared histogram, then one global atomic per bin",
        "gpu", seed="003", constraints="any block size works: a loop covers the 256 bins",
        launch=SEED_LAUNCH, run=_run_shared_atomics,
    ),
    Variant(
        "best", "32 per-lane shared sub-histograms, one bank each (conflict-free atomics at any entropy); 16-byte loads "
        "in flight", "gpu", constraints="32 KiB shared memory per block; items_per_thread = 4-byte words per thread per "
        "round, read 4 at a time",
        launch=BEST_LAUNCH, run=_run_best,
    ),
    Variant(
        "cupy-histogram", "cupy.histogram(bins=256, range=(0, 256)): CuPy may hand it to CUB, but on H100 and "
        "H200 it ran 8x slower than CUB's histogram_even, so it is not CUB's fast path there", "peer",
        run=_run_cupy,
    ),
    Variant(
        "cub-histogram", "CUB DeviceHistogram::HistogramEven (cuda.compute histogram_even): 257 levels 0..256, "
        "int32 counters, temp storage allocated once; CUB zeroes its counters itself", "peer",
        run=library_peers.run_cub_histogram,
    ),
    Variant(
        "torch-bincount", "torch.bincount(x, minlength=256) on a zero-copy view of the bytes", "peer",
        run=library_peers.run_torch_bincount,
    ),
)
_VARIANT_BY_NAME = {v.name: v for v in VARIANTS}


def _memory(n: int, options: dict) -> tuple[int, int]:
    # the bytes, np.bincount's cast of them to intp for the reference, the pattern's temporaries
    return n * 11, n + BINS * 4


def _make(n, options, seed, data=None) -> HistogramProblem:
    if data is not None:
        return make_problem(data=data)
    return make_problem(n, seed, pattern=options["pattern"])


ALGORITHM = Algorithm(
    name="histogram", title="Histogram",
    summary="256-bin histogram of bytes: CPU, global and shared atomics (seed 003), per-lane sub-histograms",
    variants=VARIANTS, make_problem=_make,
    size=SizeAxis("N bytes", "bytes", default={"cuda": 100 * 2**20, "cpu": 16 * 2**20, "sim": 4096},
                  maximum={"cuda": MAX_BYTES, "cpu": MAX_BYTES, "sim": 65536},
                  gui_default={"cuda": 1 << 24, "cpu": 1 << 24, "sim": 4096}),
    options=(Option("pattern", "uniform random bytes (bit entropy 1.0), low-entropy (nine bytes in ten one value), or "
                               "CUB's benchmark inputs entropy-0.811 .. entropy-0.000 (bit entropy; AND of 1-4 "
                               "random bytes, 0.000 = one value)", choices=PATTERNS,
                    default="uniform"),),
    load_input=load_input, input_help="any file: its bytes are counted instead of random data",
    memory=_memory,
)
