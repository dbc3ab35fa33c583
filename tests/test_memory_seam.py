"""The memory seam (kernels/backend/memory.py) and the one module of numba's private names
(kernels/backend/numba_private.py): round trips against numpy in this session's backend (the simulator
here, a GPU there: both implementations run in the GPU session's memory-seam-tests stage), the cuda.core
implementation's arrays against a host-memory stand-in for the GPU, and scans that keep every other module
off numba-cuda's host-side array API and its private names."""

import ast
import ctypes
import gc
import os
from pathlib import Path

import numpy as np
import pytest
from numba import cuda  # at module level: the simulator gives kernels its own `cuda` through their globals

from kernels.backend import memory
from kernels.backend.memory_cuda_core import CudaCoreArrays, DeviceArray
from kernels.errors import InputError
from tests.conftest import run_fresh_python

ROOT = Path(__file__).resolve().parents[1]


# --- choosing the implementation -----------------------------------------------------------------------------


def test_the_implementation_is_named_by_one_variable():
    assert memory.choose(None) == memory.choose("") == "numba"
    assert memory.choose("cuda-core") == "cuda-core" and memory.choose(" numba ") == "numba"
    with pytest.raises(InputError, match="RAYTRACER_MEMORY 'cupy' is not one of numba, cuda-core"):
        memory.choose("cupy")


def test_the_simulator_always_uses_numbas_arrays(cuda_backend, monkeypatch):
    if not cuda_backend.is_simulator:
        pytest.skip("a real GPU here: the variable decides")
    monkeypatch.setenv(memory.ENV, "cuda-core")
    memory.implementation.cache_clear()
    try:
        assert memory.implementation() == "numba"
    finally:
        memory.implementation.cache_clear()


# --- the seam in this session's backend ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64, np.float32, np.float64])
def test_round_trips_match_numpy(cuda_backend, dtype):
    cuda_backend.activate()
    host = (np.arange(24) * 3 - 7).astype(dtype).reshape(4, 6)
    dev = memory.to_device(host)
    assert dev.shape == (4, 6) and dev.dtype == np.dtype(dtype) and dev.size == 24 and dev.ndim == 2
    assert dev.nbytes == host.nbytes and len(dev) == 4
    np.testing.assert_array_equal(memory.to_host(dev), host)
    out = np.empty_like(host)
    assert memory.to_host(dev, out) is out
    np.testing.assert_array_equal(out, host)
    np.testing.assert_array_equal(memory.to_host(memory.zeros((3, 5), dtype)), np.zeros((3, 5), dtype))
    empty = memory.empty_like(dev)
    assert empty.shape == dev.shape and empty.dtype == dev.dtype
    memory.copy(empty, dev)
    np.testing.assert_array_equal(memory.to_host(empty), host)


def test_views_slices_rows_and_bytes(cuda_backend):
    cuda_backend.activate()
    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    dev = memory.to_device(host)
    np.testing.assert_array_equal(memory.to_host(dev[1]), host[1])
    np.testing.assert_array_equal(memory.to_host(dev[1:3]), host[1:3])
    flat = memory.to_device(np.arange(16, dtype=np.uint8))
    np.testing.assert_array_equal(memory.to_host(flat.view(np.uint32)), np.arange(16, dtype=np.uint8).view(np.uint32))
    np.testing.assert_array_equal(memory.to_host(flat[4:8]), np.arange(4, 8, dtype=np.uint8))
    assert isinstance(memory.device_pointer(flat), int)


def test_pinned_buffers_streams_and_the_raw_copy(cuda_backend):
    cuda_backend.activate()
    pinned = memory.pinned_empty((2, 3), np.float32)
    assert isinstance(pinned, np.ndarray) and pinned.shape == (2, 3) and pinned.dtype == np.float32
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    dev = memory.to_device(host)
    s = memory.stream()
    memory.to_host(dev, pinned, stream=s)
    memory.synchronize(s)
    np.testing.assert_array_equal(pinned, host)
    pinned[:] = 0
    memory.host_copier(pinned, dev)()
    np.testing.assert_array_equal(pinned, host)
    pinned[:] = 0
    memory.host_copier(pinned, dev, s)()
    memory.synchronize(s)
    np.testing.assert_array_equal(pinned, host)
    with pytest.raises(ValueError, match="24 bytes"):
        memory.host_copier(np.empty(5, np.float32), dev)
    memory.synchronize()


