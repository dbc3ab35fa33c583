"""Optional libraries the benchmarks compare against (CuPy, PyTorch, Triton, cuda.compute): found once, and
when missing, a typed skip that says so instead of an error. Inputs reach them as zero-copy views of the
memory seam's device arrays (``__cuda_array_interface__``)."""

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
    except Exception as exc:  # noqa: BLE001 - installed but broken, e.g. no CUDA runtime it can use
        return Skip(SkipKind.MISSING_LIBRARY, f"{_TITLES.get(name, name)} cannot be loaded here: {type(exc).__name__}: {exc}")


_TITLES = {"cupy": "CuPy", "torch": "PyTorch", "triton": "Triton", "cuda.compute": "cuda.compute (package cuda-cccl)"}


def first_skip(*modules):
    return next((m for m in modules if isinstance(m, Skip)), None)


def cuda_compute():
    """``cuda.compute`` (CUB for Python, package cuda-cccl), or a Skip saying why it cannot run here."""
    mod = optional_module("cuda.compute")
    if isinstance(mod, Skip):
        return Skip(SkipKind.MISSING_LIBRARY, "cuda.compute (package cuda-cccl) is not installed")
    if not getattr(mod, "_BINDINGS_AVAILABLE", True):
        return Skip(SkipKind.MISSING_LIBRARY, "cuda.compute is installed but cannot load its CUDA bindings here")
    return mod


def torch_module():
    return optional_module("torch")


def torch_view(torch, device_array):
    return torch.as_tensor(device_array, device="cuda")  # zero-copy through __cuda_array_interface__
