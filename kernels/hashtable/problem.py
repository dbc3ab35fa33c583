"""A hash-table problem: the keys, their device copy, and the independent checks of a finished table
(walked on the host: every key found once, in its own bucket, no broken links)."""

from __future__ import annotations

import numpy as np

from kernels.errors import InputError
from kernels.hashtable.layout import EMPTY
from kernels.timing import Timing

SEED_KEYS = 100 * 2**20 // 4  # the seed hashes 100 MiB of random unsigned ints: 26,214,400 keys
SEED_BUCKETS = 1024  # the seed's HASH_ENTRIES


class HashProblem:
    algorithm = "hashtable"
    op = "insert"
    dtype = "uint32"

    def __init__(self, keys: np.ndarray, buckets: int):
        self.keys = keys
        self.buckets = buckets
        self.n = int(keys.size)
        self.bytes_read = self.n * 4
        self.expected = self.n  # entries that must be found, each in its own bucket
        self.last_check = (0, 0, 0)  # (found, misplaced, bad links or keys) of the last run's table
        self.last_table = None  # (pool_keys, heads, pool_next) of the last chained table checked
        self.last_grouped = None  # (sorted_keys, offsets) of the last grouped table checked
        self._device_keys = None
        self._sorted_keys = None  # the input keys sorted as int64, for check_grouped (made once)

    def device_keys(self):
        """The keys on the GPU, copied once (the copy stays outside the timing)."""
        if self._device_keys is None:
            self._device_keys = _cuda().to_device(self.keys)
        return self._device_keys

    def check_table(self, pool_keys, heads, pool_next) -> int:
        """Walks a finished table; returns the entries found in the right bucket and remembers the rest."""
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


def make_problem(n_keys: int, buckets: int = SEED_BUCKETS, seed: int = 0) -> HashProblem:
    """``n_keys`` seeded random uint32 keys to insert into a table of ``buckets`` chains."""
    if isinstance(n_keys, bool) or not isinstance(n_keys, (int, np.integer)) or n_keys < 1:
        raise InputError(f"number of keys {n_keys!r} must be a whole number, at least 1")
    if n_keys > 2**31 - 1:
        raise InputError(f"number of keys {n_keys} is too large: entry links are int32, at most {2**31 - 1}")
    if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)) or buckets < 1:
        raise InputError(f"number of buckets {buckets!r} must be a whole number, at least 1")
    keys = np.random.default_rng(seed).integers(0, 2**32, int(n_keys), dtype=np.uint32)
    return HashProblem(keys, int(buckets))


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


def inserts_per_second(row_or_timing, n: int) -> float | None:
    """Keys inserted per second at the median time of a :class:`Timing` or a bench Row (None when the
    row has no timing, e.g. a skipped one)."""
    timing = getattr(row_or_timing, "timing", row_or_timing)
    if timing is None:
        return None
    return n / (timing.median_ms * 1e-3) if timing.median_ms > 0 else float("inf")


def rate_note(n: int, timing: Timing) -> str:
    """E.g. '412.5 M inserts/s' (or '5200 inserts/s' below a million), for a CLI line or a note."""
    rate = inserts_per_second(timing, n)
    return f"{rate / 1e6:.1f} M inserts/s" if rate >= 1e6 else f"{rate:.0f} inserts/s"


def _walk_table():
    from kernels.hashtable.cpu import walk_table  # compiled by numba: imported when a table is first checked

    return walk_table


def _cuda():
    from numba import cuda  # only when a GPU variant runs: the package imports no numba

    return cuda
