"""The chained hash table of seed 003, in arrays: inserting uint32 keys on the CPU, on the GPU with one
spin lock per bucket (the seed's version), and on the GPU without locks (a compare-and-swap on the
bucket's head).

Layout: entry i of the pool holds key i (the seed's ``table.pool[tid]``); ``pool_next[i]`` is the index
of the next entry in its chain and ``heads[b]`` the first entry of bucket b (-1 = end / empty); the
bucket of a key is ``key % buckets``. A run's result is the number of entries found in the right
bucket when walking the finished table.

The library peers (``torch-sort-groupby``, ``cupy-sort-groupby``, in :mod:`kernels.library_peers`) build a
different structure from the same keys: a static table grouped by bucket (CSR), sorted in one batch;
:meth:`HashProblem.check_grouped` checks it with the same (found, misplaced, bad) counts.
"""

from __future__ import annotations

import functools

import numpy as np
from kernels import library_peers
from kernels.backend import HOST, bind_numba_cuda
from kernels.bench import Outcome, Unit
from kernels.descriptor import Algorithm, Option, SizeAxis, whole_number
from kernels.errors import InputError
from kernels.launch import LaunchRule
from kernels.timing import Timing
from kernels.variants import Variant

SEED_KEYS = 100 * 2**20 // 4  # the seed hashes 100 MiB of random unsigned ints: 26,214,400 keys
SEED_BUCKETS = 1024  # the seed's HASH_ENTRIES
SEED_LAUNCH = LaunchRule(block=256, grid=60, note="as in the seed's add_to_table<<<60, 256>>>")
EMPTY = -1
cuda = None  # numba.cuda, bound on first GPU use by bind_numba_cuda (the cpu backend never imports it)

class HashProblem:
    algorithm = "hashtable"
    op = "insert"
    dtype = "uint32"

    def __init__(self, keys: np.ndarray, buckets: int):
        self.keys = keys
        self.buckets = buckets
        self.n = int(keys.size)
        self.bytes_read = self.n * 4
        self.expected = self.n  # entries that must be found, each in its own bucket
        self.last_check = (0, 0, 0)  # (found, misplaced, bad links or keys) of the last run's table
        self.last_table = None  # (pool_keys, heads, pool_next) of the last chained table checked
        self._device_keys = None
        self._sorted_keys = None  # the input keys sorted as int64, for check_grouped (made once)

    def device_keys(self):
        """The keys on the GPU, copied once (the copy stays outside the timing)."""
        if self._device_keys is None:
            self._device_keys = bind_numba_cuda(globals()).to_device(self.keys)
        return self._device_keys

    def check_table(self, pool_keys, heads, pool_next) -> int:
        """Walks a finished table; returns the entries found in the right bucket and remembers the rest."""
        self.last_table = (pool_keys, heads, pool_next)
        found, misplaced, bad_links = _walk(pool_keys, heads, pool_next, self.buckets)
        # an entry whose stored key is not the key it was given is as lost as a missing one
        wrong_keys = int(np.count_nonzero(np.asarray(pool_keys) != self.keys))
        self.last_check = (found, misplaced, bad_links + wrong_keys)
        return found - misplaced

    def check_grouped(self, sorted_keys, offsets) -> int:
        """Checks a static table grouped by bucket (CSR: bucket b's keys are ``sorted_keys[offsets[b]:
        offsets[b + 1]]``), as the library peers build it; sets ``last_check`` as :meth:`check_table` does
        and returns the entries found in the right bucket. Host copies, numpy only."""
        keys = np.asarray(sorted_keys).ravel().astype(np.int64, copy=False)
        offsets = np.asarray(offsets).ravel().astype(np.int64, copy=False)
        # bad offsets: each one off a non-decreasing 0..n CSR, plus each one missing or extra
        bad = abs(offsets.size - (self.buckets + 1))
        if offsets.size:
            wrong = (offsets < 0) | (offsets > self.n)
            wrong[0] |= offsets[0] != 0
            wrong[1:] |= offsets[1:] < offsets[:-1]
            wrong[-1] |= offsets[-1] != self.n
            bad += int(np.count_nonzero(wrong))
        found, misplaced = _grouped_placement(keys, offsets, self.buckets)
        # keys lost, duplicated or altered: positions where the sorted keys differ from the sorted input
        if self._sorted_keys is None:
            self._sorted_keys = np.sort(self.keys.astype(np.int64))
        got, want = np.sort(keys), self._sorted_keys
        common = min(got.size, want.size)
        bad += int(np.count_nonzero(got[:common] != want[:common])) + abs(got.size - want.size)
        self.last_check = (found, misplaced, bad)
        return found - misplaced

    def verify(self, result) -> tuple[bool, str]:
        found, misplaced, bad = self.last_check
        problems = []
        if found < self.n:
            problems.append(f"{self.n - found} entries lost")
        if misplaced:
            problems.append(f"{misplaced} entries in the wrong bucket")
        if bad:
            problems.append(f"{bad} corrupt links or keys")
        if result != self.n and not problems:
            problems.append(f"{result} of {self.n} entries found in the right bucket")
        return (not problems), "; ".join(problems)


