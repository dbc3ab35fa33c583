"""``numba.jit`` that imports numba when a jit function is first used, not when its module loads.

Importing numba costs about 0.3 s. The window imports every kernel module to read its options, and on a
GPU its first frame comes through the CUDA driver (kernel_images) without numba, so the modules it loads
first (raytrace, julia) declare their shared per-pixel functions and CPU twins with ``jit`` below.

The first call of such a function, or the first read of one of its attributes (``py_func``,
``signatures``...), calls ``bind`` on its module: numba is imported and becomes the module's ``numba``
global (kernel bodies read ``numba.prange`` there), and every LazyJit in the module's globals is swapped
for its real dispatcher. numba looks a callee up in the caller's module globals when it compiles, so all of
a module's functions are swapped at once, never one by one. A module whose kernels call such functions
under other names, or imports them from another module, calls ``bind(globals())`` before it compiles.
"""

from __future__ import annotations

import functools
import threading

_LOCK = threading.RLock()  # two threads binding at once must not make two dispatchers of one function
_BOUND = "__lazy_jit_bound__"  # set in a module's globals once bind has swapped all of them


class LazyJit:
    """A function to be compiled by ``numba.jit(**options)``; stands in for the dispatcher until ``bind``."""

    def __init__(self, py_func, options: dict):
        self.py_func = py_func  # set first: __getattr__ below relies on it
        self.options = options
        self._dispatcher = None
        functools.update_wrapper(self, py_func)

    def dispatcher(self):
        """numba's dispatcher for this function (imports numba; made once)."""
        with _LOCK:
            if self._dispatcher is None:
                import numba

                self._dispatcher = numba.jit(**self.options)(self.py_func)
            return self._dispatcher

    def __call__(self, *args, **kwargs):  # reached through names bind did not swap (another module's import)
        if not self.py_func.__globals__.get(_BOUND):  # not _dispatcher: it exists before the swap is done
            bind(self.py_func.__globals__)
        return self._dispatcher(*args, **kwargs)

    def __getattr__(self, name: str):  # only for names the instance lacks: the dispatcher's own
        bind(self.py_func.__globals__)
        return getattr(self.dispatcher(), name)

    def __repr__(self) -> str:
        state = "bound" if self._dispatcher is not None else "numba not loaded yet"
        return f"<lazy numba.jit {self.py_func.__module__}.{self.py_func.__qualname__} ({state})>"


def jit(**options):
    """Decorator: ``numba.jit(**options)``, made on first use (see the module's docstring)."""
    return lambda fn: LazyJit(fn, options)


def bind(namespace: dict) -> None:
    """Import numba, bind it as ``numba`` in ``namespace`` (a module's ``globals()``), and replace every
    LazyJit there by its dispatcher; the modules those functions come from are bound too."""
    import numba

    with _LOCK:
        namespace["numba"] = numba
        for name, value in list(namespace.items()):
            if isinstance(value, LazyJit):
                namespace[name] = value.dispatcher()
                home = value.py_func.__globals__
                if home is not namespace:
                    bind(home)
        namespace[_BOUND] = True  # last: another thread's call waits on the lock until every name is swapped


def is_jit_function(obj) -> bool:
    """True for a numba dispatcher or a LazyJit (which will become one). Does not import numba."""
    if isinstance(obj, LazyJit):
        return True
    import sys

    if "numba" not in sys.modules:
        return False
    from numba.core.dispatcher import Dispatcher

    return isinstance(obj, Dispatcher)