@cuda.jit
def ramp(out, start):
    i = cuda.grid(1)
    if i < out.size:
        out[i] += start + i


def test_a_kernel_writes_into_a_seam_array(cuda_backend):
    cuda_backend.activate()
    out = memory.zeros(40, np.int64)
    ramp[2, 32](out, np.int64(5))
    np.testing.assert_array_equal(memory.to_host(out), 5 + np.arange(40))


@pytest.mark.gpu
def test_gpu_the_implementation_is_the_one_asked_for(cuda_backend):
    assert memory.implementation() == memory.choose(os.environ.get(memory.ENV))
    print(memory.describe())


@pytest.mark.gpu
def test_gpu_seam_arrays_reach_numbas_library_and_peers(cuda_backend):
    cuda_backend.activate()
    a = memory.to_device(np.arange(1000, dtype=np.int32))
    out = memory.empty(1, np.int32)
    cuda.reduce(lambda x, y: x + y)(memory.as_numba(a), res=memory.as_numba(out))
    assert memory.to_host(out)[0] == np.arange(1000).sum()
    assert memory.device_pointer(a) % 16 == 0  # best's 16-byte loads need aligned allocations
    cupy = pytest.importorskip("cupy")
    assert int(cupy.asarray(a).sum()) == np.arange(1000).sum()


# --- the cuda.core implementation against a host-memory stand-in for the GPU ---------------------------------


class HostMemoryDriver:
    """CudaCoreDriver's calls done in host memory, so the arrays' own logic runs without a GPU."""

    def __init__(self):
        self.streams = 0

    def describe(self):
        return "host memory stand-in"

    def allocate(self, nbytes):
        buffer = ctypes.create_string_buffer(max(nbytes, 1))
        return ctypes.addressof(buffer), buffer

    allocate_pinned = allocate

    def memset_zero(self, ptr, nbytes):
        ctypes.memset(ptr, 0, nbytes)

    def host_to_device(self, dst, src, nbytes, stream=None):
        ctypes.memmove(dst, src, nbytes)

    device_to_host = device_to_device = host_to_device

    def device_to_host_call(self, dst, src, nbytes, stream=None, kept=None):
        return lambda: ctypes.memmove(dst, src, nbytes)

    def stream(self):
        self.streams += 1
        return object()

    def synchronize(self, stream=None):
        pass


@pytest.fixture
def core():
    return CudaCoreArrays(HostMemoryDriver())


def test_cuda_core_arrays_round_trip(core):
    host = np.arange(-12, 12, dtype=np.int64).reshape(4, 6)
    dev = core.to_device(host, None)
    assert isinstance(dev, DeviceArray) and dev.shape == (4, 6) and dev.nbytes == host.nbytes
    np.testing.assert_array_equal(core.to_host(dev, None, None), host)
    np.testing.assert_array_equal(core.to_host(core.zeros((2, 3), np.dtype(np.float32)), None, None), np.zeros((2, 3)))
    np.testing.assert_array_equal(core.to_host(core.to_device(host[:, ::2], None), None, None), host[:, ::2])
    other = core.empty((4, 6), np.dtype(np.int64))
    core.copy(other, dev)
    np.testing.assert_array_equal(core.to_host(other, None, None), host)
    assert core.empty(0, np.dtype(np.int32)).shape == (0,)


