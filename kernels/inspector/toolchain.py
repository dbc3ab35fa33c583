"""NVIDIA's offline tools the inspector runs: ``ptxas`` (PTX to cubin, ``-v`` resources) and ``nvdisasm``
(cubin to SASS with line markers), found in NVIDIA's pip packages or on PATH, plus libNVVM for numba.

Install them with the project's extra: ``pip install -e '.[inspect]'``.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

from kernels.backend import watchdog
from kernels.inspector.errors import CompileFailed, ToolchainMissing

EXTRA_HINT = "pip install -e '.[inspect]'"
TOOL_TIMEOUT_S = 120
MAX_TOOL_OUTPUT = 1 << 30  # a cubin of one kernel is kilobytes; the bound only keeps a read finite


def _package_dirs() -> list[str]:
    """The ``nvidia`` namespace package folders of this Python (NVIDIA's wheels install there), leaving out
    the current folder: ``python -m`` and ``-c`` put it on sys.path, and a folder the user merely stands in
    must not choose which binaries the inspector runs."""
    here = os.path.realpath(os.getcwd())
    found = []
    for base in sys.path:
        if not base or os.path.realpath(base) == here:
            continue
        path = os.path.join(base, "nvidia")
        if os.path.isdir(path):
            found.append(path)
    return found


def _find_binary(name: str) -> str | None:
    # cu13 wheels put the tools in nvidia/cu13/bin, cu12 ones in nvidia/cuda_nvcc/bin and similar
    for base in _package_dirs():
        for candidate in sorted(glob.glob(os.path.join(base, "*", "bin", name)), reverse=True):
            if os.access(candidate, os.X_OK):
                return candidate
    found = shutil.which(name)
    if found:
        return found
    for home in _toolkit_homes():
        candidate = os.path.join(home, "bin", name)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def _toolkit_homes() -> list[str]:
    """A CUDA toolkit installed the usual way, for machines without NVIDIA's pip packages."""
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    return [h for h in homes if h]


@functools.lru_cache(maxsize=None)
def ptxas_path() -> str | None:
    return _find_binary("ptxas")


@functools.lru_cache(maxsize=None)
def nvdisasm_path() -> str | None:
    return _find_binary("nvdisasm")


@functools.lru_cache(maxsize=None)
def nvvm_library() -> str | None:
    """libNVVM, which numba-cuda needs to turn a kernel into PTX."""
    patterns = [os.path.join(base, "*", "lib*", "libnvvm.so*") for base in _package_dirs()]
    patterns += [os.path.join(base, "*", "nvvm", "lib*", "libnvvm.so*") for base in _package_dirs()]
    patterns += [os.path.join(home, "nvvm", "lib*", "libnvvm.so*") for home in _toolkit_homes()]
    for pattern in patterns:
        hits = glob.glob(pattern)
        if hits:
            return sorted(hits)[-1]
    return None


def missing() -> list[str]:
    """Names of the missing pieces ([] when the inspector can compile)."""
    need = {"libNVVM (nvidia-nvvm)": nvvm_library(), "ptxas (nvidia-cuda-nvcc)": ptxas_path(),
            "nvdisasm (nvidia-cuda-nvdisasm)": nvdisasm_path()}
    return [name for name, path in need.items() if not path]


def what_to_do() -> str:
    """What a message about missing compiler packages tells the user ('' when none is missing): install the
    extra, or restart the app when they are on disk now though this process found them missing (installed
    while it ran: its lookups are cached, and numba reads where libNVVM is once, at its import)."""
    if not missing():
        return ""
    afresh = (ptxas_path.__wrapped__(), nvdisasm_path.__wrapped__(), nvvm_library.__wrapped__())
    if all(afresh):
        return "they were installed while the app was running: restart the app to use them"
    return f"install them with {EXTRA_HINT}"


def require() -> None:
    """Raises ToolchainMissing with one line naming what is missing and the extra that brings it."""
    gone = missing()
    if gone:
        raise ToolchainMissing(f"compiling kernels needs {', '.join(gone)}: install them with {EXTRA_HINT}")


@functools.lru_cache(maxsize=None)
def ptxas_archs() -> frozenset[str]:
    """The real architectures (sm_XY) this ptxas can generate code for, read from its --help."""
    if not ptxas_path():
        return frozenset()
    text = _run([ptxas_path(), "--help"], None).stdout
    return frozenset(re.findall(r"'(sm_\d+)'", text))


@functools.lru_cache(maxsize=None)
def tool_versions() -> dict[str, str]:
    """``{"ptxas": ..., "nvdisasm": ...}``: each tool's release and build lines from ``--version`` (part of
    the inspector cache's key: another ptxas may allocate registers differently)."""
    found = {}
    for name, path in (("ptxas", ptxas_path()), ("nvdisasm", nvdisasm_path())):
        if not path:
            found[name] = "missing"
            continue
        try:
            text = _run([path, "--version"], None).stdout
        except (OSError, subprocess.SubprocessError) as exc:
            found[name] = f"unknown ({exc})"
            continue
        lines = [ln.strip() for ln in text.splitlines() if "release" in ln or ln.startswith("Build")]
        found[name] = " | ".join(lines) or text.strip() or f"unknown ({path})"
    return found


@dataclass(frozen=True)
class PtxasResult:
    cubin: bytes
    report: str  # ptxas -v output


def assemble(ptx: str, arch: str, lineinfo: bool = True) -> PtxasResult:
    """``ptxas -arch=<arch> -v`` on the PTX (``-lineinfo`` too unless told not): the cubin and the resource
    report."""
    import tempfile

    require()
    with tempfile.TemporaryDirectory(prefix="inspect-") as tmp:
        src, out = os.path.join(tmp, "kernel.ptx"), os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        done = _run([ptxas_path(), f"-arch={arch}", "-v", *(["-lineinfo"] if lineinfo else []), src, "-o", out],
                    "ptxas")
        from kernels.io.reader import read_bytes

        return PtxasResult(read_bytes(out, "ptxas's cubin", MAX_TOOL_OUTPUT, "one kernel's machine code"),
                           done.stdout + done.stderr)


def disassemble(cubin: bytes) -> str:
    """``nvdisasm -gi -c``: SASS of the code sections, each instruction under its ``//## File`` marker."""
    import tempfile

    require()
    with tempfile.TemporaryDirectory(prefix="inspect-") as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        return _run([nvdisasm_path(), "-gi", "-c", path], "nvdisasm").stdout


def _run(cmd: list[str], what: str | None) -> subprocess.CompletedProcess:
    done = watchdog.run(cmd, TOOL_TIMEOUT_S, capture_output=True, text=True)
    if what and done.returncode != 0:
        lines = [ln for ln in (done.stderr or done.stdout).splitlines() if ln.strip()]
        raise CompileFailed(f"{what} failed: {lines[-1] if lines else f'exit status {done.returncode}'}")
    return done
