"""The open-addressing table on the CPU (Numba): the same layout, hash and probe sequence as the GPU
kernels (:mod:`.probing`), for machines without a GPU. Finds run on all cores (``prange``: they only
read); inserts and erases one key after another (Numba has no compare-and-swap on host arrays), so a
sequential insert leaves exactly the table a single GPU thread would.
"""

from __future__ import annotations

import numba
import numpy as np

from kernels.harness.rows import Outcome
from kernels.hashtable.layout import SLOT_EMPTY
from kernels.hashtable.probing import (KEY_EMPTY32, KEY_ERASED32, ONE_VALUE, SLOT_ERASED64, VALUE_ABSENT32, bucket_of,
                                       key_of, next_bucket, pack, smaller_value, value_of)
from kernels.timing import time_wall
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run


@numba.njit(nogil=True, cache=True)
def insert_one(slots, key, value, bucket, choices, nbuckets, add):
    """Insert (or, with ``add``, insert-or-add) one key; False when the table has no room for it."""
    b = bucket_of(key, 0, nbuckets)
    tomb = np.int64(-1)
    for probe in range(1, nbuckets + choices + 1):
        base = b * bucket
        room = np.int64(-1)
        for j in range(bucket):
            slot = slots[base + j]
            k = key_of(slot)
            if k == key:
                slots[base + j] = slot + ONE_VALUE if add else smaller_value(slot, key, value)
                return True
            if k == KEY_ERASED32 and tomb < 0:
                tomb = base + j
            elif k == KEY_EMPTY32 and room < 0:
                room = base + j
        if room >= 0:  # a find stops here: the key goes to the first tombstone met, else the first empty slot
            slots[tomb if tomb >= 0 else room] = pack(key, value)
            return True
        b = next_bucket(key, probe, b, choices, nbuckets)
    return False


@numba.njit(nogil=True, cache=True)
def insert_all(keys, slots, bucket, choices, nbuckets, add):
    """Every key in turn, its value its position (or 1 to add, with ``add``); the number inserted before the
    table ran out of room (keys.size when it did not)."""
    for i in range(keys.size):
        value = np.uint32(1) if add else np.uint32(i)
        if not insert_one(slots, keys[i], value, bucket, choices, nbuckets, add):
            return i
    return keys.size


@numba.njit(nogil=True, cache=True)
def find_one(slots, key, bucket, choices, nbuckets):
    b = bucket_of(key, 0, nbuckets)
    for probe in range(1, nbuckets + choices + 1):
        base = b * bucket
        room = False
        for j in range(bucket):
            slot = slots[base + j]
            k = key_of(slot)
            if k == key:
                return value_of(slot)
            if k == KEY_EMPTY32:
                room = True
        if room:
            return VALUE_ABSENT32
        b = next_bucket(key, probe, b, choices, nbuckets)
    return VALUE_ABSENT32


@numba.njit(nogil=True, cache=True, parallel=True)
def find_all(keys, slots, answers, bucket, choices, nbuckets):
    for i in numba.prange(keys.size):
        answers[i] = find_one(slots, keys[i], bucket, choices, nbuckets)


@numba.njit(nogil=True, cache=True)
def erase_all(keys, slots, bucket, choices, nbuckets):
    for i in range(keys.size):
        key = keys[i]
        b = bucket_of(key, 0, nbuckets)
        for probe in range(1, nbuckets + choices + 1):
            base = b * bucket
            room = False
            gone = False
            for j in range(bucket):
                k = key_of(slots[base + j])
                if k == key:
                    slots[base + j] = SLOT_ERASED64
                    gone = True
                    break
                if k == KEY_EMPTY32:
                    room = True
            if gone or room:
                break
            b = next_bucket(key, probe, b, choices, nbuckets)


def run_table(problem, bucket: int, choices: int, repeats: int) -> Outcome:
    """Times ``problem``'s op on the host table (buckets of ``bucket`` slots, ``choices`` hashes) and checks it."""
    nbuckets = problem.capacity // bucket
    slots = np.empty(problem.capacity, np.uint64)
    op, add = problem.op, problem.op == "insert-or-add"
    before, fn = None, None
    if op in ("insert", "insert-or-add"):
        def before():
            slots.fill(SLOT_EMPTY)

        def fn():
            _room(insert_all(problem.keys, slots, bucket, choices, nbuckets, add), problem.keys.size)
    else:
        slots.fill(SLOT_EMPTY)
        _room(insert_all(problem.table_keys, slots, bucket, choices, nbuckets, False), problem.table_keys.size)
        if op == "find":
            answers = np.empty(problem.n, np.uint32)

            def fn():
                find_all(problem.keys, slots, answers, bucket, choices, nbuckets)
        else:
            full = slots.copy()

            def before():
                np.copyto(slots, full)

            def fn():
                erase_all(problem.keys, slots, bucket, choices, nbuckets)

    elapsed = time_wall(fn, repeats, before=before)
    result = problem.check_found(answers) if op == "find" else problem.check_open(slots, bucket, choices)
    return Outcome(result, elapsed, note=f"{problem.describe()}; buckets of {bucket} slots, {choices} hashes")


def _room(inserted: int, wanted: int) -> None:
    if inserted < wanted:
        raise RuntimeError(f"the table ran out of slots after {inserted} of {wanted} keys")


def run_cpu_two_choice(problem, launch, backend, repeats):
    return run_table(problem, problem.bucket, 2, repeats)
