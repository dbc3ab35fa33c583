"""Backend selection: real CUDA, the CUDA simulator, or the Numba CPU twins.

The simulator is a process-wide switch: numba reads ``NUMBA_ENABLE_CUDASIM`` once, when it is first
imported. So ``prepare(name)`` must run before anything imports numba (the CLI calls it right after
parsing its arguments); afterwards a process is either a real-CUDA process or a simulator process, and
``resolve`` refuses the other one with a clear message instead of crashing.
"""

from __future__ import annotations

import enum
import os
import sys
from dataclasses import dataclass

from kernels.backend.devices import DeviceLimits, cpu_cores, cpu_name, gpu_count, gpu_limits, gpu_name
from kernels.backend.simulator import SIM_ENV, simulator_active
from kernels.errors import BackendUnavailable, InputError, one_of



def prepare(name: str) -> None:
    """Call before numba is imported: switches the process to the simulator when ``name == 'sim'``. The
    environment's memory setting (RAYTRACER_MEMORY) is checked here, for every backend: a bad value is
    refused whether or not this run would allocate GPU memory (the CPU and the simulator do not)."""
    one_of(name, BACKEND_NAMES, "backend")
    from kernels.backend import memory

    memory.choose(os.environ.get(memory.ENV))
    quiet_deliberate_small_grids()
    if name == "sim" and "numba" not in sys.modules:
        os.environ[SIM_ENV] = "1"


def gpu_available() -> bool:
    return gpu_count() > 0


@dataclass(frozen=True)
class BackendChoice:
    """A backend a user can pick: its name (``--backend NAME``) and what it means. Callers ask it which
    one it is (``is_auto``, ``is_gpu``, ...) instead of comparing its name; :func:`choice` finds one by name."""

    name: str
    description: str

    @property
    def is_auto(self) -> bool:
        """'auto': a CUDA GPU when there is one, else the CPU (see :func:`resolve`)."""
        return self.name == "auto"

    @property
    def is_gpu(self) -> bool:
        """A real GPU, asked for by name (not the simulator)."""
        return self.name == "cuda"

    @property
    def is_simulator(self) -> bool:
        return self.name == "sim"

    @property
    def is_host(self) -> bool:
        """The CPU backend: no GPU memory spaces, no thread blocks."""
        return self.name == "cpu"

    @property
    def may_use_gpu(self) -> bool:
        """A real GPU (and its index, ``--device``) may come with it: the GPU choice, and auto."""
        return self.is_gpu or self.is_auto


CHOICES = (
    BackendChoice("auto", "a CUDA GPU when there is one, else the CPU"),
    BackendChoice("cuda", "a real NVIDIA GPU: the CUDA kernels, timed by CUDA events"),
    BackendChoice("cpu", "Numba parallel twins of the kernels on the CPU, timed by the wall clock"),
    BackendChoice("sim", "the real CUDA kernels in Numba's simulator: every thread runs in Python, so only tiny "
                         "inputs, and its timings say nothing about a GPU"),
)
BACKEND_NAMES = tuple(c.name for c in CHOICES)


def choice(name: str) -> BackendChoice:
    """The choice called ``name`` (also a resolved backend's ``kind``); InputError for any other name."""
    for c in CHOICES:
        if c.name == name:
            return c
    raise InputError(f"backend {name!r} is not one of {', '.join(BACKEND_NAMES)}")

# numba-cuda's NumbaPerformanceWarning for small grids, which the seed variants launch on purpose. Its class
# lives in numba.cuda.core.errors (not numba.core.errors), and naming a class would import numba: match the
# message instead.
SMALL_GRID_WARNING = r".*Grid size .* will likely result in GPU under-utilization"  # after a terminal colour code


def quiet_deliberate_small_grids() -> None:
    import warnings

    warnings.filterwarnings("ignore", message=SMALL_GRID_WARNING)


def unavailable_reason(name: str) -> str:
    """Why backend ``name`` cannot be chosen in this process ('' when it can)."""
    if name == "cuda" and gpu_count() == 0:
        why = "this process runs the CUDA simulator" if simulator_active() else "no CUDA GPU was found"
        return f"the cuda backend needs a CUDA GPU: {why}"
    if name == "sim" and not simulator_active():
        return ("the CUDA simulator is chosen when the program starts (numba is already loaded for real CUDA): "
                "start it with --backend sim (in the window: Render > Restart with the CUDA Simulator)")
    return ""


class SkipKind(enum.Enum):
    """Why a variant does not run; callers test the kind, never the wording."""

    NEEDS_CUDA_BACKEND = "needs a CUDA backend"
    NEEDS_GPU = "needs a real GPU"
    NOT_IN_SIMULATOR = "not in the simulator"
    MISSING_LIBRARY = "library not installed"
    NOT_APPLICABLE = "does not apply"
    TOO_LONG = "estimated far past --max-seconds"
    NOT_UNDER_COMPILER = "a feature this process's compiler lacks"
    COMPILER_WRONG_CODE = "this process's compiler makes wrong code of it that would end the CUDA context"


@dataclass(frozen=True)
class Skip:
    """A typed reason a variant was skipped; ``text`` is what the user reads."""

    kind: SkipKind
    text: str

    def __str__(self) -> str:
        return self.text


