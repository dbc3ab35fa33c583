"""Kernel images: a few of our numba kernels shipped compiled (cubins for sm_80 and sm_90), so that a window's
first kernel frame on a GPU needs neither numba nor a compile. A cold start otherwise spends 2-3 s importing
numba-cuda and compiling the view's kernel before its first frame; through the CUDA driver (``cuda.bindings``)
an image draws its first frame about 0.4 s after the driver is first touched (``cuInit`` included) while numba
compiles the same kernel in the background, and numba's kernel takes over once it is ready (figures in
docs/measurements.md).

Each image is declared in its algorithm's package (``IMAGES``: :class:`KernelImage`) and built from the kernel
itself by ``scripts/kernel_images.py``, which writes ``<package>/images/<name>.json`` (the kernel's entry
name and parameters, and a key over the source files it was compiled from) and the PTX and cubin per
architecture. An image is used only where everything still matches: the same numba-cuda release line (the
kernel's parameter layout), the same source files byte for byte, a cubin this GPU runs (same major
architecture, minor at least the image's) and ``RAYTRACER_KERNEL_IMAGES`` not 0. Anything else, and any
driver error, leaves the frame to numba (:class:`ImageUnavailable` says why).

A numba-cuda kernel takes each array as its model's fields, each a parameter of its own: meminfo and parent
(null here), item count, item size, data pointer, then the shape and the strides in bytes (64-bit each);
scalars take their own width. numba-cuda-mlir passes an array as an MLIR memref instead: allocated and
aligned pointers, offset, then the shape and the strides in elements (a 1-D array is 5 parameters, not 7).
:func:`parameters` builds either (``layout``). The images are built by numba-cuda only
(``scripts/kernel_images.py``), whatever ``RAYTRACER_COMPILER`` says, so they launch with its layout; an image
whose manifest names another layout, or whose parameters are not its signature in that layout, is refused, and
a launch whose widths differ from the image's is refused, never made.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.util
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kernels.backend import driver
from kernels.io.reader import read_bytes, read_json

IMAGES_ENV = "RAYTRACER_KERNEL_IMAGES"
ARCHS = ((8, 0), (9, 0))  # what scripts/kernel_images.py builds: A100 and its line (sm_8x), H100 and H200
PARAM_BYTES = {"u8": 1, "s8": 1, "b8": 1, "u16": 2, "s16": 2, "b16": 2, "u32": 4, "s32": 4, "b32": 4, "f32": 4,
               "u64": 8, "s64": 8, "b64": 8, "f64": 8}
MAX_IMAGE_BYTES = 16 << 20  # a kernel's cubin is tens of kilobytes; the bound only keeps a read finite
NUMBA_CUDA_LAYOUT, MLIR_LAYOUT = "numba-cuda", "numba-cuda-mlir"  # how each compiler passes an array
LAYOUT = NUMBA_CUDA_LAYOUT  # the layout of the shipped images (a manifest without "layout" predates the key)
# the width of each scalar type a kernel signature names, as its PTX parameter
_SCALAR_BYTES = {"boolean": 1, "bool_": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
                 "float32": 4, "int64": 8, "uint64": 8, "float64": 8, "intp": 8, "uintp": 8}


class ImageUnavailable(RuntimeError):
    """This image cannot draw here; the message says why (numba draws instead)."""


@dataclass(frozen=True)
class KernelImage:
    """A kernel shipped compiled: ``function`` of ``module`` for numba ``signature``, its files in
    ``<package>/images/`` under ``name``."""

    name: str
    package: str
    module: str
    function: str
    signature: str

    @property
    def folder(self) -> Path:
        spec = importlib.util.find_spec(self.package)
        return Path(next(iter(spec.submodule_search_locations))) / "images"

    @property
    def manifest_path(self) -> Path:
        return self.folder / f"{self.name}.json"

    def path(self, arch: str, suffix: str) -> Path:
        return self.folder / f"{self.name}.{arch}.{suffix}"


def arch_name(cc) -> str:
    return f"sm_{cc[0]}{cc[1]}"


def enabled() -> bool:
    return os.environ.get(IMAGES_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def release_line(version: str) -> str:
    """'0.30' of '0.30.4': numba-cuda keeps a kernel's parameter layout within a release line."""
    return ".".join(version.split(".")[:2])


def installed_numba_cuda() -> str:
    from importlib.metadata import version  # package metadata: numba itself is not imported

    return version("numba-cuda")


