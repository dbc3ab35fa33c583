"""A hash-table problem: one batch of an operation (insert, find, erase, insert-or-add) of uint32 keys with
uint32 values, the table it starts from, and the independent checks of what a variant produced.

Values: the value of the key at position i of a batch of inserts is i. With repeated keys in one batch of
inserts, the smallest value wins, i.e. the key's first occurrence, as ``dict.setdefault`` in input order
keeps it (a later insert of a key already there changes nothing). insert-or-add counts: the value of each
key is the number of times it occurs in the batch. A find answers the key's value, or VALUE_ABSENT; an
erase leaves a tombstone, so an erased key is absent and may be inserted again.

The chained tables (seed 003) are checked by walking them (every key found once, in its own bucket, no
broken links); the grouped (CSR) tables of the sort peers by their segments; the open-addressing tables by
decoding every slot: each expected key once, with its value, nothing else, and each where a find looks for
it (the probe sequence of layout.py, recomputed by :mod:`.checks`, not the kernels' code); a find by its
answers.
"""

from __future__ import annotations

import numpy as np

from kernels.errors import InputError
from kernels.hashtable import keys as keygen
from kernels.hashtable.layout import (FLAG_STEPS, KEY_EMPTY, KEY_ERASED, MAX_SLOTS, MIX_1, MIX_2, VALUE_ABSENT,
                                      BUCKET_WIDTHS, capacity_for, first_flag_words)
from kernels.timing import Timing

SEED_KEYS = 100 * 2**20 // 4  # the seed hashes 100 MiB of random unsigned ints: 26,214,400 keys
SEED_BUCKETS = 1024  # the seed's HASH_ENTRIES
OPS = ("insert", "find", "erase", "insert-or-add")
DEFAULT_LOAD = 0.5
DEFAULT_BUCKET = 8
SECTOR_BYTES = 32  # no lookup of a table in DRAM moves less than one 32-byte sector