def make_problem(n_keys: int, buckets: int = SEED_BUCKETS, seed: int = 0) -> HashProblem:
    """``n_keys`` seeded random uint32 keys to insert into a table of ``buckets`` chains."""
    if isinstance(n_keys, bool) or not isinstance(n_keys, (int, np.integer)) or n_keys < 1:
        raise InputError(f"number of keys {n_keys!r} must be a whole number, at least 1")
    if n_keys > 2**31 - 1:
        raise InputError(f"number of keys {n_keys} is too large: entry links are int32, at most {2**31 - 1}")
    if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)) or buckets < 1:
        raise InputError(f"number of buckets {buckets!r} must be a whole number, at least 1")
    keys = np.random.default_rng(seed).integers(0, 2**32, int(n_keys), dtype=np.uint32)
    return HashProblem(keys, int(buckets))


def verify_table(keys, heads, next_, buckets) -> tuple[int, int]:
    """The seed's verify_table: walks every bucket's chain and returns (entries found, entries whose key
    hashes to another bucket). A link out of the pool or back to a visited entry ends its chain, so a
    corrupt table cannot loop forever."""
    found, misplaced, _ = _walk(keys, heads, next_, buckets)
    return found, misplaced


def _grouped_placement(keys, offsets, buckets) -> tuple[int, int]:
    """(found, misplaced) of a grouped table: the keys inside some bucket's segment, and those of them whose
    bucket is another. The segments are read as far as they can be: clipped to the keys given and made
    non-decreasing, so broken offsets (counted apart) cannot make an entry count twice."""
    if not offsets.size:
        return 0, 0
    edges = np.maximum.accumulate(np.clip(offsets, 0, keys.size))
    segment = np.repeat(np.arange(edges.size - 1), np.diff(edges))
    placed = keys[edges[0]:edges[-1]]
    return int(placed.size), int(np.count_nonzero(placed % buckets != segment))


def _walk(keys, heads, next_, buckets) -> tuple[int, int, int]:
    """(found, misplaced, bad links) of a table."""
    arrays = (np.ascontiguousarray(a) for a in (keys, heads, next_))
    return tuple(int(x) for x in _walk_table_jit()(*arrays, int(buckets)))


@functools.lru_cache(maxsize=None)
def _walk_table_jit():
    import numba

    @numba.njit(cache=False)
    def walk_table(keys, heads, next_, buckets):
        n = keys.size
        visited = np.zeros(n, np.bool_)
        found = misplaced = bad_links = 0
        for b in range(buckets):
            e = heads[b]
            while e != EMPTY:
                if e < 0 or e >= n or visited[e]:
                    bad_links += 1
                    break
                visited[e] = True
                found += 1
                if keys[e] % buckets != b:
                    misplaced += 1
                e = next_[e]
        return found, misplaced, bad_links

    return walk_table


