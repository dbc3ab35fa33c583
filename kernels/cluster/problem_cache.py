"""A worker's problems of one sweep, kept between its pieces: a local run builds each problem (its seeded
input, the reference result, the device copy) once for every variant; a piece of one variant would build it
again for each (at 2^28 elements, seconds of random numbers, a numpy reference and a 1 GB copy, for every
variant). A piece's problem with the same algorithm, size, options, seed and input is the one an earlier
piece of the same sweep built here, as in a local run, where every variant gets the same problem object.

Bounded by bytes (the problems' arrays), least recently used out first; a new sweep drops the last one's."""

from __future__ import annotations

import threading
from collections import OrderedDict

BUDGET_BYTES = 4 << 30  # at most; less where the host's free memory is small (budget())


class ProblemCache:
    """``get(key, build)``: the problem kept under ``key``, else ``build()``'s, kept while the budget holds."""

    def __init__(self, scope: str, budget_bytes: int):
        self.scope, self.budget = scope, int(budget_bytes)
        self._kept: OrderedDict = OrderedDict()  # key -> (problem, bytes)
        self._lock = threading.Lock()  # a client's forget() comes on the worker's event loop
        self.hits = self.misses = 0

    def get(self, key, build):
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                self.hits += 1
                return self._kept[key][0]
        problem = build()
        size = problem_bytes(problem)
        with self._lock:
            self.misses += 1
            if size <= self.budget:
                self._kept[key] = (problem, size)
                while sum(b for _, b in self._kept.values()) > self.budget:
                    self._kept.popitem(last=False)
        return problem

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)


def problem_bytes(problem) -> int:
    """What keeping ``problem`` costs: the bytes it reads (its input), or its numpy arrays' bytes."""
    import numpy as np

    arrays = sum(v.nbytes for v in vars(problem).values() if isinstance(v, np.ndarray)) if hasattr(
        problem, "__dict__") else 0
    return max(int(getattr(problem, "bytes_read", 0) or 0), arrays)


def budget() -> int:
    """BUDGET_BYTES, or an eighth of the host's available memory where that is less (a laptop's workers)."""
    try:
        import psutil  # a dependency of distributed

        return min(BUDGET_BYTES, psutil.virtual_memory().available // 8)
    except (ImportError, OSError):
        return BUDGET_BYTES // 4
