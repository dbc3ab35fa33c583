"""best's candidate layouts (issue 52): inserts in rounds by step and first-step filters of several bits per
bucket (kernels/hashtable/layout.py). The CPU twin that counts the buckets a find reads
(kernels/hashtable/probe_counts.py) against Python dicts; the check's reading of the filters; the rounds'
refusal of a table with tombstones in the CUDA simulator; and the counts' relations that pick designs."""

import numpy as np
import pytest

from kernels.hashtable import probe_counts
from kernels.hashtable.layout import KEY_ERASED, SLOT_EMPTY, SLOT_ERASED, VALUE_ABSENT, capacity_for, flag_words
from kernels.hashtable.problem import filter_misses, unreachable_keys


def random_keys(n, seed):
    return np.random.default_rng(seed).integers(0, KEY_ERASED, n, dtype=np.uint32)


def as_dict(slots) -> dict:
    slots = np.asarray(slots, np.uint64)
    keys = slots & np.uint64(0xFFFFFFFF)
    used = keys < KEY_ERASED
    return dict(zip(keys[used].tolist(), (slots[used] >> np.uint64(32)).tolist()))


@pytest.mark.parametrize("rounds", [False, True])
@pytest.mark.parametrize("bucket, bits", [(4, 1), (4, 8), (8, 4), (16, 2)])
def test_the_twin_holds_what_a_dict_holds_and_finds_every_key(rounds, bucket, bits):
    keys = random_keys(3000, seed=bucket + bits)
    keys[100:130] = keys[:30]  # repeats: the first occurrence's value stays
    slots, flags, reads = probe_counts.build(keys, bucket, 4, 0.95, rounds, bits)
    want = {}
    for i, k in enumerate(keys.tolist()):
        want.setdefault(k, i)
    assert as_dict(slots) == want
    assert (reads >= 1).all()
    assert unreachable_keys(slots, bucket, 4, flags, bits) == 0  # the check's own walk, from layout.py
    absent = np.setdiff1d(random_keys(3000, seed=99), keys)
    lookups = np.concatenate([keys, absent])
    answers, counted = np.empty(lookups.size, np.uint32), np.zeros(lookups.size, np.int64)
    probe_counts.find_counted(slots, flags, lookups, answers, counted, bucket, 4, slots.size // bucket, bits)
    assert answers.tolist() == [want.get(k, VALUE_ABSENT) for k in lookups.tolist()]


def test_the_check_reads_the_flag_of_a_keys_fingerprint():
    keys = random_keys(4000, seed=3)
    slots, flags, _ = probe_counts.build(keys, 4, 4, 0.95, True, 8)
    nbuckets = slots.size // 4
    stored = (slots & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    used = np.flatnonzero(stored < KEY_ERASED)
    # a key past its first bucket: clear the flag of its fingerprint there, set every other flag of that bucket
    from kernels.hashtable.probing import bucket_of, mix32

    i = next(int(u) for u in used if bucket_of(stored[u], 0, nbuckets) != u // 4)
    key, first = stored[i], int(bucket_of(stored[i], 0, nbuckets))
    fingerprint = int(mix32(key)) & 7
    broken = flags.copy()
    for f in range(8):
        word, bit = divmod(first * 8 + f, 32)
        broken[word] = broken[word] | np.uint32(1 << bit) if f != fingerprint else broken[word] & ~np.uint32(1 << bit)
    missed = filter_misses(stored[used], used // 4, broken, nbuckets, 8)
    assert missed[np.flatnonzero(used == i)[0]]
    assert unreachable_keys(slots, 4, 4, broken, 8) >= 1
    assert not filter_misses(stored[used], used // 4, flags, nbuckets, 8).any()


def test_rounds_put_more_keys_in_their_first_bucket_and_filters_stop_absent_keys_sooner():
    n = 1 << 14
    greedy = probe_counts.count(n, 4, 4, 0.9, rounds=False)
    rounds = probe_counts.count(n, 4, 4, 0.9, rounds=True)
    filtered = probe_counts.count(n, 4, 4, 0.9, rounds=True, filter_bits=8)
    assert rounds.first_bucket > greedy.first_bucket
    assert filtered.absent < rounds.absent < greedy.absent
    assert filtered.present == rounds.present and filtered.first_bucket == rounds.first_bucket  # same placement
    assert 1 <= greedy.present <= greedy.absent
    assert (greedy.sectors_per_bucket, probe_counts.count(64, 16, 4, 0.5, False).sectors_per_bucket) == (1, 4)


def test_a_tiny_table_counted_by_hand():
    # one bucket of four slots: three keys fit, each read once; an absent key reads the one bucket (it has room)
    keys = np.array([7, 8, 9], np.uint32)
    slots, flags, reads = probe_counts.build(keys, 4, 4, 0.75, True)
    assert slots.size == 32 and reads.tolist() == [1, 1, 1]  # 32 slots: the widest bucket is the unit
    answers, counted = np.empty(2, np.uint32), np.zeros(2, np.int64)
    probe_counts.find_counted(slots, flags, np.array([8, 10], np.uint32), answers, counted, 4, 4, 8, 1)
    assert answers.tolist() == [1, VALUE_ABSENT] and counted.tolist() == [1, 1]


def test_rounds_refuse_a_table_with_tombstones(cuda_backend):
    from kernels.backend import memory
    from kernels.hashtable.round_kernels import MET_TOMBSTONE, round_kernel

    keys = random_keys(8, seed=5)
    nbuckets = capacity_for(8, 0.5) // 4
    slots = np.full(nbuckets * 4, SLOT_EMPTY, np.uint64)
    slots[::4] = SLOT_ERASED  # every bucket has an erased slot
    d_slots, status = memory.to_device(slots), memory.zeros(1, np.int32)
    flags, state = memory.zeros(flag_words(nbuckets), np.uint32), memory.zeros(8, np.uint8)
    round_kernel("insert", 4, 4)[1, 32](memory.to_device(keys), d_slots, flags, state, np.int64(nbuckets),
                                        np.int32(0), status)
    assert memory.to_host(status)[0] == MET_TOMBSTONE
