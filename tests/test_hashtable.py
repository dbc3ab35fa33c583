"""The chained hash table of seed 003: CPU and GPU inserts checked against bucket membership rebuilt
with numpy, the table walker on hand-made broken tables, the benchmark runner, and every bad input."""

import sys

import numpy as np
import pytest

from kernels import hashtable
from kernels.service.bench_request import BenchRequest
from tests.runs import plan
from kernels.harness import bench
from kernels.harness.rows import PASSED, Row, SKIPPED
from kernels.backend import SkipKind
from kernels.launch import Launch
from kernels.errors import InputError
from kernels.timing import Timing
from kernels.harness.variants import select

COUNTING = "gpu-counting-sort"  # builds the peers' grouped table, not a chained one
CHAINED_GPU_VARIANTS = ["gpu-locks", "gpu-lockfree"]
SEED_VARIANTS = ["cpu", *CHAINED_GPU_VARIANTS, COUNTING]  # the open-addressing ones: tests/test_hashmap.py
GPU_VARIANTS = [v.name for v in hashtable.VARIANTS if v.kind == "gpu"]
PEER_VARIANTS = [v.name for v in hashtable.VARIANTS if v.kind == "peer"]
SMALL = Launch(block=64, grid=2)  # the simulator runs every thread as a Python thread


@pytest.fixture(autouse=True)
def frequent_thread_switches():
    """The simulator runs each CUDA thread as a Python thread. Switching threads every microsecond
    (Python's default is every 5 ms) interleaves them inside the insert's reads and writes, so a missing
    lock or compare-and-swap loses entries here instead of passing by luck. (Not for kernels with shared
    arrays: the simulator's shared-array allocation is itself unsafe under such switching.)"""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def variant(name):
    return select(hashtable.VARIANTS, name)[0]


def chains(pool_keys, heads, pool_next):
    """Each bucket's keys, read by following the links in plain Python (independent of the module)."""
    result = []
    for head in heads:
        keys, e, steps = [], int(head), 0
        while e != -1:
            assert steps < len(pool_keys), "chain longer than the pool: a cycle"
            keys.append(int(pool_keys[e]))
            e, steps = int(pool_next[e]), steps + 1
        result.append(sorted(keys))
    return result


def expected_chains(keys, buckets):
    return [sorted(int(k) for k in keys[keys % buckets == b]) for b in range(buckets)]


def assert_table_holds_every_key(problem):
    pool_keys, heads, pool_next = problem.last_table
    assert chains(pool_keys, heads, pool_next) == expected_chains(problem.keys, problem.buckets)


def test_the_seed_versions_exist_and_gpu_variants_default_to_the_seed_launch(cuda_backend):
    by_name = {v.name: v for v in hashtable.VARIANTS}
    assert by_name["cpu"].seed == by_name["gpu-locks"].seed == "003"  # the seed's CPU and locked GPU tables
    for v in hashtable.VARIANTS:
        assert v.description and v.run
        if v.name in CHAINED_GPU_VARIANTS:
            r = v.resolve(Launch(), cuda_backend.limits)
            assert (r.block, r.grid) == (256, 60)  # add_to_table<<<60, 256>>>
    # the counting sort's own default: 512 threads, 4 blocks per SM (on a GPU the runner asks the driver for
    # as many as fit at once instead)
    r = by_name[COUNTING].resolve(Launch(), cuda_backend.limits)
    assert (r.block, r.grid) == (512, 4 * cuda_backend.limits.sm_count)


def test_cpu_insertion(cpu_backend):
    problem = hashtable.make_problem(5000, buckets=97, seed=1)
    out = variant("cpu").run(problem, Launch(), cpu_backend, 2)
    assert out.result == 5000
    assert problem.verify(out.result) == (True, "")
    assert_table_holds_every_key(problem)
    # the seed inserts at the head of the chain: the last key of a bucket comes first
    pool_keys, heads, _ = problem.last_table
    b = int(problem.keys[-1] % 97)
    assert heads[b] == 4999 and pool_keys[4999] == problem.keys[-1]


