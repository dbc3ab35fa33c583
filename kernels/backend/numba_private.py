"""Every private name of numba and numba-cuda the project uses, behind small functions: the one module to
re-check when numba-cuda changes.

Checked on numba-cuda ``CHECKED_ON`` (with numba ``NUMBA_CHECKED_ON``); pyproject.toml pins numba-cuda to
that release line, and ``tests/test_inspector.py::test_numba_cuda_private_names_are_checked_on_the_installed_version``
fails on any other installed version, so an upgrade means reading this module against the new source. What
each function touches, and who calls it:

- :func:`packed_call` (kernels/launch/packed.py): a launch's arguments converted once, through the
  dispatcher's ``_prepare_args``, ``_codelibrary`` and ``driver._to_core_stream``;
- :func:`target_device` (kernels/inspector/offline_compile.py): ``numba.cuda.dispatcher.get_current_device``
  replaced while compiling for an architecture without a GPU;
- :func:`ptx_for_each` (kernels/inspector/offline_compile.py) and :func:`lowering_group`
  (kernels/inspector/compiler.py): a kernel's PTX for several architectures from one lowering, through
  ``compiler._compile_pyfunc_with_fixup`` and the code library's ``get_asm_strs``;
- :func:`lineinfo_everywhere` (kernels/inspector/offline_compile.py, kernels/service/counters_child.py):
  ``numba.cuda.dispatcher.compile_cuda`` wrapped so that device functions (and, in the process ncu profiles,
  kernels) carry line information;
- :func:`cache_classes`, :func:`wrap_cache`, :func:`cache_index_path`, :func:`cache_name`,
  :func:`wrap_cache_file_reads`, :func:`cache_folder` (kernels/io/numba_cache.py): numba's cache classes'
  ``_load_overload``, ``_cache_file``, ``_name`` and ``_cache_path``, and ``IndexDataCacheFile``'s
  ``_load_index``, ``_load_data``, ``_index_path`` and ``_data_path``;
- :func:`loaded_function`, :func:`module_global` and :func:`write_global` (kernels/device_functions/constant_memory.py,
  tests/inspector_on_gpu.py): the loaded module of a compiled kernel, its global symbols and numba's
  driver copy into one;
- :func:`device_to_host` (the numba side of kernels/backend/memory.py): numba's driver copy without the
  checks of ``copy_to_host``;
- :class:`NumbaArrayProtocol` (the cuda.core side of the memory seam): numba's ``_numba_type_``, ``__cuda_memory__``
  and ``devicearray._StridedMemoryViewShim``, so that a launch types and passes our device arrays as it
  does its own;
- :func:`simulator_lane` (kernels/hashtable/device.py, the simulator's ballot): the CUDA simulator's thread
  objects, their ``_manager`` (the block) and ``thread_id``;
- :func:`waking_blocks` (kernels/backend/simulator.py, as the simulator loads): the simulator's
  ``kernel.BlockManager`` replaced by :class:`kernels.backend.sim_blocks.WakingBlockManager` with its
  ``kernelapi.Dim3``, and ``kernelapi.FakeCUDAShared.array`` by :func:`_simulator_shared_array`, on
  numba-cuda's ``CHECKED_ON`` release line only;
- :func:`simulator_shared_array` (that replacement, and the access trace's recording one in
  kernels/access/sim_hooks.py): ``FakeCUDAShared``'s ``_allocations``, ``_dynshared_size`` and ``_dynshared``.

Nothing here imports numba at import time.
"""

from __future__ import annotations

import contextlib
import functools
import os

CHECKED_ON = "0.30.4"  # numba-cuda
NUMBA_CHECKED_ON = "0.68"  # numba (release line): numba_cache's classes


