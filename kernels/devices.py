"""Device information: the `devices` report (what seed 003 prints from cudaGetDeviceProperties) and the
limits that input validation needs (threads per block, constant memory, SM count)."""

from __future__ import annotations

import functools
import os
import platform
from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceLimits:
    """What a launch must respect. cpu and sim use CUDA's usual values so the same checks apply."""

    name: str
    max_threads_per_block: int = 1024
    max_block_dim: tuple[int, int, int] = (1024, 1024, 64)
    total_constant_memory: int = 65536
    sm_count: int = 1
    warp_size: int = 32
    max_shared_memory_per_block: int = 49152


@functools.lru_cache(maxsize=None)
def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def available_host_bytes() -> int | None:
    """Memory the system can still give this process without swapping (MemAvailable), None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def cpu_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@functools.lru_cache(maxsize=None)
def gpu_name(device: int = 0) -> str:
    from numba import cuda

    name = cuda.gpus[device].name
    return name.decode() if isinstance(name, bytes) else str(name)


@functools.lru_cache(maxsize=None)
def gpu_limits(device: int = 0) -> DeviceLimits:
    from numba import cuda

    with cuda.gpus[device]:
        d = cuda.get_current_device()
        return DeviceLimits(
            name=gpu_name(device),
            max_threads_per_block=d.MAX_THREADS_PER_BLOCK,
            max_block_dim=(d.MAX_BLOCK_DIM_X, d.MAX_BLOCK_DIM_Y, d.MAX_BLOCK_DIM_Z),
            total_constant_memory=d.TOTAL_CONSTANT_MEMORY,
            sm_count=d.MULTIPROCESSOR_COUNT,
            warp_size=d.WARP_SIZE,
            max_shared_memory_per_block=d.MAX_SHARED_MEMORY_PER_BLOCK,
        )


def limits_for(backend) -> DeviceLimits:
    """Launch limits of a resolved :class:`kernels.backend.Backend` (the backend answers)."""
    return backend.limits


def device_name(backend) -> str:
    """The name that goes into timing rows and the status line (the backend answers)."""
    return backend.device_name


def gpu_properties(device: int) -> list[tuple[str, str]]:
    """(label, value) pairs for one GPU, in the order seed 003 prints them."""
    from numba import cuda

    with cuda.gpus[device]:
        d = cuda.get_current_device()
        free, total = cuda.current_context().get_memory_info()
        cc = d.compute_capability
        yes = lambda v: "enabled" if v else "disabled"  # noqa: E731
        return [
            ("Name", gpu_name(device)),
            ("Compute capability", f"{cc[0]}.{cc[1]}"),
            ("Clock rate", f"{d.CLOCK_RATE / 1e3:.0f} MHz"),
            ("Device copy overlap", yes(d.GPU_OVERLAP)),
            ("Kernel execution timeout", yes(d.KERNEL_EXEC_TIMEOUT)),
            ("Total global memory", f"{total / 2**30:.1f} GiB ({total} bytes)"),
            ("Total constant memory", f"{d.TOTAL_CONSTANT_MEMORY} bytes"),
            ("Multiprocessor count", str(d.MULTIPROCESSOR_COUNT)),
            ("Shared memory per block", f"{d.MAX_SHARED_MEMORY_PER_BLOCK} bytes"),
            ("Shared memory per multiprocessor", f"{d.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR} bytes"),
            ("Registers per block", str(d.MAX_REGISTERS_PER_BLOCK)),
            ("Threads in warp", str(d.WARP_SIZE)),
            ("Max threads per block", str(d.MAX_THREADS_PER_BLOCK)),
            ("Max thread dimensions", f"({d.MAX_BLOCK_DIM_X}, {d.MAX_BLOCK_DIM_Y}, {d.MAX_BLOCK_DIM_Z})"),
            ("Max grid dimensions", f"({d.MAX_GRID_DIM_X}, {d.MAX_GRID_DIM_Y}, {d.MAX_GRID_DIM_Z})"),
        ]


def devices_report() -> str:
    """The text of `raytracer-app devices` and of the GUI's Help > Device Info."""
    from kernels import backend

    lines = []
    count = backend.gpu_count()
    if backend.simulator_active():
        lines.append("CUDA: this process runs the CUDA simulator (NUMBA_ENABLE_CUDASIM=1); no real GPU is used")
    elif count == 0:
        lines.append("CUDA: no CUDA GPU found (the cuda backend is unavailable; auto uses the CPU backend)")
    for i in range(count):
        lines.append(f"--- General information for device {i} ---")
        lines.extend(f"  {label}: {value}" for label, value in gpu_properties(i))
    lines.append(f"CPU backend: {cpu_name()}, {cpu_cores()} cores (Numba parallel)")
    return "\n".join(lines)
