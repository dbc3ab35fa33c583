"""The chained hash table of seed 003, in arrays: inserting uint32 keys on the CPU, on the GPU with one
spin lock per bucket (the seed's version), and on the GPU without locks (a compare-and-swap on the
bucket's head).

Layout: entry i of the pool holds key i (the seed's ``table.pool[tid]``); ``pool_next[i]`` is the index
of the next entry in its chain and ``heads[b]`` the first entry of bucket b (-1 = end / empty); the
bucket of a key is ``key % buckets``. A run's result is the number of entries found in the right
bucket when walking the finished table.

The library peers (``torch-sort-groupby``, ``cupy-sort-groupby``, in :mod:`kernels.library_peers`) build a
different structure from the same keys: a static table grouped by bucket (CSR), sorted in one batch;
:meth:`HashProblem.check_grouped` checks it with the same (found, misplaced, bad) counts. ``gpu-counting-sort``
builds that same grouped table with our own kernels, by a counting sort (count per bucket, scan, scatter).
"""

from __future__ import annotations

import functools

import numpy as np
from kernels import library_peers
from kernels.backend import HOST, bind_numba_cuda, not_applicable
from kernels.bench import Outcome, Unit
from kernels.descriptor import Algorithm, Option, SizeAxis, whole_number
from kernels.errors import InputError
from kernels.launch import LaunchRule, resident_blocks
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
        self.last_grouped = None  # (sorted_keys, offsets) of the last grouped table checked
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
        self.last_grouped = (sorted_keys, offsets)
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


# ------------------------------------------------------------------- GPU: the peers' table by counting sort
#
# The static table the library peers build (keys grouped by bucket, CSR offsets), built the way a CUDA
# programmer would without a sort library: count the keys per bucket, scan the counts into offsets, scatter
# each key to its bucket's offset plus a rank. Order within a bucket is whatever the atomics hand out.

SORT_ITEMS = 16  # keys per thread per tile: all loaded before the first atomic, so 16 loads are in flight
SHARED_BUCKETS = 8192  # up to here a block counts in shared memory (32 KiB of 32-bit counters)
SCAN_THREADS = 64
SCAN_ITEMS = 16
SCAN_TILE = SCAN_THREADS * SCAN_ITEMS  # counts one scan block turns into offsets at a time
HELPER_THREADS = 256  # zeroing the counts and adding the scan's tile bases
HELPER_BLOCKS_PER_SM = 2  # the helper kernels loop over their work with at most this many blocks per SM
COUNTING_MAX_BUCKETS = 2**31  # bucket ids, counts and offsets are 32-bit
COUNTING_LAUNCH = LaunchRule(block=512, grid_sm=4, resident_grid=True,
                             note=f"grid-stride over tiles of block x {SORT_ITEMS} keys")


