"""The open-addressing hash tables: every op of every variant against a Python dict (and np.unique for
insert-or-add), in the CUDA simulator and on the CPU twin, at a few dozen keys; full buckets, all keys in one
bucket, wrap-around at the table's end, erase then reinsert, one key, repeated keys; the check's own
verdicts on broken tables; bad input (one line, exit 2); the cuco peer's build path without a GPU.
On a GPU (marked ``gpu``): every op, load and variant at a million keys, and best's tuning."""

import sys

import numpy as np
import pytest

from kernels import hashtable
from kernels.backend import SkipKind, memory
from kernels.errors import InputError
from kernels.harness import bench
from kernels.harness.rows import PASSED, Row, SKIPPED
from kernels.hashtable import keys as keygen
from kernels.hashtable.layout import KEY_EMPTY, KEY_ERASED, SLOT_EMPTY, SLOT_ERASED, VALUE_ABSENT, capacity_for
from kernels.hashtable.layout import HASH_STEP, MIX_1, MIX_2
from kernels.hashtable.problem import HashProblem, unreachable_keys
from kernels.launch import Launch
from raytracer_app.cli import main
from tests.runs import plan

OPEN_GPU = ["linear-probing", "bucketed", "two-choice", "best", "bucketed-filter", "bucketed-rounds"]
SCHEME = {"linear-probing": (1, 1), "bucketed": (None, 1), "two-choice": (None, 2), "best": (None, 4),
          "bucketed-filter": (None, 4), "bucketed-rounds": (None, 4),
          "cpu-two-choice": (None, 2)}  # (slots per bucket (None: --bucket), hash functions)
FILTER_BITS = {"bucketed-filter": 8, "bucketed-rounds": 8}  # first-step flags per bucket where more than one (layout.py)
OPS = hashtable.OPS
LAUNCH = Launch(block=64)  # the simulator runs every thread as a Python thread: few blocks


@pytest.fixture(autouse=True)
def frequent_thread_switches():
    """Switch the simulator's Python threads every microsecond, so that racing inserts interleave inside
    their reads and compare-and-swaps (as in tests/test_hashtable.py)."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def variant(name):
    return next(v for v in hashtable.VARIANTS if v.name == name)


def run(name, problem, backend, launch=LAUNCH) -> Row:
    [row] = bench.run(plan(backend, 1, [launch], unit=hashtable.ALGORITHM.unit), [variant(name)], [problem])
    assert row.verified == PASSED, (name, problem.op, row.note)
    return row


def as_dict(slots) -> dict:
    """A table's entries, decoded here with numpy (not the package's code): key -> value."""
    slots = np.asarray(slots, np.uint64)
    keys = slots & np.uint64(0xFFFFFFFF)
    used = keys < KEY_ERASED
    return dict(zip(keys[used].tolist(), (slots[used] >> np.uint64(32)).tolist()))


def expected_table(op, keys, table_keys=()) -> dict:
    """What a table holds after ``op``, built with a Python dict: insert keeps a key's first position (as
    setdefault does), insert-or-add counts (np.unique), erase pops from the table's keys."""
    if op == "insert":
        d = {}
        for i, k in enumerate(keys.tolist()):
            d.setdefault(k, i)
        return d
    if op == "insert-or-add":
        unique, counts = np.unique(keys, return_counts=True)
        return dict(zip(unique.tolist(), counts.tolist()))
    d = {}
    for j, k in enumerate(np.asarray(table_keys).tolist()):
        d.setdefault(k, j)
    for k in keys.tolist():
        d.pop(k, None)
    return d


def expected_answers(keys, table_keys) -> list:
    d = {}
    for j, k in enumerate(table_keys.tolist()):
        d.setdefault(k, j)
    return [d.get(k, VALUE_ABSENT) for k in keys.tolist()]


def assert_like_a_dict(problem):
    if problem.op == "find":
        assert problem.last_answers.tolist() == expected_answers(problem.keys, problem.table_keys)
    else:
        assert as_dict(problem.last_slots) == expected_table(problem.op, problem.keys, problem.table_keys)


def random_keys(n, seed, low=0):
    return np.random.default_rng(seed).integers(low, KEY_ERASED, n, dtype=np.uint32)