@pytest.mark.slow
@pytest.mark.parametrize("n_keys, buckets", [(2000, 64), (300, 1), (500, 4096)])
@pytest.mark.parametrize("name", CHAINED_GPU_VARIANTS)
def test_gpu_insertion(cuda_backend, name, n_keys, buckets):
    # 1 bucket: every insert contends for the same lock / head; 4096 buckets: most stay empty
    problem = hashtable.make_problem(n_keys, buckets=buckets, seed=n_keys)
    out = variant(name).run(problem, SMALL, cuda_backend, 1)
    assert (out.block, out.grid) == (64, 2)
    assert out.result == n_keys
    assert problem.verify(out.result) == (True, "")
    assert_table_holds_every_key(problem)


@pytest.mark.parametrize("name", CHAINED_GPU_VARIANTS)
def test_repeated_runs_rebuild_the_table(cuda_backend, name):
    # each timed launch empties the table first; inserting into a full one would link entries twice
    problem = hashtable.make_problem(700, buckets=16, seed=3)
    out = variant(name).run(problem, Launch(block=32, grid=3), cuda_backend, 3)
    assert out.timing.repeats == 3
    assert problem.verify(out.result) == (True, "")
    assert_table_holds_every_key(problem)


def test_keys_are_seeded_uint32():
    a, b = hashtable.make_problem(1000, seed=4), hashtable.make_problem(1000, seed=4)
    np.testing.assert_array_equal(a.keys, b.keys)
    assert a.keys.dtype == np.uint32
    assert a.keys.max() > 2**31  # the whole unsigned range is used
    assert not np.array_equal(a.keys, hashtable.make_problem(1000, seed=5).keys)
    # bytes: the least an insert moves, each key and one 32-byte sector of the table
    assert (a.algorithm, a.op, a.dtype, a.n, a.bytes_read, a.expected, a.buckets) == (
        "hashtable", "insert", "uint32", 1000, 36000, 1000, 1024
    )


def table_of(keys, buckets):
    """A correct table built in plain Python: entry i holds key i, pushed at the head of its chain."""
    keys = np.asarray(keys, np.uint32)
    heads = np.full(buckets, -1, np.int32)
    pool_next = np.empty(keys.size, np.int32)
    for i, k in enumerate(keys):
        b = int(k) % buckets
        pool_next[i], heads[b] = heads[b], i
    return keys, heads, pool_next


def test_verify_table_counts_found_and_misplaced():
    keys, heads, pool_next = table_of([5, 9, 13, 2, 7, 4], 4)
    assert hashtable.verify_table(keys, heads, pool_next, 4) == (6, 0)

    lost = heads.copy()
    lost[1] = pool_next[heads[1]]  # unlink the first entry of bucket 1 (keys 5, 9, 13 live there)
    assert hashtable.verify_table(keys, lost, pool_next, 4) == (5, 0)

    moved = keys.copy()
    moved[0] = 6  # key 6 belongs to bucket 2 but sits in bucket 1's chain
    assert hashtable.verify_table(moved, heads, pool_next, 4) == (6, 1)


def test_verify_table_survives_cycles_and_wild_links():
    keys, heads, pool_next = table_of([1, 5, 9], 4)  # one chain: 2 -> 1 -> 0
    cyclic = pool_next.copy()
    cyclic[0] = 2
    assert hashtable.verify_table(keys, heads, cyclic, 4) == (3, 0)
    wild = pool_next.copy()
    wild[1] = 77
    assert hashtable.verify_table(keys, heads, wild, 4) == (2, 0)


