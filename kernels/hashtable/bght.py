"""BGHT's bucketed cuckoo hash table (``bght::bcht``, Awad et al.) as a peer (``bght-bcht``): our C interface
(``bght_shim.cu``, shipped with this package) built with nvcc against the BGHT source folder named by
``RAYTRACER_BGHT_DIR`` (header-only: its ``include/bght/bcht.hpp``), loaded with ctypes and called with the
same device arrays as our kernels, timed by the same CUDA events. How it is built and cached:
:mod:`.shim_build` (the ``bght/`` cache folder).

The table is bcht's defaults: buckets of 16 slots probed by 16 lanes, three MurmurHash3 functions, cuckoo
eviction. It has insert and find, no erase and no insert-or-add; its insert takes distinct keys not yet in
the table. The inserted table cannot be read out, so an insert is checked by its size (every key in, none
more) and a find of every key (each answering its position).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from kernels.backend import Skip, memory, not_applicable
from kernels.harness.rows import Outcome
from kernels.hashtable import shim_build
from kernels.hashtable.layout import VALUE_ABSENT
from kernels.timing import time_kernel

BGHT_ENV = "RAYTRACER_BGHT_DIR"
SHIM = Path(__file__).with_name("bght_shim.cu")
API_VERSION = 1
NAME = "bght-bcht"


# the C interface's functions, {name: (restype, argtypes)}
_P, _U64, _I64 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64
FUNCTIONS = {
    "rt_bght_api_version": (ctypes.c_int, ()), "rt_bght_error": (ctypes.c_char_p, ()),
    "rt_bght_bucket_size": (ctypes.c_int, ()), "rt_bght_new": (_P, (_U64,)), "rt_bght_free": (None, (_P,)),
    "rt_bght_capacity": (_I64, (_U64,)), "rt_bght_clear": (_I64, (_P,)), "rt_bght_insert": (_I64, (_P, _P, _U64, _P)),
    "rt_bght_find": (_I64, (_P, _P, _P, _U64, _P)), "rt_bght_size": (_I64, (_P, _P)),
}


SHIM_BUILD = shim_build.Shim(NAME, BGHT_ENV, "bght/bcht.hpp", SHIM, "rt_bght", API_VERSION, FUNCTIONS)


def run_bght_bcht(problem, launch, backend, repeats):
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    if problem.op not in ("insert", "find"):
        return not_applicable(f"{NAME}: bcht has insert and find only (no {problem.op})")
    if problem.op == "insert" and problem.distinct < problem.n:
        return not_applicable(f"{NAME}: bcht's insert takes distinct keys; this batch repeats keys")
    backend.activate()
    major, minor = cuda.get_current_device().compute_capability
    lib = shim_build.library(SHIM_BUILD, f"sm_{major}{minor}")
    if isinstance(lib, Skip):
        return lib

    def call(fn, *args):
        result = fn(*args)
        if result < 0:
            raise RuntimeError(f"{NAME}: {lib.rt_bght_error().decode(errors='replace')}")
        return result

    handle = lib.rt_bght_new(problem.capacity)
    if not handle:
        raise RuntimeError(f"{NAME}: {lib.rt_bght_error().decode(errors='replace')}")
    try:
        capacity = lib.rt_bght_capacity(problem.capacity)
        keys, n, stream = memory.device_pointer(problem.device_keys()), problem.n, None
        answers = memory.empty(n, np.uint32)

        def clear():
            call(lib.rt_bght_clear, handle)

        if problem.op == "insert":
            before = clear

            def once():
                call(lib.rt_bght_insert, handle, keys, n, stream)
        else:
            before = None
            clear()
            table = problem.device_table_keys()
            call(lib.rt_bght_insert, handle, memory.device_pointer(table), table.size, stream)

            def once():
                call(lib.rt_bght_find, handle, keys, memory.device_pointer(answers), n, stream)

        elapsed = time_kernel(backend, once, repeats, before=before)
        memory.synchronize()
        stored = call(lib.rt_bght_size, handle, stream)
        also = ""
        if problem.op == "insert":  # the table cannot be read out: every key of the batch is looked up
            call(lib.rt_bght_find, handle, keys, memory.device_pointer(answers), n, stream)
            memory.synchronize()
        result = _check(problem, memory.to_host(answers), stored)
        if problem.op == "find":
            also = shim_build.insertion_order_note(
                problem, backend, repeats, lambda k, count, out: call(lib.rt_bght_find, handle, k, out, count, stream),
                "BGHT")
    finally:
        lib.rt_bght_free(handle)
    note = (f"{problem.describe()}; bcht (buckets of {lib.rt_bght_bucket_size()}) asked for "
            f"{problem.capacity:,} slots, made {capacity:,} (load {problem.distinct / capacity:.3f}), holds "
            f"{stored:,} keys{also}")
    return Outcome(result, elapsed, note=note)


def _check(problem, answers, stored: int) -> int:
    """A find's answers against the problem's. After an insert (whose table cannot be read out) every key
    of the batch is found and its answer taken as the table's pair, so a key the build dropped is lost; a
    table holding more keys than were given is an error."""
    if stored > problem.distinct:
        raise RuntimeError(f"{NAME}: the table holds {stored:,} keys after {problem.distinct:,} distinct ones")
    if problem.op == "find":
        return problem.check_found(answers)
    found = answers != VALUE_ABSENT
    return problem.check_pairs(problem.keys[found], answers[found])