def batch(op, seed, capacity=48, bucket=8):
    """A batch for ``op`` in a table of ``capacity`` slots: 40 inserts with repeats (one key four times), or a
    table of 40 keys and 40 lookups, half of them absent, one present key twice."""
    rng = np.random.default_rng(seed)
    pool = random_keys(200, seed)
    pool = pool[np.unique(pool, return_index=True)[1]]
    if op in ("insert", "insert-or-add"):
        keys = rng.choice(pool[:30], 40)
        keys[[3, 17, 29, 35]] = keys[0]
        return HashProblem(keys, op=op, bucket=bucket, capacity=capacity)
    table = pool[:40]
    keys = np.concatenate([table[:19], table[5:6], pool[100:120]])[rng.permutation(40)]
    return HashProblem(keys, op=op, table_keys=table, bucket=bucket, capacity=capacity)


# --- every op of every variant against a dict -------------------------------------------------------------


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("name", OPEN_GPU)
def test_every_op_of_every_gpu_variant_matches_a_dict(cuda_backend, name, op):
    # 40 keys in 48 slots (load 0.83): keys overflow their first bucket, collide, and (insert) repeat
    problem = batch(op, seed=OPS.index(op))
    run(name, problem, cuda_backend)
    assert_like_a_dict(problem)


@pytest.mark.parametrize("op", OPS)
def test_every_op_of_the_cpu_twin_matches_a_dict(cpu_backend, op):
    for bucket in (4, 16):
        problem = batch(op, seed=10 + OPS.index(op), bucket=bucket)
        run("cpu-two-choice", problem, cpu_backend)
        assert_like_a_dict(problem)


def test_the_first_occurrence_of_a_repeated_key_wins(cuda_backend, cpu_backend):
    keys = np.array([7, 9, 7, 11, 9, 7], np.uint32)
    for name, backend in (("two-choice", cuda_backend), ("linear-probing", cuda_backend),
                          ("cpu-two-choice", cpu_backend)):
        problem = HashProblem(keys, op="insert", capacity=32)
        run(name, problem, backend)
        assert as_dict(problem.last_slots) == {7: 0, 9: 1, 11: 3}
        counted = HashProblem(keys, op="insert-or-add", capacity=32)
        run(name, counted, backend)
        assert as_dict(counted.last_slots) == {7: 3, 9: 2, 11: 1}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cpu", "gpu-locks", "gpu-lockfree"])
def test_the_chained_tables_find_by_walking_their_chains(cuda_backend, cpu_backend, name):
    backend = cpu_backend if name == "cpu" else cuda_backend
    table = random_keys(40, 3)
    table[[9, 30]] = table[2]  # a key inserted three times: its first occurrence answers
    keys = np.concatenate([table[::2], random_keys(10, 4)])
    problem = HashProblem(keys, 16, op="find", table_keys=table)
    run(name, problem, backend)
    assert_like_a_dict(problem)
    assert problem.last_answers[1] == problem.last_answers[15] == 2  # table[2], also at 30 (and 9)
    for op, words in (("erase", "tombstones"), ("insert-or-add", "cannot add to it")):
        [row] = bench.run(plan(backend, 1, [LAUNCH]), [variant(name)], [batch(op, 1)])
        assert row.skip.kind is SkipKind.NOT_APPLICABLE and words in row.note
    long_chains = HashProblem(keys, 4, op="find", table_keys=random_keys(300, 5))  # 75 keys a chain
    [row] = bench.run(plan(backend, 1, [LAUNCH]), [variant(name)], [long_chains])
    assert row.verified == SKIPPED and "give --buckets 5 or more" in row.note


@pytest.mark.slow
@pytest.mark.parametrize("name, bucket, op", [("bucketed", 4, "insert"), ("bucketed", 16, "erase"),
                                              ("bucketed", 32, "find"), ("two-choice", 32, "insert-or-add")])
def test_bucket_widths(cuda_backend, name, bucket, op):
    problem = batch(op, seed=bucket, capacity=64, bucket=bucket)
    run(name, problem, cuda_backend)
    assert_like_a_dict(problem)


@pytest.mark.parametrize("name, items", [("linear-probing", 3), ("two-choice", 2)])
def test_a_find_holding_several_keys_in_flight(cuda_backend, name, items):
    # 40 keys, 3 (2) per thread (group), 2 blocks of 32 threads: the grid-stride loop runs each thread twice,
    # the second time with some of its keys past the end
    problem = batch("find", seed=7)
    row = run(name, problem, cuda_backend, Launch(block=32, grid=2, items_per_thread=items))
    assert f"{items} keys per" in row.note
    assert_like_a_dict(problem)