def test_problem_verify_notes():
    problem = hashtable.make_problem(50, buckets=8, seed=6)
    keys, heads, pool_next = table_of(problem.keys, 8)
    assert problem.verify(problem.check_table(keys, heads, pool_next)) == (True, "")

    b = next(b for b in range(8) if heads[b] != -1)
    lost = heads.copy()
    lost[b] = -1
    gone = len(chains(keys, heads, pool_next)[b])
    ok, note = problem.verify(problem.check_table(keys, lost, pool_next))
    assert not ok and note == f"{gone} entries lost"

    swapped = heads.copy()
    b1, b2 = [b for b in range(8) if heads[b] != -1][:2]
    swapped[b1], swapped[b2] = heads[b2], heads[b1]
    misplaced = len(chains(keys, heads, pool_next)[b1]) + len(chains(keys, heads, pool_next)[b2])
    ok, note = problem.verify(problem.check_table(keys, swapped, pool_next))
    assert not ok and note == f"{misplaced} entries in the wrong bucket"

    cyclic = pool_next.copy()
    cyclic[heads[b1]] = heads[b1]
    ok, note = problem.verify(problem.check_table(keys, heads, cyclic))
    assert not ok and "corrupt links" in note


def grouped_of(keys, buckets):
    """A correct grouped table (CSR) built in plain Python: each bucket's keys in turn, and where each
    bucket's run starts."""
    segments = [[int(k) for k in keys if int(k) % buckets == b] for b in range(buckets)]
    offsets = [0]
    for seg in segments:
        offsets.append(offsets[-1] + len(seg))
    return np.array([k for seg in segments for k in seg], np.uint32), np.array(offsets, np.int64)


def segment_of(offsets, size=2):
    """A bucket whose segment holds at least ``size`` keys."""
    return next(b for b in range(offsets.size - 1) if offsets[b + 1] - offsets[b] >= size)


@pytest.mark.parametrize("dtype", [np.uint32, np.int64])  # torch's peer hands back its keys widened to int64
def test_check_grouped_accepts_a_correct_table(dtype):
    problem = hashtable.make_problem(400, buckets=16, seed=2)
    sorted_keys, offsets = grouped_of(problem.keys, 16)
    assert problem.check_grouped(sorted_keys.astype(dtype), offsets) == 400
    assert problem.last_check == (400, 0, 0)
    assert problem.verify(400) == (True, "")


def test_check_grouped_finds_keys_in_the_wrong_segment():
    problem = hashtable.make_problem(400, buckets=16, seed=2)
    sorted_keys, offsets = grouped_of(problem.keys, 16)
    moved = sorted_keys.copy()
    moved[0], moved[-1] = moved[-1], moved[0]  # first key of bucket 0 swapped with last of bucket 15
    result = problem.check_grouped(moved, offsets)
    assert problem.last_check == (400, 2, 0) and result == 398  # the same keys, two in a wrong bucket
    assert problem.verify(result) == (False, "2 entries in the wrong bucket")


def test_check_grouped_finds_a_lost_key():
    problem = hashtable.make_problem(400, buckets=16, seed=2)
    sorted_keys, offsets = grouped_of(problem.keys, 16)
    b = segment_of(offsets)
    lost = np.delete(sorted_keys, offsets[b])  # drop bucket b's first key; later segments move up one
    shorter = offsets.copy()
    shorter[b + 1:] -= 1
    result = problem.check_grouped(lost, shorter)
    found, misplaced, bad = problem.last_check
    assert (found, misplaced, result) == (399, 0, 399)
    assert bad >= 2  # the last offset is 399, not 400, and the keys are not the input's
    ok, note = problem.verify(result)
    assert not ok and note.startswith("1 entries lost; ")


def test_check_grouped_finds_a_duplicated_key():
    problem = hashtable.make_problem(400, buckets=16, seed=2)
    sorted_keys, offsets = grouped_of(problem.keys, 16)
    b = segment_of(offsets)
    twice = sorted_keys.copy()
    twice[offsets[b] + 1] = twice[offsets[b]]  # one key twice, in its own bucket; the key it replaced is gone
    result = problem.check_grouped(twice, offsets)
    found, misplaced, bad = problem.last_check
    assert (found, misplaced, result) == (400, 0, 400)  # every entry present and in its bucket ...
    assert bad >= 1  # ... but the keys are not the input's
    assert problem.verify(result) == (False, f"{bad} corrupt links or keys")


