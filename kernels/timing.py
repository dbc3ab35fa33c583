"""Timing written once: CUDA events for kernels on a GPU, perf_counter elsewhere.

Every helper warms up first, so JIT compilation never lands in a timing, and returns a :class:`Timing`
whose ``method`` says how it was measured ('cuda-events' or 'wall').
"""

from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass
from typing import Callable

from kernels.errors import InputError


@dataclass(frozen=True)
class Timing:
    samples_ms: tuple[float, ...]
    method: str  # 'cuda-events' (kernel only) or 'wall' (perf_counter around the call)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def min_ms(self) -> float:
        return min(self.samples_ms)

    @property
    def max_ms(self) -> float:
        return max(self.samples_ms)

    @property
    def repeats(self) -> int:
        return len(self.samples_ms)

    def summary(self) -> str:
        return f"median {self.median_ms:.3f} ms (min {self.min_ms:.3f}, max {self.max_ms:.3f}, n={self.repeats}, {self.method})"


def check_repeats(repeats: int) -> int:
    if not isinstance(repeats, int) or repeats < 1:
        raise InputError(f"repeats {repeats!r} must be a whole number of at least 1")
    return repeats


GPU_HEAD_START_NS = 200_000  # longer than Python needs to launch a few kernels (about 20 us each)


def time_cuda_events(launch: Callable[[], object], repeats: int, warmup: int = 1) -> Timing:
    """Kernel time from CUDA events recorded around ``launch()`` on the default stream.

    A short sleeping kernel goes first, so the GPU is still busy when Python has queued the start event
    and the launches: the events then bracket the kernels alone, not the launch latency."""
    from numba import cuda

    check_repeats(repeats)
    for _ in range(warmup):
        launch()
    cuda.synchronize()
    start, stop = cuda.event(), cuda.event()
    head_start = _head_start_kernel()
    samples = []
    for _ in range(repeats):
        head_start[1, 1](GPU_HEAD_START_NS)
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        samples.append(float(cuda.event_elapsed_time(start, stop)))
    return Timing(tuple(samples), "cuda-events")


@functools.lru_cache(maxsize=None)
def _head_start_kernel():
    from numba import cuda

    @cuda.jit("void(int64)")
    def sleep_ns(ns):
        # nanosleep sleeps at most about 1 ms a call: several short naps
        for _ in range(ns // 50_000 + 1):
            cuda.nanosleep(50_000)

    return sleep_ns


def time_wall(fn: Callable[[], object], repeats: int, warmup: int = 1, sync: Callable[[], object] | None = None) -> Timing:
    """Wall time of ``fn()`` (followed by ``sync()`` when given, e.g. ``cuda.synchronize``)."""
    check_repeats(repeats)
    for _ in range(warmup):
        fn()
    if sync:
        sync()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        samples.append((time.perf_counter() - t0) * 1e3)
    return Timing(tuple(samples), "wall")


def time_kernel(backend, launch: Callable[[], object], repeats: int, warmup: int = 1) -> Timing:
    """Kernel timing on a resolved backend: CUDA events on a GPU, wall time in the simulator and on the
    CPU (see :meth:`kernels.backend.Backend.time`)."""
    return backend.time(launch, repeats, warmup)
