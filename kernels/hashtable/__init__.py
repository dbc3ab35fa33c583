"""Hash tables of uint32 keys with uint32 values: the seed's chained table (003) on the CPU, with a spin lock
per bucket on the GPU and lock-free; open addressing (linear probing, buckets probed by groups of lanes, two
hash functions, and ``best``: four, with two overflow bits per bucket); and what a library user builds instead
(torch, CuPy, cuCollections).

Ops (``--op``): ``insert`` a batch into an empty table, ``find`` or ``erase`` a batch in a table built from
n other keys (``--absent``: the fraction of the batch not in it), ``insert-or-add`` (count by key). The
rate is G operations per second. The open-addressing tables have ``capacity_for(keys, --load)`` slots
(layout.py: ceil(keys / load), a whole number of 32-slot buckets), the same for every variant; the chained
tables have ``--buckets`` chains (the seed's 1024 by default) and take part in insert and find.

Chained layout: entry i of the pool holds key i (the seed's ``table.pool[tid]``); ``pool_next[i]`` is the
index of the next entry in its chain and ``heads[b]`` the first entry of bucket b (-1 = end / empty); the
bucket of a key is ``key % buckets``. The peers ``torch-sort-groupby`` and ``cupy-sort-groupby`` build a
static table grouped by bucket (CSR) by one sort, ``gpu-counting-sort`` the same with our own kernels.

This module declares everything about the algorithm and imports no numba: the problem and its checks
(:mod:`.problem`, with :mod:`.keys` for the seeded keys and :mod:`.checks` for a table's entries), the
variants with their launch rules and inspector entries, the descriptor. The code runs from :mod:`.cpu`,
:mod:`.gpu`, :mod:`.counting_sort` (the chained and grouped tables; :mod:`.chained` says which ops they take),
:mod:`.open_kernels` with :mod:`.open_gpu`, :mod:`.device` and :mod:`.probing` (open addressing on the GPU),
:mod:`.open_cpu` (its CPU twin), :mod:`.peers`, :mod:`.cuco` and :mod:`.bght` (built by
:mod:`.shim_build`), imported when a variant first runs.
"""

from __future__ import annotations

from kernels.backend.mlir_wrong_code import SHARED_ATOMIC_IN_DEVICE_FUNCTION
from kernels.errors import InputError
from kernels.harness.rows import Unit
from kernels.harness.ceilings import CAS, SECTOR_READS, Judge
from kernels.harness.descriptor import Algorithm, Option, SizeAxis, whole_number
from kernels.harness.kernel_decl import KernelDecl, Traffic, no_dynamic_shared
from kernels.harness.variants import Variant
from kernels.hashtable.chained import MAX_CHAIN
from kernels.hashtable.layout import (BEST_CHOICES, BUCKET_WIDTHS, FILTER_BITS, FILTER_VARIANT_BITS, MAX_SLOTS,
                                      ROUNDS_FILTER_BITS, capacity_for, flag_words)
from kernels.hashtable.problem import (DEFAULT_BUCKET, DEFAULT_LOAD, OPS, SEED_BUCKETS, SEED_KEYS, HashProblem,
                                       check_fraction, check_load, make_problem, ops_per_second, rate_note,
                                       verify_table)
from kernels.launch import BLOCK_WHOLE_WARPS, LaunchRule
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

# The open-addressing tables: a thread per key (linear probing), or a group of bucket / 2 lanes per key
# (bucketed, two-choice, best), all keys in flight at once; the runner sizes the grid from n and the bucket
# items_per_thread: keys a find holds in flight per thread (per group): their first probes all read at once
FIND_ITEMS = (1, 1, 8)  # (default, least, most)
# best's find keeps two keys per group in flight: more loads in flight per thread hide more of the random
# reads' latency, and two was the fastest of 1, 2 and 4 at every block and bucket width tried at load 0.9
# (docs/measurements.md, the hash map's find knobs)
BEST_FIND_ITEMS = 2
LINEAR_LAUNCH = LaunchRule(block=256, grid_sm=8, items=FIND_ITEMS,
                           grid_text="n / (block x items) (a thread per key; a find: per items keys)")