class HashProblem:
    """One batch of ``op`` over the uint32 ``keys`` (the inserted keys, or the keys looked up or erased),
    starting from a table holding ``table_keys`` (find and erase; value j for the key at position j) in
    ``capacity`` slots. ``buckets``: the chains of the chained tables and the grouped table."""

    algorithm = "hashtable"
    dtype = "uint32"

    def __init__(self, keys: np.ndarray, buckets: int = SEED_BUCKETS, *, op: str = "insert",
                 load: float = DEFAULT_LOAD, absent: float = 0.0, multiplicity: float = 1.0,
                 bucket: int = DEFAULT_BUCKET, table_keys: np.ndarray | None = None, capacity: int | None = None,
                 numbering=None):
        if op not in OPS:
            raise InputError(f"--op {op!r} is not one of {', '.join(OPS)}")
        self.op, self.load, self.absent, self.multiplicity, self.bucket = op, load, absent, multiplicity, bucket
        self.keys = _key_array(keys, "key")
        self.table_keys = _key_array(table_keys, "table key") if table_keys is not None else np.zeros(0, np.uint32)
        if op in ("find", "erase") and table_keys is None:
            raise InputError(f"{op} needs the keys of the table it starts from")
        self.buckets = buckets
        self.n = int(self.keys.size)
        # numbers of keys: t for generated keys (kernels.hashtable.keys), else ranks among the distinct keys
        self._numbering = numbering or _Ranks(np.concatenate([self.keys, self.table_keys]))
        stored = self.table_keys if op in ("find", "erase") else self.keys
        self.distinct = self._numbering.distinct(stored)
        self.capacity = capacity if capacity is not None else capacity_for(self.distinct, load)
        if self.capacity > MAX_SLOTS:
            raise InputError(f"--load {load} with {self.distinct:,} keys needs {self.capacity:,} slots; a table has at "
                             f"most {MAX_SLOTS:,}")
        # GB/s counts the least traffic of the batch: its keys, one 32-byte sector of the table per key (no
        # lookup moves less) and, for a find, the answers
        self.bytes_read = self.n * (4 + SECTOR_BYTES + (4 if op == "find" else 0))
        self.last_check = (0, 0, 0)  # chained: (found, misplaced, bad links or keys) of the last table checked
        self.last_table = None  # (pool_keys, heads, pool_next) of the last chained table checked
        self.last_grouped = None  # (sorted_keys, offsets) of the last grouped table checked
        self.last_slots = None  # the last open-addressing table checked (host uint64 slots)
        self.last_answers = None  # the last find's answers checked (host)
        self.last_flags = None  # the overflow flags of the last open table checked, where it had them
        self._verdict = None  # (ok, note) of the last check other than check_table / check_grouped
        self._device = {}
        self._sorted_keys = None  # the input keys sorted as int64, for check_grouped (made once)
        self._reference = None

    # --- what the harness reads ---------------------------------------------------------------------------

    @property
    def expected(self) -> int:
        """Entries a correct table holds after the batch (insert, erase, insert-or-add), or answers a find
        gets right (all of them)."""
        if self.op == "find":
            return self.n
        return int(np.count_nonzero(self.reference() >= 0))

    @property
    def axes(self) -> dict:
        """The values beyond n that identify a row of this problem."""
        axes = {"op": self.op, "load": self.load}
        if self.op in ("find", "erase"):
            axes["absent"] = self.absent
        else:
            axes["multiplicity"] = self.multiplicity
        axes.update(bucket=self.bucket, buckets=self.buckets)
        return axes

    def describe(self) -> str:
        """The op and the table in words, for a row's note."""
        what = self.op + (f", {self.absent:.0%} absent" if self.op in ("find", "erase") else "")
        return f"{what}; {self.distinct:,} keys in {self.capacity:,} slots (load {self.distinct / self.capacity:.3f})"

    # --- device copies (made once, outside the timing) -------------------------------------------------------

    def device_keys(self):
        """The batch's keys on the GPU."""
        return self._to_device("keys", self.keys)

    def device_table_keys(self):
        """The keys of the table a find or an erase starts from, on the GPU."""
        return self._to_device("table_keys", self.table_keys)

    def _to_device(self, name, host):
        if name not in self._device:
            from kernels.backend import memory

            self._device[name] = memory.to_device(host)
        return self._device[name]

    # --- the reference ------------------------------------------------------------------------------------

    def reference(self) -> np.ndarray:
        """By key number: the value a correct result holds, -1 where the key must not be there (built once,
        from the keys alone). For find, the answer for each key number of the table's keys."""
        if self._reference is None:
            self._reference = self._build_reference()
        return self._reference

    def _build_reference(self) -> np.ndarray:
        size = self._numbering.size
        ref = np.full(size, -1, np.int64)
        if self.op in ("insert", "insert-or-add"):
            t = self._numbering.numbers(self.keys)
            if self.op == "insert-or-add":
                counts = np.bincount(t, minlength=size)
                ref[counts > 0] = counts[counts > 0]
            else:
                _first_positions(ref, t)
        else:
            _first_positions(ref, self._numbering.numbers(self.table_keys))
            if self.op == "erase":
                ref[self._numbering.numbers(self.keys)] = -1
        return ref

    def expected_answers(self) -> np.ndarray:
        """What a find answers for each key of the batch (uint32)."""
        if self.op != "find":
            raise ValueError("only a find has answers")
        values = self.reference()[self._numbering.numbers(self.keys)]
        return np.where(values >= 0, values, VALUE_ABSENT).astype(np.uint32)

    # --- checks of a result (host arrays) --------------------------------------------------------------

    def check_found(self, answers) -> int:
        """Checks a find's answers against the reference; returns how many are right."""
        answers = np.asarray(answers).ravel()
        self.last_answers = answers
        want = self.expected_answers()
        if answers.size != want.size:
            self._verdict = (False, f"{answers.size} answers for {want.size} keys")
            return 0
        got = answers.astype(np.int64) & 0xFFFFFFFF  # torch answers in int64
        wrong = got != want
        absent = want == VALUE_ABSENT
        problems = []
        missed = int(np.count_nonzero(wrong & ~absent & (got == VALUE_ABSENT)))
        if missed:
            problems.append(f"{missed} present keys not found")
        invented = int(np.count_nonzero(wrong & absent))
        if invented:
            problems.append(f"{invented} absent keys found")
        bad_values = int(np.count_nonzero(wrong & ~absent & (got != VALUE_ABSENT)))
        if bad_values:
            problems.append(f"{bad_values} wrong values")
        self._verdict = (not problems, "; ".join(problems))
        return int(np.count_nonzero(~wrong))

    def check_open(self, slots, bucket: int, choices: int, flags=None, filter_bits: int = 1) -> int:
        """Checks an open-addressing table (host uint64 slots) built with buckets of ``bucket`` slots and
        ``choices`` hash functions (and ``flags``, its overflow flags, when it has them): every expected key
        once with its value, nothing else, each where a find looks for it (``filter_bits`` first-step flags per
        bucket, layout.py). Returns the entries that are right."""
        slots = np.asarray(slots, np.uint64).ravel()
        self.last_slots, self.last_flags = slots, flags
        if slots.size != self.capacity or slots.size % bucket:
            self._verdict = (False, f"a table of {slots.size} slots, expected {self.capacity}")
            return 0
        keys = (slots & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        used = np.flatnonzero(keys < KEY_ERASED)
        values = (slots[used] >> np.uint64(32)).astype(np.int64)
        at = used // bucket
        missed = None if filter_bits == 1 or flags is None else \
            filter_misses(keys[used], at, flags, slots.size // bucket, filter_bits)
        return self._check_entries(keys[used], values, at, stopping_buckets(keys, bucket, flags, filter_bits),
                                   choices, missed)

    def check_pairs(self, keys, values) -> int:
        """Checks the (key, value) pairs a table holds (a library's table, read out in any order): every
        expected key once with its value, nothing else. Returns the entries that are right."""
        keys = np.asarray(keys).ravel()
        if keys.size and (keys.dtype.kind not in "iu" or keys.min() < 0 or keys.max() >= KEY_ERASED):
            self._verdict = (False, "reserved or out-of-range keys read out of the table")
            return 0
        return self._check_entries(keys.astype(np.uint32), np.asarray(values).ravel().astype(np.int64))

    def _check_entries(self, stored, values, at=None, full=None, choices=0, missed=None) -> int:
        from kernels.hashtable.checks import FOREIGN, STRAY, UNREACHABLE, WRONG_VALUE

        ref = self.reference()
        t = self._numbering.numbers(stored, missing=-1)
        codes = _codes(stored, values, t, ref, at, full, choices)
        if missed is not None:  # past its first bucket, whose filter does not name its fingerprint
            codes[missed] |= UNREACHABLE
        twice = np.bincount(t[t >= 0], minlength=ref.size)
        duplicated = int(np.count_nonzero(twice > 1))
        missing = int(np.count_nonzero((ref >= 0) & (twice == 0)))
        count = lambda bit: int(np.count_nonzero(codes & bit))  # noqa: E731
        problems = []
        if missing:
            problems.append(f"{missing} keys lost")
        if duplicated:
            problems.append(f"{duplicated} keys stored more than once")
        if count(WRONG_VALUE):
            problems.append(f"{count(WRONG_VALUE)} wrong values")
        if count(STRAY):
            problems.append(f"{count(STRAY)} keys that should be absent" + (" (erased)" if self.op == "erase" else ""))
        if count(FOREIGN):
            problems.append(f"{count(FOREIGN)} keys never given")
        if count(UNREACHABLE):
            problems.append(f"{count(UNREACHABLE)} keys where a find cannot reach them")
        self._verdict = (not problems, "; ".join(problems))
        return int(np.count_nonzero(codes == 0)) - duplicated

    def check_table(self, pool_keys, heads, pool_next) -> int:
        """Walks a finished chained table; returns the entries found in the right bucket and remembers the rest."""
        self._verdict = None
        self.last_table = (pool_keys, heads, pool_next)
        found, misplaced, bad_links = _walk(pool_keys, heads, pool_next, self.buckets)
        # an entry whose stored key is not the key it was given is as lost as a missing one
        wrong_keys = int(np.count_nonzero(np.asarray(pool_keys) != self.keys))
        self.last_check = (found, misplaced, bad_links + wrong_keys)
        return found - misplaced

    def check_grouped(self, sorted_keys, offsets) -> int:
        """Checks a static table grouped by bucket (CSR: bucket b's keys are ``sorted_keys[offsets[b]:
        offsets[b + 1]]``), as the library peers build it; sets ``last_check`` as :meth:`check_table` does
        and returns the entries found in the right bucket. Host copies, numpy only."""
        self._verdict = None
        self.last_grouped = (sorted_keys, offsets)
        keys = np.asarray(sorted_keys).ravel().astype(np.int64, copy=False)
        offsets = np.asarray(offsets).ravel().astype(np.int64, copy=False)
        # bad offsets: each one off a non-decreasing 0..n CSR, plus each one missing or extra
        bad = abs(offsets.size - (self.buckets + 1))
        if offsets.size:
            wrong = (offsets < 0) | (offsets > self.n)
            wrong[0] |= offsets[0] != 0
            wrong[1:] |= offsets[1:] < offsets[:-1]
            wrong[-1] |= offsets[-1] != self.n
            bad += int(np.count_nonzero(wrong))
        found, misplaced = _grouped_placement(keys, offsets, self.buckets)
        # keys lost, duplicated or altered: positions where the sorted keys differ from the sorted input
        if self._sorted_keys is None:
            self._sorted_keys = np.sort(self.keys.astype(np.int64))
        got, want = np.sort(keys), self._sorted_keys
        common = min(got.size, want.size)
        bad += int(np.count_nonzero(got[:common] != want[:common])) + abs(got.size - want.size)
        self.last_check = (found, misplaced, bad)
        return found - misplaced

    def verify(self, result) -> tuple[bool, str]:
        if self._verdict is not None:
            ok, note = self._verdict
            if ok and result != self.expected:
                return False, f"{result} of {self.expected} right"
            return ok, note
        found, misplaced, bad = self.last_check
        problems = []
        if found < self.n:
            problems.append(f"{self.n - found} entries lost")
        if misplaced:
            problems.append(f"{misplaced} entries in the wrong bucket")
        if bad:
            problems.append(f"{bad} corrupt links or keys")
        if result != self.n and not problems:
            problems.append(f"{result} of {self.n} entries found in the right bucket")
        return (not problems), "; ".join(problems)


# --- building problems ------------------------------------------------------------------------------------


def make_problem(n_keys: int, buckets: int = SEED_BUCKETS, seed: int = 0, *, op: str = "insert",
                 load: float = DEFAULT_LOAD, absent: float = 0.0, multiplicity: float = 1.0,
                 bucket: int = DEFAULT_BUCKET) -> HashProblem:
    """A batch of ``n_keys`` seeded keys for ``op``. insert, insert-or-add: n keys, distinct when
    ``multiplicity`` is 1, else drawn (with repeats) from n / multiplicity distinct ones. find, erase: a
    table of n distinct keys, and n keys to look up or erase, a fraction ``absent`` of them not in the
    table, the others each key of the table at most once, all in a random order. The table has
    ``capacity_for(distinct keys, load)`` slots."""
    if isinstance(n_keys, bool) or not isinstance(n_keys, (int, np.integer)) or n_keys < 1:
        raise InputError(f"number of keys {n_keys!r} must be a whole number, at least 1")
    if n_keys > 2**31 - 1:
        raise InputError(f"number of keys {n_keys} is too large: entry links are int32, at most {2**31 - 1}")
    if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)) or buckets < 1:
        raise InputError(f"number of buckets {buckets!r} must be a whole number, at least 1")
    check_load(load)
    check_fraction(absent, "--absent")
    if not (isinstance(multiplicity, (int, float, np.number)) and 1 <= multiplicity <= n_keys):
        raise InputError(f"--multiplicity {multiplicity!r} must be a number from 1 to the number of keys")
    if bucket not in BUCKET_WIDTHS:
        raise InputError(f"--bucket {bucket!r} is not one of {', '.join(map(str, BUCKET_WIDTHS))}")
    n = int(n_keys)
    rng = np.random.default_rng([0xB0C, int(seed)])
    numbering = _Generated(seed, 2 * n if op in ("find", "erase") else n)
    table_keys = None
    if op in ("find", "erase"):
        table_keys = keygen.key_of_index(np.arange(n), seed)
        gone = round(absent * n)
        t = np.concatenate([_shuffled(n, rng)[:n - gone], n + _shuffled(n, rng)[:gone]])
        t = t[_shuffled(n, rng)]
    elif multiplicity == 1:
        t = np.arange(n)
    else:
        pool = max(1, round(n / multiplicity))
        numbering = _Generated(seed, pool)
        t = rng.integers(0, pool, n)
    return HashProblem(keygen.key_of_index(t, seed), int(buckets), op=op, load=load, absent=absent,
                       multiplicity=multiplicity, bucket=bucket, table_keys=table_keys, numbering=numbering)