def inserts_per_second(row_or_timing, n: int) -> float | None:
    """Keys inserted per second at the median time of a :class:`Timing` or a bench Row (None when the
    row has no timing, e.g. a skipped one)."""
    timing = getattr(row_or_timing, "timing", row_or_timing)
    if timing is None:
        return None
    return n / (timing.median_ms * 1e-3) if timing.median_ms > 0 else float("inf")


def rate_note(n: int, timing: Timing) -> str:
    """E.g. '412.5 M inserts/s' (or '5200 inserts/s' below a million), for a CLI line or a note."""
    rate = inserts_per_second(timing, n)
    return f"{rate / 1e6:.1f} M inserts/s" if rate >= 1e6 else f"{rate:.0f} inserts/s"


# ---------------------------------------------------------------------------------------------- CPU


@functools.lru_cache(maxsize=None)
def _cpu_insert_jit():
    import numba

    @numba.njit(cache=False)
    def insert_all(keys, pool_keys, pool_next, heads):
        # the seed's CPU add_to_table, one key after another: push entry i at the head of its chain
        buckets = heads.size
        heads[:] = EMPTY
        for i in range(keys.size):
            b = keys[i] % buckets
            pool_keys[i] = keys[i]
            pool_next[i] = heads[b]
            heads[b] = i

    return insert_all


def _run_cpu(problem, launch, backend, repeats):
    insert_all = _cpu_insert_jit()
    pool_keys = np.empty(problem.n, np.uint32)
    pool_next = np.empty(problem.n, np.int32)
    heads = np.empty(problem.buckets, np.int32)
    timing = HOST.time(lambda: insert_all(problem.keys, pool_keys, pool_next, heads), repeats)
    return Outcome(problem.check_table(pool_keys, heads, pool_next), timing)


# ---------------------------------------------------------------------------------------------- GPU


@functools.lru_cache(maxsize=None)
def _gpu_kernels():
    bind_numba_cuda(globals())

    @cuda.jit
    def reset_table(heads, locks):
        # a table filled by the previous launch would get every entry twice: empty it first
        b = cuda.grid(1)
        if b < heads.size:
            heads[b] = EMPTY
            locks[b] = 0

    @cuda.jit
    def insert_with_locks(keys, pool_keys, pool_next, heads, locks):
        # seed 003's GPU add_to_table: one spin lock per bucket around the two writes that link entry i
        buckets = heads.size
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < keys.size:
            key = keys[i]
            b = key % buckets
            pool_keys[i] = key
            # the lanes of a warp take turns: on GPUs before Volta a lane spinning on a lock held by
            # another lane of its own warp would spin forever, since the warp runs in lockstep
            for lane in range(32):
                if i % 32 == lane:
                    while cuda.atomic.cas(locks, b, 0, 1) != 0:
                        pass
                    # numba's atomics are relaxed: fence so that no read or write of the chain moves
                    # out of the locked region (without the fences entries are lost, seen on an H200)
                    cuda.threadfence()
                    pool_next[i] = heads[b]
                    heads[b] = i
                    cuda.threadfence()
                    cuda.atomic.exch(locks, b, 0)
            i += stride

    @cuda.jit
    def insert_lock_free(keys, pool_keys, pool_next, heads):
        # push entry i at the head of its chain with one compare-and-swap: it succeeds only if no other
        # thread changed the head since we read it, and otherwise hands us the new head to retry with
        buckets = heads.size
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < keys.size:
            key = keys[i]
            b = key % buckets
            pool_keys[i] = key
            head = heads[b]
            while True:
                pool_next[i] = head
                cuda.threadfence()  # entry i's key and link are visible before the entry is published
                seen = cuda.atomic.cas(heads, b, head, i)
                if seen == head:
                    break
                head = seen
            i += stride

    return reset_table, insert_with_locks, insert_lock_free


