"""The hash tables' layouts, shared by the host checks and the kernels (plain numbers: no numba here).

The chained tables (seed 003): -1 ends a chain or marks an empty bucket.

The open-addressing tables: one uint64 slot per entry, the key in the low 32 bits and its value in the high
32, so that one 64-bit compare-and-swap claims a slot with its value. Two keys are reserved: KEY_EMPTY
marks a slot never used (the whole slot is all ones, so a table is emptied by writing 0xFF bytes) and
KEY_ERASED a slot whose key was erased (a tombstone: probing goes on past it, an insert may reuse it).
A find of an absent key answers VALUE_ABSENT. Slots are grouped into buckets of 1 (linear probing), 4, 8, 16
or 32 slots (the bucketed variants); every variant of a problem gets the same number of slots, a whole
number of the widest bucket.

Overflow flags (``best``): one bit per bucket, set when an insert found the bucket full and went on to the
next of its probe sequence; a find or erase stops at a full bucket whose bit is clear, since no key ever went
past it. The bits (a 1/8 of a byte per bucket: a table of 2^26 keys has about a megabyte of them) stay in L2.
"""

EMPTY = -1  # chained tables: the end of a chain, or an empty bucket

KEY_EMPTY = 0xFFFFFFFF
KEY_ERASED = 0xFFFFFFFE
MAX_KEY = 0xFFFFFFFD  # the largest key a table can hold
SLOT_EMPTY = 0xFFFFFFFFFFFFFFFF  # key KEY_EMPTY, value all ones
SLOT_ERASED = 0xFFFFFFFFFFFFFFFE  # key KEY_ERASED, value all ones
VALUE_ABSENT = 0xFFFFFFFF  # what a find answers for a key that is not in the table
VALUE_SHIFT = 32

BUCKET_WIDTHS = (4, 8, 16, 32)  # slots per bucket of the bucketed variants: 32 to 256 bytes
WIDEST_BUCKET = max(BUCKET_WIDTHS)
MAX_SLOTS = 2**31  # slot and bucket indices stay below 2^31; the bucket of a hash is (hash x buckets) >> 32

# hash function j of a table (j = 0, 1, ...): murmur3's 32-bit finaliser of the key xor j x HASH_STEP
HASH_STEP = 0x9E3779B9
BEST_CHOICES = 4  # best's hash functions: four buckets to try before walking on (with its overflow flags)
# murmur3's fmix32 constants
MIX_1, MIX_2 = 0x85EBCA6B, 0xC2B2AE35


def capacity_for(distinct: int, load: float) -> int:
    """Slots of a table holding ``distinct`` keys at load factor ``load``: ceil(distinct / load), rounded up
    to a whole number of the widest bucket (32 slots), at least one bucket. Every variant of a problem gets
    this many, so the achieved load is the same for all, at most 31 slots below the one asked for; at least
    one slot stays empty, so that every probe ends."""
    slots = -(-distinct * 10**9 // max(1, round(load * 10**9)))  # exact for loads given as decimals
    slots = max(slots, distinct + 1)  # at least one slot stays empty: every probe ends
    return -(-slots // WIDEST_BUCKET) * WIDEST_BUCKET
