"""Device information: the `devices` report (what seed 003 prints from cudaGetDeviceProperties) and the
limits that input validation needs (threads per block, constant memory, SM count)."""

from __future__ import annotations

import functools
import os
import platform
from dataclasses import dataclass

from kernels.backend import driver
from kernels.backend.simulator import simulator_active


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


def gpu_count() -> int:
    """Number of real CUDA GPUs this process can use (0 in a simulator process or without a working
    driver), asked of the driver itself: numba.cuda is not needed to know."""
    return 0 if simulator_active() else driver.device_count()


@functools.lru_cache(maxsize=None)
def gpu_name(device: int = 0) -> str:
    return driver.device_name(device)


@functools.lru_cache(maxsize=None)
def gpu_limits(device: int = 0) -> DeviceLimits:
    a = lambda attr: driver.attribute(device, attr)  # noqa: E731
    return DeviceLimits(
        name=gpu_name(device), max_threads_per_block=a("MAX_THREADS_PER_BLOCK"),
        max_block_dim=(a("MAX_BLOCK_DIM_X"), a("MAX_BLOCK_DIM_Y"), a("MAX_BLOCK_DIM_Z")),
        total_constant_memory=a("TOTAL_CONSTANT_MEMORY"), sm_count=a("MULTIPROCESSOR_COUNT"),
        warp_size=a("WARP_SIZE"), max_shared_memory_per_block=a("MAX_SHARED_MEMORY_PER_BLOCK"),
    )


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
    lines = []
    count = gpu_count()
    if simulator_active():
        lines.append("CUDA: this process runs the CUDA simulator (NUMBA_ENABLE_CUDASIM=1); no real GPU is used")
    elif count == 0:
        lines.append("CUDA: no CUDA GPU found (the cuda backend is unavailable; auto uses the CPU backend)")
    for i in range(count):
        lines.append(f"--- General information for device {i} ---")
        lines.extend(f"  {label}: {value}" for label, value in gpu_properties(i))
    lines.append(f"CPU backend: {cpu_name()}, {cpu_cores()} cores (Numba parallel)")
    return "\n".join(lines)


# --- what a measurement needs to know of the memory system -----------------------------------------------

# Spec HBM/DRAM bandwidth in GB/s by device name (the vendor's figure; the first matching key wins, so
# the longer names come first). Unknown devices get no pct_of_spec rather than a guess.
SPEC_BANDWIDTH_GBPS = (
    ("H100 PCIe", 2000.0),
    ("H100 NVL", 3900.0),
    ("H100", 3350.0),  # H100 SXM5 80GB HBM3
    ("H200", 4800.0),
    ("GH200", 4000.0),
    ("A100-SXM4-80GB", 2039.0),
    ("A100 80GB PCIe", 1935.0),
    ("A100", 1555.0),  # the 40 GB parts
    ("L40S", 864.0),
    ("L4", 300.0),
    ("A10", 600.0),
    ("V100", 900.0),
    ("T4", 320.0),
)


def spec_bandwidth_gbps(name: str) -> float | None:
    """The device's spec memory bandwidth in GB/s, or None when the name is not in the table."""
    for key, gbps in SPEC_BANDWIDTH_GBPS:
        if key.lower() in (name or "").lower():
            return gbps
    return None


@functools.lru_cache(maxsize=None)
def gpu_l2_bytes(device: int = 0) -> int | None:
    """The GPU's L2 cache size from the driver (50 MiB on an H100, 60 MiB on an H200), None if unknown."""
    if simulator_active():
        return None
    try:
        return driver.attribute(device, "L2_CACHE_SIZE")
    except driver.DriverError:  # no driver, or an attribute it lacks
        return None


# No CPU has more last-level cache per core than this (AMD's stacked-cache parts: 12 MiB; large server parts
# 2-5 MiB). A virtual machine may report its host's whole cache, or one it made up (300 MiB for 2 cores),
# which only the cores it shares it with could use: a share above this is not believed.
LLC_PER_CORE_CAP = 16 * 2**20


@functools.lru_cache(maxsize=None)
def cpu_last_level_cache_bytes() -> int | None:
    """The largest cache /sys lists for CPU 0 (its last level), at most LLC_PER_CORE_CAP for each CPU that
    shares it; None when it cannot be read."""
    import glob
    import os

    best = None
    for folder in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/"):
        try:
            with open(os.path.join(folder, "size")) as f:
                text = f.read().strip()
        except OSError:
            continue
        size = _cache_size_bytes(text)
        if size and (best is None or size > best):
            best = min(size, LLC_PER_CORE_CAP * _sharing_cpus(folder))
    return best


def _sharing_cpus(folder: str) -> int:
    """How many CPUs share the cache of ``folder`` (its shared_cpu_list, e.g. '0-1,4'); 1 when unreadable."""
    import os

    try:
        with open(os.path.join(folder, "shared_cpu_list")) as f:
            text = f.read().strip()
        count = 0
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            count += int(hi or lo) - int(lo) + 1
        return max(count, 1)
    except (OSError, ValueError):
        return 1


def _cache_size_bytes(text: str) -> int | None:
    """'32K', '1024K', '32M' or '512' (bytes) as bytes; None when unreadable."""
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    text = text.strip().upper()
    try:
        if text and text[-1] in units:
            return int(text[:-1]) * units[text[-1]]
        return int(text)
    except ValueError:
        return None
