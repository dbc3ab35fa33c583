"""The hash tables' layouts, shared by the host checks and the kernels (plain numbers: no numba here).

The chained tables (seed 003): -1 ends a chain or marks an empty bucket.

The open-addressing tables: one uint64 slot per entry, the key in the low 32 bits and its value in the high
32, so that one 64-bit compare-and-swap claims a slot with its value. Two keys are reserved: KEY_EMPTY
marks a slot never used (the whole slot is all ones, so a table is emptied by writing 0xFF bytes) and
KEY_ERASED a slot whose key was erased (a tombstone: probing goes on past it, an insert may reuse it).
A find of an absent key answers VALUE_ABSENT. Slots are grouped into buckets of 1 (linear probing), 4, 8, 16
or 32 slots (the bucketed variants); every variant of a problem gets the same number of slots, a whole
number of the widest bucket.

Overflow flags (``best``): two per bucket, set by an insert that found the bucket full and went on, one
for the inserts that came there at the first step of their probe sequence (their first hash), one for those
that came at a later step (another hash, or walking on after the last). A find or erase stops at a full
bucket whose flag for the step it is at there is clear: no key that came there so went past it. A single
flag would also be set by keys that came at the other kind of step, which a find of an absent key then
follows for nothing (docs/measurements.md has the figures). The flags are one array of uint32 words in two
halves of a bit per bucket: the first step's (bucket b: bit b % 32 of word b // 32), then the later steps'
(bit b % 32 of word first_flag_words + b // 32). Every find reads a first-step word with its first bucket,
and each later bucket's word with that bucket; a table of 2^26 keys has about 2 MB of each half, which stay
in L2.

First-step filters (a knob of the candidates, ``filter_bits`` F of 2, 4 or 8): the first step's half holds F
bits per bucket instead of one (bucket b's are bits b x F .. b x F + F - 1 of the half, little-endian in its
words), and a key that goes past its first bucket sets only the one its fingerprint names (the low bits of
its first hash, murmur3's finaliser of the key, whose high bits chose the bucket). A find of an absent key
then goes on past its full first bucket only when a key with its fingerprint went past: with F bits and
one or two keys gone past, about 1 / F to 2 / F of the time. F = 1 is the layout above.
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
FLAG_STEPS = 2  # the overflow flags of a bucket: for the first probe step, and for the later ones
FILTER_BITS = (1, 2, 4, 8)  # first-step flags per bucket (1: one flag; more: a filter by fingerprint)
# best's layout beyond its tuned bucket width and block: first-step flags per bucket, and whether its inserts
# run in rounds (round_kernels.py); a change here is a new tuning key (open_gpu._tuning_key)
BEST_FILTER_BITS = 1
BEST_ROUNDS = False
ROUNDS_FILTER_BITS = 8  # bucketed-rounds' filter: an absent key's find reads 1.16 buckets at load 0.9, not 1.72
FILTER_VARIANT_BITS = 8  # bucketed-filter's: 1.17 buckets per absent find at load 0.9 (best: 1.81), 1.51 at 0.95
# murmur3's fmix32 constants
MIX_1, MIX_2 = 0x85EBCA6B, 0xC2B2AE35


def first_flag_words(nbuckets: int, filter_bits: int = 1) -> int:
    """uint32 words of the first step's half of a table's overflow flags (``filter_bits`` per bucket), and of
    the later steps' half (one per bucket)."""
    return -(-nbuckets * filter_bits // 32)


def flag_words(nbuckets: int, filter_bits: int = 1) -> int:
    """uint32 words of a table's overflow flags: the first step's, then the later steps'."""
    return first_flag_words(nbuckets, filter_bits) + first_flag_words(nbuckets)


def capacity_for(distinct: int, load: float) -> int:
    """Slots of a table holding ``distinct`` keys at load factor ``load``: ceil(distinct / load), rounded up
    to a whole number of the widest bucket (32 slots), at least one bucket. Every variant of a problem gets
    this many, so the achieved load is the same for all, at most 31 slots below the one asked for; at least
    one slot stays empty, so that every probe ends."""
    slots = -(-distinct * 10**9 // max(1, round(load * 10**9)))  # exact for loads given as decimals
    slots = max(slots, distinct + 1)  # at least one slot stays empty: every probe ends
    return -(-slots // WIDEST_BUCKET) * WIDEST_BUCKET
