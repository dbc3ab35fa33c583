"""The open-addressing table's check, entry by entry, on all cores (Numba): what :meth:`HashProblem.check_open`
asks of each stored key, in one pass instead of numpy's dozen random gathers and their temporaries, so that a
table of 2^26 keys is checked in seconds.

It is the check's own code, written from layout.py's definitions: it shares nothing with the kernels or
their probing math (kernels.hashtable.probing), so a mistake there cannot hide itself here.
"""

from __future__ import annotations

import numba
import numpy as np

from kernels.hashtable.layout import HASH_STEP, MIX_1, MIX_2
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run

FOREIGN, STRAY, WRONG_VALUE, UNREACHABLE = 1, 2, 4, 8  # the bits of an entry's code


@numba.njit(nogil=True, cache=True)
def _bucket(key, choice, nbuckets):
    h = np.uint32(key) ^ np.uint32(np.uint32(choice) * np.uint32(HASH_STEP))
    h = np.uint32(h ^ (h >> np.uint32(16)))
    h = np.uint32(h * np.uint32(MIX_1))
    h = np.uint32(h ^ (h >> np.uint32(13)))
    h = np.uint32(h * np.uint32(MIX_2))
    h = np.uint32(h ^ (h >> np.uint32(16)))
    return np.int64((np.uint64(h) * np.uint64(nbuckets)) >> np.uint64(32))


@numba.njit(nogil=True, cache=True, parallel=True)
def entry_codes(stored, values, buckets_at, numbers, reference, full, open_before, choices, probe):
    """A code per stored entry (0: right): FOREIGN (a key never given), STRAY (a key that must not be
    there), WRONG_VALUE, UNREACHABLE (with ``probe``: a find, walking the key's probe sequence over the
    buckets, stops before the entry's bucket ``buckets_at``: at a bucket it may not go past). ``full[b, s]``:
    a find at probe step s may go past bucket b (step s >= full's width: its last column); ``open_before[i]``:
    buckets among 0..i-1 that stop the steps after the hashes."""
    nbuckets = full.shape[0]
    last_column = full.shape[1] - 1
    codes = np.zeros(stored.size, np.uint8)
    for i in numba.prange(stored.size):
        t = numbers[i]
        code = 0
        if t < 0:
            code |= FOREIGN
        elif reference[t] < 0:
            code |= STRAY
        elif values[i] != reference[t]:
            code |= WRONG_VALUE
        if probe:
            at = buckets_at[i]
            reached = False
            going = True
            last = np.int64(0)
            for c in range(choices):
                home = _bucket(stored[i], c, nbuckets)
                last = home
                if home == at:
                    reached, going = True, False
                    break
                if not full[home, min(c, last_column)]:
                    going = False
                    break
            if going and at != last:
                start = last + 1
                if at >= start:
                    between = open_before[at] - open_before[start]
                else:
                    between = open_before[nbuckets] - open_before[start] + open_before[at]
                reached = between == 0
            if not reached:
                code |= UNREACHABLE
        codes[i] = code
    return codes
