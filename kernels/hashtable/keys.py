"""Seeded keys with no repeats and no reserved values, and their inverse (numpy only).

Key number t (0 <= t < 2^32 - 2) is ``key_of_index(t)``: a seeded bijection of the 32-bit integers
(xor, odd multipliers and xor-shifts, each invertible), walked again while it lands on one of the two
reserved keys (cycle walking keeps it a bijection of the other 2^32 - 2 values). So t = 0..n-1 are n
distinct, uniformly spread keys in a scrambled order, t = n..2n-1 are n more that are none of them (the
absent keys of a find), and ``index_of_key`` turns a key found in a table back into its t in O(1): a
table of 2^26 keys is checked without sorting it. The table's own hash (murmur3's finaliser) uses other
constants.
"""

from __future__ import annotations

import numpy as np

from kernels.hashtable.layout import KEY_ERASED

LIMIT = KEY_ERASED  # keys and indices are below this: the two reserved keys are 2^32 - 2 and 2^32 - 1
_M32 = 0xFFFFFFFF


def _constants(seed: int) -> tuple[int, int, int, int, int]:
    """(xor in, three odd multipliers, xor out) for ``seed``."""
    rng = np.random.default_rng([0x5EED, int(seed) & 0xFFFFFFFFFFFFFFFF])
    a, m1, m2, m3, b = (int(x) for x in rng.integers(0, 2**32, 5, dtype=np.uint64))
    return a, m1 | 1, m2 | 1, m3 | 1, b


def _forward(x: np.ndarray, c) -> np.ndarray:
    a, m1, m2, m3, b = c
    x = (x ^ np.uint32(a)) * np.uint32(m1)
    x ^= x >> np.uint32(16)
    x *= np.uint32(m2)
    x ^= x >> np.uint32(16)
    return (x * np.uint32(m3)) ^ np.uint32(b)


def _backward(x: np.ndarray, c) -> np.ndarray:
    a, m1, m2, m3, b = c
    inv = [np.uint32(pow(m, -1, 2**32)) for m in (m1, m2, m3)]
    x = (x ^ np.uint32(b)) * inv[2]
    x ^= x >> np.uint32(16)  # x ^= x >> 16 is its own inverse
    x *= inv[1]
    x ^= x >> np.uint32(16)
    return (x * inv[0]) ^ np.uint32(a)


def _walk(x: np.ndarray, step, c) -> np.ndarray:
    out = step(x, c)
    bad = np.flatnonzero(out >= LIMIT)
    while bad.size:  # at most a handful of steps: 2 of the 2^32 values are reserved
        out[bad] = step(out[bad], c)
        bad = bad[out[bad] >= LIMIT]
    return out


def key_of_index(t, seed: int = 0) -> np.ndarray:
    """The keys numbered ``t`` (an int array, values below 2^32 - 2) as uint32."""
    t = np.asarray(t)
    if t.size and (t.min() < 0 or t.max() >= LIMIT):
        raise ValueError(f"key numbers are 0..{LIMIT - 1}")
    with np.errstate(over="ignore"):
        return _walk(t.astype(np.uint32), _forward, _constants(seed))


def index_of_key(keys, seed: int = 0) -> np.ndarray:
    """The numbers t of ``keys`` (uint32, none reserved) as int64: the inverse of :func:`key_of_index`."""
    keys = np.asarray(keys, np.uint32)
    with np.errstate(over="ignore"):
        return _walk(keys.copy(), _backward, _constants(seed)).astype(np.int64)
