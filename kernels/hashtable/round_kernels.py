"""The insert of ``rounds``: best's table (buckets probed by groups of lanes, several hash functions,
overflow flags) built in rounds, one launch per probe step, so that every key tries its first bucket before
any key takes a slot in a bucket as its second choice (and so on per step); then one launch walks on for the
keys left after their last hash.

Why: an insert into the first bucket with room, all keys at once, lets a key that came at its second or
later hash fill a bucket that keys of the first hash then find full. In rounds a bucket's slots go first to
the keys whose first bucket it is, so the share of keys in their first bucket reaches its bound (a find of
one of them reads one bucket), and fewer buckets overflow at the first step (an absent key's find stops
after one more often). The table, its flags (with their first-step filters, layout.py) and the find are
:mod:`.open_kernels`' own: a key placed at step s went past full buckets at steps 0..s-1, which stay full.

``state[i]`` (uint8) is the step key i tries next, DONE once placed: the launch of step 0 writes it for every
key, each later one reads it. The rounds assume a table without tombstones (every insert of the lab starts
from an empty one): a key that meets an erased slot sets ``status[0] = 2`` (the greedy insert of
:mod:`.open_kernels` handles those), as a table with no room sets 1.
"""

from __future__ import annotations

import functools

import numpy as np

from kernels.backend.compiler import cuda
from kernels.hashtable.device import ballot, load_pair_fresh
from kernels.hashtable.open_kernels import bucket_of, filter_place, key_of, merge_function, next_bucket, pack
from kernels.hashtable.probing import KEY_EMPTY32, KEY_ERASED32

DONE = 255  # a key's state once it is in the table (steps are below: at most 4 hashes, then the walk)
MET_TOMBSTONE = 2  # status[0]: the rounds met an erased slot


@functools.lru_cache(maxsize=None)
def round_kernel(op: str, bucket: int, choices: int, filter_bits: int = 1):
    """The launch of one step of the rounds insert (``op`` insert or insert-or-add) for buckets of
    ``bucket`` slots and ``choices`` hashes: step s < choices tries each waiting key's bucket under hash s
    once; step ``choices`` walks on from the last hash's bucket to the first with room; ``filter_bits``
    first-step flags per bucket (layout.py). Whole warps."""
    lanes = bucket // 2
    group_bits = np.uint32((1 << lanes) - 1)
    width = np.uint32(bucket)
    add = op == "insert-or-add"
    merge = merge_function(add)
    done = np.uint8(DONE)

    @cuda.jit
    def place(keys, slots, flags, state, nbuckets, step, status):
        lane = cuda.laneid
        rank = np.uint32(lane % lanes)
        base = np.uint32(lane - rank)
        mask = np.uint32(group_bits << base)
        walking = step >= choices
        for i in range(cuda.grid(1) // lanes, keys.size, cuda.gridsize(1) // lanes):
            if step > 0 and state[i] != step:  # the same i for the whole group: it skips together
                continue
            key = keys[i]
            value = np.uint32(1) if add else np.uint32(i)
            new = pack(key, value)
            probe = step
            b = bucket_of(key, choices - 1 if walking else step, nbuckets)
            if walking:
                b = next_bucket(key, probe, b, choices, nbuckets)
            outcome = done
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
                    break
                if ballot(mask, k0 == KEY_ERASED32 or k1 == KEY_ERASED32) != 0:
                    if rank == 0:
                        status[0] = 2  # MET_TOMBSTONE: rounds build tables without erased slots
                    break
                room = np.uint32(ballot(mask, k0 == KEY_EMPTY32 or k1 == KEY_EMPTY32) >> base)
                if room != 0:
                    owner = cuda.ffs(room) - 1
                    settled = False
                    if rank == owner:
                        target = at if k0 == KEY_EMPTY32 else np.uint32(at + np.uint32(1))
                        old = cuda.atomic.cas(slots, target, ~np.uint64(0), new)  # SLOT_EMPTY64
                        if old == ~np.uint64(0):
                            settled = True
                        elif key_of(old) == key:
                            merge(slots, target, old, key, value)
                            settled = True
                    if ballot(mask, settled) != 0:
                        break
                    continue  # another key took the slot: read this bucket again
                if rank == 0:  # the key goes past this full bucket at this step
                    word, bit = filter_place(key, b, probe, nbuckets, filter_bits)
                    cuda.atomic.or_(flags, word, bit)
                if not walking:
                    outcome = np.uint8(step + 1)
                    break
                probe += 1
                if probe >= nbuckets + choices:
                    if rank == 0:
                        status[0] = 1  # no room left anywhere
                    break
                b = next_bucket(key, probe, b, choices, nbuckets)
            if rank == 0:
                state[i] = outcome

    return place
