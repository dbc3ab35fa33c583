"""How many buckets (and 32-byte sectors) best's table makes a find and an insert read, counted on the CPU
with the same probe functions as the kernels (:mod:`.probing`): the twin of ``best`` (inserts one key after
another, into the first bucket with room) and of ``bucketed-rounds`` (every key's step s before any key's
step s + 1), both with overflow flags. A GPU's find costs about its random sectors, so these counts rank
layouts without a GPU (``scripts/hashmap_probe_counts.py`` prints them).

A sector is 32 bytes: a bucket of B 8-byte slots is B / 4 sectors read together (at least one). The flag
words (2 bits per bucket, a few MB) stay in L2 and are not counted as sectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from kernels.hashtable.layout import SLOT_EMPTY, capacity_for, flag_words
from kernels.hashtable.probing import (KEY_EMPTY32, VALUE_ABSENT32, bucket_of, filter_place, key_of, next_bucket,
                                       pack, value_of)

SECTOR_BYTES = 32
SLOT_BYTES = 8


@numba.njit(nogil=True, cache=True)
def _bucket_state(slots, base, bucket, key):
    """(slot index holding ``key`` or -1, first empty slot or -1) of the bucket at ``base`` (no tombstones:
    these tables are built from empty)."""
    held, room = -1, -1
    for j in range(bucket):
        k = key_of(slots[base + j])
        if k == key:
            held = base + j
            break
        if k == KEY_EMPTY32 and room < 0:
            room = base + j
    return held, room


@numba.njit(nogil=True, cache=True)
def _try_step(slots, flags, key, value, b, probe, bucket, nbuckets, filter_bits):
    """One probe of an insert at bucket ``b``, step ``probe``: True once the key is in (placed, or already
    there: the smaller value kept), else False with the bucket's overflow flag for this step set."""
    held, room = _bucket_state(slots, b * bucket, bucket, key)
    if held >= 0:
        if value < value_of(slots[held]):
            slots[held] = pack(key, value)
        return True
    if room >= 0:
        slots[room] = pack(key, value)
        return True
    word, bit = filter_place(key, b, probe, nbuckets, filter_bits)
    flags[word] |= bit
    return False


@numba.njit(nogil=True, cache=True)
def insert_greedy(keys, slots, flags, bucket, choices, nbuckets, filter_bits, reads):
    """best's insert, one key after another (what one GPU thread would leave); ``reads[i]``: buckets key i
    read. Returns the keys inserted (fewer when the table ran out of room)."""
    for i in range(keys.size):
        key = keys[i]
        b = bucket_of(key, 0, nbuckets)
        placed = False
        for probe in range(nbuckets + choices):
            reads[i] += 1
            if _try_step(slots, flags, key, np.uint32(i), b, probe, bucket, nbuckets, filter_bits):
                placed = True
                break
            b = next_bucket(key, probe + 1, b, choices, nbuckets)
        if not placed:
            return i
    return keys.size


@numba.njit(nogil=True, cache=True)
def insert_rounds(keys, slots, flags, bucket, choices, nbuckets, filter_bits, reads):
    """bucketed-rounds' insert: step 0 of every key, then step 1 of those left, ...; after the last hash the
    keys left walk on to the first bucket with room. ``reads`` as in :func:`insert_greedy`."""
    waiting = np.ones(keys.size, np.bool_)
    for step in range(choices):
        for i in range(keys.size):
            if waiting[i]:
                reads[i] += 1
                b = bucket_of(keys[i], step, nbuckets)
                if _try_step(slots, flags, keys[i], np.uint32(i), b, step, bucket, nbuckets, filter_bits):
                    waiting[i] = False
    for i in range(keys.size):
        if waiting[i]:
            key = keys[i]
            b = bucket_of(key, choices - 1, nbuckets)
            placed = False
            for probe in range(choices, nbuckets + choices):
                b = next_bucket(key, probe, b, choices, nbuckets)
                reads[i] += 1
                if _try_step(slots, flags, key, np.uint32(i), b, probe, bucket, nbuckets, filter_bits):
                    placed = True
                    break
            if not placed:
                return i
    return keys.size


@numba.njit(nogil=True, cache=True)
def find_counted(slots, flags, keys, answers, reads, bucket, choices, nbuckets, filter_bits):
    """best's find (stops at the key, a bucket with room, or a full bucket whose flag for this step is
    clear); ``reads[i]``: the buckets key i's find read."""
    for i in range(keys.size):
        key = keys[i]
        b = bucket_of(key, 0, nbuckets)
        answers[i] = VALUE_ABSENT32
        for probe in range(nbuckets + choices):
            reads[i] += 1
            held, room = _bucket_state(slots, b * bucket, bucket, key)
            if held >= 0:
                answers[i] = value_of(slots[held])
                break
            if room >= 0:
                break
            word, bit = filter_place(key, b, probe, nbuckets, filter_bits)
            if (flags[word] & bit) == 0:
                break
            b = next_bucket(key, probe + 1, b, choices, nbuckets)


@dataclass(frozen=True)
class Counts:
    """Mean buckets read per insert, per find of a present and of an absent key, the share of keys in their
    first bucket, and sectors per bucket."""

    insert: float
    present: float
    absent: float
    first_bucket: float
    sectors_per_bucket: int

    def sectors(self, buckets: float) -> float:
        return buckets * self.sectors_per_bucket


def build(keys, bucket: int, choices: int, load: float, rounds: bool, filter_bits: int = 1):
    """(slots, flags, reads per key) of a table of ``keys`` at ``load`` built as best or bucketed-rounds,
    with ``filter_bits`` first-step flags per bucket."""
    nbuckets = capacity_for(keys.size, load) // bucket
    slots = np.full(nbuckets * bucket, SLOT_EMPTY, np.uint64)
    flags = np.zeros(flag_words(nbuckets, filter_bits), np.uint32)
    reads = np.zeros(keys.size, np.int64)
    inserted = (insert_rounds if rounds else insert_greedy)(keys, slots, flags, bucket, choices, nbuckets,
                                                            filter_bits, reads)
    if inserted < keys.size:
        raise RuntimeError(f"the table ran out of room after {inserted} of {keys.size} keys")
    return slots, flags, reads


def count(n: int, bucket: int, choices: int, load: float, rounds: bool, filter_bits: int = 1, seed: int = 0) -> Counts:
    """Counts for a table of ``n`` distinct random keys (n absent ones looked up too)."""
    rng = np.random.default_rng(seed)
    drawn = np.unique(rng.integers(0, 0xFFFFFFF0, 2 * n + n // 8, dtype=np.uint32))
    drawn = drawn[rng.permutation(drawn.size)]
    present, absent = drawn[:n], drawn[n:2 * n]
    slots, flags, insert_reads = build(present, bucket, choices, load, rounds, filter_bits)
    nbuckets = slots.size // bucket
    means, first = [], 0.0
    for keys in (present, absent):
        answers = np.empty(keys.size, np.uint32)
        reads = np.zeros(keys.size, np.int64)
        find_counted(slots, flags, keys, answers, reads, bucket, choices, nbuckets, filter_bits)
        means.append(float(reads.mean()))
        if keys is present:
            if not (answers != VALUE_ABSENT32).all():
                raise RuntimeError("a present key was not found")
            first = float(np.mean(reads == 1))  # a find of a key in its first bucket reads that one
    return Counts(float(insert_reads.mean()), means[0], means[1], first, max(1, bucket * SLOT_BYTES // SECTOR_BYTES))
