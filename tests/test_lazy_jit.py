"""kernels/lazy_jit.py: numba.jit made on first use, so that loading the kernel modules does not import numba."""

from __future__ import annotations

import types

import numpy as np
import pytest

from kernels import lazy_jit

HOME_SOURCE = '''
from kernels import lazy_jit
numba = None

@lazy_jit.jit(nopython=True)
def square(x):
    """x squared."""
    return x * x

@lazy_jit.jit(nopython=True)
def sum_of_squares(values):
    total = 0.0
    for v in values:
        total += square(v)
    return total

@lazy_jit.jit(nopython=True, parallel=True)
def squares_parallel(values, out):
    for i in numba.prange(values.shape[0]):
        out[i] = square(values[i])
'''

USER_SOURCE = '''
from kernels import lazy_jit
numba = None

def make(home):
    global square
    square = home.square  # as ``from home import square`` would bind it

@lazy_jit.jit(nopython=True)
def cube(x):
    return square(x) * x
'''


def _module(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def test_reading_the_python_function_does_not_bind():
    home = _module("lazy_home_a", HOME_SOURCE)
    assert isinstance(home.square, lazy_jit.LazyJit)
    assert home.square.py_func(3) == 9
    assert home.square.__doc__ == "x squared." and home.square.__name__ == "square"
    assert home.square._dispatcher is None and home.numba is None
    assert "numba not loaded yet" in repr(home.square)


def test_the_first_call_binds_the_whole_module():
    from numba.core.dispatcher import Dispatcher

    home = _module("lazy_home_b", HOME_SOURCE)
    values = np.array([1.0, 2.0, 3.5])
    assert home.sum_of_squares(values) == 1.0 + 4.0 + 12.25  # calls square, still lazy when called
    for name in ("square", "sum_of_squares", "squares_parallel"):
        assert isinstance(getattr(home, name), Dispatcher), name
    import numba

    assert home.numba is numba
    out = np.zeros(3)
    home.squares_parallel(values, out)  # numba.prange looked up in the module's globals
    np.testing.assert_array_equal(out, values * values)


def test_an_attribute_of_the_dispatcher_binds():
    home = _module("lazy_home_c", HOME_SOURCE)
    lazy = home.square
    assert lazy.signatures == []  # a dispatcher's attribute: numba is loaded and the module bound
    assert lazy_jit.is_jit_function(home.square) and not isinstance(home.square, lazy_jit.LazyJit)
    assert home.square is lazy.dispatcher()


def test_binding_a_module_binds_the_modules_its_functions_come_from():
    from numba.core.dispatcher import Dispatcher

    home = _module("lazy_home_d", HOME_SOURCE)
    user = _module("lazy_user_d", USER_SOURCE)
    user.make(home)
    lazy_jit.bind(user.__dict__)  # as raytrace_binned does before its kernels compile
    assert isinstance(user.square, Dispatcher) and user.square is home.square
    assert isinstance(home.sum_of_squares, Dispatcher)
    assert user.cube(3.0) == 27.0


def test_a_name_bind_never_swapped_still_calls_the_dispatcher():
    home = _module("lazy_home_e", HOME_SOURCE)
    kept = home.square  # e.g. a script's ``from kernels.raytrace import render_spheres_cpu``
    assert kept(4) == 16 and kept(5) == 25
    assert kept._dispatcher is home.square


@pytest.mark.parametrize("obj, expected", [(len, False), (lambda x: x, False), ("square", False)])
def test_is_jit_function_refuses_the_rest(obj, expected):
    assert lazy_jit.is_jit_function(obj) is expected


CALLER_FIRST_SOURCE = '''
from kernels import lazy_jit
numba = None

@lazy_jit.jit(nopython=True)
def outer(x):
    return inner(x) + 1

@lazy_jit.jit(nopython=True)
def inner(x):
    return x * 2
'''


def test_a_call_from_another_thread_waits_until_the_whole_module_is_bound(monkeypatch):
    """While one thread binds, ``outer`` already has its dispatcher but ``inner`` is not swapped yet: a call
    of ``outer`` from another thread must wait, or numba would compile it against the lazy ``inner``."""
    import threading

    import numba

    numba.njit(lambda x: x)(1)  # numba's CPU target set up now, so that compiling ``outer`` below is quick
    home = _module("lazy_home_f", CALLER_FIRST_SOURCE)
    lazy_outer, lazy_inner = home.outer, home.inner
    halfway, results = threading.Event(), []
    real_dispatcher = lazy_jit.LazyJit.dispatcher

    def slow_dispatcher(self):
        if self is lazy_inner and not halfway.is_set():  # outer is swapped, inner not yet
            halfway.set()
            threading.Event().wait(0.5)
        return real_dispatcher(self)

    monkeypatch.setattr(lazy_jit.LazyJit, "dispatcher", slow_dispatcher)
    binder = threading.Thread(target=lazy_jit.bind, args=(home.__dict__,))
    binder.start()
    assert halfway.wait(30)
    assert lazy_outer._dispatcher is not None and isinstance(home.inner, lazy_jit.LazyJit)
    results.append(lazy_outer(20))
    binder.join()
    from numba.core.dispatcher import Dispatcher

    assert results == [41] and isinstance(home.inner, Dispatcher)