def source_key(modules) -> str:
    """A digest of the named modules' source files, as they are now."""
    digest = hashlib.sha256()
    for name in sorted(modules):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            raise ImageUnavailable(f"the source of {name} is not here")
        digest.update(name.encode() + b"\0")
        digest.update(read_bytes(spec.origin, f"the source of {name}", MAX_IMAGE_BYTES, "a Python module"))
    return digest.hexdigest()


def read_manifest(image: KernelImage) -> dict:
    manifest = read_json(image.manifest_path, f"kernel image {image.name}", 1 << 20, "an image's description",
                         missing_ok=True)
    if not isinstance(manifest, dict):
        raise ImageUnavailable(f"no kernel image {image.name} is shipped")
    return manifest


def runnable_arch(cc, archs) -> str | None:
    """The shipped architecture whose cubin runs on a GPU of compute capability ``cc``: the same major, the
    highest minor not above the GPU's (a cubin runs on later minors of its major only)."""
    fits = [a for a in archs if a[0] == cc[0] and a[1] <= cc[1]]
    return arch_name(max(fits)) if fits else None


@functools.lru_cache(maxsize=None)
def _checked(image: KernelImage, cc: tuple[int, int]) -> tuple[dict, str] | str:
    """(manifest, arch) when ``image`` may draw on a GPU of ``cc``; otherwise why not (cached per process:
    the sources and the installed packages do not change while it runs)."""
    try:
        manifest = read_manifest(image)
        if release_line(manifest["numba_cuda"]) != release_line(installed_numba_cuda()):
            return (f"made with numba-cuda {manifest['numba_cuda']}, installed {installed_numba_cuda()} (a "
                    f"kernel's parameters may differ between release lines)")
        layout = manifest.get("layout", NUMBA_CUDA_LAYOUT)
        if layout != LAYOUT:
            return f"made for {layout}'s argument layout; the images launch with {LAYOUT}'s"
        expected = signature_widths(manifest["signature"], LAYOUT)
        if [PARAM_BYTES.get(p) for p in manifest["params"]] != expected:
            return (f"its {len(manifest['params'])} parameters are not {LAYOUT}'s layout of {manifest['signature']} "
                    f"({len(expected)}): made by another compiler?")
        if source_key(manifest["sources"]) != manifest["source_key"]:
            return f"its sources changed since it was made ({', '.join(manifest['sources'])})"
        arch = runnable_arch(cc, [tuple(a) for a in manifest["archs"]])
        if arch is None:
            return f"no cubin for sm_{cc[0]}{cc[1]} (shipped: {', '.join(arch_name(a) for a in manifest['archs'])})"
        return manifest, arch
    except (ImageUnavailable, OSError, KeyError, TypeError, ValueError) as exc:
        return str(exc) or type(exc).__name__


def _usable(image: KernelImage, device: int) -> tuple[dict, str] | str:
    """(manifest, arch) when ``image`` can draw on GPU ``device``; otherwise the reason, in words."""
    if not enabled():
        return f"{IMAGES_ENV} is off"
    try:
        cc = driver.compute_capability(device)
    except driver.DriverError as exc:
        return str(exc)
    return _checked(image, cc)


def why_not(image: KernelImage, device: int) -> str | None:
    """None when ``image`` can draw on GPU ``device``; otherwise the reason, in words."""
    usable = _usable(image, device)
    return usable if isinstance(usable, str) else None


# --- the driver side ---------------------------------------------------------------------------------------


@dataclass
class _Loaded:
    module: object
    function: object
    params: tuple[str, ...]
    arch: str


_LOADED: dict = {}
_CONTEXTS: dict = {}  # device -> its primary context, retained once for the process (as numba does)
_LOAD_LOCK = threading.Lock()


def _use_device(device: int) -> None:
    """Make GPU ``device``'s primary context current on this thread: the one numba uses too."""
    if device not in _CONTEXTS:
        _CONTEXTS[device] = driver.call("cuDevicePrimaryCtxRetain", driver.call("cuDeviceGet", device))
    driver.call("cuCtxSetCurrent", _CONTEXTS[device])


