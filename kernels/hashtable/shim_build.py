"""Building a library peer's C interface with nvcc against a header-only source folder the user names
(cuCollections for :mod:`.cuco`, BGHT for :mod:`.bght`), loading it with ctypes, and the second figure both
find rows give (:func:`insertion_order_note`).

The build is cached in the app's cache folder (one subfolder per peer), keyed by the shim's source, the
flags, nvcc's version, the GPU architecture and the library's headers (names, sizes, modification times); a
folder that cannot be used means building into a temporary one for this process. Every failure is a Skip of
one line saying which: the variable unset, the folder without the header, no nvcc, a failed build."""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from kernels.backend import Skip, SkipKind, watchdog
from kernels.errors import shown

NVCC_FLAGS = ("-std=c++17", "-O3", "--expt-extended-lambda", "--expt-relaxed-constexpr")
SHARED_FLAGS = ("-Xcompiler", "-fPIC", "-shared")
BUILD_TIMEOUT_S = 900


@dataclass(frozen=True, eq=False)
class Shim:
    """One peer's C interface: ``name`` (the row), ``env`` (the variable naming the source folder),
    ``header`` (a file under its include/ that proves the folder), ``source`` (the .cu file), ``prefix``
    (of the library's functions and cached file names), ``api_version`` (what ``PREFIX_api_version``
    answers), ``functions`` ({name: (restype, argtypes)}: the ctypes signatures :meth:`declare` sets),
    ``flags`` (more nvcc flags); ``program``: a stand-alone executable (a timing harness) instead of a shared
    library, built only, never loaded; ``includes``: local headers the source includes (part of the build's
    key). Compared and hashed by identity (one per peer): the loaded libraries are cached by it."""

    name: str
    env: str
    header: str
    source: Path
    prefix: str
    api_version: int
    functions: dict = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    program: bool = False
    includes: tuple[Path, ...] = ()

    def skip(self, text: str) -> Skip:
        return Skip(SkipKind.MISSING_LIBRARY, f"{self.name}: {text}")

    def declare(self, lib) -> None:
        """Sets the ctypes signature of each of ``functions`` on the loaded library ``lib``."""
        for name, (restype, argtypes) in self.functions.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, list(argtypes)


def library(shim: Shim, arch: str):
    """The loaded shim for GPU architecture ``arch`` (e.g. 'sm_90'), or a Skip saying why there is none."""
    folder = os.environ.get(shim.env, "").strip()
    return load(shim, folder, arch) if folder else _unset(shim)


def built(shim: Shim, arch: str):
    """The path of ``shim`` built for ``arch`` against the folder its variable names (no GPU needed, nothing
    loaded), or a Skip saying why there is none."""
    folder = os.environ.get(shim.env, "").strip()
    if not folder:
        return _unset(shim)
    include = _include(shim, folder)
    return include if isinstance(include, Skip) else build(shim, include, arch)


def _unset(shim: Shim) -> Skip:
    return shim.skip(f"set {shim.env} to a source folder (the one holding include/{shim.header}) to build this "
                     f"peer with nvcc")


def _include(shim: Shim, folder: str):
    include = Path(folder).expanduser() / "include"
    if not (include / shim.header).is_file():
        return shim.skip(f"{shim.env}={shown(folder)} holds no include/{shim.header}")
    return include


def nvcc_path() -> str | None:
    """nvcc on PATH, else in $CUDA_HOME/bin (or $CUDA_PATH, /usr/local/cuda)."""
    found = shutil.which("nvcc")
    if found:
        return found
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    path = Path(home) / "bin" / "nvcc"
    return str(path) if path.is_file() else None