def simulator_lane() -> tuple[object, int]:
    """(the block, this thread's linear index in it) of the CUDA simulator's thread running now: the simulator
    runs every CUDA thread as a Python thread (a ``BlockThread``) whose ``_manager`` is its block's manager,
    one per block and launch, and ``thread_id`` its index in the block. Where :func:`waking_blocks` replaced
    its runner (and in a traced run) the threads are kernels.backend.sim_blocks', whose block is their
    ``_barrier``."""
    import threading

    thread = threading.current_thread()
    block = getattr(thread, "_manager", None)
    return (block if block is not None else thread._barrier), thread.thread_id


def waking_blocks(sim_kernel) -> bool:
    """Puts :class:`~kernels.backend.sim_blocks.WakingBlockManager` in place of the simulator's block runner
    in ``sim_kernel`` (the loaded ``numba.cuda.simulator.kernel``), whose ``FakeCUDAKernel.__call__`` makes one
    ``BlockManager(fn, grid_dim, block_dim, debug)`` per block and calls its ``run(grid_point, *args)``.
    False, and the simulator's own runner kept, on another numba-cuda release line than ``CHECKED_ON``'s or
    where that name is missing: slower, still right."""
    from kernels.backend.sim_blocks import WakingBlockManager

    series = CHECKED_ON.rsplit(".", 1)[0] + "."
    if not numba_cuda_version().startswith(series) or not hasattr(sim_kernel, "BlockManager"):
        return False
    from numba.cuda.simulator import kernelapi

    sim_kernel.BlockManager = functools.partial(WakingBlockManager, dim3=kernelapi.Dim3)
    kernelapi.FakeCUDAShared.array = _simulator_shared_array
    return True


def simulator_shared_array(shared, shape, dtype, caller, array_class=None):
    """What ``cuda.shared.array(shape, dtype)`` gives in the simulator's ``FakeCUDAShared`` ``shared`` when
    called from frame ``caller``: shape 0 views the launch's dynamic shared memory; any other shape is one
    array per calling line, as the simulator keys them. The simulator's own looks for the line's array and
    stores a new one in two steps, so two threads starting at once could each make one and share nothing; here
    the first one stored wins (``dict.setdefault`` is atomic). ``array_class``: the ndarray subclass the arrays
    are viewed as (the access trace's recording arrays)."""
    import numpy as np
    from numba.core import types
    from numba.np import numpy_support

    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    dtype = np.dtype(dtype)
    if not isinstance(shape, tuple) and shape == 0:
        count = shared._dynshared_size // dtype.itemsize
        array = shared._dynshared[:count * dtype.itemsize].view(dtype)
        return array if array_class is None else array.view(array_class)
    key = (caller.f_code.co_filename, caller.f_lineno)
    found = shared._allocations.get(key)
    if found is None:
        array = np.empty(shape, dtype)
        found = shared._allocations.setdefault(key, array if array_class is None else array.view(array_class))
    return found


def _simulator_shared_array(self, shape, dtype, alignment=None):
    """``FakeCUDAShared.array`` in place of the simulator's: :func:`simulator_shared_array` for its caller."""
    import sys

    if alignment is not None:
        raise RuntimeError("Array alignment is not supported in cudasim")
    return simulator_shared_array(self, shape, dtype, sys._getframe(1))


def numba_cuda_version() -> str:
    from importlib.metadata import version

    return version("numba-cuda")


# --- the packed launch -----------------------------------------------------------------------------------


def packed_call(kernel, grid, block, args: tuple):
    """A call launching ``kernel[grid, block](*args)`` on the default stream with the arguments converted
    once, as numba's own launch converts them on every call; None when an argument must be copied back
    after the launch (a host array). Raises when numba-cuda's internals are not the ones checked here."""
    import numba
    from numba.cuda import dispatcher

    compiled = kernel.compile(tuple(numba.typeof(a) for a in args))
    retr, kernelargs = [], []
    for t, v in zip(compiled.argument_types, args):
        compiled._prepare_args(t, v, 0, retr, kernelargs)
    if retr:  # arguments copied back after the launch (host arrays): not a launch to repeat as it is
        return None
    config = dispatcher.LaunchConfig(grid=grid, block=block, shmem_size=0)
    stream = dispatcher.driver._to_core_stream(0)  # the default stream, as numba's own launch uses
    launch, cukernel = dispatcher.launch, compiled._codelibrary.get_cufunc().kernel

    def call(kept=args) -> None:  # ``kept``: the arrays whose pointers are packed live as long as the call
        launch(stream, config, cukernel, *kernelargs)

    return call


