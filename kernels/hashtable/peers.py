"""The hash table's library peers: the structure a torch or CuPy user builds instead (neither has a GPU
hash table): the keys sorted by bucket into a static CSR table (sort, bincount, cumsum), verified by
``HashProblem.check_grouped`` and timed by the same CUDA events as our kernels."""

from __future__ import annotations

import numpy as np

from kernels.backend import Skip, not_applicable
from kernels.backend.peers import optional_module, torch_module, torch_view
from kernels.harness.bench import Outcome
from kernels.timing import time_kernel


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
    if problem.buckets > GROUPBY_MAX_BUCKETS:
        return not_applicable(f"{name} keeps bucket ids in 32 bits: at most {GROUPBY_MAX_BUCKETS} buckets")
    return None


def _timed_groupby(problem, backend, repeats, group, to_host, note: str = "") -> Outcome:
    """Times ``group()`` (returning the device's (sorted keys, offsets)) and checks the last table it
    built, copied to the host by ``to_host``."""
    out = [None]

    def build():
        out[0] = group()

    timing = time_kernel(backend, build, repeats)
    sorted_keys, offsets = out[0]
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