@functools.lru_cache(maxsize=None)
def load(shim: Shim, folder: str, arch: str):
    """Builds (or finds built) and loads ``shim`` against the source folder ``folder``, once per process."""
    include = _include(shim, folder)
    if isinstance(include, Skip):
        return include
    path = build(shim, include, arch)
    if isinstance(path, Skip):
        return path
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        return shim.skip(f"the built shim does not load: {exc}")
    shim.declare(lib)
    version = getattr(lib, f"{shim.prefix}_api_version")()
    if version != shim.api_version:
        return shim.skip(f"the built shim speaks version {version}, not {shim.api_version}")
    return lib


def build(shim: Shim, include: Path, arch: str):
    """The path of the shim built for ``arch`` against ``include`` (from the cache when there), or a Skip."""
    nvcc = nvcc_path()
    if nvcc is None:
        return shim.skip("nvcc was not found (on PATH or in $CUDA_HOME/bin): the shim cannot be built")
    try:
        version = watchdog.run([nvcc, "--version"], 60, capture_output=True, text=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return shim.skip(f"nvcc --version failed: {exc}")
    flags = (*NVCC_FLAGS, *(() if shim.program else SHARED_FLAGS), *shim.flags, f"-arch={arch}", f"-I{include}")
    digest = hashlib.sha256()
    from kernels.io.reader import read_bytes

    sources = [read_bytes(path, f"the {shim.name} source", 1 << 20, "a C++ source file of the package")
               for path in (shim.source, *shim.includes)]
    for part in (*sources, " ".join(flags).encode(), version.encode(), _fingerprint(include)):
        digest.update(part)
        digest.update(b"\0")
    target = _build_dir(shim.prefix) / f"{shim.prefix}-{digest.hexdigest()[:24]}{'' if shim.program else '.so'}"
    if not target.is_file():
        why = _compile(nvcc, flags, shim.source, target)
        if why:
            return shim.skip(why)
    return target


def _fingerprint(folder: Path) -> bytes:
    """The headers' names, sizes and modification times: a changed library builds again."""
    lines = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            st = path.stat()
            lines.append(f"{path.relative_to(folder)} {st.st_size} {st.st_mtime_ns}")
    return "\n".join(lines).encode()


def _build_dir(prefix: str) -> Path:
    from kernels.io.cache import cache_root, usable_dir

    sub = prefix.removeprefix("rt_")
    folder = usable_dir(cache_root() / sub, f"{sub} build cache")
    return folder if folder is not None else Path(tempfile.mkdtemp(prefix=f"rt-{sub}-"))


def _compile(nvcc: str, flags, source: Path, target: Path) -> str:
    """Builds ``source`` into ``target`` (written beside it, then renamed: no half-written library is ever
    loaded); '' on success, else the reason in one line."""
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        proc = watchdog.run([nvcc, *flags, "-o", str(partial), str(source)], BUILD_TIMEOUT_S, capture_output=True,
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


def insertion_order_note(problem, backend, repeats: int, find_into, library: str) -> str:
    """A find row's second figure: the table's own keys looked up in the order they were inserted, as
    ``library``'s own benchmark looks them up (the row's lookups come in another order: docs/measurements.md),
    timed like the row by ``find_into(keys pointer, count, answers pointer)`` and checked (each key answers
    its position); '; ' and a sentence for the row's note, or '' where the table repeats keys."""
    import numpy as np

    from kernels.backend import memory
    from kernels.timing import time_kernel

    table = problem.device_table_keys()
    if problem.distinct != table.size:
        return ""
    answers = memory.empty(table.size, np.uint32)
    keys, out = (a.__cuda_array_interface__["data"][0] for a in (table, answers))
    timing = time_kernel(backend, lambda: find_into(keys, table.size, out), repeats)
    memory.synchronize()
    wrong = int(np.count_nonzero(memory.to_host(answers) != np.arange(table.size, dtype=np.uint32)))
    if wrong:
        raise RuntimeError(f"the table's keys in insertion order: {wrong:,} of {table.size:,} wrong answers")
    rate = table.size / (timing.median_ms * 1e-3) / 1e9
    return f"; its keys looked up in insertion order, as the {library} benchmark does: {rate:.2f} G/s"
