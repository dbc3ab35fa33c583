"""cuCollections' ``static_map`` as a peer (``cuco-static-map``): our C interface (``cuco_shim.cu``, shipped
with this package) built with nvcc against the cuCollections source folder named by ``RAYTRACER_CUCO_DIR``
(header-only: its ``include/cuco/static_map.cuh``), loaded with ctypes and called with the same device
arrays as our kernels, timed by the same CUDA events.

The build is cached in the app's cache folder (``cuco/``), keyed by the shim's source, the flags, nvcc's
version, the GPU architecture and the cuCollections headers (names, sizes, modification times); a folder
that cannot be used means building into a temporary one for this process. Without the variable, nvcc or a
successful build the row is skipped with one line saying which.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from kernels.backend import watchdog
from kernels.backend import Skip, SkipKind, memory, not_applicable
from kernels.errors import shown
from kernels.harness.rows import Outcome
from kernels.timing import time_kernel

CUCO_ENV = "RAYTRACER_CUCO_DIR"
SHIM = Path(__file__).with_name("cuco_shim.cu")
NVCC_FLAGS = ("-std=c++17", "-O3", "--expt-extended-lambda", "--expt-relaxed-constexpr", "-Xcompiler", "-fPIC",
              "-shared")
BUILD_TIMEOUT_S = 900
API_VERSION = 1
NAME = "cuco-static-map"


def _skip(text: str) -> Skip:
    return Skip(SkipKind.MISSING_LIBRARY, f"{NAME}: {text}")


def library(arch: str):
    """The loaded shim for GPU architecture ``arch`` (e.g. 'sm_90'), or a Skip saying why there is none."""
    folder = os.environ.get(CUCO_ENV, "").strip()
    if not folder:
        return _skip(f"set {CUCO_ENV} to a cuCollections source folder (the one holding include/cuco/"
                     f"static_map.cuh) to build this peer with nvcc")
    return _library(folder, arch)


@functools.lru_cache(maxsize=None)
def _library(folder: str, arch: str):
    include = Path(folder).expanduser() / "include"
    if not (include / "cuco" / "static_map.cuh").is_file():
        return _skip(f"{CUCO_ENV}={shown(folder)} holds no include/cuco/static_map.cuh")
    nvcc = shutil.which("nvcc") or _in_cuda_home("nvcc")
    if nvcc is None:
        return _skip("nvcc was not found (on PATH or in $CUDA_HOME/bin): the shim cannot be built")
    try:
        version = watchdog.run([nvcc, "--version"], 60, capture_output=True, text=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return _skip(f"nvcc --version failed: {exc}")
    flags = (*NVCC_FLAGS, f"-arch={arch}", f"-I{include}")
    digest = hashlib.sha256()
    from kernels.io.reader import read_bytes

    shim = read_bytes(SHIM, "the cuCollections shim", 1 << 20, "a C++ source file of the package")
    for part in (shim, " ".join(flags).encode(), version.encode(), _fingerprint(include / "cuco")):
        digest.update(part)
        digest.update(b"\0")
    target = _build_dir() / f"rt_cuco-{digest.hexdigest()[:24]}.so"
    if not target.is_file():
        why = _build(nvcc, flags, target)
        if why:
            return _skip(why)
    try:
        lib = ctypes.CDLL(str(target))
    except OSError as exc:
        return _skip(f"the built shim does not load: {exc}")
    _declare(lib)
    if lib.rt_cuco_api_version() != API_VERSION:
        return _skip(f"the built shim speaks version {lib.rt_cuco_api_version()}, not {API_VERSION}")
    return lib


def _in_cuda_home(tool: str) -> str | None:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    path = Path(home) / "bin" / tool
    return str(path) if path.is_file() else None


def _fingerprint(folder: Path) -> bytes:
    """The headers' names, sizes and modification times: a changed cuCollections builds again."""
    lines = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            st = path.stat()
            lines.append(f"{path.relative_to(folder)} {st.st_size} {st.st_mtime_ns}")
    return "\n".join(lines).encode()


