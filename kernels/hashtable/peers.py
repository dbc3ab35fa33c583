"""The hash table's library peers: the structures a torch or CuPy user builds instead (neither has a GPU
hash table): for inserts, the keys sorted by bucket into a static CSR table (sort, bincount, cumsum),
verified by ``HashProblem.check_grouped``; for finds, the table's keys sorted once and each lookup a binary
search (searchsorted) in them, verified by ``HashProblem.check_found``. Both timed by the same CUDA events
as our kernels, on the same device arrays. (cuCollections' static_map is in :mod:`.cuco`.)"""

from __future__ import annotations

import numpy as np

from kernels.backend import Skip, not_applicable
from kernels.backend.peers import optional_module, torch_module, torch_view
from kernels.harness.rows import Outcome
from kernels.hashtable.chained import repeats_skip
from kernels.hashtable.layout import VALUE_ABSENT
from kernels.timing import time_kernel_with_result


# --- hash table: the grouped table a library user builds by sorting ---------------------------------------
#
# Neither torch nor CuPy has a GPU hash table; what a user of either builds from a batch of keys is a static
# table grouped by bucket (CSR): the keys sorted by bucket id, and each bucket's start in that order. Built
# in one batch, not a mutable chained table with per-insert links: the structure, not the same data
# structure. Everything from the device keys to the finished (sorted keys, offsets) is inside the timing.

GROUPBY_MAX_BUCKETS = 2**31  # bucket ids are 32-bit below this


def _groupby_skip(module, problem, name: str):
    """Why a sort-groupby peer does not run: its library is missing, or ``problem`` has more buckets than
    32-bit ids count; None when it runs."""
    if isinstance(module, Skip):
        return module
    if problem.op != "insert":
        return not_applicable(f"{name} builds a static table grouped by bucket in one batch: insert only (the "
                              "find peers are torch-sorted-search and cupy-sorted-search)")
    too_few = repeats_skip(problem, name)
    if too_few is not None:
        return too_few
    if problem.buckets > GROUPBY_MAX_BUCKETS:
        return not_applicable(f"{name} keeps bucket ids in 32 bits: at most {GROUPBY_MAX_BUCKETS} buckets")
    return None


def _timed_groupby(problem, backend, repeats, group, to_host, note: str = "") -> Outcome:
    """Times ``group()`` (returning the device's (sorted keys, offsets)) and checks the last table it
    built, copied to the host by ``to_host``."""
    timing, (sorted_keys, offsets) = time_kernel_with_result(backend, group, repeats)
    return Outcome(problem.check_grouped(to_host(sorted_keys), to_host(offsets)), timing, note=note)


def _torch_wide_keys(torch, d_keys):
    """(a function returning the keys as a new int64 tensor, a note). torch's uint32 support is partial:
    where this torch cannot view or cast uint32, the keys' bits are read as int32 and masked back."""
    try:
        keys = torch_view(torch, d_keys)
        keys[:1].to(torch.int64)  # a torch that cannot cast uint32 refuses here, before the timing
        return (lambda: keys.to(torch.int64)), ""
    except (TypeError, RuntimeError, NotImplementedError) as exc:
        bits = torch_view(torch, d_keys.view(np.int32))
        why = f"uint32 keys read as int32 and masked to 32 bits (torch refused uint32: {type(exc).__name__})"
        return (lambda: bits.to(torch.int64) & 0xFFFFFFFF), why


def run_torch_sort_groupby(problem, launch, backend, repeats):
    torch = torch_module()
    skip = _groupby_skip(torch, problem, "torch-sort-groupby")
    if skip is not None:
        return skip
    backend.activate()
    wide_keys, note = _torch_wide_keys(torch, problem.device_keys())
    buckets = problem.buckets

    def group():
        keys = wide_keys()
        # int32 ids: the radix sort behind torch.sort makes half the passes it makes over int64
        ids = (keys % buckets).to(torch.int32)
        _, order = torch.sort(ids, stable=True)
        counts = torch.bincount(ids, minlength=buckets)
        offsets = torch.zeros(buckets + 1, dtype=torch.int64, device=keys.device)
        offsets[1:] = torch.cumsum(counts, 0)
        return keys[order], offsets

    return _timed_groupby(problem, backend, repeats, group, lambda t: t.cpu().numpy(), note)


