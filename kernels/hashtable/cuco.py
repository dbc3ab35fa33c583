"""cuCollections' ``static_map`` as a peer (``cuco-static-map``): our C interface (``cuco_shim.cu``, shipped
with this package) built with nvcc against the cuCollections source folder named by ``RAYTRACER_CUCO_DIR``
(header-only: its ``include/cuco/static_map.cuh``), loaded with ctypes and called with the same device
arrays as our kernels, timed by the same CUDA events. How it is built and cached: :mod:`.shim_build`
(the ``cuco/`` cache folder). Without the variable, nvcc or a successful build the row is skipped with one
line saying which.

The map is static_map's defaults (linear probing, groups of 4 lanes, xxhash_32, one slot per bucket), as
cuCollections' own find and insert benchmarks use it. Those benchmarks look the keys up in the order they
were inserted; this row, like every row, looks them up in a random order, which makes a warp's slowest
lookup slower at high load (docs/measurements.md; scripts/cuco_bench.cu times both orders).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from kernels.backend import Skip, memory, not_applicable
from kernels.harness.rows import Outcome
from kernels.hashtable import shim_build
from kernels.timing import time_kernel

CUCO_ENV = "RAYTRACER_CUCO_DIR"
SHIM = Path(__file__).with_name("cuco_shim.cu")
API_VERSION = 1
NAME = "cuco-static-map"


# the C interface's functions, {name: (restype, argtypes)}
_P, _U64, _I64 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64
FUNCTIONS = {
    "rt_cuco_api_version": (ctypes.c_int, ()), "rt_cuco_error": (ctypes.c_char_p, ()),
    "rt_cuco_has_insert_or_add": (ctypes.c_int, ()), "rt_cuco_new": (_P, (_U64,)), "rt_cuco_free": (None, (_P,)),
    "rt_cuco_capacity": (_I64, (_P,)), "rt_cuco_clear": (_I64, (_P, _P)), "rt_cuco_insert": (_I64, (_P, _P, _U64, _P)),
    "rt_cuco_insert_or_add": (_I64, (_P, _P, _U64, _P)), "rt_cuco_find": (_I64, (_P, _P, _P, _U64, _P)),
    "rt_cuco_erase": (_I64, (_P, _P, _U64, _P)), "rt_cuco_retrieve": (_I64, (_P, _P, _P, _P)),
}


SHIM_BUILD = shim_build.Shim(NAME, CUCO_ENV, "cuco/static_map.cuh", SHIM, "rt_cuco", API_VERSION, FUNCTIONS)


def run_cuco_static_map(problem, launch, backend, repeats):
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    if problem.op == "insert" and problem.distinct < problem.n:
        return not_applicable(f"{NAME}: static_map's insert keeps an unspecified one of a repeated key's values; "
                              "this problem's insert keeps the first")
    backend.activate()
    major, minor = cuda.get_current_device().compute_capability
    lib = shim_build.library(SHIM_BUILD, f"sm_{major}{minor}")
    if isinstance(lib, Skip):
        return lib
    if problem.op == "insert-or-add" and not lib.rt_cuco_has_insert_or_add():
        return not_applicable(f"{NAME}: this cuCollections has no insert_or_apply")

    def call(fn, *args):
        if fn(*args) < 0:
            raise RuntimeError(f"{NAME}: {lib.rt_cuco_error().decode(errors='replace')}")

    handle = lib.rt_cuco_new(problem.capacity)
    if not handle:
        raise RuntimeError(f"{NAME}: {lib.rt_cuco_error().decode(errors='replace')}")
    try:
        capacity = lib.rt_cuco_capacity(handle)
        keys, n, stream = memory.device_pointer(problem.device_keys()), problem.n, None
        op = problem.op

        def clear():
            call(lib.rt_cuco_clear, handle, stream)

        def fill_table():
            clear()
            table = problem.device_table_keys()
            call(lib.rt_cuco_insert, handle, memory.device_pointer(table), table.size, stream)

        before = clear
        if op == "insert":
            def once():
                call(lib.rt_cuco_insert, handle, keys, n, stream)
        elif op == "insert-or-add":
            def once():
                call(lib.rt_cuco_insert_or_add, handle, keys, n, stream)
        elif op == "erase":
            before = fill_table

            def once():
                call(lib.rt_cuco_erase, handle, keys, n, stream)
        else:
            before = None
            fill_table()
            answers = memory.empty(n, np.uint32)

            def once():
                call(lib.rt_cuco_find, handle, keys, memory.device_pointer(answers), n, stream)

        elapsed = time_kernel(backend, once, repeats, before=before)
        memory.synchronize()
        also = ""
        if op == "find":
            result = problem.check_found(memory.to_host(answers))
            also = shim_build.insertion_order_note(
                problem, backend, repeats, lambda k, count, out: call(lib.rt_cuco_find, handle, k, out, count, stream),
                "cuCollections")
        else:
            keys_out, values_out = memory.empty(capacity, np.uint32), memory.empty(capacity, np.uint32)
            count = lib.rt_cuco_retrieve(handle, memory.device_pointer(keys_out), memory.device_pointer(values_out), stream)
            if count < 0:
                raise RuntimeError(f"{NAME}: {lib.rt_cuco_error().decode(errors='replace')}")
            result = problem.check_pairs(memory.to_host(keys_out)[:count], memory.to_host(values_out)[:count])
    finally:
        lib.rt_cuco_free(handle)
    note = (f"{problem.describe()}; static_map asked for {problem.capacity:,} slots, made {capacity:,} "
            f"(load {problem.distinct / capacity:.3f}){also}")
    return Outcome(result, elapsed, note=note)
