"""numba's own on-disk cache (``cache=True``), made to heal: an entry numba cannot load (a truncated ``.nbc``,
a garbled ``.nbi`` index) makes numba raise and the run fail. :func:`heal` wraps numba's cache classes so
that such an entry is discarded (the function's index removed), the function compiled again and saved
afresh, with one warning line; a cache that cannot be written is one warning, not a failure.

Call :func:`heal` after importing numba (and numba.cuda, for the CUDA cache) in a module whose functions
use ``cache=True``; it is idempotent and never imports numba itself beyond its caching modules.
"""

from __future__ import annotations

import functools
import os
import re
import time

def heal() -> None:
    """Wrap the loading and saving of numba's CPU cache class, and of the CUDA one when numba.cuda is loaded
    (not the simulator's), once each (the private names: kernels/backend/numba_private.py); and the reads
    of their index and data files, which numba opens itself, unchecked (a FIFO there would hang it)."""
    from kernels.backend import numba_private

    for cls in numba_private.cache_classes():
        numba_private.wrap_cache(cls, _healing_load, _healing_save)
    numba_private.wrap_cache_file_reads(_regular_first)


# numba reads an entry's files whole (the index, then one compiled overload): their sizes are checked first.
# An index is a pickled table of a function's signatures (kilobytes); a data file one overload's machine code
# (a few MB): more is damage (or a file padded on purpose), removed and compiled again, never read.
MAX_INDEX_BYTES = 16 * 2**20
MAX_DATA_BYTES = 256 * 2**20


def _regular_first(original, path_of, missing):
    """``original`` once the file it opens is checked by the one input reader (without blocking) and its
    size bounded (MAX_INDEX_BYTES for an index, MAX_DATA_BYTES for data, and what the memory free holds):
    one that is not a regular file, or too large, is removed with one warning and counts as missing
    (``missing`` is returned, or OSError raised when it is None: what numba does for a data file gone)."""
    limit = MAX_DATA_BYTES if missing is None else MAX_INDEX_BYTES

    @functools.wraps(original)
    def wrapper(self, *args):
        from kernels.errors import InputError
        from kernels.io.cache import discard, warn_once
        from kernels.io.reader import NotAFile, check_input, host_memory_problem

        path = path_of(self, *args)
        try:
            size = check_input(path, "numba's cache file").st_size
            problem = f"{size:,} bytes; at most {limit:,}" if size > limit else host_memory_problem(size)
            unusable = f"numba's cache file {path!r} is too large to read ({problem})" if problem else None
        except NotAFile as exc:
            unusable = str(exc)
        except InputError:
            unusable = None  # missing or unreadable: numba says so itself, as before
        if unusable is None:
            return original(self, *args)
        gone = discard(path)
        warn_once(f"{unusable}; {'removed, ' if gone else ''}compiling again")
        if missing is None:
            raise OSError(unusable)
        return dict(missing)

    return wrapper


def _discard(cache, exc: BaseException, doing: str) -> None:
    """Warn once and remove the function's index, so numba starts its entries afresh."""
    from kernels.backend.numba_private import cache_index_path, cache_name
    from kernels.io.cache import warn_once

    index = cache_index_path(cache)
    warn_once(f"numba's cache for {cache_name(cache)} could not be {doing} "
              f"({type(exc).__name__}: {exc}); compiling again")
    if index:
        try:
            os.unlink(index)
        except OSError:
            pass


def _healing_load(original):
    @functools.wraps(original)
    def _load_overload(self, sig, target_context):
        try:
            return original(self, sig, target_context)
        except Exception as exc:  # noqa: BLE001 - any damage in an entry means: compile it again
            _discard(self, exc, "loaded")
            return None

    return _load_overload


_NUMBA_TEMP = re.compile(r"\.nb[ic]\.tmp\.[0-9a-f]{16}$")  # numba's writer: name.tmp.<uid>, then a rename


def remove_stale_temps(folder, now: float | None = None) -> int:
    """Remove the temporary files numba's cache writer left in ``folder`` when its process was killed
    between writing and renaming (older than the writer's STALE_TEMP_SECONDS: a live write takes
    milliseconds). Returns how many were removed; never raises."""
    from kernels.io.writer import STALE_TEMP_SECONDS

    now = time.time() if now is None else now
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        try:
            if _NUMBA_TEMP.search(entry.name) and entry.is_file(follow_symlinks=False) and \
                    now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_SECONDS:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


def _healing_save(original):
    @functools.wraps(original)
    def save_overload(self, sig, data):
        from kernels.backend.numba_private import cache_folder

        folder = cache_folder(self)
        if folder:
            remove_stale_temps(folder)  # a killed save's leftovers go with the next save
        try:
            original(self, sig, data)
        except Exception as exc:  # noqa: BLE001 - e.g. a garbled index read before saving
            _discard(self, exc, "saved")
            try:
                original(self, sig, data)  # once more, from a fresh index
            except Exception:  # noqa: BLE001 - not cached this time; the run goes on
                pass

    return save_overload


def has_entry(source: str, function: str) -> bool:
    """Whether numba's cache holds an entry for ``function`` of the module at ``source``, newer than the
    source (a stale one would compile again): the first frame compiles when it does not. Reads file names
    only, never numba: ``NUMBA_CACHE_DIR``'s folders, else the source's ``__pycache__``."""
    from pathlib import Path

    source_path = Path(source)
    pattern = f"{source_path.stem}.{function}-*.nbi"
    custom = os.environ.get("NUMBA_CACHE_DIR")
    found = list(Path(custom).glob(f"*/{pattern}")) if custom else list((source_path.parent / "__pycache__").glob(pattern))
    try:
        newest = max((f.stat().st_mtime for f in found), default=None)
        return newest is not None and newest >= source_path.stat().st_mtime
    except OSError:
        return False
