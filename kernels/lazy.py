"""The one lazy-import mechanism: a function named by its module and attribute, imported on first call.

An algorithm package declares its variants without importing numba (the window imports every package
to read its options); each variant's ``run`` is an :class:`Entry` into the module that holds the code,
so running a variant is what imports its kernels, and with them numba.
"""

from __future__ import annotations

import importlib
import threading

_LOCK = threading.Lock()


class Entry:
    """``module:name``, imported on the first call (or ``resolve``); then called directly."""

    __slots__ = ("module", "name", "_target")

    def __init__(self, module: str, name: str):
        self.module = module
        self.name = name
        self._target = None

    def resolve(self):
        if self._target is None:
            with _LOCK:
                if self._target is None:
                    self._target = getattr(importlib.import_module(self.module), self.name)
        return self._target

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<lazy {self.module}:{self.name}>"


def entry(module: str, name: str) -> Entry:
    return Entry(module, name)