def load(image: KernelImage, device: int) -> _Loaded:
    """The image's kernel loaded on GPU ``device`` (checked and loaded once per process), or ImageUnavailable."""
    with _LOAD_LOCK:
        _use_device(device)
        if (image, device) not in _LOADED:
            usable = _usable(image, device)
            if isinstance(usable, str):
                raise ImageUnavailable(f"kernel image {image.name}: {usable}")
            manifest, arch = usable
            cubin = read_bytes(image.path(arch, "cubin"), f"kernel image {image.name}", MAX_IMAGE_BYTES, "a cubin")
            buffer = ctypes.create_string_buffer(cubin, len(cubin))
            module = driver.call("cuModuleLoadData", ctypes.addressof(buffer))
            function = driver.call("cuModuleGetFunction", module, manifest["entry"].encode())
            _LOADED[(image, device)] = _Loaded(module, function, tuple(manifest["params"]), arch)
        return _LOADED[(image, device)]


@dataclass(frozen=True)
class Output:
    """An array the kernel writes, copied back after the launch."""

    shape: tuple[int, ...]
    dtype: object


def array_fields(pointer: int, array_shape, itemsize: int, layout: str = NUMBA_CUDA_LAYOUT) -> list[tuple[int, int]]:
    """(width, value) of each parameter a kernel takes for a C-contiguous array at ``pointer``: numba-cuda's
    array model, or numba-cuda-mlir's memref (``layout``)."""
    shape = tuple(int(s) for s in array_shape)
    strides, step = [], 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    if layout == MLIR_LAYOUT:  # allocated pointer, aligned pointer, offset, shape, strides in elements
        return [(8, v) for v in (pointer, pointer, 0, *shape, *strides)]
    nitems = int(np.prod(shape, dtype=np.int64))
    return [(8, v) for v in (0, 0, nitems, itemsize, pointer, *shape, *(s * itemsize for s in strides))]


def signature_widths(signature: str, layout: str) -> list[int]:
    """The parameter widths a kernel of numba ``signature`` ('void(int32, uint32[:, ::1])') takes in ``layout``."""
    inside = signature[signature.index("(") + 1:signature.rindex(")")]
    widths, depth, word = [], 0, ""
    for ch in inside + ",":
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            word = word.strip()
            if "[" in word:
                ndim = word[word.index("[") + 1:word.index("]")].count(",") + 1
                widths += [w for w, _ in array_fields(0, (1,) * ndim, 1, layout)]
            elif word:
                widths.append(_SCALAR_BYTES[word])
            word = ""
        else:
            word += ch
    return widths


def parameters(args, pointers, layout: str = NUMBA_CUDA_LAYOUT) -> list[tuple[int, bytes]]:
    """(width, bytes) of every kernel parameter in ``layout``: arrays (host inputs or Outputs, at ``pointers[i]``)
    as their fields, numpy scalars as themselves."""
    packed: list[tuple[int, bytes]] = []
    for arg, pointer in zip(args, pointers):
        if isinstance(arg, (np.ndarray, Output)):
            itemsize = np.dtype(arg.dtype).itemsize
            packed += [(w, int(v).to_bytes(w, "little"))
                       for w, v in array_fields(pointer, arg.shape, itemsize, layout)]
        else:
            raw = np.asarray(arg).tobytes()
            packed.append((len(raw), raw))
    return packed


@dataclass
class Drawn:
    outputs: list = field(default_factory=list)  # the Output arguments' arrays, in order
    kernel_ms: float = 0.0  # the timed launch, CUDA events
    frame_ms: float = 0.0  # that launch, the wait and the copy back, wall clock
    arch: str = ""


class _Kept:
    """What an image keeps between frames on one device, so a frame only uploads, launches and copies back
    (a frame that allocated, uploaded, launched twice, made two events and freed ran at ~60 frames a second
    where numba's kernel runs 500+): a device buffer per argument, allocated once per size and reused; the
    two timing events; and whether the module's first (untimed, set-up) launch is done."""

    def __init__(self):
        self.buffers: dict = {}  # (image, device, argument index) -> (pointer, bytes)
        self.events: dict = {}  # device -> (start, end)
        self.warm: set = set()  # (image, device) launched once
        self.allocations = 0  # cuMemAlloc calls made, for tests and measurements
        self.lock = threading.Lock()  # one frame at a time uses the kept buffers

    def buffer(self, key, nbytes: int) -> int:
        nbytes = max(1, int(nbytes))
        kept = self.buffers.get(key)
        if kept is not None and kept[1] == nbytes:
            return kept[0]
        if kept is not None:
            self.buffers.pop(key)
            driver.call("cuMemFree", kept[0])
        pointer = int(driver.call("cuMemAlloc", nbytes))
        self.allocations += 1
        self.buffers[key] = (pointer, nbytes)
        return pointer

    def timing_events(self, device: int):
        if device not in self.events:
            self.events[device] = (driver.call("cuEventCreate", 0), driver.call("cuEventCreate", 0))
        return self.events[device]

    def release(self, device: int | None = None) -> None:
        """Free what is kept (on ``device``, or everywhere); the next frame allocates again."""
        with self.lock:
            for key in [k for k in self.buffers if device is None or k[1] == device]:
                pointer, _ = self.buffers.pop(key)
                try:
                    driver.call("cuMemFree", pointer)
                except driver.DriverError:
                    pass
            for dev in [d for d in self.events if device is None or d == device]:
                for event in self.events.pop(dev):
                    try:
                        driver.call("cuEventDestroy", event)
                    except driver.DriverError:
                        pass