# --- full buckets, one bucket, wrap-around, erase then reinsert, one key ------------------------------


def bucket_np(keys, choice, nbuckets):
    """The bucket of each key under hash ``choice``, written out here from layout.py's definition: murmur3's
    fmix32 of key xor choice x HASH_STEP, times the buckets, >> 32."""
    h = np.asarray(keys, np.uint32) ^ np.uint32((choice * HASH_STEP) & 0xFFFFFFFF)
    with np.errstate(over="ignore"):
        h ^= h >> np.uint32(16)
        h *= np.uint32(MIX_1)
        h ^= h >> np.uint32(13)
        h *= np.uint32(MIX_2)
        h ^= h >> np.uint32(16)
    return ((h.astype(np.uint64) * np.uint64(nbuckets)) >> np.uint64(32)).astype(np.int64)


def keys_in_buckets(count, nbuckets, bucket, choices=1, seed=0):
    """``count`` distinct keys whose bucket is ``bucket`` under each of hashes 0 .. choices - 1."""
    found = []
    rng = np.random.default_rng(seed)
    while len(found) < count:
        k = np.unique(rng.integers(0, KEY_ERASED, 200000, dtype=np.uint32))
        ok = np.ones(k.size, bool)
        for c in range(choices):
            ok &= bucket_np(k, c, nbuckets) == bucket
        found.extend(k[ok].tolist())
    return np.array(found[:count], np.uint32)


@pytest.mark.parametrize("name", ["linear-probing", "bucketed", "two-choice", "best", "bucketed-filter",
                                  "bucketed-rounds", "cpu-two-choice"])
def test_all_keys_in_one_bucket_wrap_around_the_end(cuda_backend, cpu_backend, name):
    # 20 keys whose home is the table's last bucket under every hash: that bucket fills, and the others wrap to
    # the table's first buckets
    backend = cpu_backend if name == "cpu-two-choice" else cuda_backend
    bucket, choices = SCHEME[name][0] or 8, SCHEME[name][1]
    nbuckets = 64 // bucket
    keys = keys_in_buckets(20, nbuckets, nbuckets - 1, choices)
    inserted = HashProblem(keys, op="insert", bucket=8, capacity=64)
    run(name, inserted, backend)
    assert as_dict(inserted.last_slots) == expected_table("insert", keys)
    used = np.flatnonzero(np.asarray(inserted.last_slots) != SLOT_EMPTY)
    assert used.min() == 0 and (np.asarray(inserted.last_slots)[-bucket:] != SLOT_EMPTY).all()  # wrapped, full
    if name in ("best", "bucketed-filter", "bucketed-rounds"):  # overflow flags, two per bucket (layout.py): set where keys went past
        bits = FILTER_BITS.get(name, 1)
        steps = flags_by_step(inserted.last_flags, nbuckets, bits)
        full = (np.asarray(inserted.last_slots).reshape(nbuckets, bucket) != SLOT_EMPTY).all(axis=1)
        # the last bucket is every hash of these keys: passed at their first step and later ones; the full
        # first buckets only at later steps (walking on after the hashes), and nothing else
        assert steps[-1].tolist() == [True, True]
        assert steps[:-1, 1].tolist() == full[:-1].tolist() and not steps[:-1, 0].any()
        # the check reads the flags per step: without either of the last bucket's, a find stops there
        from kernels.hashtable.problem import unreachable_keys

        assert unreachable_keys(inserted.last_slots, bucket, choices, inserted.last_flags, bits) == 0
        for step in range(2):
            flags = np.array(inserted.last_flags, np.uint32)
            for fingerprint in range(bits if step == 0 else 1):
                word, bit = flag_at(nbuckets - 1, step, nbuckets, bits, fingerprint)
                flags[word] &= ~np.uint32(1 << bit)
            assert unreachable_keys(inserted.last_slots, bucket, choices, flags, bits) == 20 - bucket, step
    looked_up = HashProblem(np.concatenate([keys, keys_in_buckets(5, nbuckets, nbuckets - 1, seed=1)[::-1]]),
                            op="find", table_keys=keys, bucket=8, capacity=64)
    run(name, looked_up, backend)
    assert_like_a_dict(looked_up)