def _build_dir() -> Path:
    from kernels.io.cache import cache_root, usable_dir

    folder = usable_dir(cache_root() / "cuco", "cuCollections build cache")
    return folder if folder is not None else Path(tempfile.mkdtemp(prefix="rt-cuco-"))


def _build(nvcc: str, flags, target: Path) -> str:
    """Builds the shim into ``target`` (written beside it, then renamed: no half-written library is ever
    loaded); '' on success, else the reason in one line."""
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        proc = watchdog.run([nvcc, *flags, "-o", str(partial), str(SHIM)], BUILD_TIMEOUT_S, capture_output=True,
                            text=True)
    except subprocess.TimeoutExpired:
        return f"nvcc took more than {BUILD_TIMEOUT_S} s to build the shim"
    except OSError as exc:
        return f"nvcc could not run: {exc}"
    if proc.returncode != 0:
        errors = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if "error" in ln.lower()]
        first = errors[0] if errors else (proc.stderr.strip().splitlines() or ["no message"])[-1]
        partial.unlink(missing_ok=True)
        return f"nvcc failed to build the shim ({len(errors)} errors), first: {first[:300]}"
    os.replace(partial, target)
    return ""


def _declare(lib) -> None:
    p, u64, i64 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64
    signatures = {
        "rt_cuco_api_version": (ctypes.c_int, ()), "rt_cuco_error": (ctypes.c_char_p, ()),
        "rt_cuco_has_insert_or_add": (ctypes.c_int, ()), "rt_cuco_new": (p, (u64,)), "rt_cuco_free": (None, (p,)),
        "rt_cuco_capacity": (i64, (p,)), "rt_cuco_clear": (i64, (p, p)), "rt_cuco_insert": (i64, (p, p, u64, p)),
        "rt_cuco_insert_or_add": (i64, (p, p, u64, p)), "rt_cuco_find": (i64, (p, p, p, u64, p)),
        "rt_cuco_erase": (i64, (p, p, u64, p)), "rt_cuco_retrieve": (i64, (p, p, p, p)),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, list(argtypes)


def _pointer(device_array) -> int:
    return device_array.__cuda_array_interface__["data"][0]


def run_cuco_static_map(problem, launch, backend, repeats):
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    if problem.op == "insert" and problem.distinct < problem.n:
        return not_applicable(f"{NAME}: static_map's insert keeps an unspecified one of a repeated key's values; "
                              "this problem's insert keeps the first")
    backend.activate()
    major, minor = cuda.get_current_device().compute_capability
    lib = library(f"sm_{major}{minor}")
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
        keys, n, stream = _pointer(problem.device_keys()), problem.n, None
        op = problem.op

        def clear():
            call(lib.rt_cuco_clear, handle, stream)

        def fill_table():
            clear()
            table = problem.device_table_keys()
            call(lib.rt_cuco_insert, handle, _pointer(table), table.size, stream)

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
                call(lib.rt_cuco_find, handle, keys, _pointer(answers), n, stream)

        elapsed = time_kernel(backend, once, repeats, before=before)
        memory.synchronize()
        if op == "find":
            result = problem.check_found(memory.to_host(answers))
        else:
            keys_out, values_out = memory.empty(capacity, np.uint32), memory.empty(capacity, np.uint32)
            count = lib.rt_cuco_retrieve(handle, _pointer(keys_out), _pointer(values_out), stream)
            if count < 0:
                raise RuntimeError(f"{NAME}: {lib.rt_cuco_error().decode(errors='replace')}")
            result = problem.check_pairs(memory.to_host(keys_out)[:count], memory.to_host(values_out)[:count])
    finally:
        lib.rt_cuco_free(handle)
    note = (f"{problem.describe()}; static_map asked for {problem.capacity:,} slots, made {capacity:,} "
            f"(load {problem.distinct / capacity:.3f})")
    return Outcome(result, elapsed, note=note)