KEPT = _Kept()


def release(device: int | None = None) -> None:
    """Free the device buffers and events the images keep between frames (:class:`_Kept`)."""
    KEPT.release(device)


def draw(image: KernelImage, device: int, grid, block, args, constants=()) -> Drawn:
    """Upload the array arguments and ``constants`` ((symbol, byte offset, array): into the module's
    ``__constant__`` arrays, as cudaMemcpyToSymbol), launch the image timed (the module's very first launch,
    which pays for setting it up, is made once before, untimed) and copy the Outputs back. The device
    buffers stay allocated for the next frame of the same sizes (:class:`_Kept`; :func:`release` frees them).
    ImageUnavailable (or DriverError) when it cannot."""
    loaded = load(image, device)
    with KEPT.lock:
        return _draw(loaded, image, device, grid, block, args, constants)


def _draw(loaded: _Loaded, image: KernelImage, device: int, grid, block, args, constants) -> Drawn:
    for symbol, offset, values in constants:
        values = np.ascontiguousarray(values)
        pointer, size = driver.call("cuModuleGetGlobal", loaded.module, symbol.encode())
        if offset < 0 or offset + values.nbytes > size:
            raise ImageUnavailable(f"kernel image {image.name}: {values.nbytes} bytes at {offset} do not fit "
                                   f"{symbol} ({size} bytes)")
        driver.call("cuMemcpyHtoD", int(pointer) + offset, values.ctypes.data, values.nbytes)
    pointers: list[int] = []
    for index, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            arg = np.ascontiguousarray(arg)
            pointer = KEPT.buffer((image, device, index), arg.nbytes)
            pointers.append(pointer)
            driver.call("cuMemcpyHtoD", pointer, arg.ctypes.data, arg.nbytes)
        elif isinstance(arg, Output):
            pointers.append(KEPT.buffer((image, device, index), int(np.prod(arg.shape)) * np.dtype(arg.dtype).itemsize))
        else:
            pointers.append(0)
    packed = parameters(args, pointers, LAYOUT)
    widths = [PARAM_BYTES.get(p) for p in loaded.params]
    if [w for w, _ in packed] != widths:
        raise ImageUnavailable(f"kernel image {image.name} takes parameters {list(loaded.params)}; the "
                               f"arguments give widths {[w for w, _ in packed]}")
    cells = [ctypes.create_string_buffer(raw, len(raw)) for _, raw in packed]
    addresses = (ctypes.c_void_p * len(cells))(*[ctypes.addressof(c) for c in cells])

    def launch():
        driver.call("cuLaunchKernel", loaded.function, *_dim3(grid), *_dim3(block), 0, 0,
                    ctypes.addressof(addresses), 0)

    if (image, device) not in KEPT.warm:  # the first launch of a loaded module pays for setting it up
        launch()
        driver.call("cuCtxSynchronize")
        KEPT.warm.add((image, device))
    start, end = KEPT.timing_events(device)
    t0 = time.perf_counter()
    driver.call("cuEventRecord", start, 0)
    launch()
    driver.call("cuEventRecord", end, 0)
    driver.call("cuEventSynchronize", end)
    kernel_ms = float(driver.call("cuEventElapsedTime", start, end))
    outputs = []
    for arg, pointer in zip(args, pointers):
        if isinstance(arg, Output):
            host = np.empty(arg.shape, arg.dtype)  # a new array: the window may still show the last one
            driver.call("cuMemcpyDtoH", host.ctypes.data, pointer, host.nbytes)
            outputs.append(host)
    return Drawn(outputs, kernel_ms, (time.perf_counter() - t0) * 1e3, loaded.arch)


def _dim3(dims) -> tuple[int, int, int]:
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))
