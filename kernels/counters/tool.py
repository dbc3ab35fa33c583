"""Finding Nsight Compute (``ncu``) and its report module, and saying in one line why counters cannot be
read: no GPU, no ncu, no report module, or no permission to read the GPU's performance counters.

ncu is looked for on PATH (absolute entries only: never the current folder), then under ``$CUDA_HOME`` /
``$CUDA_PATH``, then in the usual install folders. ``$RAYTRACER_NCU`` names one explicitly."""

from __future__ import annotations

import functools
import glob
import os
import subprocess
from pathlib import Path

from kernels.backend import watchdog
from kernels.errors import InputError

INSTALL_HINT = ("install Nsight Compute (it comes with the CUDA toolkit, or from developer.nvidia.com/nsight-compute) "
                "and put its ncu on PATH or set CUDA_HOME")
PERMISSION_HINT = ("run with permission to profile: as root, or with the NVIDIA driver option "
                   "NVreg_RestrictProfilingToAdminUsers=0 (see developer.nvidia.com/ERR_NVGPUCTRPERM)")
# where toolkits and stand-alone Nsight Compute installs usually live (newest version first)
COMMON_GLOBS = ("/usr/local/cuda/bin", "/usr/local/cuda-*/bin", "/opt/nvidia/nsight-compute/*",
                "/usr/local/NVIDIA-Nsight-Compute*", "/opt/cuda/bin")


class CannotMeasure(InputError):
    """Counters cannot be read here; the message names what is missing and the fix (CLI: exit status 2)."""


class MeasureFailed(RuntimeError):
    """ncu ran but the run broke (CLI: exit status 1)."""


def _candidates():
    explicit = os.environ.get("RAYTRACER_NCU")
    if explicit:
        yield Path(explicit)
        return
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry and os.path.isabs(entry):  # '' or '.' would mean the current folder
            yield Path(entry) / "ncu"
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and os.path.isabs(root):
            yield Path(root) / "bin" / "ncu"
            yield from (Path(p) / "ncu" for p in sorted(glob.glob(os.path.join(root, "nsight-compute*")), reverse=True))
    for pattern in COMMON_GLOBS:
        for folder in sorted(glob.glob(pattern), reverse=True):
            yield Path(folder) / "ncu"


def find_ncu() -> Path | None:
    for path in _candidates():
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def report_module_dir(ncu: Path) -> Path | None:
    """The folder holding ``ncu_report.py`` of this ncu's install (``extras/python``), following the
    toolkit's bin/ncu link or wrapper to the Nsight Compute folder."""
    real = ncu.resolve()
    roots = [real.parent, real.parent.parent]
    roots += [Path(p) for p in sorted(glob.glob(str(real.parent.parent / "nsight-compute*")), reverse=True)]
    roots += [Path(p) for p in sorted(glob.glob("/opt/nvidia/nsight-compute/*"), reverse=True)]
    for root in roots:
        folder = root / "extras" / "python"
        if (folder / "ncu_report.py").is_file():
            return folder
    return None


@functools.lru_cache(maxsize=None)
def ncu_version(ncu: str) -> str:
    try:
        out = watchdog.run([ncu, "--version"], 30, capture_output=True, text=True).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return lines[-1] if lines else "unknown"


def why_not(backend) -> str:
    """'' when counters can be tried on this backend, else one line naming what is missing and the fix.
    (Permission shows only when ncu runs: :func:`permission_problem` reads its output.)"""
    missing = []
    if not backend.is_gpu:
        missing.append("a CUDA GPU (this run uses the " + ("simulator" if backend.is_simulator else "CPU") +
                       " backend; run on a machine with an NVIDIA GPU and --backend cuda)")
    ncu = find_ncu()
    if ncu is None:
        missing.append(f"Nsight Compute's ncu, found nowhere on PATH, CUDA_HOME or the usual folders ({INSTALL_HINT})")
    elif report_module_dir(ncu) is None:
        missing.append(f"ncu_report (Nsight Compute's extras/python, not found next to {ncu}; reinstall Nsight Compute)")
    return "counters cannot be read: needs " + "; and ".join(missing) if missing else ""


PERMISSION_MARKERS = ("ERR_NVGPUCTRPERM",)
PROFILER_MARKERS = ("LibraryNotLoaded", "Failed to initialize the profiler", "Device not supported",
                    "ERR_NVGPUCTRUNAVAILABLE")


def permission_problem(output: str) -> str:
    """One line for what ncu printed when it could not read counters, '' when it printed no such error."""
    if any(m in output for m in PERMISSION_MARKERS):
        return ("counters cannot be read: ncu has no permission to read the GPU's performance counters "
                f"(ERR_NVGPUCTRPERM); {PERMISSION_HINT}")
    for m in PROFILER_MARKERS:
        if m in output:
            line = next((ln.strip() for ln in output.splitlines() if m in ln), m)
            return (f"counters cannot be read: ncu could not start its profiler on this machine ({line[:160]}); "
                    "a sandboxed or virtualised GPU may not expose counters: try another machine, or "
                    f"{PERMISSION_HINT}")
    return ""