# --- the offline compile ---------------------------------------------------------------------------------


class _TargetDevice:
    def __init__(self, cc: tuple[int, int]):
        self.compute_capability = cc


@contextlib.contextmanager
def target_device(cc: tuple[int, int]):
    """While inside, numba-cuda compiles device functions for ``cc`` instead of asking the driver (a kernel
    calling a device function compiles the callee for ``get_current_device()``'s compute capability)."""
    from numba.cuda import dispatcher

    if not hasattr(dispatcher, "get_current_device"):
        raise RuntimeError(
            f"numba-cuda {numba_cuda_version()} changed how device functions pick their architecture "
            f"(no numba.cuda.dispatcher.get_current_device); the inspector was checked on {CHECKED_ON}"
        )
    original = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: _TargetDevice(cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = original


@contextlib.contextmanager
def lineinfo_everywhere():
    """While inside, every kernel and device function numba-cuda compiles carries line information
    (``lineinfo=True``: PTX ``.loc`` directives, no change to the error model), unless it asked for full
    debug information or is numba's own (an intrinsic's Python implementation: its code stays on the line
    that calls it, as the user wrote it). numba-cuda compiles a device function (``@cuda.jit(device=True)``, or a ``@numba.jit``
    function called from a kernel) with that function's own ``lineinfo`` option, False by default, so
    without this its inlined code is attributed to the kernel's call line; with it, each inlined line keeps
    its own file and line and an ``inlined_at`` chain back to the call. Callees are cached per argument
    types, so only what is compiled inside is affected (a fresh process compiles everything inside)."""
    from numba.cuda import dispatcher

    if not callable(getattr(dispatcher, "compile_cuda", None)):
        raise RuntimeError(
            f"numba-cuda {numba_cuda_version()} changed how kernels and device functions are compiled (no "
            f"numba.cuda.dispatcher.compile_cuda); line information was checked on {CHECKED_ON}"
        )
    original = dispatcher.compile_cuda
    numba_dirs = _numba_dirs()

    @functools.wraps(original)
    def compile_cuda(pyfunc, *args, **kwargs):
        filename = getattr(getattr(pyfunc, "__code__", None), "co_filename", "")
        if not kwargs.get("debug") and not os.path.abspath(filename).startswith(numba_dirs):
            kwargs["lineinfo"] = True
        return original(pyfunc, *args, **kwargs)

    dispatcher.compile_cuda = compile_cuda
    try:
        yield
    finally:
        dispatcher.compile_cuda = original


# numba-cuda CHECKED_ON reads the target's compute capability while lowering only at these steps (the float64
# atomic add at 6.0, fast-math tanh at 7.5): architectures between the same steps get the same LLVM IR, and
# only NVVM, run per architecture, tells their PTX apart
_LOWERING_STEPS = ((6, 0), (7, 5))


def lowering_group(cc: tuple[int, int]) -> int:
    """Architectures with the same number here are lowered alike by numba-cuda (:func:`ptx_for_each`)."""
    return sum(tuple(cc) >= step for step in _LOWERING_STEPS)


def ptx_for_each(fn, signature, ccs: list[tuple[int, int]], lineinfo: bool = True) -> list[str]:
    """``cuda.compile_ptx(fn, signature, cc=cc, lineinfo=lineinfo)`` for each of ``ccs``, with numba's typing and
    lowering (most of the time) done once and NVVM run per architecture: numba-cuda's ``compile`` split at
    ``compiler._compile_pyfunc_with_fixup`` (the code library) and the library's ``get_asm_strs(cc)``. The
    ``ccs`` must share a :func:`lowering_group`; call inside :func:`target_device` of the first. The code is
    each architecture's own; only the mangled names differ from a compile for a later cc alone (numba tags
    them with the flags of the lowering, the first cc's)."""
    if len({lowering_group(cc) for cc in ccs}) != 1:
        raise ValueError(f"compute capabilities {ccs} are lowered differently; compile them apart")
    from numba.cuda import compiler
    from numba.cuda.core.compiler_lock import global_compiler_lock

    if not callable(getattr(compiler, "_compile_pyfunc_with_fixup", None)):
        raise RuntimeError(f"numba-cuda {numba_cuda_version()} changed how compile_ptx is made (no "
                           f"numba.cuda.compiler._compile_pyfunc_with_fixup); checked on {CHECKED_ON}")
    with global_compiler_lock:
        library, _ = compiler._compile_pyfunc_with_fixup(fn, signature, device=False, cc=tuple(ccs[0]),
                                                         lineinfo=lineinfo, abi="numba")
        ptxes = []
        for cc in ccs:
            codes = library.get_asm_strs(cc=tuple(cc))
            if len(codes) != 1:
                raise RuntimeError(f"compiling {fn.__name__} gave {len(codes)} PTX modules, not one")
            ptxes.append(codes[0])
    return ptxes


def _numba_dirs() -> tuple[str, ...]:
    """The folders of numba's and numba-cuda's own Python code."""
    import numba
    import numba.cuda

    return tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (numba, numba.cuda))