def test_check_grouped_finds_bad_offsets():
    problem = hashtable.make_problem(400, buckets=16, seed=2)
    sorted_keys, offsets = grouped_of(problem.keys, 16)

    late_start = offsets.copy()
    late_start[0] = 1  # the first key belongs to no segment
    assert problem.check_grouped(sorted_keys, late_start) == 399
    assert problem.last_check == (399, 0, 1)

    b = next(b for b in range(1, 16) if offsets[b + 1] > offsets[b])
    backwards = offsets.copy()
    backwards[b], backwards[b + 1] = offsets[b + 1], offsets[b]  # two offsets out of order
    result = problem.check_grouped(sorted_keys, backwards)
    # read non-decreasing, bucket b's keys fall in bucket b - 1's segment
    assert problem.last_check == (400, offsets[b + 1] - offsets[b], 1)
    assert not problem.verify(result)[0]

    short = offsets[:-1]  # one offset missing: the last one left is not n either
    result = problem.check_grouped(sorted_keys, short)
    assert problem.last_check[2] == 2 and result == offsets[-2]

    beyond = offsets.copy()
    beyond[-1] = 401  # past the keys
    problem.check_grouped(sorted_keys, beyond)
    assert problem.last_check == (400, 0, 1)

    assert problem.check_grouped(sorted_keys, np.zeros(0, np.int64)) == 0
    assert problem.last_check == (0, 0, 17)  # no segments at all: every offset missing


def assert_grouped_like_numpy(problem):
    """The grouped table the last run built, against numpy alone (not check_grouped): offsets are the prefix
    sum of np.bincount of the buckets, and each bucket's segment holds exactly the input keys of that bucket
    (as multisets: both sides sorted by (bucket, key), which is np.sort of each bucket's keys in turn)."""
    sorted_keys, offsets = (np.asarray(a) for a in problem.last_grouped)
    keys, buckets = problem.keys, problem.buckets
    ids = keys % buckets
    want_offsets = np.concatenate([[0], np.cumsum(np.bincount(ids, minlength=buckets))])
    np.testing.assert_array_equal(offsets, want_offsets)
    assert sorted_keys.dtype == np.uint32 and sorted_keys.size == keys.size
    segment = np.repeat(np.arange(buckets), np.diff(want_offsets))
    np.testing.assert_array_equal(sorted_keys[np.lexsort((sorted_keys, segment))], keys[np.lexsort((keys, ids))])


def test_counting_sort_test_sizes_cover_both_paths():
    # 1, 7 and 1024 buckets count and rank in shared memory, 20000 by global atomics per key
    assert 1024 <= hashtable.SHARED_BUCKETS < 20000


@pytest.mark.slow
@pytest.mark.parametrize("buckets", [1, 7, 1024, 20000])
@pytest.mark.parametrize("n_keys", [1, 5, 1000, 5000])
def test_counting_sort_builds_the_grouped_table(cuda_backend, n_keys, buckets):
    # SMALL: tiles of 64 x 16 keys, so 5000 keys take each of the 2 blocks through several tiles (the last short)
    problem = hashtable.make_problem(n_keys, buckets=buckets, seed=n_keys + buckets)
    out = variant(COUNTING).run(problem, SMALL, cuda_backend, 1)
    assert (out.block, out.grid) == (64, 2)
    assert out.result == n_keys and problem.last_check == (n_keys, 0, 0)
    assert problem.verify(out.result) == (True, "")
    assert_grouped_like_numpy(problem)


