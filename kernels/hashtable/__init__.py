"""The chained hash table of seed 003, in arrays: inserting uint32 keys on the CPU, on the GPU with one
spin lock per bucket (the seed's version), and on the GPU without locks (a compare-and-swap on the
bucket's head).

Layout: entry i of the pool holds key i (the seed's ``table.pool[tid]``); ``pool_next[i]`` is the index
of the next entry in its chain and ``heads[b]`` the first entry of bucket b (-1 = end / empty); the
bucket of a key is ``key % buckets``. A run's result is the number of entries found in the right
bucket when walking the finished table.

The library peers (``torch-sort-groupby``, ``cupy-sort-groupby``, in :mod:`.peers`) build a
different structure from the same keys: a static table grouped by bucket (CSR), sorted in one batch;
:meth:`HashProblem.check_grouped` checks it with the same (found, misplaced, bad) counts. ``gpu-counting-sort``
builds that same grouped table with our own kernels, by a counting sort (count per bucket, scan, scatter).

This module declares everything about the algorithm and imports no numba: the problem and its checks
(:mod:`.problem`), the variants with their launch rules and inspector entries, the descriptor. The code runs
from :mod:`.cpu`, :mod:`.gpu`, :mod:`.counting_sort` and :mod:`.peers`, imported when a variant first runs.
"""

from __future__ import annotations

from kernels.harness.bench import Unit
from kernels.harness.descriptor import Algorithm, Option, SizeAxis, whole_number
from kernels.harness.kernel_decl import KernelDecl, Traffic, no_dynamic_shared
from kernels.harness.variants import Variant
from kernels.hashtable.problem import (EMPTY, SEED_BUCKETS, SEED_KEYS, HashProblem, inserts_per_second, make_problem,
                                       rate_note, verify_table)
from kernels.launch import LaunchRule
from kernels.lazy import entry

SEED_LAUNCH = LaunchRule(block=256, grid=60, note="as in the seed's add_to_table<<<60, 256>>>")
# The grouped table by counting sort (.counting_sort):
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


# --- what the inspector compiles for each GPU variant (2^24 keys, 1024 buckets; grids modelled on an H100) --

_H100_SMS = 132


def _hash_traffic(locked: bool):
    def traffic(n, threads, blocks):
        lock_bytes = 8 * n if locked else 0  # a CAS to take and an exchange to release per key
        return Traffic(16 * n + lock_bytes, n, "int32",
                       "per key: reads it, writes its pool key and link, a 4-byte CAS on the head" +
                       (", plus the lock's CAS and exchange" if locked else ""))
    return traffic


def _chained_inspect(item: int, locked: bool) -> KernelDecl:
    signature = ("void(uint32[::1], uint32[::1], int32[::1], int32[::1], int32[::1])" if locked
                 else "void(uint32[::1], uint32[::1], int32[::1], int32[::1])")
    return KernelDecl("kernels.hashtable.gpu", "table_kernels", (), signature, (256,), no_dynamic_shared,
                      _hash_traffic(locked), 1 << 24, item=item, grid=60)


def _counting_scatter_traffic(n, threads, blocks):
    tiles = -(-n // (threads * SORT_ITEMS))
    return Traffic(8 * n + 4 * SEED_BUCKETS * tiles, n, "int32",
                   f"the scatter: reads each key and writes it once into its bucket's range, plus one 4-byte atomic "
                   f"per bucket ({SEED_BUCKETS}) and tile of threads x {SORT_ITEMS} keys; one shared atomic per key")


# --- the variants -------------------------------------------------------------------------------------------

VARIANTS = (
    Variant(
        "cpu", "the seed's CPU version: keys inserted one after another at the head of their bucket's chain",
        "cpu", seed="003", run=entry("kernels.hashtable.cpu", "run_cpu"),
    ),
    Variant(
        "gpu-locks",
        "the seed's GPU version: a spin lock per bucket (CAS takes, exchange releases); a warp's lanes take turns",
        "gpu", seed="003", launch=SEED_LAUNCH, run=entry("kernels.hashtable.gpu", "run_locks"),
        inspect=_chained_inspect(1, locked=True),
    ),
    Variant(
        "gpu-lockfree",
        "no locks: an insert publishes its entry by a compare-and-swap of the bucket head, retried on a race",
        "gpu", launch=SEED_LAUNCH, run=entry("kernels.hashtable.gpu", "run_lockfree"),
        inspect=_chained_inspect(2, locked=False),
    ),
    Variant(
        "gpu-counting-sort",
        "the peers' structure (keys grouped by bucket, CSR) by a counting sort: per-block counts, a scan, a scatter "
        "with one reservation per tile and bucket",
        "gpu", constraints=f"shared-memory counters up to {SHARED_BUCKETS} buckets (4 bytes each), global atomics "
        f"per key above; the scan runs its own {SCAN_THREADS}-thread blocks",
        launch=COUNTING_LAUNCH, run=entry("kernels.hashtable.counting_sort", "run_counting_sort"),
        inspect=KernelDecl(
            "kernels.hashtable.counting_sort", "counting_sort_kernels", (), "void(uint32[::1], uint32[::1], int32[::1], uint32)",
            (512,), lambda threads: 4 * 1024, _counting_scatter_traffic, 1 << 24, item=5, grid=4 * _H100_SMS,
            note="the scatter with shared-memory counters (up to 8192 buckets; 1024 here, 4 KiB of dynamic shared "
                 "memory); before it run a zeroing kernel, the count (the same tiles, one shared atomic per key) and "
                 "the scan"),
    ),
    Variant(
        "torch-sort-groupby", "torch's nearest structure, not a chained table: keys sorted by bucket into a static "
        "CSR table in one batch (torch.sort, bincount, cumsum)", "peer", run=entry("kernels.hashtable.peers", "run_torch_sort_groupby"),
    ),
    Variant(
        "cupy-sort-groupby", "CuPy's nearest structure, not a chained table: keys sorted by bucket into a static "
        "CSR table in one batch (argsort, bincount, cumsum)", "peer", run=entry("kernels.hashtable.peers", "run_cupy_sort_groupby"),
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