# --- numba's on-disk cache -------------------------------------------------------------------------------

_WRAPPED = "_raytracer_heals"


def cache_classes() -> list:
    """numba's cache class for CPU functions, and numba-cuda's for kernels when numba.cuda is loaded (not
    the simulator's, which has none); an empty list for another layout."""
    import sys

    names = ["numba.core.caching"]
    if "numba.cuda" in sys.modules:
        names.append("numba.cuda.core.caching")
    classes = []
    for name in names:
        try:
            classes.append(__import__(name, fromlist=["Cache"]).Cache)
        except Exception:  # noqa: BLE001 - another numba layout, or the simulator: leave numba as it is
            continue
    return classes


def wrap_cache(cls, wrap_load, wrap_save) -> None:
    """Replace ``cls``'s loading of one entry (``_load_overload``: reading the index and data and
    rebuilding, after numba refreshed its target) and its ``save_overload`` by ``wrap_load(original)`` and
    ``wrap_save(original)``, once per class."""
    if getattr(cls, _WRAPPED, False):
        return
    cls._load_overload = wrap_load(cls._load_overload)
    cls.save_overload = wrap_save(cls.save_overload)
    setattr(cls, _WRAPPED, True)


def wrap_cache_file_reads(wrap) -> None:
    """Replace the index and data reads of numba's ``IndexDataCacheFile`` (CPU, and CUDA when numba.cuda is
    loaded) by ``wrap(original, path_of, missing)``, once per class: ``path_of(self, *args)`` is the file
    the read opens, ``missing`` what it returns for a missing index ({}; None: a data file, OSError)."""
    import sys

    names = ["numba.core.caching"] + (["numba.cuda.core.caching"] if "numba.cuda" in sys.modules else [])
    for name in names:
        try:
            cls = __import__(name, fromlist=["IndexDataCacheFile"]).IndexDataCacheFile
        except Exception:  # noqa: BLE001 - another numba layout, or the simulator: leave numba as it is
            continue
        if getattr(cls, _WRAPPED, False):
            continue
        cls._load_index = wrap(cls._load_index, lambda self: self._index_path, {})
        cls._load_data = wrap(cls._load_data, lambda self, name: self._data_path(name), None)
        setattr(cls, _WRAPPED, True)


