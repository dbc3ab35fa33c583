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

def heal() -> None:
    """Wrap the loading and saving of numba's CPU cache class, and of the CUDA one when numba.cuda is loaded
    (not the simulator's), once each (the private names: kernels/backend/numba_private.py)."""
    from kernels.backend import numba_private

    for cls in numba_private.cache_classes():
        numba_private.wrap_cache(cls, _healing_load, _healing_save)


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


def _healing_save(original):
    @functools.wraps(original)
    def save_overload(self, sig, data):
        try:
            original(self, sig, data)
        except Exception as exc:  # noqa: BLE001 - e.g. a garbled index read before saving
            _discard(self, exc, "saved")
            try:
                original(self, sig, data)  # once more, from a fresh index
            except Exception:  # noqa: BLE001 - not cached this time; the run goes on
                pass

    return save_overload