def _first_positions(ref: np.ndarray, t: np.ndarray) -> None:
    """ref[t[i]] = the smallest i with that number (ref holds -1 elsewhere)."""
    if np.array_equal(t, np.arange(t.size)):  # the generated keys 0..n-1 in order: each once, at its number
        ref[:t.size] = t
    else:
        np.minimum.at(ref.view(np.uint64), t, np.arange(t.size, dtype=np.uint64))  # -1 is the largest


def _shuffled(m: int, rng) -> np.ndarray:
    """0..m-1 in a seeded order: (a t + b) mod m with a prime to m. Not a uniformly random permutation, but
    the keys it numbers are scrambled by the key bijection anyway, and it costs one vectorised pass where
    rng.permutation shuffles element by element."""
    import math

    a = int(rng.integers(1, max(2, m)))
    while math.gcd(a, m) != 1:
        a = int(rng.integers(1, max(2, m)))
    return (np.arange(m, dtype=np.int64) * a + int(rng.integers(0, m))) % m


def check_load(load) -> float:
    if not isinstance(load, (int, float, np.number)) or isinstance(load, bool) or not 0 < load < 1:
        raise InputError(f"--load {load!r} is outside (0, 1): the fraction of the table's slots the keys fill")
    return float(load)


def check_fraction(value, option: str) -> float:
    if not isinstance(value, (int, float, np.number)) or isinstance(value, bool) or not 0 <= value <= 1:
        raise InputError(f"{option} {value!r} must be a fraction from 0 to 1")
    return float(value)


