"""`best`'s launch per device and size: a short sweep over (items per thread, block), the grid following
from them (one block per tile of block x items elements), whose winner is cached on disk.

The cache is one JSON file, ``tuning.json`` in ``$RAYTRACER_CACHE_DIR`` (else ``$XDG_CACHE_HOME/raytracer-app``,
else ``~/.cache/raytracer-app``), keyed by device name, numba-cuda version, kernel layout, op, dtype and size
bucket (the power of two at or below n). A new device, numba-cuda version or kernel tunes again; ``--retune``
forces it.
On the simulator and the CPU nothing is tuned (their timings say nothing about a GPU).
"""

from __future__ import annotations

import contextlib
import json
import os
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

CACHE_FILE = "tuning.json"
SWEEP_ITEMS = (4, 8, 16, 32)  # best's items per thread: whole 16-byte loads of 4 elements, 1 to 8 of them
SWEEP_BLOCKS = (128, 256, 512, 1024)
SWEEP_REPEATS = 5  # per configuration: the sweep ranks configurations, the benchmark measures the winner

_RETUNE: ContextVar[bool] = ContextVar("retune", default=False)
_RETUNED_HERE: set = set()  # keys swept again in this process: --retune redoes each once, not per repeat run


@dataclass(frozen=True)
class Choice:
    """A tuned launch: items per thread and block (the grid follows the block), its median in the sweep."""

    items: int
    block: int
    median_ms: float
    configurations: int  # how many the sweep timed

    def note(self, source: str) -> str:
        return f"tuned: items {self.items}, block {self.block} ({source})"


def cache_path() -> Path:
    from kernels.io.cache import cache_root

    return cache_root() / CACHE_FILE


def size_bucket(n: int) -> str:
    """The power of two at or below ``n`` as '2^k': sizes within a factor of two share a tuning."""
    return f"2^{max(0, int(n).bit_length() - 1)}"


def cache_key(device: str, numba_cuda: str, op: str, dtype: str, n: int, kernel: str = "best") -> str:
    """``kernel`` names the kernel's layout: a rewritten kernel is tuned afresh, not given an old choice."""
    return f"{device} | numba-cuda {numba_cuda} | {kernel} | {op} | {dtype} | n {size_bucket(n)}"


def load_cache(path: Path | None = None) -> dict:
    """The cache's entries ({} when there is none or it is unreadable: tuning again is always safe)."""
    path = path or cache_path()
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(entries: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)  # atomic: a reader sees the old file or the new one


@contextlib.contextmanager
def retuning(enabled: bool = True):
    """Inside the block, `best` sweeps again even when the cache has an entry (``--retune``)."""
    token = _RETUNE.set(enabled)
    try:
        yield
    finally:
        _RETUNE.reset(token)


def retune_requested() -> bool:
    return _RETUNE.get()


def sweep(measure: Callable[[int, int], float | None], items=SWEEP_ITEMS, blocks=SWEEP_BLOCKS) -> Choice:
    """Time every (items, block) with ``measure`` (median ms, or None when that launch cannot run or gives a
    wrong result) and return the fastest."""
    best, timed = None, 0
    for i in items:
        for b in blocks:
            ms = measure(i, b)
            if ms is None:
                continue
            timed += 1
            if best is None or ms < best[0]:
                best = (ms, i, b)
    if best is None:
        raise RuntimeError("the tuning sweep found no launch that runs and verifies")
    return Choice(items=best[1], block=best[2], median_ms=best[0], configurations=timed)


def choose(key: str, measure: Callable[[int, int], float | None], path: Path | None = None) -> tuple[Choice, str]:
    """The cached choice for ``key`` ('cached'), or a fresh sweep's, stored ('tuned now'); ``--retune``
    always sweeps."""
    path = path or cache_path()
    entries = load_cache(path)
    entry = entries.get(key)
    if entry and (not retune_requested() or key in _RETUNED_HERE):
        try:
            return Choice(**entry), "cached"
        except TypeError:  # an entry from an older layout: tune again
            pass
    choice = sweep(measure)
    if retune_requested():
        _RETUNED_HERE.add(key)
    entries = load_cache(path)  # re-read: another process may have added entries meanwhile
    entries[key] = asdict(choice)
    try:
        _save(entries, path)
    except OSError:
        return choice, "tuned now, cache not writable"
    return choice, "tuned now"