def test_cuda_core_views_share_the_memory(core):
    host = np.arange(24, dtype=np.int32).reshape(4, 6)
    dev = core.to_device(host, None)
    row, rows = dev[2], dev[1:3]
    assert row.ptr == dev.ptr + 2 * 24 and row.shape == (6,) and rows.shape == (2, 6)
    np.testing.assert_array_equal(core.to_host(dev[-1], None, None), host[-1])
    np.testing.assert_array_equal(core.to_host(dev[3:10], None, None), host[3:10])
    assert dev[5:2].shape == (0, 6)
    core.copy(rows, core.to_device(np.full((2, 6), -1, np.int32), None))  # writes through the view
    expected = host.copy()
    expected[1:3] = -1
    np.testing.assert_array_equal(core.to_host(dev, None, None), expected)
    words = core.to_device(np.arange(16, dtype=np.uint8), None).view(np.uint32)
    assert words.shape == (4,)
    np.testing.assert_array_equal(core.to_host(words, None, None), np.arange(16, dtype=np.uint8).view(np.uint32))
    flat = dev[1:]
    del dev, row, rows
    gc.collect()
    np.testing.assert_array_equal(core.to_host(flat, None, None)[-1], host[-1])  # the owner lives on in views


def test_cuda_core_arrays_refuse_what_they_cannot_do(core):
    dev = core.to_device(np.arange(10, dtype=np.int32), None)
    for key, error in ((slice(0, 10, 2), TypeError), (3, TypeError), ((1, 2), TypeError)):
        with pytest.raises(error):
            dev[key]
    with pytest.raises(IndexError):
        core.to_device(np.zeros((2, 2)), None)[2]
    with pytest.raises(ValueError, match="cannot be read as int64"):
        dev[:3].view(np.int64)
    with pytest.raises(ValueError, match="shape"):
        core.to_host(dev, np.empty(9, np.int32), None)
    with pytest.raises(ValueError, match="40 bytes"):
        core.copy(core.empty(9, np.dtype(np.int32)), dev)


def test_cuda_core_arrays_speak_the_cuda_array_interface_and_numbas_typing(core):
    import numba

    dev = core.to_device(np.arange(12, dtype=np.float32).reshape(3, 4), None)
    cai = dev.__cuda_array_interface__
    assert cai == {"shape": (3, 4), "strides": None, "typestr": "<f4", "data": (dev.ptr, False), "version": 3,
                   "stream": None}
    assert dev[1].__cuda_array_interface__["data"][0] == dev.ptr + 16
    # typed as numba types its own C-contiguous arrays (and so the kernels' signatures match)
    assert numba.typeof(dev) == numba.typeof(np.zeros((3, 4), np.float32))
    assert numba.typeof(dev[1]) == numba.typeof(np.zeros(4, np.float32))


LAUNCH_VIEW = """
import numpy as np
from numba.cuda.cudadrv.devicearray import _to_strided_memory_view
from numba.cuda.cudadrv.driver import is_device_memory
from numba.cuda.typing.typeof import typeof
from kernels.backend.memory_cuda_core import DeviceArray

a = DeviceArray(0x7f0000001000, (3, 4), np.float32, owner=None)
for arr, like in ((a, np.zeros((3, 4), np.float32)), (a[1], np.zeros(4, np.float32)), (a[1:], np.zeros((2, 4), np.float32))):
    view, converted = _to_strided_memory_view(arr)
    assert is_device_memory(arr) and not converted
    assert (view.ptr, view.shape, view.size, view.dtype) == (arr.ptr, like.shape, like.size, like.dtype)
    assert view._layout.strides_in_bytes == like.strides and view._layout.is_contiguous_c
    assert view._layout.is_contiguous_f == like.flags.f_contiguous
    assert typeof(arr) == typeof(like)
print("ok")
"""


@pytest.mark.slow
def test_numbas_launch_takes_cuda_core_arrays_as_its_own():
    """What a launch does with an argument (numba-cuda's own conversion, without a GPU): our arrays' ready
    view, typed as numba's own arrays, with no StridedMemoryView made from the array interface."""
    done = run_fresh_python(LAUNCH_VIEW)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_cuda_core_pinned_arrays_are_numpy_and_keep_their_memory(core):
    pinned = core.pinned_empty((2, 5), np.dtype(np.uint32))
    assert type(pinned) is np.ndarray and pinned.shape == (2, 5) and pinned.dtype == np.uint32
    dev = core.to_device(np.arange(10, dtype=np.uint32).reshape(2, 5), None)
    core.host_copier(pinned, dev, None)()
    view = pinned[1]
    del pinned
    gc.collect()
    np.testing.assert_array_equal(view, np.arange(5, 10))
    s = core.stream()
    out = core.pinned_empty(10, np.dtype(np.uint32))
    core.to_host(dev[1], out[5:], s)
    core.synchronize(s)
    np.testing.assert_array_equal(out[5:], np.arange(5, 10))