def _run_gpu(problem, launch, backend, repeats, locked: bool):
    backend.activate()
    reset_table, insert_with_locks, insert_lock_free = _gpu_kernels()
    resolved = _VARIANT_BY_NAME["gpu-locks" if locked else "gpu-lockfree"].resolve(launch, backend.limits, problem.n)
    block, grid = resolved.block, resolved.grid
    keys = problem.device_keys()
    pool_keys = cuda.device_array(problem.n, np.uint32)
    pool_next = cuda.device_array(problem.n, np.int32)
    heads = cuda.device_array(problem.buckets, np.int32)
    locks = cuda.device_array(problem.buckets, np.int32)
    reset_grid = -(-problem.buckets // 256)

    def insert_once():
        reset_table[reset_grid, 256](heads, locks)
        if locked:
            insert_with_locks[grid, block](keys, pool_keys, pool_next, heads, locks)
        else:
            insert_lock_free[grid, block](keys, pool_keys, pool_next, heads)

    timing = backend.time(insert_once, repeats)
    placed = problem.check_table(pool_keys.copy_to_host(), heads.copy_to_host(), pool_next.copy_to_host())
    return Outcome(placed, timing, block, grid)


def _run_gpu_locks(problem, launch, backend, repeats):
    return _run_gpu(problem, launch, backend, repeats, locked=True)


def _run_gpu_lockfree(problem, launch, backend, repeats):
    return _run_gpu(problem, launch, backend, repeats, locked=False)



VARIANTS = (
    Variant(
        "cpu", "the seed's CPU version: keys inserted one after another at the head of their bucket's chain",
        "cpu", seed="003", run=_run_cpu,
    ),
    Variant(
        "gpu-locks",
        "the seed's GPU version: a spin lock per bucket (CAS takes, exchange releases); a warp's lanes take turns",
        "gpu", seed="003", launch=SEED_LAUNCH, run=_run_gpu_locks,
    ),
    Variant(
        "gpu-lockfree",
        "no locks: an insert publishes its entry by a compare-and-swap of the bucket head, retried on a race",
        "gpu", launch=SEED_LAUNCH, run=_run_gpu_lockfree,
    ),
    Variant(
        "torch-sort-groupby", "torch's nearest structure, not a chained table: keys sorted by bucket into a static "
        "CSR table in one batch (torch.sort, bincount, cumsum)", "peer", run=library_peers.run_torch_sort_groupby,
    ),
    Variant(
        "cupy-sort-groupby", "CuPy's nearest structure, not a chained table: keys sorted by bucket into a static "
        "CSR table in one batch (argsort, bincount, cumsum)", "peer", run=library_peers.run_cupy_sort_groupby,
    ),
)
_VARIANT_BY_NAME = {v.name: v for v in VARIANTS}


def _memory(n: int, options: dict) -> tuple[int, int]:
    buckets = options["buckets"]
    # keys, the pool's keys and links, the check's copies and visited flags; heads and locks per bucket
    return n * 18 + buckets * 12, n * 12 + buckets * 8


ALGORITHM = Algorithm(
    name="hashtable", title="Hash table",
    summary="insert uint32 keys into a chained hash table: CPU, per-bucket locks (seed 003), lock-free CAS",
    variants=VARIANTS, make_problem=lambda n, options, seed, data=None: make_problem(n, options["buckets"], seed),
    size=SizeAxis("N keys", "keys", default={"cuda": SEED_KEYS, "cpu": 2**20, "sim": 512},
                  maximum={"cuda": 2**31 - 1, "cpu": 2**31 - 1, "sim": 4096},
                  gui_default={"cuda": 1 << 20, "cpu": 1 << 20, "sim": 1024}),
    options=(Option("buckets", f"buckets of the table (default {SEED_BUCKETS}, the seed's)", default=SEED_BUCKETS,
                    parse=whole_number("--buckets"), suggestions=(1024, 256, 4096, 16384, 65536, 1 << 20)),),
    unit=Unit("M inserts/s", lambda problem: problem.n / 1e6),
    memory=_memory,
)
