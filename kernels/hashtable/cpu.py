"""The hash table's CPU code (Numba): the seed's CPU insert, a find that walks its chains, and the walk
that checks any chained table."""

from __future__ import annotations

import numba
import numpy as np

from kernels.harness.rows import Outcome
from kernels.hashtable.chained import chained_skip
from kernels.hashtable.layout import EMPTY
from kernels.hashtable.probing import chain_answer
from kernels.timing import time_wall
from kernels.io.numba_cache import heal

heal()  # a damaged entry of numba's cache is compiled again, not a failed run


@numba.njit(nogil=True, cache=True)
def walk_table(keys, heads, next_, buckets):
    n = keys.size
    visited = np.zeros(n, np.bool_)
    found = misplaced = bad_links = 0
    for b in range(buckets):
        e = heads[b]
        while e != EMPTY:
            if e < 0 or e >= n or visited[e]:
                bad_links += 1
                break
            visited[e] = True
            found += 1
            if keys[e] % buckets != b:
                misplaced += 1
            e = next_[e]
    return found, misplaced, bad_links


@numba.njit(nogil=True, cache=True)
def insert_all(keys, pool_keys, pool_next, heads):
    # the seed's CPU add_to_table, one key after another: push entry i at the head of its chain
    buckets = heads.size
    heads[:] = EMPTY
    for i in range(keys.size):
        b = keys[i] % buckets
        pool_keys[i] = keys[i]
        pool_next[i] = heads[b]
        heads[b] = i


@numba.njit(nogil=True, cache=True, parallel=True)
def find_all(queries, pool_keys, pool_next, heads, answers):
    for i in numba.prange(queries.size):
        answers[i] = chain_answer(queries[i], pool_keys, pool_next, heads, EMPTY)


def run_cpu(problem, launch, backend, repeats):
    skip = chained_skip(problem, "cpu")
    if skip is not None:
        return skip
    finding = problem.op == "find"
    keys = problem.table_keys if finding else problem.keys
    pool_keys = np.empty(keys.size, np.uint32)
    pool_next = np.empty(keys.size, np.int32)
    heads = np.empty(problem.buckets, np.int32)
    if finding:
        insert_all(keys, pool_keys, pool_next, heads)
        answers = np.empty(problem.n, np.uint32)
        timing = time_wall(lambda: find_all(problem.keys, pool_keys, pool_next, heads, answers), repeats)
        return Outcome(problem.check_found(answers), timing, note=problem.describe())
    timing = time_wall(lambda: insert_all(keys, pool_keys, pool_next, heads), repeats)
    return Outcome(problem.check_table(pool_keys, heads, pool_next), timing)
