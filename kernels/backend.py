"""Backend selection: real CUDA, the CUDA simulator, or the Numba CPU twins.

The simulator is a process-wide switch: numba reads ``NUMBA_ENABLE_CUDASIM`` once, when it is first
imported. So ``prepare(name)`` must run before anything imports numba (the CLI calls it right after
parsing its arguments); afterwards a process is either a real-CUDA process or a simulator process, and
``resolve`` refuses the other one with a clear message instead of crashing.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from kernels.errors import BackendUnavailable, InputError

BACKEND_NAMES = ("auto", "cuda", "cpu", "sim")
_SIM_ENV = "NUMBA_ENABLE_CUDASIM"


def prepare(name: str) -> None:
    """Call before numba is imported: switches the process to the simulator when ``name == 'sim'``."""
    if name not in BACKEND_NAMES:
        raise InputError(f"backend {name!r} is not one of {', '.join(BACKEND_NAMES)}")
    if name == "sim" and "numba" not in sys.modules:
        os.environ[_SIM_ENV] = "1"


def simulator_active() -> bool:
    """True when this process runs CUDA kernels in Numba's simulator."""
    if "numba" in sys.modules:
        from numba import config

        return bool(config.ENABLE_CUDASIM)
    return os.environ.get(_SIM_ENV, "0") not in ("", "0")


def gpu_count() -> int:
    """Number of real CUDA GPUs this process can use (0 in a simulator process or without a driver)."""
    if simulator_active():
        return 0
    try:
        from numba import cuda

        if not cuda.is_available():
            return 0
        return len(cuda.gpus)
    except Exception:  # a broken driver or toolkit means: no usable GPU
        return 0


def gpu_available() -> bool:
    return gpu_count() > 0


@dataclass(frozen=True)
class Backend:
    """A resolved backend: ``kind`` is 'cuda', 'sim' or 'cpu'; ``note`` says why auto chose it."""

    kind: str
    device: int = 0
    note: str = ""

    @property
    def runs_cuda_kernels(self) -> bool:
        """True for 'cuda' and 'sim': the @cuda.jit kernels run (on a GPU or in the simulator)."""
        return self.kind in ("cuda", "sim")

    @property
    def label(self) -> str:
        if self.kind == "cuda":
            from kernels.devices import gpu_name

            return f"cuda:{self.device} ({gpu_name(self.device)})"
        if self.kind == "sim":
            return "sim (CUDA simulator)"
        from kernels.devices import cpu_name

        return f"cpu ({cpu_name()})"

    def activate(self) -> None:
        """Make this backend's GPU the current CUDA device (no-op for cpu and sim)."""
        if self.kind == "cuda":
            from numba import cuda

            cuda.select_device(self.device)


def resolve(name: str = "auto", device: int | None = None) -> Backend:
    """Turn a user's backend name (and optional GPU index) into a usable :class:`Backend`."""
    if name not in BACKEND_NAMES:
        raise InputError(f"backend {name!r} is not one of {', '.join(BACKEND_NAMES)}")
    if name == "sim":
        if device is not None:
            raise InputError(f"--device {device} needs a real GPU (the cuda backend); the simulator has none")
        if not simulator_active():
            raise BackendUnavailable(
                "backend 'sim' must be chosen when the process starts (numba is already loaded for real "
                "CUDA): run with --backend sim, or set NUMBA_ENABLE_CUDASIM=1"
            )
        return Backend("sim")
    if name == "cpu":
        if device is not None:
            raise InputError(f"--device {device} needs a real GPU (the cuda backend); the cpu backend has none")
        return Backend("cpu")
    count = gpu_count()
    if name == "cuda" and count == 0:
        why = "this process runs the CUDA simulator" if simulator_active() else "no CUDA GPU was found"
        raise BackendUnavailable(f"backend 'cuda' needs a CUDA GPU, but {why}; use --backend cpu or sim")
    if device is not None and not 0 <= device < count:
        if count == 0:
            raise BackendUnavailable(f"--device {device} needs a CUDA GPU, but none was found")
        raise InputError(f"--device {device} does not exist; GPUs here: 0..{count - 1}")
    if name == "auto":
        if count:
            return Backend("cuda", device or 0, "auto: a CUDA GPU was found")
        why = "this process runs the CUDA simulator" if simulator_active() else "no CUDA GPU was found"
        return Backend("cpu", 0, f"auto: {why}, using the CPU backend")
    return Backend("cuda", device or 0)


def for_kernels(fn):
    """A shared ``@numba.jit`` per-pixel function as a CUDA kernel should call it: the compiled function
    on a GPU (numba-cuda compiles it for the device), plain Python all the way down in the simulator,
    whose arrays are wrappers that compiled CPU code cannot take."""
    return _plain_python(fn, {}) if simulator_active() else fn


def _plain_python(fn, done: dict):
    """``fn.py_func`` with every jit function it calls (through its module globals) made plain too."""
    import types

    from numba.core.dispatcher import Dispatcher

    if fn in done:
        return done[fn]
    py = fn.py_func
    globs = dict(py.__globals__)
    clone = types.FunctionType(py.__code__, globs, py.__name__, py.__defaults__, py.__closure__)
    done[fn] = clone
    for name in py.__code__.co_names:
        value = globs.get(name)
        if isinstance(value, Dispatcher):
            globs[name] = _plain_python(value, done)
    return clone
