"""The open-addressing tables' CUDA kernels: linear probing (one thread per key, one slot per probe) and
buckets probed by a group of lanes (B / 2 lanes read a bucket of B slots, 16 bytes each, in one coalesced
request, and agree by ballots), with one hash function (``bucketed``) or two (``two-choice``, ``best``).

Each kernel handles one key per thread (per group) at a time in a grid-stride loop, a find ``items`` of them
(their first slots or buckets all read before any is looked at: more loads in flight per thread); launched
with a thread (group) per key (per ``items`` keys), every key is in flight at once. The probe sequence, the hash and the slot packing are
:mod:`.probing`'s, shared with the CPU twin. The kernels that change the table read it through L2
(:mod:`.device`), claim a slot with one 64-bit compare-and-swap of key and value together, and after a lost
race read the slot's new contents from the compare-and-swap itself. A probe that finds no room in the whole
table sets ``status[0]`` (the runner reports it); with a slot always left empty that needs tombstones.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy import uint32, uint64  # numpy's, not numba's: both compilers type them (docs/compilers.md)

from kernels.backend.compiler import cuda
from kernels.device_functions.callees import for_kernels

from kernels.hashtable.device import ballot, load_fresh, load_pair, load_pair_fresh
from kernels.hashtable import probing
from kernels.hashtable.probing import KEY_EMPTY32, KEY_ERASED32, ONE_VALUE, VALUE_ABSENT32

# The 64-bit operands of a compare-and-swap are written in the kernels as ~np.uint64(0) (SLOT_EMPTY64) and
# ~np.uint64(1) (SLOT_ERASED64): numba-cuda-mlir 0.6.0 fails (std::bad_cast) on a uint64 global above 2^63 there.
# probing's shared @numba.jit math as the kernels call it (numba-cuda-mlir needs them as its device functions)
bucket_of, filter_place, flag_place, key_of, next_bucket, pack, smaller_value, value_of = (
    for_kernels(f, takes_arrays=False)
    for f in (probing.bucket_of, probing.filter_place, probing.flag_place, probing.key_of, probing.next_bucket,
              probing.pack, probing.smaller_value, probing.value_of))


@functools.lru_cache(maxsize=None)
def fill_kernel():
    @cuda.jit
    def fill(slots, value):
        # empty (or reset) a table: value is SLOT_EMPTY (or 0 for overflow flags)
        for i in range(cuda.grid(1), slots.size, cuda.gridsize(1)):
            slots[i] = value

    return fill


@functools.lru_cache(maxsize=None)
def merge_function(add: bool):
    """What an insert does to a slot already holding its key: insert-or-add adds 1 to the value; insert
    keeps the smaller value (the key's first occurrence), by compare-and-swap until it holds."""

    @cuda.jit(device=True)
    def merge(slots, s, seen, key, value):
        if add:
            cuda.atomic.add(slots, s, ONE_VALUE)
        else:
            while True:
                wanted = smaller_value(seen, key, value)
                if wanted == seen:
                    break
                old = cuda.atomic.cas(slots, s, seen, wanted)
                if old == seen:
                    break
                seen = old

    return merge


@functools.lru_cache(maxsize=None)
def linear_kernels(op: str, items: int = 1):
    """The kernel of ``op`` for linear probing: one thread per key, a slot per probe; a find holds ``items``
    keys per thread in flight."""
    add = op == "insert-or-add"
    merge = merge_function(add)

    @cuda.jit
    def insert(keys, slots, nslots, status):
        for i in range(cuda.grid(1), keys.size, cuda.gridsize(1)):
            key = keys[i]
            value = np.uint32(1) if add else np.uint32(i)
            new = pack(key, value)
            home = bucket_of(key, 0, nslots)
            last = np.uint32(nslots - 1)
            done = False
            while not done:  # a slot lost at a tombstone means probing again from the start
                s = home
                tomb = np.uint32(0)
                tombstone = False
                restart = False
                probes = np.int64(0)
                while probes < nslots:
                    slot = load_fresh(slots, s)
                    k = key_of(slot)
                    if k == key:
                        merge(slots, s, slot, key, value)
                        done = True
                        break
                    if k == KEY_ERASED32:
                        if not tombstone:
                            tomb, tombstone = s, True
                    elif k == KEY_EMPTY32:
                        target = tomb if tombstone else s
                        expected = ~np.uint64(1) if tombstone else ~np.uint64(0)  # SLOT_ERASED64, SLOT_EMPTY64
                        old = cuda.atomic.cas(slots, target, expected, new)
                        if old == expected:
                            done = True
                            break
                        if key_of(old) == key:
                            merge(slots, target, old, key, value)
                            done = True
                            break
                        if tombstone:
                            restart = True
                            break
                        continue  # another key took this empty slot: read it again
                    probes += 1
                    s = np.uint32(s + np.uint32(1)) if s < last else np.uint32(0)
                if not done and not restart:
                    status[0] = 1  # no room left anywhere
                    done = True

    @cuda.jit(device=True)
    def finish_find(slots, key, s, slot, last):
        """The value of ``key``, whose probe starts at slot ``s`` holding ``slot``."""
        for _ in range(last + 1):
            k = key_of(slot)
            if k == key:
                return value_of(slot)
            if k == KEY_EMPTY32:
                break
            s = np.uint32(s + np.uint32(1)) if s < last else np.uint32(0)
            slot = slots[s]
        return VALUE_ABSENT32

    @cuda.jit
    def find(keys, slots, answers, nslots):
        # ``items`` keys per thread: all their first slots are read before any is looked at
        held_key = cuda.local.array(items, uint32)
        held_at = cuda.local.array(items, uint32)
        held_slot = cuda.local.array(items, uint64)
        last = np.uint32(nslots - 1)
        threads = cuda.gridsize(1)
        for start in range(cuda.grid(1), keys.size, threads * items):
            for j in range(items):
                i = start + j * threads
                if i < keys.size:
                    key = keys[i]
                    s = bucket_of(key, 0, nslots)
                    held_key[j], held_at[j], held_slot[j] = key, s, slots[s]
            for j in range(items):
                i = start + j * threads
                if i < keys.size:
                    answers[i] = finish_find(slots, held_key[j], held_at[j], held_slot[j], last)

    @cuda.jit
    def erase(keys, slots, nslots):
        for i in range(cuda.grid(1), keys.size, cuda.gridsize(1)):
            key = keys[i]
            s = bucket_of(key, 0, nslots)
            last = np.uint32(nslots - 1)
            for _ in range(nslots):
                slot = load_fresh(slots, s)
                k = key_of(slot)
                if k == key:
                    # lost only to another erase of the same key: it is gone either way
                    cuda.atomic.cas(slots, s, slot, ~np.uint64(1))  # SLOT_ERASED64
                    break
                if k == KEY_EMPTY32:
                    break
                s = np.uint32(s + np.uint32(1)) if s < last else np.uint32(0)

    return {"insert": insert, "insert-or-add": insert, "find": find, "erase": erase}[op]


@functools.lru_cache(maxsize=None)
def bucket_kernels(op: str, bucket: int, choices: int, items: int = 1, flagged: bool = False, filter_bits: int = 1):
    """The kernel of ``op`` for buckets of ``bucket`` slots probed by groups of bucket / 2 lanes, with
    ``choices`` hash functions; a find holds ``items`` keys per group in flight. ``flagged``: the table keeps
    overflow flags (layout.py) in ``flags``, two per bucket: an insert sets the flag of each full bucket it
    goes past for the step it was at there (its first, or a later one), a find or erase stops at a full
    bucket whose flag for its own step there is clear (else ``flags`` is not used); ``filter_bits`` > 1: the
    first step's flags are a filter of that many bits per bucket, by the key's fingerprint (layout.py).
    Launch whole warps: a group never spans two."""
    filtered = filter_bits > 1
    lanes = bucket // 2
    group_bits = np.uint32((1 << lanes) - 1)
    width = np.uint32(bucket)
    add = op == "insert-or-add"
    merge = merge_function(add)

    @cuda.jit(device=True)
    def group_of_lane():
        """(this lane's rank in its group, the group's mask, the group's first lane)."""
        lane = cuda.laneid
        rank = np.uint32(lane % lanes)
        base = np.uint32(lane - rank)
        return rank, np.uint32(group_bits << base), base

    @cuda.jit(device=True)
    def stops_here(flags, key, b, step, nbuckets):
        """Whether a find of ``key`` may stop at full bucket ``b``, reached at probe step ``step``: no key
        that came there at that step (with its fingerprint, where filtered) went past it (tables with flags)."""
        if not flagged:
            return False
        word, bit = filter_place(key, b, step, nbuckets, filter_bits) if filtered else flag_place(b, step, nbuckets)
        return (flags[word] & bit) == 0

    @cuda.jit
    def insert(keys, slots, flags, nbuckets, status):
        rank, mask, base = group_of_lane()
        for i in range(cuda.grid(1) // lanes, keys.size, cuda.gridsize(1) // lanes):
            key = keys[i]
            value = np.uint32(1) if add else np.uint32(i)
            new = pack(key, value)
            done = False
            while not done:  # a slot lost at a tombstone means probing again from the start
                b = bucket_of(key, 0, nbuckets)
                tomb_lane = -1  # the group's first tombstone: its lane, and that lane's slot
                my_tomb = np.uint32(0)
                restart = False
                probe = 0
                while True:
                    at = np.uint32(b * width + rank * np.uint32(2))
                    s0, s1 = load_pair_fresh(slots, at)
                    k0 = key_of(s0)
                    k1 = key_of(s1)
                    if ballot(mask, k0 == key or k1 == key) != 0:
                        if k0 == key:
                            merge(slots, at, s0, key, value)
                        elif k1 == key:
                            merge(slots, np.uint32(at + np.uint32(1)), s1, key, value)
                        done = True
                        break
                    if tomb_lane < 0:
                        tombs = np.uint32(ballot(mask, k0 == KEY_ERASED32 or k1 == KEY_ERASED32) >> base)
                        if tombs != 0:
                            tomb_lane = cuda.ffs(tombs) - 1
                            if rank == tomb_lane:
                                my_tomb = at if k0 == KEY_ERASED32 else np.uint32(at + np.uint32(1))
                    room = np.uint32(ballot(mask, k0 == KEY_EMPTY32 or k1 == KEY_EMPTY32) >> base)
                    if room != 0:
                        # a find stops in this bucket: the key goes to the first tombstone met, else here
                        owner = tomb_lane if tomb_lane >= 0 else cuda.ffs(room) - 1
                        settled = False
                        if rank == owner:
                            target = my_tomb if tomb_lane >= 0 else (at if k0 == KEY_EMPTY32 else np.uint32(at + np.uint32(1)))
                            expected = ~np.uint64(1) if tomb_lane >= 0 else ~np.uint64(0)  # SLOT_ERASED64, SLOT_EMPTY64
                            old = cuda.atomic.cas(slots, target, expected, new)
                            if old == expected:
                                settled = True
                            elif key_of(old) == key:
                                merge(slots, target, old, key, value)
                                settled = True
                        if ballot(mask, settled) != 0:
                            done = True
                        elif tomb_lane >= 0:
                            restart = True
                        else:
                            continue  # another key took the slot: read this bucket again
                        break
                    if flagged and rank == 0:  # a key goes past this full bucket at this step
                        word, bit = (filter_place(key, b, probe, nbuckets, filter_bits) if filtered
                                     else flag_place(b, probe, nbuckets))
                        cuda.atomic.or_(flags, word, bit)
                    probe += 1
                    if probe >= nbuckets + choices:
                        break
                    b = next_bucket(key, probe, b, choices, nbuckets)
                if not done and not restart:
                    if rank == 0:
                        status[0] = 1  # no room left anywhere
                    done = True

    # inlined by numba, unlike the project's other device functions (tests/test_lines_static.py says why they
    # are not): best's find of absent keys is 3.8% faster so (H100, docs/measurements.md), though its lines
    # then show on the kernel's ``def`` line
    @cuda.jit(device=True, inline="always")
    def finish_find(slots, flags, key, b, s0, s1, word, nbuckets, rank, mask):
        """(this lane holds ``key``, some lane of the group does, its value), probing from bucket ``b``
        whose pair of slots in this lane is (s0, s1) and whose first-step flag word (tables with flags) is
        ``word``, read with the bucket. Each bucket's flag word is read with the bucket, so a key absent
        from a full bucket needs no second round trip before the find knows whether to go on."""
        bit = (filter_place(key, b, 0, nbuckets, filter_bits) if filtered else flag_place(b, 0, nbuckets))[1]
        for probe in range(1, nbuckets + choices + 1):
            k0 = key_of(s0)
            k1 = key_of(s1)
            if ballot(mask, k0 == key or k1 == key) != 0:
                if k0 == key:
                    return True, True, value_of(s0)
                if k1 == key:
                    return True, True, value_of(s1)
                return False, True, VALUE_ABSENT32
            if ballot(mask, k0 == KEY_EMPTY32 or k1 == KEY_EMPTY32) != 0:
                break
            if flagged and (word & bit) == 0:  # no key that came here at this step went past
                break
            b = next_bucket(key, probe, b, choices, nbuckets)
            s0, s1 = load_pair(slots, np.uint32(b * width + rank * np.uint32(2)))
            if flagged:
                at_word, bit = (filter_place(key, b, probe, nbuckets, filter_bits) if filtered
                                else flag_place(b, probe, nbuckets))
                word = flags[at_word]
        return False, False, VALUE_ABSENT32

    @cuda.jit
    def find(keys, slots, flags, answers, nbuckets):
        # ``items`` keys per group: all their first buckets are read before any is looked at
        rank, mask, base = group_of_lane()
        held_key = cuda.local.array(items, uint32)
        held_bucket = cuda.local.array(items, uint32)
        held_0 = cuda.local.array(items, uint64)
        held_1 = cuda.local.array(items, uint64)
        held_word = cuda.local.array(items, uint32)
        groups = cuda.gridsize(1) // lanes
        for start in range(cuda.grid(1) // lanes, keys.size, groups * items):
            for j in range(items):
                i = start + j * groups
                if i < keys.size:
                    key = keys[i]
                    b = bucket_of(key, 0, nbuckets)
                    s0, s1 = load_pair(slots, np.uint32(b * width + rank * np.uint32(2)))
                    held_key[j], held_bucket[j], held_0[j], held_1[j] = key, b, s0, s1
                    if flagged:
                        held_word[j] = flags[(filter_place(key, b, 0, nbuckets, filter_bits) if filtered
                                              else flag_place(b, 0, nbuckets))[0]]
                    else:
                        held_word[j] = np.uint32(0)
            for j in range(items):
                i = start + j * groups
                if i < keys.size:
                    mine, found, value = finish_find(slots, flags, held_key[j], held_bucket[j], held_0[j],
                                                     held_1[j], held_word[j], nbuckets, rank, mask)
                    if mine:
                        answers[i] = value
                    elif not found and rank == 0:
                        answers[i] = VALUE_ABSENT32

    @cuda.jit
    def erase(keys, slots, flags, nbuckets):
        rank, mask, base = group_of_lane()
        for i in range(cuda.grid(1) // lanes, keys.size, cuda.gridsize(1) // lanes):
            key = keys[i]
            b = bucket_of(key, 0, nbuckets)
            for probe in range(1, nbuckets + choices + 1):
                at = np.uint32(b * width + rank * np.uint32(2))
                s0, s1 = load_pair_fresh(slots, at)
                k0 = key_of(s0)
                k1 = key_of(s1)
                if ballot(mask, k0 == key or k1 == key) != 0:
                    # lost only to another erase of the same key: it is gone either way
                    if k0 == key:
                        cuda.atomic.cas(slots, at, s0, ~np.uint64(1))  # SLOT_ERASED64
                    elif k1 == key:
                        cuda.atomic.cas(slots, np.uint32(at + np.uint32(1)), s1, ~np.uint64(1))  # SLOT_ERASED64
                    break
                if ballot(mask, k0 == KEY_EMPTY32 or k1 == KEY_EMPTY32) != 0 or stops_here(flags, key, b, probe - 1, nbuckets):
                    break
                b = next_bucket(key, probe, b, choices, nbuckets)

    return {"insert": insert, "insert-or-add": insert, "find": find, "erase": erase}[op]