def run_cupy_sort_groupby(problem, launch, backend, repeats):
    cupy = optional_module("cupy")
    skip = _groupby_skip(cupy, problem, "cupy-sort-groupby")
    if skip is not None:
        return skip
    backend.activate()
    keys = cupy.asarray(problem.device_keys())
    buckets = problem.buckets
    divisor = np.uint32(buckets)  # CuPy computes on uint32 itself: ids stay 32-bit, no widening

    def group():
        ids = keys % divisor
        order = cupy.argsort(ids)
        counts = cupy.bincount(ids, minlength=buckets)
        offsets = cupy.zeros(buckets + 1, dtype=cupy.int64)
        offsets[1:] = cupy.cumsum(counts)
        return keys[order], offsets

    return _timed_groupby(problem, backend, repeats, group, lambda a: a.get())


# --- find: binary search in the sorted keys -----------------------------------------------------------------
#
# What a torch or CuPy user does for lookups: sort the table's keys once (with each key's value, its position,
# carried along by the sort's permutation; stable, so a repeated key's first occurrence comes first) and answer
# each lookup by searchsorted, a gather and a compare. The sort is the build, outside the timing, as our
# tables' inserts are for a find; every lookup, from the device keys to the answers, is inside it.


def _search_skip(module, problem, name: str):
    if isinstance(module, Skip):
        return module
    if problem.op != "find":
        return not_applicable(f"{name} answers lookups in a sorted copy of the table's keys: find only")
    return None


def _timed_search(problem, backend, repeats, search, to_host, note: str = "") -> Outcome:
    """Times ``search()`` (returning the device's answers) and checks its last answers, copied to the host
    by ``to_host``."""
    timing, found = time_kernel_with_result(backend, search, repeats)
    return Outcome(problem.check_found(to_host(found)), timing, note="; ".join(x for x in (problem.describe(), note)
                                                                               if x))


def run_torch_sorted_search(problem, launch, backend, repeats):
    torch = torch_module()
    skip = _search_skip(torch, problem, "torch-sorted-search")
    if skip is not None:
        return skip
    backend.activate()
    table, _ = _torch_wide_keys(torch, problem.device_table_keys())
    queries, note = _torch_wide_keys(torch, problem.device_keys())
    sorted_keys, values = torch.sort(table(), stable=True)  # values: each sorted key's position, its value
    last = sorted_keys.numel() - 1

    def search():
        q = queries()
        at = torch.searchsorted(sorted_keys, q).clamp_(max=last)
        return torch.where(sorted_keys[at] == q, values[at], VALUE_ABSENT)

    return _timed_search(problem, backend, repeats, search, lambda t: t.cpu().numpy(), note)


def run_cupy_sorted_search(problem, launch, backend, repeats):
    cupy = optional_module("cupy")
    skip = _search_skip(cupy, problem, "cupy-sorted-search")
    if skip is not None:
        return skip
    backend.activate()
    table = cupy.asarray(problem.device_table_keys())
    queries = cupy.asarray(problem.device_keys())
    order = cupy.argsort(table)  # CuPy's radix sort keeps equal keys in order
    sorted_keys, values = table[order], order.astype(cupy.uint32)
    last = sorted_keys.size - 1
    absent = np.uint32(VALUE_ABSENT)

    def search():
        at = cupy.minimum(cupy.searchsorted(sorted_keys, queries), last)
        return cupy.where(sorted_keys[at] == queries, values[at], absent)

    return _timed_search(problem, backend, repeats, search, lambda a: a.get())
