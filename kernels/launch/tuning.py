"""`best`'s launch per device and size: a short sweep over (items per thread, block), the grid following
from them (one block per tile of block x items elements), whose winner is cached on disk.

The cache is one JSON file, ``tuning.json`` in ``$RAYTRACER_CACHE_DIR`` (else ``$XDG_CACHE_HOME/raytracer-app``,
else ``~/.cache/raytracer-app``), keyed by device name, numba-cuda version, kernel layout, op, dtype and size
bucket (the power of two at or below n). A new device, numba-cuda version or kernel tunes again; ``--retune``
forces it.
The cache heals: an entry that is not a valid launch (types, ranges) is discarded with one warning and tuned
again; a folder that cannot be used means no cache (one warning). Writers merge under an exclusive lock
(``tuning.json.lock`` next to it), re-reading the file inside the lock, so processes tuning at once lose
nothing.
On the simulator and the CPU nothing is tuned (their timings say nothing about a GPU).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import stat
import statistics
import time
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

CACHE_FILE = "tuning.json"
MAX_CACHE_BYTES = 16 * 2**20  # entries of a few hundred bytes: thousands of devices and sizes fit
SWEEP_ITEMS = (4, 8, 16, 32)  # best's items per thread: whole 16-byte loads of 4 elements, 1 to 8 of them
SWEEP_BLOCKS = (128, 256, 512, 1024)
ITEMS_MULTIPLE = 4  # a cached items per thread must be whole 16-byte loads
BLOCK_MULTIPLE, MAX_BLOCK = 32, 1024  # a cached block must be whole warps, at most CUDA's limit
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
    # with a confirmation (:func:`confirm`): the runner-up's margin over the choice, the re-timings' noise
    # (both relative), and whether the choice fell to the preference order (margin within the noise)
    margin: float | None = None
    noise: float | None = None
    by_preference: bool = False

    def note(self, source: str) -> str:
        return f"tuned: items {self.items}, block {self.block} ({source}{self.confirmation()})"

    def confirmation(self) -> str:
        """'; ahead by 3.1%, noise 0.8%' (or '...: a tie, by preference'), or '' without a confirmation."""
        if self.margin is None:
            return ""
        how = ", a tie, chosen by preference" if self.by_preference else ""
        return f"; ahead by {self.margin:.1%}, noise {self.noise:.1%}{how}"


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
    """The cache's entries ({} when there is none; {} and one warning when it is unreadable or damaged:
    tuning again is always safe)."""
    from kernels.io.cache import BadEntry, read_entry

    path = path or cache_path()
    try:
        raw = read_entry(path, "tuning cache", MAX_CACHE_BYTES)
        if raw is None:
            return {}
        data = json.loads(raw)
    except BadEntry as exc:
        _warn_damaged(path, f"unusable ({exc})")
        return {}
    except (ValueError, RecursionError) as exc:
        _warn_damaged(path, f"unreadable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        return {}
    if not isinstance(data, dict):
        _warn_damaged(path, "not a JSON object")
        return {}
    return data


def _warn_damaged(path: Path, why: str) -> None:
    from kernels.io.cache import warn_once

    warn_once(f"tuning cache {path} is {why}; tuning again")


def validate(entry, items_range: tuple[int, int] = (min(SWEEP_ITEMS), max(SWEEP_ITEMS))) -> Choice:
    """The Choice a cache entry holds, or ValueError saying why it is not a launch to trust: items a
    positive multiple of 4 within ``items_range`` (the variant's rule), block a positive multiple of 32 up
    to 1024, a finite median and a positive count of configurations."""
    if not isinstance(entry, dict):
        raise ValueError("not an object")
    fields = {"items", "block", "median_ms", "configurations"}
    optional = {"margin", "noise", "by_preference"}
    if not fields <= set(entry) <= fields | optional:
        raise ValueError(f"fields {sorted(entry)}, expected {sorted(fields)} (and optionally {sorted(optional)})")

    def whole(name):
        value = entry[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} {value!r} is not a whole number")
        return value

    items, block, configurations = whole("items"), whole("block"), whole("configurations")
    lo, hi = items_range
    if not (lo <= items <= hi and items > 0 and items % ITEMS_MULTIPLE == 0):
        raise ValueError(f"items {items} is not a multiple of {ITEMS_MULTIPLE} in {lo}..{hi}")
    if not (0 < block <= MAX_BLOCK and block % BLOCK_MULTIPLE == 0):
        raise ValueError(f"block {block} is not a multiple of {BLOCK_MULTIPLE} in {BLOCK_MULTIPLE}..{MAX_BLOCK}")
    median = entry["median_ms"]
    if isinstance(median, bool) or not isinstance(median, (int, float)) or not math.isfinite(median) or median < 0:
        raise ValueError(f"median_ms {median!r} is not a time")
    if configurations <= 0:
        raise ValueError(f"configurations {configurations} is not positive")
    extra = {}
    for name in ("margin", "noise"):
        value = entry.get(name)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} {value!r} is not a relative difference")
            extra[name] = float(value)
    if not isinstance(entry.get("by_preference", False), bool):
        raise ValueError(f"by_preference {entry['by_preference']!r} is not true or false")
    return Choice(items=items, block=block, median_ms=float(median), configurations=configurations,
                  by_preference=entry.get("by_preference", False), **extra)


LOCK_WAIT_S = 10.0  # a store waits this long for another process's (a merge takes milliseconds)


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock on ``<cache>.lock`` next to the cache (flock: released when the process dies),
    opened without blocking and only as a regular file; OSError when it is something else or another
    process holds it for longer than LOCK_WAIT_S."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path.with_name(path.name + ".lock"), flags, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name}.lock is not a regular file")
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OSError(f"another process has held {path.name}.lock for {LOCK_WAIT_S:g} s") from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def store(key: str, choice: Choice, path: Path | None = None) -> None:
    """Add ``key``'s choice to the cache: under the lock, re-read the file (other processes' entries are
    kept) and write it through the project's one writer (atomic replace). OSError, InputError or
    WriteFailed when it cannot be written."""
    from kernels.io.writer import write_output

    path = path or cache_path()
    with _locked(path):
        entries = load_cache(path)
        entries[key] = asdict(choice)
        write_output(path, json.dumps(entries, indent=1, sort_keys=True) + "\n", "tuning cache", backup=False)


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


def sweep(measure: Callable[[int, int], float | None], items=SWEEP_ITEMS, blocks=SWEEP_BLOCKS,
          confirm_top: int = 0) -> Choice:
    """Time every (items, block) with ``measure`` (median ms, or None when that launch cannot run or gives a
    wrong result) and return the fastest; with ``confirm_top`` (2 or more), the fastest few are timed again
    alternated and :func:`decide` picks among them (a sweep's single timings of launches a few percent apart
    order them by chance)."""
    timed = []
    for i in items:
        for b in blocks:
            ms = measure(i, b)
            if ms is not None:
                timed.append((ms, items.index(i), blocks.index(b), i, b))
    if not timed:
        raise RuntimeError("the tuning sweep found no launch that runs and verifies")
    timed.sort()
    ms, _, _, i, b = timed[0]
    if confirm_top < 2 or len(timed) < 2:
        return Choice(items=i, block=b, median_ms=ms, configurations=len(timed))
    # the leaders in the sweep's own order (items, then block), which is also the preference on a tie
    leaders = sorted(timed[:confirm_top], key=lambda t: (t[1], t[2]))
    candidates = [(t[3], t[4]) for t in leaders]
    retimed = confirm(candidates, lambda c: measure(*c))
    decision = decide(retimed, candidates)
    if decision is None:  # none of them ran again: the sweep's fastest
        return Choice(items=i, block=b, median_ms=ms, configurations=len(timed))
    (i, b), median, margin, noise, by_preference = decision
    return Choice(items=i, block=b, median_ms=median, configurations=len(timed), margin=margin, noise=noise,
                  by_preference=by_preference)


CONFIRM_TOP = 3  # the sweep's leaders timed again
CONFIRM_ROUNDS = 4  # each timed this often, alternated: A B C A B C ...


def confirm(candidates: list, measure: Callable, rounds: int = CONFIRM_ROUNDS) -> dict:
    """{candidate: [ms, ...]}: each candidate timed ``rounds`` times, alternated (A B C A B C ...), so that a
    drift of the device's clocks or temperature during the re-timing falls on all of them alike; a timing of
    None (the launch failed this time) is left out."""
    times = {c: [] for c in candidates}
    for _ in range(rounds):
        for c in candidates:
            ms = measure(c)
            if ms is not None:
                times[c].append(float(ms))
    return times


def decide(times: dict, preference: list):
    """(candidate, its median ms, margin, noise, by preference) from alternated re-timings ``times``
    ({candidate: [ms, ...]}), or None when none has a timing. The margin is how much slower the runner-up's
    median is than the leader's, the noise the largest relative spread ((max - min) / median) of either's
    timings. Where the margin is above the noise the leader is chosen; else every candidate within the noise
    of the leader ties, and the first of them in ``preference`` is chosen, so that two runs on one machine
    choose alike whichever the noise put ahead."""
    medians = {c: statistics.median(t) for c, t in times.items() if t}
    if not medians:
        return None
    ranked = sorted(medians, key=lambda c: (medians[c], preference.index(c)))
    leader = ranked[0]
    if len(ranked) == 1:
        return leader, medians[leader], 0.0, _spread(times[leader]), False
    runner_up = ranked[1]
    margin = medians[runner_up] / medians[leader] - 1 if medians[leader] > 0 else 0.0
    noise = max(_spread(times[leader]), _spread(times[runner_up]))
    if margin > noise:
        return leader, medians[leader], margin, noise, False
    tied = [c for c in ranked if medians[c] <= medians[leader] * (1 + noise)]
    chosen = min(tied, key=preference.index)
    return chosen, medians[chosen], margin, noise, True


def _spread(values) -> float:
    m = statistics.median(values)
    return (max(values) - min(values)) / m if m > 0 else 0.0


def choose(key: str, measure: Callable[[int, int], float | None], path: Path | None = None,
           items_range: tuple[int, int] = (min(SWEEP_ITEMS), max(SWEEP_ITEMS)), items=SWEEP_ITEMS,
           confirm_top: int = 0) -> tuple[Choice, str]:
    """The cached choice for ``key`` ('cached'), or a fresh sweep's, stored ('tuned now'); ``--retune``
    always sweeps. An entry that is not a valid launch for ``items_range`` (the variant's rule) is tuned
    again after one warning; a cache folder that cannot be used means no cache (one warning)."""
    from kernels.errors import InputError
    from kernels.io.cache import usable_dir, warn_once
    from kernels.io.writer import WriteFailed

    path = path or cache_path()
    folder = usable_dir(path.parent, "tuning cache")
    entry = load_cache(path).get(key) if folder is not None else None
    if entry is not None and (not retune_requested() or key in _RETUNED_HERE):
        try:
            return validate(entry, items_range), "cached"
        except ValueError as exc:
            warn_once(f"tuning cache {path}: the entry for {key} is damaged ({exc}); tuning again")
    choice = sweep(measure, items, confirm_top=confirm_top)
    if retune_requested():
        _RETUNED_HERE.add(key)
    if folder is None:
        return choice, "tuned now, cache not writable"
    try:
        store(key, choice, path)
    except (OSError, InputError, WriteFailed) as exc:
        warn_once(f"tuning cache {path} cannot be written ({getattr(exc, 'strerror', None) or exc}); "
                  "the choice is not kept")
        return choice, "tuned now, cache not writable"
    return choice, "tuned now"
