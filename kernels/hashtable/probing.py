"""The open-addressing tables' per-key math, written once as ``@numba.jit`` functions that the CUDA kernels
(:mod:`.open_gpu`) and the CPU twin (:mod:`.open_cpu`) both call: the hash, the probe sequence, and the
packing of a key and its value into one 64-bit slot (layout.py says what they mean).

Probe sequence of a key, for buckets of B slots and ``choices`` hash functions: its bucket under hash 0,
then under hash 1, ..., then the buckets after the last of them, wrapping at the table's end. A find
stops at the first bucket holding the key or an empty slot; an insert puts a new key into the first
tombstone met on the way, else the first empty slot of the bucket where a find would stop. Linear probing
is B = 1, one choice. Buckets and slots are numbered in uint32 (a table has fewer than 2^31 slots), and every
result here is cast back to 32 bits: numba computes integer arithmetic in 64, and array indices of a signed
type cost a negative-index check.
"""

from __future__ import annotations

import numba
import numpy as np

from kernels.hashtable.layout import (HASH_STEP, KEY_EMPTY, KEY_ERASED, MIX_1, MIX_2, SLOT_EMPTY, SLOT_ERASED,
                                      VALUE_ABSENT, VALUE_SHIFT)

KEY_EMPTY32 = np.uint32(KEY_EMPTY)
KEY_ERASED32 = np.uint32(KEY_ERASED)
# written from small values: numba-cuda-mlir 0.6.0 cannot take a uint64 global above 2^63 (docs/compilers.md)
SLOT_EMPTY64 = ~np.uint64(0)
SLOT_ERASED64 = ~np.uint64(1)
assert int(SLOT_EMPTY64) == SLOT_EMPTY and int(SLOT_ERASED64) == SLOT_ERASED
VALUE_ABSENT32 = np.uint32(VALUE_ABSENT)
ONE_VALUE = np.uint64(1 << VALUE_SHIFT)  # adding it to a slot adds 1 to its value and leaves its key alone
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(VALUE_SHIFT)
_STEP = np.uint32(HASH_STEP)


@numba.jit(nopython=True)
def mix32(h):
    """murmur3's 32-bit finaliser (fmix32): every input bit reaches every output bit."""
    h = np.uint32(h)
    h = np.uint32(h ^ (h >> np.uint32(16)))
    h = np.uint32(h * np.uint32(MIX_1))
    h = np.uint32(h ^ (h >> np.uint32(13)))
    h = np.uint32(h * np.uint32(MIX_2))
    return np.uint32(h ^ (h >> np.uint32(16)))


@numba.jit(nopython=True)
def bucket_of(key, choice, nbuckets):
    """The bucket of ``key`` under hash ``choice`` (0, 1, ...): (hash x nbuckets) >> 32, no division."""
    seed = np.uint32(np.uint32(choice) * _STEP)
    h = mix32(np.uint32(key) ^ seed)
    return np.uint32((np.uint64(h) * np.uint64(nbuckets)) >> np.uint64(32))


@numba.jit(nopython=True)
def next_bucket(key, probe, bucket, choices, nbuckets):
    """The bucket of probe number ``probe`` (1, 2, ...) of ``key``, after probe ``probe - 1`` at ``bucket``."""
    if probe < choices:
        return bucket_of(key, probe, nbuckets)
    following = np.uint32(bucket + np.uint32(1))
    return following if following < np.uint32(nbuckets) else np.uint32(0)


@numba.jit(nopython=True)
def pack(key, value):
    """A slot holding ``key`` with ``value``."""
    return np.uint64((np.uint64(value) << _SHIFT) | np.uint64(key))


@numba.jit(nopython=True)
def key_of(slot):
    return np.uint32(np.uint64(slot) & _LOW)


@numba.jit(nopython=True)
def value_of(slot):
    return np.uint32(np.uint64(slot) >> _SHIFT)


@numba.jit(nopython=True)
def smaller_value(slot, key, value):
    """The slot with ``value`` instead of its own when that is smaller (an insert's rule for a key already
    there: the smallest value, i.e. the first occurrence, wins), else the slot as it is."""
    return pack(key, value) if np.uint32(value) < value_of(slot) else np.uint64(slot)


@numba.jit(nopython=True)
def flag_place(bucket, step, nbuckets):
    """(word, bit) of ``bucket``'s overflow flag for probe step ``step`` (0, 1, ...) in the flags of a table
    of ``nbuckets`` buckets: the first step's half, else the later steps' (layout.py)."""
    b = np.uint32(bucket)
    word = np.uint32(b >> np.uint32(5))
    if step != 0:
        # past the first half: layout.first_flag_words(nbuckets) words, written here for device code
        word += np.uint32((np.uint32(nbuckets) + np.uint32(31)) >> np.uint32(5))
    return word, np.uint32(np.uint32(1) << (b & np.uint32(31)))


@numba.jit(nopython=True)
def filter_place(key, bucket, step, nbuckets, filter_bits):
    """(word, bit) of the overflow flag of ``bucket`` that a ``key`` at probe step ``step`` sets or reads,
    with ``filter_bits`` first-step flags per bucket (layout.py): at the first step the one the key's
    fingerprint (the low bits of its first hash) names; at later steps the bucket's one. 1: flag_place's."""
    b = np.uint32(bucket)
    first_words = np.uint32((np.uint64(nbuckets) * np.uint64(filter_bits) + np.uint64(31)) >> np.uint64(5))
    if step != 0:
        return np.uint32(first_words + (b >> np.uint32(5))), np.uint32(np.uint32(1) << (b & np.uint32(31)))
    fingerprint = np.uint32(mix32(key) & np.uint32(filter_bits - 1))
    at = np.uint64(np.uint64(b) * np.uint64(filter_bits) + np.uint64(fingerprint))
    return np.uint32(at >> np.uint64(5)), np.uint32(np.uint32(1) << np.uint32(at & np.uint64(31)))


@numba.jit(nopython=True)
def chain_answer(key, pool_keys, pool_next, heads, empty):
    """A chained table's answer for ``key``: the smallest entry holding it (its first occurrence, whose index
    is its value) on its bucket's whole chain, or VALUE_ABSENT; ``empty`` ends a chain. The seed's tables'
    find, for the GPU kernel and the CPU twin alike."""
    e = heads[key % heads.size]
    found = -1
    while e != empty:
        if pool_keys[e] == key and (found < 0 or e < found):
            found = e
        e = pool_next[e]
    return VALUE_ABSENT32 if found < 0 else np.uint32(found)