BUCKET_LAUNCH = LaunchRule(block=256, grid_sm=8, min_block=32, block_rule=BLOCK_WHOLE_WARPS, items=FIND_ITEMS,
                           grid_text="n x bucket / 2 / (block x items) (a group of bucket / 2 lanes per key; a find: "
                                     "per items keys)")
# best's candidates (bucketed-filter, bucketed-rounds) untuned: a find holds best's keys in flight, at the block
# best's sweep chose most often (128; docs/measurements.md, the hash map's find knobs)
CANDIDATE_LAUNCH = LaunchRule(block=128, grid_sm=8, min_block=32, block_rule=BLOCK_WHOLE_WARPS,
                              items=(BEST_FIND_ITEMS, 1, 8), grid_text=BUCKET_LAUNCH.grid_text)
BEST_KERNEL = ("hashtable best: four-hash buckets with first- and later-step overflow flags read with their "
               "buckets, finds two keys in flight")  # the tuning key: a new kernel is tuned again


# --- what the inspector compiles for each GPU variant (2^24 keys; grids modelled on an H100) ---------------

_H100_SMS = 132
_INSPECT_N = 1 << 24


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
                      _hash_traffic(locked), _INSPECT_N, item=item, grid=60)


def _counting_scatter_traffic(n, threads, blocks):
    tiles = -(-n // (threads * SORT_ITEMS))
    return Traffic(8 * n + 4 * SEED_BUCKETS * tiles, n, "int32",
                   f"the scatter: reads each key and writes it once into its bucket's range, plus one 4-byte atomic "
                   f"per bucket ({SEED_BUCKETS}) and tile of threads x {SORT_ITEMS} keys; one shared atomic per key")


def _open_traffic(bucket_bytes: int):
    def traffic(n, threads, blocks):
        return Traffic((4 + bucket_bytes + 8) * n, n, "int32",
                       f"per key: reads it, reads its first bucket ({bucket_bytes} bytes) and claims a slot with one "
                       "8-byte compare-and-swap (more buckets at high load)")
    return traffic


_LINEAR_INSERT_SIG = "void(uint32[::1], uint64[::1], int64, int32[::1])"
_BUCKET_INSERT_SIG = "void(uint32[::1], uint64[::1], uint32[::1], int64, int32[::1])"  # with the overflow flags


def _open_inspect(function: str, args: tuple, lanes: int, bucket_bytes: int, note: str) -> KernelDecl:
    signature = _LINEAR_INSERT_SIG if function == "linear_kernels" else _BUCKET_INSERT_SIG
    return KernelDecl("kernels.hashtable.open_kernels", function, args, signature, (256,), no_dynamic_shared,
                      _open_traffic(bucket_bytes), _INSPECT_N, grid=_INSPECT_N * lanes // 256, note=note)


# --- the variants -------------------------------------------------------------------------------------------

VARIANTS = (
    Variant(
        "cpu", "the seed's CPU version: keys inserted one after another at the head of their bucket's chain; find "
        "walks the chains on all cores", "cpu", seed="003", run=entry("kernels.hashtable.cpu", "run_cpu"),
    ),
    Variant(
        "gpu-locks",
        "the seed's GPU version: a spin lock per bucket (CAS takes, exchange releases); a warp's lanes take turns; "
        "find walks the chain of each key",
        "gpu", seed="003", launch=SEED_LAUNCH, run=entry("kernels.hashtable.gpu", "run_locks"),
        inspect=_chained_inspect(1, locked=True),
    ),
    Variant(
        "gpu-lockfree",
        "no locks: an insert publishes its entry by a compare-and-swap of the bucket head, retried on a race; "
        "find walks the chain of each key",
        "gpu", launch=SEED_LAUNCH, run=entry("kernels.hashtable.gpu", "run_lockfree"),
        inspect=_chained_inspect(2, locked=False),
    ),
    Variant(
        "gpu-counting-sort",
        "the peers' structure (keys grouped by bucket, CSR) by a counting sort: per-block counts, a scan, a scatter "
        "with one reservation per tile and bucket; insert only",
        "gpu", constraints=f"shared-memory counters up to {SHARED_BUCKETS} buckets (4 bytes each), global atomics "
        f"per key above; the scan runs its own {SCAN_THREADS}-thread blocks",
        launch=COUNTING_LAUNCH, run=entry("kernels.hashtable.counting_sort", "run_counting_sort"),
        mlir_wrong_code=SHARED_ATOMIC_IN_DEVICE_FUNCTION.name,  # count_shared's per_bucket, in count_block_keys
        inspect=KernelDecl(
            "kernels.hashtable.counting_sort", "counting_sort_kernels", (), "void(uint32[::1], uint32[::1], int32[::1], uint32)",
            (512,), lambda threads: 4 * 1024, _counting_scatter_traffic, _INSPECT_N, item=5, grid=4 * _H100_SMS,
            note="the scatter with shared-memory counters (up to 8192 buckets; 1024 here, 4 KiB of dynamic shared "
                 "memory); before it run a zeroing kernel, the count (the same tiles, one shared atomic per key) and "
                 "the scan"),
    ),
    Variant(
        "linear-probing",
        "open addressing: a thread per key probes one 8-byte slot after another from the key's hash; key and value "
        "share the slot, so one 64-bit compare-and-swap inserts both; erase leaves a tombstone",
        "gpu", launch=LINEAR_LAUNCH, run=entry("kernels.hashtable.open_gpu", "run_linear_probing"),
        inspect=_open_inspect("linear_kernels", ("insert",), 1, 8, "the insert; one slot per probe"),
    ),
    Variant(
        "bucketed",
        "open addressing in buckets of --bucket slots: a group of bucket / 2 lanes reads a whole bucket with one "
        "coalesced 16-byte load each and agrees by ballots (cuCollections and BGHT style); a full bucket sends the "
        "key on to the next",
        "gpu", launch=BUCKET_LAUNCH, run=entry("kernels.hashtable.open_gpu", "run_bucketed"),
        constraints="block a multiple of 32: a group of lanes never spans two warps",
        inspect=_open_inspect("bucket_kernels", ("insert", DEFAULT_BUCKET, 1), DEFAULT_BUCKET // 2, 8 * DEFAULT_BUCKET,
                              f"the insert, buckets of {DEFAULT_BUCKET} slots, one hash"),
    ),
    Variant(
        "two-choice",
        "bucketed with two hash functions: a key goes to its first bucket, or to its second when the first is "
        "full, and only then on to the buckets after it; a lookup stops at the first bucket with room, so absent "
        "keys are rejected after one or two buckets even at high load",
        "gpu", launch=BUCKET_LAUNCH, run=entry("kernels.hashtable.open_gpu", "run_two_choice"),
        constraints="block a multiple of 32: a group of lanes never spans two warps",
        inspect=_open_inspect("bucket_kernels", ("insert", DEFAULT_BUCKET, 2), DEFAULT_BUCKET // 2, 8 * DEFAULT_BUCKET,
                              f"the insert, buckets of {DEFAULT_BUCKET} slots, two hashes"),
    ),
    Variant(
        "best",
        f"fastest: buckets probed by groups of lanes with {BEST_CHOICES} hash functions and two overflow flags "
        "per bucket (a lookup stops at a full bucket that no key went past at the same kind of step, its first "
        "or a later one, so absent keys stop early even at load 0.95), "
        "its bucket width (4 to 32 slots) and block tuned per device, op, load and size by a short sweep cached "
        "on disk (--retune redoes it), and linear probing instead where its own sweep is faster (at low loads "
        "keys mostly sit in their first slot); --bucket and the default block when a launch is given or off a GPU",
        "gpu", launch=BUCKET_LAUNCH, run=entry("kernels.hashtable.open_gpu", "run_best"),
        constraints="block a multiple of 32: a group of lanes never spans two warps",
        inspect=_open_inspect("bucket_kernels", ("insert", DEFAULT_BUCKET, BEST_CHOICES, 1, True), DEFAULT_BUCKET // 2,
                              8 * DEFAULT_BUCKET, f"the insert at the untuned bucket width ({DEFAULT_BUCKET} slots), "
                              f"{BEST_CHOICES} hashes, overflow flags"),
    ),
    Variant(
        "bucketed-filter",
        f"best's table with {FILTER_VARIANT_BITS} first-step overflow flags per bucket instead of one, one per "
        "fingerprint (the low bits of the key's first hash): an absent key's find goes past its full first bucket "
        "only where a key of its fingerprint went past; best's inserts, find and erase otherwise; --bucket slots "
        "per bucket",
        "gpu", launch=CANDIDATE_LAUNCH, run=entry("kernels.hashtable.open_gpu", "run_filtered"),
        constraints="block a multiple of 32: a group of lanes never spans two warps",
        inspect=_open_inspect("bucket_kernels", ("insert", DEFAULT_BUCKET, BEST_CHOICES, 1, True, FILTER_VARIANT_BITS),
                              DEFAULT_BUCKET // 2, 8 * DEFAULT_BUCKET,
                              f"the insert, buckets of {DEFAULT_BUCKET} slots, {BEST_CHOICES} hashes, "
                              f"{FILTER_VARIANT_BITS}-bit first-step filters"),
    ),
    Variant(
        "bucketed-rounds",
        f"best's table ({BEST_CHOICES} hashes, buckets probed by groups of lanes) built in rounds, a launch per probe "
        "step: every key tries its first bucket before any key takes a slot as its second choice, so more keys sit "
        f"in their first bucket (a find reads one); {ROUNDS_FILTER_BITS} first-step overflow flags per bucket, one per "
        "fingerprint, so an absent key goes past its full first bucket only where a key of its fingerprint went "
        "past; best's find and erase; inserts into tables without tombstones",
        "gpu", launch=CANDIDATE_LAUNCH, run=entry("kernels.hashtable.open_gpu", "run_rounds"),
        constraints="block a multiple of 32: a group of lanes never spans two warps; inserts need a table without "
                    "erased slots",
        inspect=KernelDecl("kernels.hashtable.round_kernels", "round_kernel",
                           ("insert", DEFAULT_BUCKET, BEST_CHOICES, ROUNDS_FILTER_BITS),
                           "void(uint32[::1], uint64[::1], uint32[::1], uint8[::1], int64, int32, int32[::1])", (256,),
                           no_dynamic_shared, _open_traffic(8 * DEFAULT_BUCKET), _INSPECT_N,
                           grid=_INSPECT_N * (DEFAULT_BUCKET // 2) // 256,
                           note=f"the first step's launch, buckets of {DEFAULT_BUCKET} slots"),
    ),
    Variant(
        "cpu-two-choice",
        "the two-choice table on the CPU (Numba): the same hash, layout and probe sequence; finds on all cores, "
        "inserts and erases one key after another", "cpu",
        run=entry("kernels.hashtable.open_cpu", "run_cpu_two_choice"),
    ),
    Variant(
        "torch-sort-groupby", "torch's nearest structure, not a chained table: keys sorted by bucket into a static "
        "CSR table in one batch (torch.sort, bincount, cumsum); insert only", "peer",
        run=entry("kernels.hashtable.peers", "run_torch_sort_groupby"),
    ),
    Variant(
        "cupy-sort-groupby", "CuPy's nearest structure, not a chained table: keys sorted by bucket into a static "
        "CSR table in one batch (argsort, bincount, cumsum); insert only", "peer",
        run=entry("kernels.hashtable.peers", "run_cupy_sort_groupby"),
    ),
    Variant(
        "torch-sorted-search", "a torch user's lookup table: the table's keys sorted once (untimed), each lookup "
        "torch.searchsorted, a gather and a compare; find only", "peer",
        run=entry("kernels.hashtable.peers", "run_torch_sorted_search"),
    ),
    Variant(
        "cupy-sorted-search", "a CuPy user's lookup table: the table's keys sorted once (untimed), each lookup "
        "cupy.searchsorted, a gather and a compare; find only", "peer",
        run=entry("kernels.hashtable.peers", "run_cupy_sorted_search"),
    ),
    Variant(
        "cuco-static-map", "cuCollections' static_map (linear probing, groups of 4 lanes) through our C interface, "
        "built with nvcc from the folder named by RAYTRACER_CUCO_DIR (cached); every op", "peer",
        run=entry("kernels.hashtable.cuco", "run_cuco_static_map"),
    ),
    Variant(
        "bght-bcht", "BGHT's bucketed cuckoo table (bcht: buckets of 16 slots, three hashes) through our C "
        "interface, built with nvcc from the folder named by RAYTRACER_BGHT_DIR (cached); insert and find", "peer",
        run=entry("kernels.hashtable.bght", "run_bght_bcht"),
    ),
)
VARIANT_BY_NAME = {v.name: v for v in VARIANTS}


# --- the descriptor -------------------------------------------------------------------------------------


def parse_load(text) -> float:
    """One load factor, checked (a sweep's list, ``--load 0.5,0.9``, is split by the one list rule first:
    the CLI's ListOption, a request's swept option)."""
    return check_load(_number(text, "--load"))


def parse_absent(text) -> float:
    return check_fraction(_number(text, "--absent"), "--absent")


def parse_multiplicity(text) -> float:
    value = _number(text, "--multiplicity")
    if not value >= 1:
        raise InputError(f"--multiplicity {value:g} must be at least 1 (1: every key once)")
    return value


def _number(text, option: str) -> float:
    from kernels.errors import shown

    try:
        value = float(str(text).strip())
    except ValueError:
        raise InputError(f"{option} {shown(text)} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise InputError(f"{option} {shown(text)} is not a finite number")
    return value


CPU_KEYS = 2**20  # the CPU's default N (the size axis below)
CPU_BUCKETS = CPU_KEYS // MAX_CHAIN  # the CPU's default buckets: every op runs at its default N, find included


def _memory(n: int, options: dict) -> tuple[int, int]:
    """(host bytes, device bytes) of a run at its peak."""
    buckets, op = options["buckets"], options["op"]
    slots = capacity_for(n, options["load"])
    if slots > MAX_SLOTS:
        raise InputError(f"--load {options['load']:g} with {n:,} keys needs {slots:,} slots; a table has at most "
                         f"{MAX_SLOTS:,}")
    lookup = op in ("find", "erase")
    # chained tables: keys, the pool's keys and links, the check's copies and visited flags; heads and locks
    # per bucket
    chained = (n * 18 + buckets * 12, n * 12 + buckets * 8)
    # grouped tables (gpu-counting-sort; the peers use at least as much on the host): on the GPU the keys and
    # the sorted keys, counts, offsets and cursors per bucket (and the scan's tile totals); on the host the
    # keys, the chained table an earlier variant left in last_table, the grouped table's copy (int64 keys
    # from torch) and check_grouped's peak (measured: 25 bytes per key with its cached sorted input, about
    # 20 per bucket)
    grouped = (n * 45 + buckets * 24, n * 8 + buckets * 13)
    # open addressing: on the GPU the batch's keys, the table's keys, the answers and the slots (twice for an
    # erase: the full table is restored before each repeat; cuco-static-map's table and read-out as much);
    # on the host the keys, their generation, the reference by key number and the check of the slots
    device = 4 * n * (2 if lookup else 1) + 4 * n * (op == "find") + 16 * slots
    device += 4 * flag_words(slots // min(BUCKET_WIDTHS), max(FILTER_BITS))  # flags, at the narrowest buckets
    host = 120 * n + 24 * slots
    return max(chained[0], grouped[0], host), max(chained[1], grouped[1], device)


def _make(n, options, seed, data=None) -> HashProblem:
    return make_problem(n, options["buckets"], seed, op=options["op"], load=options["load"],
                        absent=options["absent"], multiplicity=options["multiplicity"], bucket=options["bucket"])


ALGORITHM = Algorithm(
    name="hashtable", title="Hash table",
    summary="insert, find, erase or count uint32 keys with uint32 values: the seed's chained table (CPU, per-bucket "
            "locks, lock-free), open addressing (linear probing, bucketed, two-choice, best) at a load factor, and "
            "the structures torch, CuPy and cuCollections offer",
    variants=VARIANTS, make_problem=_make,
    size=SizeAxis("N keys", "keys", default={"cuda": SEED_KEYS, "cpu": 2**20, "sim": 512},
                  maximum={"cuda": 2**31 - 1, "cpu": 2**31 - 1, "sim": 4096},
                  gui_default={"cuda": 1 << 20, "cpu": 1 << 20, "sim": 256}),
    options=(
        Option("op", "what is timed: insert into an empty table, find or erase in a table of n other keys, "
                     "insert-or-add (count by key); several, e.g. insert,find, run each", choices=OPS,
               default="insert", sweep=True),
        Option("load", f"load factor: keys / slots of the open-addressing tables, in (0, 1) (default {DEFAULT_LOAD}); "
                       "several values, e.g. 0.5,0.9, sweep it", default=DEFAULT_LOAD, parse=parse_load, sweep=True,
               suggestions=(0.5, 0.8, 0.9, 0.95)),
        Option("absent", "find, erase: the fraction of the batch's keys that are not in the table (0 to 1)",
               default=0.0, parse=parse_absent, suggestions=(0.0, 0.5, 1.0)),
        Option("bucket", "slots per bucket of bucketed, two-choice and cpu-two-choice (best tunes its own on a GPU)",
               choices=BUCKET_WIDTHS, default=DEFAULT_BUCKET, parse=whole_number("--bucket")),
        Option("multiplicity", "insert, insert-or-add: how often each key occurs in the batch on average (1: every "
                               "key once; more: keys drawn with repeats from n / multiplicity)",
               default=1.0, parse=parse_multiplicity, suggestions=(1.0, 4.0, 16.0)),
        Option("buckets", f"chains of the chained tables and buckets of the grouped ones (default {SEED_BUCKETS}, the "
                          f"seed's; {CPU_BUCKETS} on the CPU, whose {CPU_KEYS:,} keys then make chains a find "
                          f"walks of at most {MAX_CHAIN})",
               default={"cuda": SEED_BUCKETS, "cpu": CPU_BUCKETS, "sim": SEED_BUCKETS}, parse=whole_number("--buckets"),
               suggestions=(1024, 256, 4096, 16384, 65536, 1 << 20)),
    ),
    unit=Unit("G ops/s", lambda problem: problem.n / 1e9),
    memory=_memory,
    # a find reads at least one random 32-byte sector per key, an insert, erase or insert-or-add swaps at least one
    # 8-byte slot: each judged against that rate over a table of the row's size (kernels/harness/ceilings.py)
    judge=Judge(ceiling=lambda problem, row: SECTOR_READS if problem.op == "find" else CAS,
                work=lambda problem, row: problem.n, table_bytes=lambda problem: 8 * problem.capacity),
)