@pytest.mark.parametrize("n_keys, buckets", [
    (3000, 1025),  # just past one scan tile: two levels, the bases added back
    (3000, hashtable.SHARED_BUCKETS),  # the most buckets counted in shared memory
    (3000, hashtable.SHARED_BUCKETS + 1),  # the fewest counted by global atomics
])
@pytest.mark.slow
def test_counting_sort_at_the_boundaries(cuda_backend, n_keys, buckets):
    problem = hashtable.make_problem(n_keys, buckets=buckets, seed=buckets)
    out = variant(COUNTING).run(problem, SMALL, cuda_backend, 1)
    assert problem.verify(out.result) == (True, "")
    assert_grouped_like_numpy(problem)


@pytest.mark.slow
@pytest.mark.parametrize("launch", [Launch(block=96, grid=3), Launch(block=33, grid=1)])
def test_counting_sort_with_other_launches(cuda_backend, launch):
    # 96 threads (3 warps, not a power of two), and one block of 33: a partial warp, every tile in one block.
    # Two repeats after the warm-up: each build starts again from zeroed counts
    problem = hashtable.make_problem(2000, buckets=300, seed=9)
    out = variant(COUNTING).run(problem, launch, cuda_backend, 2)
    assert (out.block, out.grid) == (launch.block, launch.grid) and out.timing.repeats == 2
    assert problem.verify(out.result) == (True, "")
    assert_grouped_like_numpy(problem)


def test_counting_sort_declines_more_buckets_than_32_bit_ids(cuda_backend):
    problem = hashtable.HashProblem(np.arange(4, dtype=np.uint32), hashtable.COUNTING_MAX_BUCKETS + 1)
    out = variant(COUNTING).run(problem, SMALL, cuda_backend, 1)
    assert out.kind is SkipKind.NOT_APPLICABLE and "32 bits" in out.text


def test_rates():
    timing = Timing((2.0, 4.0, 3.0), "wall")  # median 3 ms
    assert hashtable.ops_per_second(timing, 3_000_000) == pytest.approx(1e9)
    assert hashtable.rate_note(3_000_000, timing) == "1.000 G ops/s"
    assert hashtable.rate_note(30, timing) == "10000 ops/s"
    row = Row("gpu-locks", "insert", "uint32", 30, "sim", "CUDA simulator", timing=timing)
    assert hashtable.ops_per_second(row, 30) == pytest.approx(1e4)
    assert hashtable.ops_per_second(Row("cpu", "insert", "uint32", 30, "cpu", "x"), 30) is None
    assert hashtable.ALGORITHM.unit.label == "G ops/s"


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_keys=0), "at least 1"),
    (dict(n_keys=-3), "at least 1"),
    (dict(n_keys=2.5), "whole number"),
    (dict(n_keys=10, buckets=0), "buckets 0"),
    (dict(n_keys=10, buckets=-2), "buckets -2"),
    (dict(n_keys=10, buckets=None), "buckets None"),
])
def test_bad_problem_inputs(kwargs, message):
    with pytest.raises(InputError, match=message):
        hashtable.make_problem(**kwargs)


@pytest.mark.parametrize("launch, message", [
    (Launch(block=0), "block size 0"),
    (Launch(block=2048), "block size 2048"),
    (Launch(grid=0), "grid 0"),
    (Launch(grid_sm=0), "grid_sm"),
])
def test_bad_launches_are_refused_before_anything_runs(cuda_backend, launch, message):
    with pytest.raises(InputError, match=message):
        BenchRequest("hashtable", cuda_backend, sizes=(10,), launches=(launch,), repeats=1)


def test_runner_on_the_cpu_backend(cpu_backend):
    rows = bench.run(plan(cpu_backend, 1, [Launch()]), hashtable.VARIANTS, [hashtable.make_problem(3000, buckets=32)])
    by_name = {r.variant: r for r in rows}
    assert by_name["cpu"].verified == PASSED and by_name["cpu"].result == 3000
    assert by_name["cpu"].gbps > 0
    for name in GPU_VARIANTS + PEER_VARIANTS:
        assert by_name[name].verified == SKIPPED
        assert "CUDA backend" in by_name[name].note