def cache_folder(cache) -> str | None:
    """The folder of a cache instance's files (None if numba keeps them elsewhere)."""
    return getattr(cache, "_cache_path", None)


def cache_index_path(cache) -> str | None:
    """The index file of a cache instance's function (None if numba keeps it elsewhere)."""
    return getattr(getattr(cache, "_cache_file", None), "_index_path", None)


def cache_name(cache) -> str:
    return getattr(cache, "_name", "a function")


# --- a compiled kernel's loaded module -------------------------------------------------------------------


def loaded_function(compiled):
    """The driver function of a compiled kernel (an overload), loaded into the current context."""
    return compiled.library.get_cufunc()


def module_global(compiled, name: str):
    """(symbol, size in bytes) of global ``name`` in ``compiled``'s loaded module: numba's device pointer
    object, which :func:`write_global` takes."""
    return loaded_function(compiled).module.get_global_symbol(name)


def write_global(symbol, offset: int, values) -> None:
    """Copy host array ``values`` into ``symbol`` from byte ``offset`` on, as ``cudaMemcpyToSymbol`` does."""
    from numba import cuda

    cuda.driver.host_to_device(symbol.view(offset), values, values.nbytes)


# --- the memory seam's numba side ------------------------------------------------------------------------


def device_to_host(host, device_array, nbytes: int, stream=0) -> None:
    """numba's driver copy of ``nbytes`` from a device array into host array ``host``, without
    ``copy_to_host``'s checks: synchronous on stream 0, else asynchronous on ``stream``."""
    from numba.cuda.cudadrv import driver

    driver.device_to_host(host, device_array, nbytes, stream=stream)


@functools.lru_cache(maxsize=None)
def _array_type(dtype, ndim: int):
    from numba.cuda import types
    from numba.cuda.np import numpy_support

    return types.Array(numpy_support.from_dtype(dtype), ndim, "C")


@functools.lru_cache(maxsize=1)
def _launch_view_classes():
    """numba-cuda's ready launch view of its own arrays (``devicearray._StridedMemoryViewShim`` and its
    layout), or None where this numba-cuda (or the simulator) has none."""
    try:
        from numba.cuda.cudadrv.devicearray import _StridedLayoutShim, _StridedMemoryViewShim
    except ImportError:
        return None
    return _StridedMemoryViewShim, _StridedLayoutShim


class NumbaArrayProtocol:
    """For a C-contiguous device array class with ``ptr``, ``shape``, ``dtype``, ``ndim`` and ``size``: numba
    launches its instances as it launches its own device arrays, each computed once per instance.

    - ``_numba_type_``: numba types the argument from it (as its own arrays), where it would otherwise parse
      ``__cuda_array_interface__``; ``numba.typeof`` (which the packed launch uses) knows it too.
    - ``__cuda_memory__`` and ``_strided_memory_view_shim``: numba's launch takes such device memory's ready
      view (pointer, shape, strides) as it is, where it would make a StridedMemoryView of the array
      interface on every launch (a driver call for the pointer's device among it). Without numba-cuda's view
      classes ``__cuda_memory__`` is False and numba reads the array interface."""

    @functools.cached_property
    def _numba_type_(self):
        return _array_type(self.dtype, self.ndim)

    @functools.cached_property
    def __cuda_memory__(self) -> bool:
        return _launch_view_classes() is not None

    @functools.cached_property
    def _strided_memory_view_shim(self):
        view, layout = _launch_view_classes()
        strides, step = [], self.dtype.itemsize
        for extent in reversed(self.shape):
            strides.insert(0, step)
            step *= extent
        f_contiguous = sum(extent > 1 for extent in self.shape) <= 1
        return view(ptr=self.ptr, shape=self.shape, dtype=self.dtype, size=self.size,
                    _layout=layout(strides_in_bytes=tuple(strides), is_contiguous_c=True,
                                   is_contiguous_f=f_contiguous, is_contiguous_any=True))