@functools.lru_cache(maxsize=None)
def _counting_sort_kernels():
    """(zero, count_shared, count_global, scan_tiles, add_bases, scatter_shared, scatter_global)."""
    from numba import int32, uint32

    bind_numba_cuda(globals())

    # Key indices are cut to uint32 (n < 2^31) and the shared kernels' bucket loops run in int32 (at most
    # SHARED_BUCKETS): numba would do both in int64, with negative-index checks, which cost registers (96
    # instead of 56 in the scatter, too many for 1024-thread blocks) and instructions in the hot loops.

    @cuda.jit(device=True, inline="always")
    def load_tile(keys, start, held):
        """Loads the thread's SORT_ITEMS keys of the tile at ``start`` into ``held``, all loads issued before
        any key is used, and returns how many it holds (the last tile may be short); for each k a warp reads
        32 neighbouring keys. Callers loop over all SORT_ITEMS and test k against the count: a constant trip
        count is unrolled, and only then does ``held`` live in registers instead of local memory."""
        threads = cuda.blockDim.x
        first = start + cuda.threadIdx.x
        mine = 0
        for k in range(SORT_ITEMS):
            i = uint32(first + k * threads)
            if i < keys.size:
                held[k] = keys[i]
                mine = k + 1
        return mine

    @cuda.jit
    def zero(counts):
        for b in range(cuda.grid(1), counts.size, cuda.gridsize(1)):
            counts[b] = 0

    @cuda.jit(device=True, inline="always")
    def reserve_block_keys(keys, counters, buckets, sorted_keys):
        """This block's keys, tile by tile, one atomic add per key on its bucket's counter in ``counters``;
        unless ``sorted_keys`` is None (numba then compiles the count alone), each key also goes to the place
        its add reserved there."""
        tile = cuda.blockDim.x * SORT_ITEMS
        held = cuda.local.array(SORT_ITEMS, uint32)
        for start in range(cuda.blockIdx.x * tile, keys.size, cuda.gridDim.x * tile):
            mine = load_tile(keys, start, held)
            for k in range(SORT_ITEMS):
                if k < mine:
                    place = cuda.atomic.add(counters, held[k] % buckets, 1)
                    if sorted_keys is not None:
                        sorted_keys[uint32(place)] = held[k]

    @cuda.jit
    def count_shared(keys, counts, buckets):
        # a block counts all its keys in shared memory, then adds each non-zero count to the global one:
        # one global atomic per (block, bucket) instead of one per key
        per_bucket = cuda.shared.array(0, int32)  # dynamic: 4 bytes x buckets
        t = cuda.threadIdx.x
        threads = cuda.blockDim.x
        for b in range(t, int32(buckets), threads):
            per_bucket[b] = 0
        cuda.syncthreads()
        reserve_block_keys(keys, per_bucket, buckets, None)
        cuda.syncthreads()
        for b in range(t, int32(buckets), threads):
            c = per_bucket[b]
            if c:
                cuda.atomic.add(counts, b, c)

    @cuda.jit
    def count_global(keys, counts, buckets):
        # too many buckets for shared memory: one global atomic per key, spread over many counters
        reserve_block_keys(keys, counts, buckets, None)

    @cuda.jit
    def scan_tiles(src, dst, also, totals):
        # exclusive prefix sum of each tile of SCAN_TILE counts into dst (and the same values into also),
        # and each tile's total into totals[tile]. src may be dst: a thread reads its items before writing them
        # dynamic (SCAN_THREADS x 4 bytes at launch), as the other shared arrays here: the simulator hands
        # every thread one buffer for it, where it sets up a static one racily when threads switch often
        partial = cuda.shared.array(0, int32)
        mine = cuda.local.array(SCAN_ITEMS, int32)
        t = cuda.threadIdx.x
        m = src.size
        for tile in range(cuda.blockIdx.x, (m + SCAN_TILE - 1) // SCAN_TILE, cuda.gridDim.x):
            first = tile * SCAN_TILE + t * SCAN_ITEMS
            run = 0
            for k in range(SCAN_ITEMS):
                mine[k] = run
                if first + k < m:
                    run += src[first + k]
            partial[t] = run
            cuda.syncthreads()
            if t == 0:
                # the threads' sums in turn: SCAN_THREADS adds, cheaper than log2(SCAN_THREADS) rounds of
                # barriers (and no warp shuffles, which the simulator lacks)
                total = 0
                for j in range(SCAN_THREADS):
                    v = partial[j]
                    partial[j] = total
                    total += v
                totals[tile] = total
            cuda.syncthreads()
            base = partial[t]
            for k in range(SCAN_ITEMS):
                if first + k < m:
                    dst[first + k] = base + mine[k]
                    also[first + k] = base + mine[k]
            cuda.syncthreads()  # partial is reused by the next tile

    @cuda.jit
    def add_bases(dst, also, bases):
        # a lower level's tiles were scanned on their own: add each tile's offset from the level above
        for i in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
            v = dst[i] + bases[i // SCAN_TILE]
            dst[i] = v
            also[i] = v

    @cuda.jit
    def scatter_shared(keys, sorted_keys, cursors, buckets):
        # per tile: each key's rank among the tile's keys of its bucket from a shared atomic, then one global
        # atomic per non-empty bucket reserves the tile's range there, then each key goes to base + rank
        per_bucket = cuda.shared.array(0, int32)  # dynamic: the tile's count per bucket, then its base
        t = cuda.threadIdx.x
        threads = cuda.blockDim.x
        tile = threads * SORT_ITEMS
        held = cuda.local.array(SORT_ITEMS, uint32)
        # bucket << 16 | rank: one register per key instead of two (buckets <= 8192, rank < 16 x 1024 threads)
        placed = cuda.local.array(SORT_ITEMS, uint32)
        for start in range(cuda.blockIdx.x * tile, keys.size, cuda.gridDim.x * tile):
            for b in range(t, int32(buckets), threads):
                per_bucket[b] = 0
            cuda.syncthreads()
            mine = load_tile(keys, start, held)
            for k in range(SORT_ITEMS):
                if k < mine:
                    b = uint32(held[k] % buckets)
                    placed[k] = (b << 16) | uint32(cuda.atomic.add(per_bucket, b, 1))
            cuda.syncthreads()
            for b in range(t, int32(buckets), threads):
                c = per_bucket[b]
                if c:
                    per_bucket[b] = cuda.atomic.add(cursors, b, c)
            cuda.syncthreads()
            for k in range(SORT_ITEMS):
                if k < mine:
                    sorted_keys[uint32(per_bucket[placed[k] >> 16] + (placed[k] & 0xFFFF))] = held[k]
            cuda.syncthreads()  # the next tile zeroes per_bucket

    @cuda.jit
    def scatter_global(keys, sorted_keys, cursors, buckets):
        # too many buckets for shared memory: each key reserves its own place with one global atomic
        reserve_block_keys(keys, cursors, buckets, sorted_keys)

    return zero, count_shared, count_global, scan_tiles, add_bases, scatter_shared, scatter_global


def _helper_grid(items: int, per_block: int, limits) -> int:
    return max(1, min(-(-items // per_block), HELPER_BLOCKS_PER_SM * limits.sm_count))


def _scan_launches(scan_tiles, add_bases, counts, offsets, cursors, limits) -> list:
    """The launches that turn ``counts`` into CSR ``offsets`` (exclusive prefix sum, the total last) and
    the same offsets into ``cursors``: each level's tiles scanned on their own, their totals scanned as
    the next level until one tile holds them, then each level's tile bases added back on the way down."""
    buckets = counts.size
    levels = [offsets[:buckets]]
    while levels[-1].size > SCAN_TILE:
        levels.append(cuda.device_array(-(-levels[-1].size // SCAN_TILE), np.int32))
    top = len(levels) - 1
    launches = []
    for j, level in enumerate(levels):
        # the top level's one tile total is every key: it lands in offsets[buckets]
        totals = levels[j + 1] if j < top else offsets[buckets:]
        also = cursors if j == top == 0 else level
        grid = _helper_grid(level.size, SCAN_TILE, limits)
        launches.append(functools.partial(scan_tiles[grid, SCAN_THREADS, 0, 4 * SCAN_THREADS],
                                          counts if j == 0 else level, level, also, totals))
    for j in range(top - 1, -1, -1):
        grid = _helper_grid(levels[j].size, HELPER_THREADS, limits)
        launches.append(functools.partial(add_bases[grid, HELPER_THREADS], levels[j],
                                          cursors if j == 0 else levels[j], levels[j + 1]))
    return launches


def _run_gpu_counting_sort(problem, launch, backend, repeats):
    if problem.buckets > COUNTING_MAX_BUCKETS:
        return not_applicable(f"gpu-counting-sort keeps bucket ids, counts and offsets in 32 bits: at most "
                              f"{COUNTING_MAX_BUCKETS} buckets")
    backend.activate()
    zero, count_shared, count_global, scan_tiles, add_bases, scatter_shared, scatter_global = _counting_sort_kernels()
    resolved = _VARIANT_BY_NAME["gpu-counting-sort"].resolve(launch, backend.limits, problem.n)
    block, grid = resolved.block, resolved.grid
    buckets = problem.buckets
    in_shared = buckets <= SHARED_BUCKETS
    count, scatter = (count_shared, scatter_shared) if in_shared else (count_global, scatter_global)
    dynamic_shared = 4 * buckets if in_shared else 0
    keys = problem.device_keys()
    divisor = np.uint32(buckets)  # key % divisor in 32 bits (a 64-bit remainder costs several times more)
    sorted_keys = cuda.device_array(problem.n, np.uint32)
    offsets = cuda.device_array(buckets + 1, np.int32)
    cursors = cuda.device_array(buckets, np.int32)
    counts = cuda.device_array(buckets, np.int32)
    if backend.is_gpu and launch.resolved_grid(backend.limits.sm_count) is None:
        grid = resident_blocks(scatter, (keys, sorted_keys, cursors, divisor), block, dynamic_shared) or grid
    zero_counts = functools.partial(zero[_helper_grid(buckets, HELPER_THREADS, backend.limits), HELPER_THREADS],
                                    counts)
    count_keys = functools.partial(count[grid, block, 0, dynamic_shared], keys, counts, divisor)
    scan = _scan_launches(scan_tiles, add_bases, counts, offsets, cursors, backend.limits)
    place_keys = functools.partial(scatter[grid, block, 0, dynamic_shared], keys, sorted_keys, cursors, divisor)

    def build():
        for step in (zero_counts, count_keys, *scan, place_keys):
            step()

    timing = backend.time(build, repeats)
    placed = problem.check_grouped(sorted_keys.copy_to_host(), offsets.copy_to_host())
    return Outcome(placed, timing, block, grid)



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
        "gpu-counting-sort",
        "the peers' structure (keys grouped by bucket, CSR) by a counting sort: per-block counts, a scan, a scatter "
        "with one reservation per tile and bucket",
        "gpu", constraints=f"shared-memory counters up to {SHARED_BUCKETS} buckets (4 bytes each), global atomics "
        f"per key above; the scan runs its own {SCAN_THREADS}-thread blocks",
        launch=COUNTING_LAUNCH, run=_run_gpu_counting_sort,
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
    # chained tables: keys, the pool's keys and links, the check's copies and visited flags; heads and locks
    # per bucket
    chained = (n * 18 + buckets * 12, n * 12 + buckets * 8)
    # grouped tables (gpu-counting-sort; the peers use at least as much on the host): on the GPU the keys and
    # the sorted keys, counts, offsets and cursors per bucket (and the scan's tile totals); on the host the
    # keys, the chained table an earlier variant left in last_table, the grouped table's copy (int64 keys
    # from torch) and check_grouped's peak (measured: 25 bytes per key with its cached sorted input, about
    # 20 per bucket)
    grouped = (n * 45 + buckets * 24, n * 8 + buckets * 13)
    return max(chained[0], grouped[0]), max(chained[1], grouped[1])


ALGORITHM = Algorithm(
    name="hashtable", title="Hash table",
    summary="insert uint32 keys into a chained hash table: CPU, per-bucket locks (seed 003), lock-free CAS; "
            "or build the peers' bucket-grouped table by a counting sort",
    variants=VARIANTS, make_problem=lambda n, options, seed, data=None: make_problem(n, options["buckets"], seed),
    size=SizeAxis("N keys", "keys", default={"cuda": SEED_KEYS, "cpu": 2**20, "sim": 512},
                  maximum={"cuda": 2**31 - 1, "cpu": 2**31 - 1, "sim": 4096},
                  gui_default={"cuda": 1 << 20, "cpu": 1 << 20, "sim": 1024}),
    options=(Option("buckets", f"buckets of the table (default {SEED_BUCKETS}, the seed's)", default=SEED_BUCKETS,
                    parse=whole_number("--buckets"), suggestions=(1024, 256, 4096, 16384, 65536, 1 << 20)),),
    unit=Unit("M inserts/s", lambda problem: problem.n / 1e6),
    memory=_memory,
)