def peer_skipped_for_a_reason(row, backend) -> bool:
    """A library peer's row skipped because it cannot run here: in the simulator (never), on a GPU only
    when its library is not installed or it lacks the op (the sorted-search peers only find)."""
    if row.variant not in PEER_VARIANTS or row.skip is None:
        return False
    allowed = {SkipKind.NEEDS_GPU} if backend.is_simulator else {SkipKind.MISSING_LIBRARY, SkipKind.NOT_APPLICABLE}
    assert row.skip.kind in allowed, row.note
    return True


def test_runner_on_the_cuda_backend(cuda_backend):
    seeds = [v for v in hashtable.VARIANTS if v.name in SEED_VARIANTS or v.kind == "peer"]
    rows = bench.run(plan(cuda_backend, 1, [SMALL]), seeds, [hashtable.make_problem(1000, buckets=32, seed=8)])
    for row in rows:
        if peer_skipped_for_a_reason(row, cuda_backend):
            continue
        assert row.verified == PASSED, (row.variant, row.note)
        assert (row.result, row.expected) == (1000, 1000)


@pytest.mark.gpu
@pytest.mark.parametrize("launch", [Launch(), Launch(block=256, grid_sm=8), Launch(block=1024, grid_sm=2)])
def test_a_million_keys_on_a_real_gpu(cuda_backend, launch):
    problem = hashtable.make_problem(2**20, buckets=1024, seed=12)
    rows = bench.run(plan(cuda_backend, 3, [launch]), hashtable.VARIANTS, [problem])
    for row in rows:
        if peer_skipped_for_a_reason(row, cuda_backend):
            continue
        assert row.verified == PASSED, (row.variant, row.block, row.grid, row.note)
    chained = [r for r in rows if r.variant in CHAINED_GPU_VARIANTS]
    if launch == Launch():
        assert all((r.block, r.grid) == (256, 60) for r in chained)  # the seed's <<<60, 256>>>


@pytest.mark.gpu
def test_the_seed_size_on_a_real_gpu(cuda_backend):
    # 100 MiB of keys into 1024 buckets, as in the seed; long chains make the walk the slow part
    problem = hashtable.make_problem(hashtable.SEED_KEYS, buckets=hashtable.SEED_BUCKETS)
    for name in [*CHAINED_GPU_VARIANTS, COUNTING]:
        out = variant(name).run(problem, Launch(), cuda_backend, 1)
        assert problem.verify(out.result) == (True, ""), name


@pytest.mark.gpu
@pytest.mark.parametrize("buckets", [1024, 65536, (1 << 24) + 3])
def test_counting_sort_a_million_keys_on_a_real_gpu(cuda_backend, buckets):
    # 1024 buckets: shared-memory counters; 65536: global atomics; 2^24 + 3: a three-level scan
    problem = hashtable.make_problem((1 << 20) + 5, buckets=buckets, seed=13)
    out = variant(COUNTING).run(problem, Launch(), cuda_backend, 3)
    assert out.block == 512 and out.grid >= cuda_backend.limits.sm_count  # the resident grid, at least one per SM
    assert problem.verify(out.result) == (True, "")
    assert_grouped_like_numpy(problem)


def test_the_cpus_defaults_run_find_on_the_chained_table():
    """Issue 50 item 15: at the seed's 1024 buckets every CPU find was skipped ("give --buckets 16384 or more")."""
    from kernels.backend import Backend
    from kernels.hashtable import ALGORITHM
    from kernels.hashtable.chained import chained_skip
    from kernels.hashtable.problem import make_problem

    cpu = Backend("cpu")
    n = ALGORITHM.size.default_for(cpu)
    buckets = next(o for o in ALGORITHM.options if o.name == "buckets").default_for(cpu)
    for op in ("insert", "find"):
        assert chained_skip(make_problem(n, buckets, op=op), "cpu") is None, op
    assert chained_skip(make_problem(n, 1024, op="find"), "cpu") is not None  # the seed's: too long chains
