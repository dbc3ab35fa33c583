"""A timing's samples and what is read from them: median, min, max, the spread (noise), the split by process."""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass


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


def relative_spread(samples) -> float | None:
    """(max - min) / median of ``samples``: 0 for identical samples, None without a positive median."""
    if not samples:
        return None
    median = statistics.median(samples)
    if median <= 0:
        return None
    return (max(samples) - min(samples)) / median
