"""Every private name of numba-cuda-mlir the project uses, behind small functions: the one module to re-check
when numba-cuda-mlir changes (as :mod:`kernels.backend.numba_private` is for numba-cuda).

Checked on numba-cuda-mlir ``CHECKED_ON``; pyproject.toml's ``mlir`` extra pins that release, and
``tests/test_compiler_seam.py`` fails on any other installed version. What each function touches:

- :func:`target_cc` (the inspector's offline compile under numba-cuda-mlir): ``numba_cuda_mlir.tools._cached_cc``,
  the compute capability numba-cuda-mlir otherwise asks the driver for on every compile, even one given
  ``cc=`` (0.6.0 resolves the linker's target from the host's device); set for the duration of a compile so
  that no GPU and no driver is needed.

Nothing here imports numba-cuda-mlir at import time.
"""

from __future__ import annotations

import contextlib

CHECKED_ON = "0.6.0"


def numba_cuda_mlir_version() -> str:
    from importlib.metadata import version

    return version("numba-cuda-mlir")


@contextlib.contextmanager
def target_cc(cc: tuple[int, int]):
    """While inside, numba-cuda-mlir takes ``cc`` as the device's compute capability (no driver asked)."""
    from numba_cuda_mlir import tools

    before = tools._cached_cc
    tools._cached_cc = tuple(cc)
    try:
        yield
    finally:
        tools._cached_cc = before
