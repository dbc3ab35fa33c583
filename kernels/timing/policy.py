"""How long the timers measure, set for a whole run (:func:`measurement`): the warm-up, a cold L2, and an
NVBench-like stopping rule that repeats until the median is stable."""

from __future__ import annotations

import contextlib
import statistics
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable


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


_POLICY: ContextVar[Policy] = ContextVar("timing_policy", default=Policy())  # noqa: B039 - frozen


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


class Stopped(BaseException):
    """Stop, heard between two samples (or warm-up calls) of a timing: the row in progress is not finished.
    A BaseException, so a variant's own ``except Exception`` never turns it into an error row."""


_STOP: ContextVar[Callable[[], bool] | None] = ContextVar("timing_stop", default=None)


@contextlib.contextmanager
def stopping(should_stop: Callable[[], bool] | None):
    """Within it, every timing asks ``should_stop()`` after each sample and warm-up call and raises
    :class:`Stopped` when it turns true: a Stop (a window's, a cluster's) is heard within one sample, not
    one row (a row of 20 repeats on a large problem can take seconds)."""
    token = _STOP.set(should_stop)
    try:
        yield
    finally:
        _STOP.reset(token)


def check_stop() -> None:
    """Raise :class:`Stopped` when the run's Stop was asked (see :func:`stopping`)."""
    should_stop = _STOP.get()
    if should_stop is not None and should_stop():
        raise Stopped()


def repeat_until_stable(sample: Callable[[], float], repeats: int, policy: Policy,
                        clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """``repeats`` samples, then (with a tolerance) more until the median is stable.

    Stable: the median of all samples differs from the median without the newest ``repeats`` of them by
    at most ``tolerance`` x that median. Stops anyway at ``max_repeats`` samples or ``max_seconds``. Each
    sample is a beat of the work (kernels/backend/watchdog.py: a child's parent hears it progress)."""
    from kernels.backend.watchdog import beat

    taken = sample

    def sample() -> float:
        value = taken()
        beat()
        check_stop()
        return value

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
