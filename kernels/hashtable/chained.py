"""Which ops the chained tables (seed 003, and the lock-free chain) take part in: insert, and find, which
walks the key's chain. No numba here: the runners ask before they compile anything."""

from __future__ import annotations

from kernels.backend import Skip, not_applicable

MAX_CHAIN = 64  # a find walks whole chains: longer on average than this and a run would take minutes

_WHY_NOT = {
    "erase": "erasing from a chain needs its links unlinked: not built for the seed's table (the open-addressing "
             "variants erase by tombstones)",
    "insert-or-add": "the seed's insert never looks for the key, so it cannot add to it: not built for the chained "
                     "tables (the open-addressing variants have it)",
}


def repeats_skip(problem, name: str) -> Skip | None:
    """Why a table that keeps every occurrence of a key (the chained and grouped ones) does not run an insert
    whose batch repeats keys: it is a multiset there, not the map this problem checks (None when it runs)."""
    if problem.op == "insert" and problem.distinct < problem.n:
        return not_applicable(f"{name} keeps every occurrence of a repeated key (it never looks for the key): "
                              "not a map for this batch (--multiplicity 1 has no repeats)")
    return None


def chained_skip(problem, name: str) -> Skip | None:
    """Why the chained variant ``name`` does not run ``problem`` (None when it does)."""
    if problem.op in _WHY_NOT:
        return not_applicable(f"{name}: {_WHY_NOT[problem.op]}")
    if repeats_skip(problem, name) is not None:
        return repeats_skip(problem, name)
    if problem.op == "find":
        chain = problem.table_keys.size / problem.buckets
        if chain > MAX_CHAIN:
            need = -(-problem.table_keys.size // MAX_CHAIN)
            return not_applicable(f"{name}: find walks chains of {chain:,.0f} keys on average (keys / --buckets); "
                                  f"give --buckets {need} or more for chains of at most {MAX_CHAIN}")
    return None