def _key_array(keys, what: str) -> np.ndarray:
    keys = np.asarray(keys)
    if keys.ndim != 1 or (keys.size and (keys.dtype.kind not in "iu" or keys.min() < 0 or keys.max() > KEY_EMPTY)):
        raise InputError(f"{what}s must be a 1-D array of uint32")
    keys = keys.astype(np.uint32, copy=False)
    reserved = np.flatnonzero(keys >= KEY_ERASED)
    if reserved.size:
        raise InputError(f"{what} {int(keys[reserved[0]])} at position {int(reserved[0])} is reserved: "
                         f"{KEY_EMPTY} marks an empty slot and {KEY_ERASED} an erased one")
    return keys


class _Generated:
    """Key numbers of generated keys: t = index_of_key(key), known when t < size."""

    def __init__(self, seed: int, size: int):
        self.seed, self.size = seed, size

    def numbers(self, keys, missing=None) -> np.ndarray:
        t = keygen.index_of_key(keys, self.seed)
        if missing is not None:
            t[t >= self.size] = missing
        return t

    def distinct(self, keys) -> int:
        t = self.numbers(keys)
        return int(np.count_nonzero(np.bincount(t, minlength=self.size))) if t.size else 0


class _Ranks:
    """Key numbers of any keys: their rank among the distinct keys of the problem."""

    def __init__(self, all_keys: np.ndarray):
        self.universe = np.unique(all_keys)
        self.size = int(self.universe.size)

    def numbers(self, keys, missing=None) -> np.ndarray:
        keys = np.asarray(keys, np.uint32)
        t = np.searchsorted(self.universe, keys).astype(np.int64)
        if missing is not None:
            inside = t < self.size
            t[~inside] = missing
            t[inside & (self.universe[np.minimum(t, self.size - 1)] != keys)] = missing
        return t

    def distinct(self, keys) -> int:
        return int(np.unique(keys).size)