def not_applicable(text: str) -> Skip:
    """A variant that does not apply to this problem (an op or dtype it lacks), saying why."""
    return Skip(SkipKind.NOT_APPLICABLE, text)


@dataclass(frozen=True)
class Caps:
    """What a backend can finish in reasonable time: the simulator runs every GPU thread in Python."""

    max_image_side: int
    max_spheres: int
    max_repeats: int
    timings_mean_gpu_speed: bool  # False: the numbers time Python, not a GPU
    default_repeats: int = 10
    max_launch_threads: int | None = None  # threads in one launch (block x grid); None: the device's own limits

    def check_repeats(self, repeats: int | None, option: str = "--repeats") -> int:
        """``repeats``, or this backend's default when None; refused outside 1..max_repeats."""
        if repeats is None:
            return self.default_repeats
        if not 1 <= repeats <= self.max_repeats:
            raise InputError(f"{option} {repeats} is out of range; allowed 1..{self.max_repeats} on this backend")
        return repeats


MAX_REPEATS = 10_000  # a real GPU or the CPU: enough for any median, and a run that still ends
_CAPS = {
    "cuda": Caps(max_image_side=4096, max_spheres=10**9, max_repeats=MAX_REPEATS, timings_mean_gpu_speed=True),
    "cpu": Caps(max_image_side=4096, max_spheres=10**9, max_repeats=MAX_REPEATS, timings_mean_gpu_speed=False),
    # a 64x64 frame of 20 spheres takes about 3 s in the simulator: keep every launch that small
    "sim": Caps(max_image_side=128, max_spheres=64, max_repeats=5, timings_mean_gpu_speed=False, default_repeats=2,
                max_launch_threads=1 << 16),
}
SIM_TIMING_NOTE = ("simulator timing: every GPU thread runs in Python, so these numbers say nothing about a GPU "
                   "(orders of variants can even be reversed)")


@dataclass(frozen=True)
class Backend:
    """A resolved backend: ``kind`` is 'cuda', 'sim' or 'cpu'; ``note`` says why auto chose it.

    Callers ask it what they need (its timer, limits, device name, copy peak, caps, why a variant cannot
    run) instead of comparing its kind to a name."""

    kind: str
    device: int = 0
    note: str = ""

    @property
    def runs_cuda_kernels(self) -> bool:
        """True for 'cuda' and 'sim': the @cuda.jit kernels run (on a GPU or in the simulator)."""
        return self.kind in ("cuda", "sim")

    @property
    def is_gpu(self) -> bool:
        """A real GPU (not the simulator)."""
        return self.kind == "cuda"

    @property
    def is_simulator(self) -> bool:
        return self.kind == "sim"

    @property
    def is_host(self) -> bool:
        """The CPU backend: no GPU memory spaces, no thread blocks."""
        return self.kind == "cpu"

    @property
    def caps(self) -> Caps:
        return _CAPS[self.kind]

    @property
    def timing_method(self) -> str:
        return "CUDA events" if self.is_gpu else "wall time"

    @property
    def timing_note(self) -> str:
        """What a reader must know about this backend's timings ('' on a real GPU and the CPU)."""
        return SIM_TIMING_NOTE if self.is_simulator else ""

    @property
    def label(self) -> str:
        if self.is_gpu:
            return f"cuda:{self.device} ({self.device_name})"
        if self.is_simulator:
            return "sim (CUDA simulator)"
        return f"cpu ({self.device_name})"

    @property
    def device_name(self) -> str:
        """The name that goes into timing rows and the status line."""
        if self.is_gpu:
            return gpu_name(self.device)
        return "CUDA simulator" if self.is_simulator else cpu_name()

    @property
    def limits(self):
        """Launch limits (:class:`kernels.backend.devices.DeviceLimits`); cpu and sim use CUDA's usual values."""
        if self.is_gpu:
            return gpu_limits(self.device)
        if self.is_simulator:
            return DeviceLimits(name="CUDA simulator", sm_count=2)
        return DeviceLimits(name=cpu_name(), sm_count=cpu_cores())

    def activate(self) -> None:
        """Make this backend's GPU the current CUDA device (no-op for cpu and sim)."""
        if self.is_gpu:
            from numba import cuda

            cuda.select_device(self.device)

    def free_device_bytes(self) -> int | None:
        """Free memory on this backend's GPU (None on the CPU and in the simulator)."""
        if not self.is_gpu:
            return None
        from numba import cuda

        with cuda.gpus[self.device]:
            return int(cuda.current_context().get_memory_info()[0])

    def skip_reason(self, variant_kind: str) -> Skip | None:
        """Why a variant of kind 'gpu', 'cpu' or 'peer' (see :mod:`kernels.harness.variants`) cannot run here."""
        if variant_kind in ("gpu", "peer") and self.is_host:
            return Skip(SkipKind.NEEDS_CUDA_BACKEND,
                        "needs a CUDA backend (cuda or sim); this run uses the cpu backend")
        if variant_kind == "peer" and self.is_simulator:
            return Skip(SkipKind.NEEDS_GPU, "library peers need a real GPU, not the simulator")
        return None


HOST = Backend("cpu")  # the host itself, for CPU references and twins


def resolve(name: str = "auto", device: int | None = None) -> Backend:
    """Turn a user's backend name (and optional GPU index) into a usable :class:`Backend`."""
    one_of(name, BACKEND_NAMES, "backend")
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


