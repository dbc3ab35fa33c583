"""Optional libraries the benchmarks compare against (CuPy, PyTorch, Triton, cuda.compute): found once, and when missing, a typed
skip that says so instead of an error."""

from __future__ import annotations

import functools
import importlib

from kernels.backend import Skip, SkipKind


@functools.lru_cache(maxsize=None)
def optional_module(name: str):
    """The module, or a :class:`Skip` saying it is not installed (or cannot load here)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return Skip(SkipKind.MISSING_LIBRARY, f"{_TITLES.get(name, name)} is not installed")
    except Exception as exc:  # installed but broken, e.g. no CUDA runtime it can use
        return Skip(SkipKind.MISSING_LIBRARY, f"{_TITLES.get(name, name)} cannot be loaded here: {type(exc).__name__}: {exc}")


_TITLES = {"cupy": "CuPy", "torch": "PyTorch", "triton": "Triton", "cuda.compute": "cuda.compute (package cuda-cccl)"}
