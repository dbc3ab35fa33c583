"""The compiler seam: which Python-to-CUDA compiler builds the kernels, and the ``cuda`` module they use.

Every kernel module takes ``cuda`` from here (``from kernels.backend.compiler import cuda``), so one
setting picks the compiler for the whole process: ``RAYTRACER_COMPILER`` (``numba-cuda``, the default, or
``numba-cuda-mlir``, the opt-in ``mlir`` extra), which the CLI's ``--compiler`` sets through
:func:`choose`. Like the simulator switch it is process-wide: kernels compiled under one compiler stay
compiled, so :func:`choose` refuses another once a kernel module has taken ``cuda``.

The simulator stays numba-cuda's: in a simulator process ``cuda`` is numba's (simulated) module whatever
the setting says, and :func:`active` says ``numba-cuda``. The few helpers the two compilers spell
differently (a fence, 16-byte loads, the hash slots' loads, ``@numba.jit`` callees, the run-time
``__constant__`` array) live in :mod:`kernels.device_functions`, each with its simulator twin.

Importing this module imports no numba: ``cuda`` is resolved on first use (a module ``__getattr__``).
"""

from __future__ import annotations

import os

from kernels.backend.simulator import simulator_active
from kernels.errors import BackendUnavailable, InputError, one_of

COMPILER_ENV = "RAYTRACER_COMPILER"
NUMBA_CUDA = "numba-cuda"
NUMBA_CUDA_MLIR = "numba-cuda-mlir"
COMPILER_NAMES = (NUMBA_CUDA, NUMBA_CUDA_MLIR)
DEFAULT = NUMBA_CUDA
MLIR_INSTALL_HINT = "pip install -e '.[mlir]'"

_taken: str | None = None  # the compiler whose cuda module a kernel module already holds


def requested() -> str:
    """The compiler the setting names (``RAYTRACER_COMPILER``, default numba-cuda); InputError for an
    unknown name."""
    name = os.environ.get(COMPILER_ENV, "").strip() or DEFAULT
    one_of(name, COMPILER_NAMES, COMPILER_ENV)
    return name


def active() -> str:
    """The compiler this process's kernels are built by: the requested one, or numba-cuda in the
    simulator (numba-cuda-mlir has none)."""
    return NUMBA_CUDA if simulator_active() else requested()


def uses_mlir() -> bool:
    """True when this process's kernels are compiled by numba-cuda-mlir."""
    return active() == NUMBA_CUDA_MLIR


def choose(name: str) -> None:
    """Pick the compiler for this process (the CLI's ``--compiler``): InputError for an unknown name or
    for a change after the kernels took the other compiler's ``cuda``."""
    one_of(name, COMPILER_NAMES, "compiler")
    if _taken is not None and _taken != name and not simulator_active():
        raise InputError(f"this process already compiles its kernels with {_taken}; "
                         f"run {name} in a new process (--compiler {name})")
    os.environ[COMPILER_ENV] = name


def mlir_installed() -> bool:
    """Whether numba-cuda-mlir can be imported here (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("numba_cuda_mlir") is not None


def cuda_module():
    """The ``cuda`` module of the active compiler: ``numba.cuda`` (also the simulator's) or
    ``numba_cuda_mlir.cuda``; BackendUnavailable when numba-cuda-mlir is asked for and not installed."""
    global _taken
    name = active()
    if name == NUMBA_CUDA_MLIR:
        if not mlir_installed():
            raise BackendUnavailable(f"{COMPILER_ENV}={NUMBA_CUDA_MLIR} needs numba-cuda-mlir: {MLIR_INSTALL_HINT}")
        from numba_cuda_mlir import cuda
    else:
        from numba import cuda
    _taken = name
    return cuda


_LAZY = {"cuda": cuda_module}  # module attributes resolved on first use


def __getattr__(name: str):
    if name in _LAZY:
        return _LAZY[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
