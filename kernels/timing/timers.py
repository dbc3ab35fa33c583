"""The timers: CUDA events around a kernel on a GPU (behind a head-start kernel, so the events bracket the
kernels alone), wall time elsewhere; each warms up first and samples under the run's policy."""

from __future__ import annotations

import functools
import time
from typing import Callable

from kernels.backend import memory
from kernels.errors import InputError
from kernels.timing.cold import l2_flusher
from kernels.timing.policy import check_stop, current_policy, repeat_until_stable, warmups
from kernels.timing.samples import Timing


def check_repeats(repeats: int) -> int:
    if not isinstance(repeats, int) or repeats < 1:
        raise InputError(f"repeats {repeats!r} must be a whole number of at least 1")
    return repeats


GPU_HEAD_START_NS = 200_000  # longer than Python needs to launch a few kernels (about 20 us each)


def time_cuda_events(launch: Callable[[], object], repeats: int, warmup: int | None = None,
                     before: Callable[[], object] | None = None) -> Timing:
    """Kernel time from CUDA events recorded around ``launch()`` on the default stream.

    A short sleeping kernel goes first, so the GPU is still busy when Python has queued the start event
    and the launches: the events then bracket the kernels alone, not the launch latency. ``before()``
    (e.g. emptying a table the launch fills) is queued ahead of every launch, outside the events."""
    check_repeats(repeats)
    policy = current_policy()
    for _ in range(warmups(warmup)):
        if before is not None:
            before()
        launch()
        check_stop()  # a Stop is heard between warm-up calls too (the first one may compile for seconds)
    memory.synchronize()
    timer = EventTimer()
    flush = l2_flusher() if policy.cold else None

    def sample() -> float:
        if before is not None:
            before()
        if flush is not None:
            flush()  # outside the events: the next launch finds none of its input in L2
        return timer(launch)[0]

    samples = repeat_until_stable(sample, repeats, policy)
    return Timing(tuple(samples), "cuda-events-cold" if policy.cold else "cuda-events")


class EventTimer:
    """CUDA events around one ``launch()``, behind the head-start kernel (see :func:`time_cuda_events`)."""

    def __init__(self):
        from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

        self._cuda = cuda
        self.start, self.stop = cuda.event(), cuda.event()
        self.head_start = _head_start_kernel()[1, 1]  # configured once: it is launched before every sample

    def __call__(self, launch) -> tuple[float, float]:
        """(kernel milliseconds by the events, host seconds spent queuing the launch)."""
        self.head_start(GPU_HEAD_START_NS)
        t0 = time.perf_counter()
        self.start.record()
        launch()
        self.stop.record()
        queued = time.perf_counter() - t0
        self.stop.synchronize()
        return float(self._cuda.event_elapsed_time(self.start, self.stop)), queued


@functools.lru_cache(maxsize=None)
def _head_start_kernel():
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    from kernels.io.numba_cache import heal

    heal()

    @cuda.jit("void(int64)", cache=True)
    def sleep_ns(ns):
        # nanosleep sleeps at most about 1 ms a call: several short naps
        for _ in range(ns // 50_000 + 1):
            cuda.nanosleep(50_000)

    return sleep_ns


def time_wall(fn: Callable[[], object], repeats: int, warmup: int | None = None,
              sync: Callable[[], object] | None = None, before: Callable[[], object] | None = None) -> Timing:
    """Wall time of ``fn()`` (followed by ``sync()`` when given, e.g. ``memory.synchronize``); ``before()`` runs
    ahead of every call, outside the time."""
    check_repeats(repeats)
    for _ in range(warmups(warmup)):
        if before is not None:
            before()
        fn()
        check_stop()
    if sync:
        sync()

    def sample() -> float:
        if before is not None:
            before()
            if sync:
                sync()
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        return (time.perf_counter() - t0) * 1e3

    return Timing(tuple(repeat_until_stable(sample, repeats, current_policy())), "wall")


def time_kernel(backend, launch: Callable[[], object], repeats: int, warmup: int | None = None,
                before: Callable[[], object] | None = None) -> Timing:
    """Kernel timing on a resolved backend: CUDA events on a GPU, wall time in the simulator (no usable
    events there, so it synchronises) and on the CPU. ``before()`` runs ahead of every launch, untimed (a
    hash table's insert times the insert into a table emptied before each repeat)."""
    if backend.is_gpu:
        return time_cuda_events(launch, repeats, warmup, before)
    if backend.is_simulator:
        return time_wall(launch, repeats, warmup, sync=memory.synchronize, before=before)
    return time_wall(launch, repeats, warmup, before=before)


def time_kernel_with_result(backend, make: Callable[[], object], repeats: int) -> tuple[Timing, object]:
    """:func:`time_kernel` of ``make()``, and what its last call returned: a library peer's result, which its
    check reads once the timing is done."""
    last = [None]

    def launch():
        last[0] = make()

    timing = time_kernel(backend, launch, repeats)
    return timing, last[0]
