"""Timing written once: CUDA events for kernels on a GPU, perf_counter elsewhere.

Every helper warms up first, so JIT compilation never lands in a timing, and returns a :class:`Timing`
whose ``method`` says how it was measured ('cuda-events' or 'wall').
"""

from __future__ import annotations

import contextlib
import functools
import statistics
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable

from kernels.backend import memory
from kernels.errors import InputError


@dataclass(frozen=True)
class Timing:
    samples_ms: tuple[float, ...]
    method: str  # 'cuda-events' (kernel only) or 'wall' (perf_counter around the call)
    # bench --processes: how many of the samples each process took, in order; () for one process
    processes: tuple[int, ...] = ()

    def __post_init__(self):
        if self.processes and sum(self.processes) != len(self.samples_ms):
            raise ValueError(f"{len(self.samples_ms)} samples are not split as {self.processes}")

    def by_process(self) -> list[tuple[float, ...]]:
        """The samples of each process in turn (one group for a run in one process)."""
        out, start = [], 0
        for count in self.processes or (len(self.samples_ms),):
            out.append(self.samples_ms[start:start + count])
            start += count
        return out

    @functools.cached_property
    def median_ms(self) -> float:  # kept: a row of 10,000 samples is sorted once, not per table column
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

    @property
    def noise(self) -> float | None:
        """Relative spread of the samples: (max - min) / median (None for a zero median)."""
        median = self.median_ms if self.samples_ms else 0.0
        return (self.max_ms - self.min_ms) / median if median > 0 else None


def join_timings(timings, by_process: bool = False) -> Timing | None:
    """One Timing of every part's samples, in the order taken (a row's rounds, or its processes: then
    ``by_process`` keeps the split, for more than one part); None if a part has none."""
    if not timings or any(t is None for t in timings):
        return None
    split = tuple(t.repeats for t in timings) if by_process and len(timings) > 1 else ()
    return Timing(tuple(s for t in timings for s in t.samples_ms), timings[0].method, split)


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


# --- how long to measure: noise and an NVBench-like stopping rule ------------------------------------------


@dataclass(frozen=True)
class Policy:
    """How the timers measure (set for a whole benchmark run with :func:`measurement`).

    ``tolerance``: keep repeating until the median of the samples moved by at most this fraction over the
    last ``repeats`` samples (NVBench stops when its noise estimate settles; this is the same idea on the
    median), but never past ``max_repeats`` samples or ``max_seconds`` of measuring. ``tolerance`` None:
    exactly ``repeats`` samples, as before. ``cold``: flush the GPU's L2 before every sample. ``warmup``:
    untimed calls before the samples, at least (None: each timer's own, see :func:`warmups`)."""

    tolerance: float | None = None
    max_repeats: int | None = None  # default: 10 x repeats
    max_seconds: float = 3.0
    cold: bool = False
    warmup: int | None = None


_POLICY: ContextVar[Policy] = ContextVar("timing_policy", default=Policy())


def current_policy() -> Policy:
    return _POLICY.get()


def warmups(own: int | None = None) -> int:
    """Untimed calls before a timing's samples: the timer caller's own count (default 1, so that a compile never
    lands in a timing; 0 where the caller knows its code is warm), or the run's policy's where it asks for more."""
    own = 1 if own is None else own
    asked = current_policy().warmup
    return own if asked is None else max(own, asked)


@contextlib.contextmanager
def measurement(policy: Policy):
    """Use ``policy`` for every timer called inside the block."""
    token = _POLICY.set(policy)
    try:
        yield policy
    finally:
        _POLICY.reset(token)


def relative_spread(samples) -> float | None:
    """(max - min) / median of ``samples``: 0 for identical samples, None without a positive median."""
    if not samples:
        return None
    median = statistics.median(samples)
    if median <= 0:
        return None
    return (max(samples) - min(samples)) / median


def repeat_until_stable(sample: Callable[[], float], repeats: int, policy: Policy,
                        clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """``repeats`` samples, then (with a tolerance) more until the median is stable.

    Stable: the median of all samples differs from the median without the newest ``repeats`` of them by
    at most ``tolerance`` x that median. Stops anyway at ``max_repeats`` samples or ``max_seconds``."""
    samples = [sample() for _ in range(repeats)]
    if policy.tolerance is None:
        return samples
    cap = policy.max_repeats if policy.max_repeats is not None else 10 * repeats
    t0 = clock()
    while len(samples) < cap and clock() - t0 < policy.max_seconds:
        before = statistics.median(samples)
        samples.extend(sample() for _ in range(min(repeats, cap - len(samples))))
        after = statistics.median(samples)
        if before > 0 and abs(after - before) <= policy.tolerance * before:
            break
    return samples


def is_stable(samples, repeats: int, tolerance: float) -> bool:
    """Whether the stopping rule above would call ``samples`` stable (for rows and reports)."""
    if len(samples) <= repeats:
        return False
    before = statistics.median(samples[:-repeats])
    return before > 0 and abs(statistics.median(samples) - before) <= tolerance * before


# --- cold runs: flush the GPU's L2 between samples ----------------------------------------------------------

FLUSH_FALLBACK_BYTES = 2 * 64 * 2**20  # when the driver does not say how large L2 is


@functools.lru_cache(maxsize=None)
def _flush_kernel():
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    @cuda.jit("void(int32[::1], int32)")
    def overwrite(buffer, value):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < buffer.size:
            buffer[i] = value
            i += stride

    return overwrite


_FLUSH_BUFFERS: dict = {}


def l2_flusher(device: int | None = None) -> Callable[[], None]:
    """A call that writes a buffer twice the L2 size (or 128 MiB), evicting everything else from L2,
    as NVBench's cold runs do. The buffer is allocated once per device."""
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    from kernels.backend import devices

    if device is None:
        device = cuda.get_current_device().id
    if device not in _FLUSH_BUFFERS:
        l2 = devices.gpu_l2_bytes(device)
        nbytes = max(2 * l2, FLUSH_FALLBACK_BYTES) if l2 else FLUSH_FALLBACK_BYTES
        _FLUSH_BUFFERS[device] = memory.empty(nbytes // 4, "int32")
    buffer = _FLUSH_BUFFERS[device]
    kernel = _flush_kernel()[1024, 256]
    value = [0]

    def flush():
        value[0] ^= 1
        kernel(buffer, value[0])

    return flush