def flag_at(bucket: int, step: int, nbuckets: int, bits: int = 1, fingerprint: int = 0) -> tuple[int, int]:
    """(word, bit) of a bucket's overflow flag for a probe step, as layout.py describes them: ``bits`` per
    bucket for the first step (the one of ``fingerprint``), then a bit per bucket for the later steps."""
    if step:
        return -(-nbuckets * bits // 32) + bucket // 32, bucket % 32
    return (bucket * bits + fingerprint) // 32, (bucket * bits + fingerprint) % 32


def flags_by_step(flags, nbuckets: int, bits: int = 1) -> np.ndarray:
    """(nbuckets, 2) bools: whether any of each bucket's overflow flags for the first step is set, and its
    flag for the later ones."""
    words = np.asarray(flags, np.uint32)

    def flag(b, s, f):
        w, bit = flag_at(b, s, nbuckets, bits, f)
        return bool(words[w] >> np.uint32(bit) & 1)

    return np.array([[any(flag(b, 0, f) for f in range(bits)), flag(b, 1, 0)] for b in range(nbuckets)])


def test_the_check_reads_the_flag_of_the_step_a_find_is_at():
    """A key whose second hash is bucket 0 and which lies at its third: a find goes past bucket 0 (at a later
    step) when that bucket's later-step flag is set, and its first-step flag does not let it (hand-built
    flags)."""
    from kernels.hashtable.checks import _bucket
    from kernels.hashtable.problem import _codes

    nbuckets = 64
    key = next(k for k in range(1, 1 << 20) if _bucket(k, 1, nbuckets) == 0
               and len({_bucket(k, c, nbuckets) for c in range(3)}) == 3 and _bucket(k, 0, nbuckets) >= 3)
    first, third = _bucket(key, 0, nbuckets), _bucket(key, 2, nbuckets)

    def codes(going):
        return _codes(np.array([key], np.uint32), np.array([5]), np.array([0]), np.array([5]), np.array([third]),
                      going, 4).tolist()

    going = np.zeros((nbuckets, 2), bool)  # the first step, the later ones
    going[first, 0] = going[0, 1] = True  # full, and a key went past each at the kind of step this key is at
    assert codes(going) == [0]
    going[0] = [True, False]
    assert codes(going) != [0]


def reinsert_on_gpu(slots, keys, bucket, choices, flags=None, filter_bits=1):
    """Inserts ``keys`` (value: position) into the table ``slots`` with the kernel of a bucketed or
    linear-probing layout (with its overflow ``flags``, updated in place, where it has them); returns the
    table."""
    from kernels.hashtable.open_kernels import bucket_kernels, linear_kernels

    d_slots, status = memory.to_device(np.asarray(slots)), memory.zeros(1, np.int32)
    grid, nbuckets, d_keys = -(-keys.size * max(1, bucket // 2) // 64), np.int64(slots.size // bucket), memory.to_device(keys)
    if flags is not None:
        d_flags = memory.to_device(flags)
        bucket_kernels("insert", bucket, choices, 1, True, filter_bits)[grid, 64](d_keys, d_slots, d_flags, nbuckets,
                                                                                  status)
        flags[:] = memory.to_host(d_flags)
    elif bucket > 1:
        no_flags = memory.zeros(1, np.uint32)  # not read: these tables have no overflow flags
        bucket_kernels("insert", bucket, choices)[grid, 64](d_keys, d_slots, no_flags, nbuckets, status)
    else:
        linear_kernels("insert")[grid, 64](d_keys, d_slots, nbuckets, status)
    assert memory.to_host(status)[0] == 0
    return memory.to_host(d_slots)


@pytest.mark.parametrize("name", ["linear-probing", "bucketed", "two-choice", "bucketed-filter", "cpu-two-choice"])
def test_erase_then_reinsert(cuda_backend, cpu_backend, name):
    backend = cpu_backend if name == "cpu-two-choice" else cuda_backend
    problem = batch("erase", seed=5)
    run(name, problem, backend)
    slots = np.asarray(problem.last_slots).copy()
    assert (slots == SLOT_ERASED).sum() == 19  # one tombstone per erased key (one was erased twice)
    # the erased keys come back (with new values: their positions in this batch) and new keys join them
    erased = np.unique(problem.keys[np.isin(problem.keys, problem.table_keys)])
    again = np.concatenate([erased[:10], random_keys(6, 99)])
    bucket, choices = SCHEME[name][0] or problem.bucket, SCHEME[name][1]
    if name == "cpu-two-choice":
        from kernels.hashtable.open_cpu import insert_all

        assert insert_all(again, slots, bucket, choices, slots.size // bucket, False) == again.size
    elif name in FILTER_BITS:  # the erase left the flags as they were; the reinsert sets more of them
        flags = np.array(problem.last_flags, np.uint32)
        slots = reinsert_on_gpu(slots, again, bucket, choices, flags, FILTER_BITS[name])
    else:
        slots = reinsert_on_gpu(slots, again, bucket, choices)
    want = expected_table("erase", problem.keys, problem.table_keys)
    want.update({k: i for i, k in enumerate(again.tolist())})
    assert as_dict(slots) == want
    flagged = (flags, FILTER_BITS[name]) if name in FILTER_BITS else ()
    assert unreachable_keys(slots, bucket, choices, *flagged) == 0  # every key where a find looks for it


@pytest.mark.parametrize("op", OPS)
def test_one_key(cuda_backend, op):
    problem = hashtable.make_problem(1, seed=3, op=op, load=0.5)
    for name in ("linear-probing", "two-choice"):
        run(name, problem, cuda_backend)
        assert_like_a_dict(problem)


def test_no_keys_is_refused_in_one_line(capsys):
    with pytest.raises(InputError, match="at least 1"):
        hashtable.make_problem(0)
    assert_one_line_exit_2(capsys, ["bench", "hashtable", "--backend", "cpu", "--n", "0"])


def test_generated_batches(cpu_backend):
    p = hashtable.make_problem(2000, seed=4, op="find", load=0.9, absent=0.25)
    assert p.capacity == capacity_for(2000, 0.9) == 2240 and p.capacity % 32 == 0
    assert p.table_keys.size == 2000 and np.unique(p.table_keys).size == 2000
    present = np.isin(p.keys, p.table_keys)
    assert present.sum() == 1500 and np.unique(p.keys[present]).size == 1500  # each present key once
    assert p.axes == {"op": "find", "load": 0.9, "absent": 0.25, "bucket": 8, "buckets": 1024}
    counted = hashtable.make_problem(4000, seed=4, op="insert-or-add", multiplicity=4.0)
    assert np.unique(counted.keys).size == counted.distinct < 1100  # 1000 keys drawn with repeats
    assert counted.axes["multiplicity"] == 4.0 and "absent" not in counted.axes
    t = np.arange(0, 2**32 - 2, 2**20 + 7)
    k = keygen.key_of_index(t, seed=9)
    assert k.max() < KEY_ERASED and np.unique(k).size == t.size and (keygen.index_of_key(k, 9) == t).all()


# --- the check itself ---------------------------------------------------------------------------------------


def test_the_check_finds_broken_tables():
    keys = keys_in_buckets(3, 4, 2)  # three keys at home in bucket 2 of 4 (buckets of 8 slots, one hash)
    problem = HashProblem(keys, op="insert", bucket=8, capacity=32)
    good = np.full(32, SLOT_EMPTY, np.uint64)
    good[16:19] = (np.arange(3, dtype=np.uint64) << np.uint64(32)) | keys.astype(np.uint64)
    assert problem.check_open(good, 8, 1) == 3 and problem.verify(3) == (True, "")
    moved = good.copy()
    moved[[16, 26]] = moved[[26, 16]]  # a key in bucket 3 while bucket 2 has room: a find never looks there
    assert problem.verify(problem.check_open(moved, 8, 1)) == (False, "1 keys where a find cannot reach them")
    lost = good.copy()
    lost[17] = SLOT_EMPTY
    assert problem.verify(problem.check_open(lost, 8, 1)) == (False, "1 keys lost")
    twice = good.copy()
    twice[19] = twice[16]
    assert problem.verify(problem.check_open(twice, 8, 1))[1] == "1 keys stored more than once"
    wrong = good.copy()
    wrong[18] += np.uint64(1 << 32)
    assert problem.verify(problem.check_open(wrong, 8, 1)) == (False, "1 wrong values")
    stranger = good.copy()
    stranger[20] = np.uint64(5)
    assert "1 keys never given" in problem.verify(problem.check_open(stranger, 8, 1))[1]


def test_the_check_of_a_find():
    problem = HashProblem(np.array([5, 6, 7], np.uint32), op="find", table_keys=np.array([7, 5], np.uint32))
    assert problem.check_found(np.array([1, VALUE_ABSENT, 0], np.uint32)) == 3
    assert problem.verify(3) == (True, "")
    problem.check_found(np.array([VALUE_ABSENT, 0, 0], np.uint32))
    assert problem.verify(1)[1] == "1 present keys not found; 1 absent keys found"


# --- bad input ------------------------------------------------------------------------------------------


def assert_one_line_exit_2(capsys, argv, words=""):
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert err.startswith("raytracer-app: error: ") and err.count("\n") == 1, (argv, err)
    assert words in err, err


@pytest.mark.parametrize("args, words", [
    (["--load", "1.5"], "outside (0, 1)"), (["--load", "0"], "outside (0, 1)"), (["--load", "1"], "outside (0, 1)"),
    (["--load", "half"], "not a number"), (["--load", "nan"], "not a finite number"),
    (["--load", "0.5,1.2"], "outside (0, 1)"), (["--load", "0.5,"], "empty value"),
    (["--absent", "1.5"], "fraction from 0 to 1"), (["--bucket", "6"], "--bucket"),
    (["--multiplicity", "0.5"], "at least 1"), (["--op", "delete"], "--op"),
    (["--n", "100000", "--load", "0.00001"], "--load 1e-05 with 100,000 keys needs"),  # more slots than a table has
    (["--n", "2000000000", "--load", "0.99"], "needs about"),  # beyond this machine's memory
])
def test_bad_options_exit_2_in_one_line(capsys, args, words):
    assert_one_line_exit_2(capsys, ["bench", "hashtable", "--backend", "cpu", "--variants", "cpu-two-choice", *args],
                           words)


def test_a_load_sweep_is_one_row_per_load_with_its_axes(tmp_path, capsys):
    import csv

    out = tmp_path / "sweep.csv"
    assert main(["bench", "hashtable", "--backend", "cpu", "--variants", "cpu-two-choice", "--n", "1000", "--op", "find",
                 "--absent", "0.5", "--load", "0.5,0.9", "--repeats", "1", "--csv", str(out)]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader(out.open()))
    assert [r["axes"] for r in rows] == [f"op=find load={x} absent=0.5 bucket=8 buckets=16384" for x in (0.5, 0.9)]
    assert all(r["verified"] == "yes" and r["rate_unit"] == "G ops/s" for r in rows)


@pytest.mark.parametrize("key", [KEY_EMPTY, KEY_ERASED])
def test_reserved_keys_are_refused(key):
    with pytest.raises(InputError, match="reserved"):
        HashProblem(np.array([1, key, 3], np.uint32))
    with pytest.raises(InputError, match="reserved"):
        HashProblem(np.array([1], np.uint32), op="find", table_keys=np.array([key], np.uint32))


# --- on a GPU ---------------------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("load", [0.5, 0.95])
@pytest.mark.parametrize("op", OPS)
def test_every_op_at_a_million_keys_on_a_real_gpu(cuda_backend, op, load):
    problem = hashtable.make_problem((1 << 20) + 3, seed=21, op=op, load=load, absent=0.5,
                                     multiplicity=2.0 if op == "insert-or-add" else 1.0)
    names = [*OPEN_GPU, "torch-sorted-search", "cupy-sorted-search", "cuco-static-map", "bght-bcht"]
    rows = bench.run(plan(cuda_backend, 3, [Launch()], unit=hashtable.ALGORITHM.unit), [variant(n) for n in names], [problem])
    for row in rows:
        if row.skip is not None:
            assert row.variant not in OPEN_GPU, row.note
            continue
        assert row.verified == PASSED, (row.variant, row.note)


@pytest.mark.gpu
@pytest.mark.parametrize("bucket", [4, 8, 16, 32])
@pytest.mark.parametrize("launch", [Launch(block=32), Launch(block=1024), Launch(block=256, grid=7)])
def test_bucket_widths_and_launches_on_a_real_gpu(cuda_backend, bucket, launch):
    for op in ("insert", "find", "erase"):
        problem = hashtable.make_problem(100_003, seed=bucket, op=op, load=0.9, absent=0.3, bucket=bucket)
        for name in ("bucketed", "two-choice"):
            row = run(name, problem, cuda_backend, launch)
            assert row.block == launch.block


@pytest.mark.gpu
def test_best_tunes_once_and_then_reads_the_cache(cuda_backend, tmp_path, monkeypatch):
    from kernels.io import cache

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    problem = hashtable.make_problem(1 << 20, seed=2, op="find", load=0.9)
    first = run("best", problem, cuda_backend, Launch())
    assert "tuned now" in first.note
    again = run("best", problem, cuda_backend, Launch())
    assert "(cached)" in again.note and first.note.split(" (")[0] == again.note.split(" (")[0]