# --- who may touch numba-cuda's host-side array API and private names ----------------------------------------

SEAM = {"kernels/backend/memory.py", "kernels/backend/memory_cuda_core.py", "kernels/backend/numba_private.py"}
SOURCES = sorted(p for folder in ("kernels", "scripts", "raytracer_app") for p in (ROOT / folder).rglob("*.py"))

# numba-cuda's host-side array API (deprecated, numba-cuda RFC #471) and its driver's copies: called on the
# numba.cuda module or on its arrays, anywhere but in the seam
HOST_ARRAY_API = {"device_array", "device_array_like", "to_device", "copy_to_host", "copy_to_device",
                  "pinned_array", "pinned_array_like", "mapped_array", "mapped_array_like", "managed_array",
                  "device_to_host", "host_to_device", "device_to_device", "DeviceNDArray", "as_cuda_array",
                  "from_cuda_array_interface", "pinned", "mapped"}
ON_THE_CUDA_MODULE = {"stream", "synchronize", "default_stream", "external_stream"}  # cuda.X only
# private names of numba and numba-cuda the project uses (kernels/backend/numba_private.py), and the
# internal numba-cuda modules they come from
PRIVATE_NAMES = {"_prepare_args", "_codelibrary", "_to_core_stream", "_load_overload", "_cache_file", "_index_path",
                 "_numba_type_", "__cuda_memory__", "_strided_memory_view_shim", "_StridedMemoryViewShim",
                 "get_cufunc", "get_global_symbol"}
INTERNAL_MODULES = ("numba.cuda.cudadrv", "numba.cuda.dispatcher", "numba.core.caching", "numba.cuda.core")


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def seam_violations(path: Path) -> list[str]:
    """What ``path`` does that only the seam and numba_private may: "line: what" for each."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute):
            owner = ast.unparse(node.value)
            if node.attr in HOST_ARRAY_API and owner not in ("memory", "device_memory"):
                found.append(f"{node.lineno}: {owner}.{node.attr}")
            elif node.attr in ON_THE_CUDA_MODULE and owner == "cuda":
                found.append(f"{node.lineno}: cuda.{node.attr}")
            elif node.attr in PRIVATE_NAMES or (node.attr == "get_current_device" and owner == "dispatcher"):
                found.append(f"{node.lineno}: private {owner}.{node.attr}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if isinstance(node, ast.ImportFrom):
                names += [f"{node.module}.{a.name}" for a in node.names]
                found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name in HOST_ARRAY_API]
            found += [f"{node.lineno}: import {n}" for n in names if n.startswith(INTERNAL_MODULES)]
        elif isinstance(node, ast.Constant) and node.value in INTERNAL_MODULES:
            found.append(f"{node.lineno}: names {node.value}")
    return found


def test_only_the_seam_touches_numbas_host_arrays_and_private_names():
    checked = [p for p in SOURCES if rel(p) not in SEAM]
    found = {rel(p): v for p in checked if (v := seam_violations(p))}
    assert found == {}, "use kernels/backend/memory.py (arrays, copies, streams) or numba_private.py (private names)"


def test_the_scan_would_catch_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from numba import cuda\nfrom numba.cuda.cudadrv import driver\nx = cuda.device_array(3)\n"
                   "x.copy_to_host()\ns = cuda.stream()\nk._codelibrary\nfrom numba.cuda import pinned_array\n"
                   "memory.to_device(x)\nm = __import__('numba.core.caching')\n")
    assert sorted({int(v.split(":")[0]) for v in seam_violations(bad)}) == [2, 3, 4, 5, 6, 7, 9]


def test_numba_private_imports_no_numba_until_called():
    tree = ast.parse((ROOT / "kernels" / "backend" / "numba_private.py").read_text())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not [ast.unparse(n) for n in top if "numba" in ast.unparse(n)]
