"""The hash-table lesson, "From locks to open addressing": inserting the same keys into the seed's chained table
with a spin lock per bucket (seed 003, *CUDA by Example*'s appendix), without locks, then into open-addressing
tables at load factor 0.9: linear probing, buckets probed by groups of lanes, two hash functions, and best."""

from __future__ import annotations

from kernels.lessons.lesson import Lesson, Step

_LOCKS, _LOCK_FREE, _LINEAR = 0, 1, 2

HASH_TABLES = Lesson(
    name="hash-tables", title="From locks to open addressing",
    target="hashtable",
    summary="inserting keys into a hash table on a GPU: the seed's chains behind a spin lock per bucket, the same "
            "chains without locks, then open addressing at load 0.9, where a key and its value are claimed by one "
            "64-bit compare-and-swap and a group of lanes reads a whole bucket at once",
    options={"op": "insert", "load": 0.9, "buckets": 1024},
    sizes=(1 << 24,), sim_size=256,
    source="Sanders and Kandrot, CUDA by Example, appendix (seed 003); Awad et al., \"Better GPU Hash Tables\" "
           "(BGHT); NVIDIA cuCollections",
    evidence=("registers", "occupancy", "instructions", "global load", "global atomic", "branch"),
    steps=(
        Step("gpu-locks", "1 a spin lock per bucket (the seed)",
             "Each key takes its bucket's lock with a compare-and-swap, links its entry, and releases the lock; the "
             "lanes of a warp take turns. Prediction: slow, since 1024 buckets for millions of keys means every "
             "lock is fought over and a warp waits for each of its lanes in turn.", label="locks"),
        Step("gpu-lockfree", "2 no locks: a compare-and-swap on the chain's head",
             "An entry is published by one compare-and-swap of its bucket's head, retried when another thread won. "
             "Prediction: a few times faster: no lock to take and release, and no lane waits for another of its "
             "warp; still one contended atomic per key on 1024 heads.", baseline=_LOCKS, label="lock-free chain"),
        Step("linear-probing", "3 open addressing: linear probing",
             "No chains: the key and its value live in one 8-byte slot of a table sized for load 0.9, claimed by one "
             "64-bit compare-and-swap; a taken slot sends the key on to the next. Prediction: much faster than the "
             "chains (atomics spread over millions of slots, no links to write), but each probe is a random 32-byte "
             "sector, and at load 0.9 a key probes about five slots.", baseline=_LOCK_FREE, label="linear probing"),
        Step("bucketed", "4 buckets probed by a group of lanes",
             "Slots come in buckets of 8; four lanes read a bucket with one 16-byte load each (one coalesced request) "
             "and agree by ballots where the key goes. Prediction: faster at high load, since one request sees eight "
             "slots where linear probing walks them one by one.", baseline=_LINEAR, label="bucketed"),
        Step("two-choice", "5 two hash functions",
             "A key whose first bucket is full tries a second, independent one before walking on: far fewer long "
             "walks at load 0.9. Prediction: a little faster for inserts, and (not timed here) much faster for "
             "finds of absent keys, which stop at the first bucket with room.", label="two-choice"),
        Step("best", "6 best: four hashes, overflow flags, tuned",
             "Four hash functions instead of two, overflow bits per bucket set when a key goes past it, one for "
             "keys that came with their first hash and one for the rest (so a lookup stops at a full bucket no "
             "key went past at its kind of step), and the bucket width (4 to 32 slots) and block "
             "chosen by a short sweep on this GPU. Prediction: the fastest insert, since fewer keys walk on past "
             "their buckets and a narrower bucket moves fewer bytes per probe.", label="best"),
    ),
)