# --- the probe sequence (the check's own, kernels.hashtable.checks; the kernels' is kernels.hashtable.probing)


def unreachable_keys(slots, bucket: int, choices: int, flags=None, filter_bits: int = 1) -> int:
    """How many keys of the open-addressing table ``slots`` a find cannot reach where they are (``filter_bits``
    first-step flags per bucket, layout.py)."""
    from kernels.hashtable.checks import UNREACHABLE

    keys = (np.asarray(slots, np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    used = np.flatnonzero(keys < KEY_ERASED)
    codes = _codes(keys[used], np.zeros(used.size, np.int64), np.zeros(used.size, np.int64), np.zeros(1, np.int64),
                   used // bucket, stopping_buckets(keys, bucket, flags, filter_bits), choices)
    if filter_bits > 1 and flags is not None:
        codes[filter_misses(keys[used], used // bucket, flags, keys.size // bucket, filter_bits)] |= UNREACHABLE
    return int(np.count_nonzero(codes & UNREACHABLE))


def stopping_buckets(keys: np.ndarray, bucket: int, flags=None, filter_bits: int = 1) -> np.ndarray:
    """For each bucket of a table (its slots' keys, uint32), whether a find may go on past it at the first
    step of its probe sequence (column 0) and at a later one (column 1): no empty slot in it (a tombstone
    does not stop a find) and, with overflow ``flags`` (uint32 words: the first step's, a bit per bucket,
    then the later steps'; layout.py), its flag for that step set; with ``filter_bits`` first-step flags
    per bucket, any of them (which one a key needs, :func:`filter_misses` checks)."""
    nbuckets = keys.size // bucket
    full = ~(keys.reshape(nbuckets, bucket) == KEY_EMPTY).any(axis=1)
    going = np.repeat(full[:, None], FLAG_STEPS, axis=1)
    if flags is not None:
        words = np.asarray(flags, np.uint32)
        first = first_flag_words(nbuckets, filter_bits)
        # bit i of a half's little-endian words is flag i: bucket b's first-step flags are b x F .. b x F + F - 1
        bits = np.unpackbits(words[:first].view(np.uint8), bitorder="little")[:nbuckets * filter_bits]
        going[:, 0] &= bits.reshape(nbuckets, filter_bits).any(axis=1)
        later = np.unpackbits(words[first:first + first_flag_words(nbuckets)].view(np.uint8), bitorder="little")
        going[:, 1] &= later[:nbuckets].astype(bool)
    return going


def filter_misses(stored, at, flags, nbuckets: int, filter_bits: int) -> np.ndarray:
    """Which stored keys lie past their first bucket (``at``: their bucket) while that bucket's first-step
    filter lacks the flag of their fingerprint (layout.py: the low bits of the first hash, murmur3's
    finaliser, whose high bits times nbuckets chose the bucket), written here from the layout with numpy."""
    h = np.asarray(stored, np.uint32).astype(np.uint64)
    h ^= h >> 16
    h = (h * MIX_1) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * MIX_2) & 0xFFFFFFFF
    h ^= h >> 16
    first = (h * np.uint64(nbuckets)) >> np.uint64(32)
    flag = first * np.uint64(filter_bits) + (h & np.uint64(filter_bits - 1))
    words = np.asarray(flags, np.uint32)
    named = (words[(flag >> np.uint64(5)).astype(np.int64)] >> (flag & np.uint64(31)).astype(np.uint32)) & 1
    return (first.astype(np.int64) != np.asarray(at, np.int64)) & (named == 0)


def _codes(stored, values, numbers, reference, at, full, choices) -> np.ndarray:
    """Each stored entry's code (:mod:`.checks`): its probe sequence walked over the buckets where ``full``
    is given (which buckets a find goes on past), else the keys and values alone."""
    from kernels.hashtable.checks import entry_codes

    probe = full is not None
    if not probe:
        at, full = np.zeros(0, np.int64), np.zeros((1, FLAG_STEPS), bool)
    tail = full[:, -1]  # the steps past the hashes, like every step after the first, read the last column
    open_before = np.concatenate([[0], np.cumsum(~tail)]).astype(np.int64)  # buckets that stop among 0..i-1
    return entry_codes(np.ascontiguousarray(stored, np.uint32), np.ascontiguousarray(values, np.int64),
                       np.ascontiguousarray(at, np.int64), np.ascontiguousarray(numbers, np.int64),
                       np.ascontiguousarray(reference, np.int64), np.ascontiguousarray(full, np.bool_), open_before,
                       int(choices), probe)


# --- chained and grouped tables ---------------------------------------------------------------------------


def verify_table(keys, heads, next_, buckets) -> tuple[int, int]:
    """The seed's verify_table: walks every bucket's chain and returns (entries found, entries whose key
    hashes to another bucket). A link out of the pool or back to a visited entry ends its chain, so a
    corrupt table cannot loop forever."""
    found, misplaced, _ = _walk(keys, heads, next_, buckets)
    return found, misplaced


def _grouped_placement(keys, offsets, buckets) -> tuple[int, int]:
    """(found, misplaced) of a grouped table: the keys inside some bucket's segment, and those of them whose
    bucket is another. The segments are read as far as they can be: clipped to the keys given and made
    non-decreasing, so broken offsets (counted apart) cannot make an entry count twice."""
    if not offsets.size:
        return 0, 0
    edges = np.maximum.accumulate(np.clip(offsets, 0, keys.size))
    segment = np.repeat(np.arange(edges.size - 1), np.diff(edges))
    placed = keys[edges[0]:edges[-1]]
    return int(placed.size), int(np.count_nonzero(placed % buckets != segment))


def _walk(keys, heads, next_, buckets) -> tuple[int, int, int]:
    """(found, misplaced, bad links) of a table."""
    arrays = (np.ascontiguousarray(a) for a in (keys, heads, next_))
    return tuple(int(x) for x in _walk_table()(*arrays, int(buckets)))


def ops_per_second(row_or_timing, n: int) -> float | None:
    """Operations per second at the median time of a :class:`Timing` or a bench Row (None when the row has
    no timing, e.g. a skipped one)."""
    timing = getattr(row_or_timing, "timing", row_or_timing)
    if timing is None:
        return None
    return n / (timing.median_ms * 1e-3) if timing.median_ms > 0 else float("inf")


def rate_note(n: int, timing: Timing) -> str:
    """E.g. '1.250 G ops/s' (or '5200 ops/s' below a million), for a CLI line or a note."""
    rate = ops_per_second(timing, n)
    return f"{rate / 1e9:.3f} G ops/s" if rate >= 1e6 else f"{rate:.0f} ops/s"


def _walk_table():
    from kernels.hashtable.cpu import walk_table  # compiled by numba: imported when a table is first checked

    return walk_table
