"""The kernel images shipped for a GPU's first frames (kernels/launch/images.py): current with the kernels they
are made from, packed as numba packs a kernel's parameters, refused where they do not fit, and on a GPU
drawing what numba's kernel and the numpy reference draw, with no numba loaded."""

import hashlib
import importlib.util
import re

import numpy as np
import pytest

from kernels.launch import images
from kernels.registry import IMAGES
from kernels.spheres.scene import generate_scene
from tests.conftest import run_fresh_python
from tests.references import spheres_reference

STALE = "stale: run `python scripts/kernel_images.py` and commit what it writes"


@pytest.mark.parametrize("image", IMAGES, ids=lambda i: i.name)
def test_each_shipped_image_is_made_from_its_kernels_sources_as_they_are(image):
    manifest = images.read_manifest(image)
    assert (manifest["module"], manifest["function"], manifest["signature"]) == (
        image.module, image.function, image.signature), STALE
    assert images.source_key(manifest["sources"]) == manifest["source_key"], STALE
    assert image.module in manifest["sources"]
    assert images.release_line(manifest["numba_cuda"]) == images.release_line(images.installed_numba_cuda())
    assert [tuple(a) for a in manifest["archs"]] == list(images.ARCHS)
    for cc in images.ARCHS:
        arch = images.arch_name(cc)
        cubin = image.path(arch, "cubin").read_bytes()
        assert cubin[:4] == b"\x7fELF"
        assert hashlib.sha256(cubin).hexdigest() == manifest["cubins_sha256"][arch]
        ptx = image.path(arch, "ptx").read_text()
        assert f".target {arch}" in ptx and manifest["entry"] in ptx


def test_the_spheres_kernels_parameters_pack_as_the_image_takes_them():
    """A 1-D float32 array, an int32, a boolean and a 2-D uint32 array: 7 + 1 + 1 + 9 parameters, each array as
    meminfo, parent, items, item size, data, shape, strides in bytes (numpy's own strides as the reference)."""
    from kernels.spheres import IMAGES as SPHERE_IMAGES

    spheres, out = np.zeros(21, np.float32), images.Output((3, 5), np.uint32)
    packed = images.parameters((spheres, np.int32(20), np.bool_(True), out), (0x1000, 0, 0, 0x2000))
    manifest = images.read_manifest(SPHERE_IMAGES["global"])
    assert [w for w, _ in packed] == [images.PARAM_BYTES[p] for p in manifest["params"]]
    values = [int.from_bytes(raw, "little") for _, raw in packed]
    assert values[:7] == [0, 0, 21, 4, 0x1000, 21, 4]
    assert values[7:9] == [20, 1]
    assert values[9:] == [0, 0, 15, 4, 0x2000, 3, 5, *np.empty((3, 5), np.uint32).strides]


def test_the_constant_kernel_takes_its_spheres_in_its_constant_symbol_not_as_a_parameter():
    from kernels.spheres import IMAGES as SPHERE_IMAGES
    from kernels.spheres.layout import CONSTANT_FLOATS, CONSTANT_SYMBOL

    image = SPHERE_IMAGES["constant"]
    packed = images.parameters((np.int32(20), np.bool_(False), images.Output((3, 5), np.uint32)), (0, 0, 0x2000))
    assert [w for w, _ in packed] == [images.PARAM_BYTES[p] for p in images.read_manifest(image)["params"]]
    for cc in images.ARCHS:
        ptx = image.path(images.arch_name(cc), "ptx").read_text()
        assert f".visible .const .align 16 .b8 {CONSTANT_SYMBOL}[{4 * CONSTANT_FLOATS}]" in ptx


@pytest.mark.parametrize("cc, arch", [((8, 0), "sm_80"), ((8, 6), "sm_80"), ((8, 9), "sm_80"), ((9, 0), "sm_90"),
                                      ((7, 5), None), ((10, 0), None), ((12, 0), None)])
def test_a_cubin_runs_on_its_major_architecture_from_its_minor_up(cc, arch):
    assert images.runnable_arch(cc, list(images.ARCHS)) == arch


def test_an_image_is_refused_with_the_reason_where_it_cannot_draw(monkeypatch):
    image = IMAGES[0]
    monkeypatch.setenv(images.IMAGES_ENV, "0")
    assert images.why_not(image, 0) == f"{images.IMAGES_ENV} is off"
    monkeypatch.delenv(images.IMAGES_ENV)
    images._checked.cache_clear()
    try:
        monkeypatch.setattr(images, "source_key", lambda modules: "edited")
        assert images._checked(image, (9, 0)).startswith("its sources changed since it was made")
        images._checked.cache_clear()
        monkeypatch.undo()
        monkeypatch.setattr(images, "installed_numba_cuda", lambda: "0.99.0")
        assert "installed 0.99.0" in images._checked(image, (9, 0))
        images._checked.cache_clear()
        monkeypatch.undo()
        assert images._checked(image, (7, 5)) == "no cubin for sm_75 (shipped: sm_80, sm_90)"
        assert isinstance(images._checked(image, (9, 0)), tuple)
    finally:
        images._checked.cache_clear()


def test_without_a_driver_no_image_draws_and_numba_draws_instead(cuda_backend):
    """Where there is no GPU (the simulator's session) a request for the image draws with numba's kernel."""
    from kernels import backend
    from kernels.spheres.renderer import SphereRenderer

    if backend.gpu_available():
        pytest.skip("a GPU is here: the image path is tested by the gpu tests below")
    assert images.why_not(IMAGES[0], 0) is not None
    scene = generate_scene(3, seed=2)
    frame = SphereRenderer(cuda_backend).render(scene, (16, 8), block=(8, 8), shipped_image=True)
    assert "shipped" not in frame.kernel.method
    assert np.abs(frame.image.astype(int) - spheres_reference(scene.spheres, 16, 8)).max() <= 1


@pytest.mark.gpu
@pytest.mark.parametrize("memory", ["global", "constant", "shared"])
@pytest.mark.parametrize("size, block, pattern", [((1024, 1024), (16, 16), "uniform"),
                                                  ((333, 97), (32, 8), "staggered")])
def test_gpu_the_shipped_image_draws_what_numbas_kernel_draws(cuda_backend, memory, size, block, pattern):
    from kernels.spheres.renderer import SphereRenderer

    scene = generate_scene(200, seed=11)
    renderer = SphereRenderer(cuda_backend)
    shipped = renderer.render(scene, size, memory, block, pattern, shipped_image=True)
    assert shipped.kernel.method.startswith("cuda-events, shipped sm_") and shipped.kernel.median_ms > 0
    assert shipped.frame_ms >= shipped.kernel.median_ms
    other = renderer.render(generate_scene(30, seed=12), size, memory, block, pattern, shipped_image=True)
    assert np.abs(other.image.astype(int) - spheres_reference(generate_scene(30, seed=12).spheres, *size)).max() <= 1
    compiled = renderer.render(scene, size, memory, block, pattern)
    assert compiled.kernel.method == "cuda-events"
    np.testing.assert_array_equal(shipped.image, compiled.image)
    assert np.abs(shipped.image.astype(int) - spheres_reference(scene.spheres, *size)).max() <= 1


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_a_fresh_process_draws_its_first_frame_from_the_image_without_numba():
    code = (
        "import sys\n"
        "from kernels.backend import resolve\n"
        "from kernels.spheres.renderer import SphereRenderer\n"
        "from kernels.spheres.scene import generate_scene\n"
        "f = SphereRenderer(resolve('cuda')).render(generate_scene(20, seed=1), (64, 48), shipped_image=True)\n"
        "print(f.kernel.method, 'numba' in sys.modules, int(f.image[..., :3].sum()))\n"
    )
    done = run_fresh_python(code)
    assert done.returncode == 0, done.stderr[-2000:]
    method, numba_loaded, total = done.stdout.rsplit(" ", 2)
    assert method.startswith("cuda-events, shipped sm_") and numba_loaded == "False" and int(total) > 0


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_gpu_the_julia_images_draw_what_numbas_kernel_draws(cuda_backend, precision):
    from kernels.julia.params import JuliaParams
    from kernels.julia.renderer import JuliaRenderer

    params = JuliaParams(iterations=60, precision=precision)
    renderer = JuliaRenderer(cuda_backend)
    shipped = renderer.render(params, (250, 170), "2d", (16, 8), shipped_image=True)
    assert shipped.kernel.method.startswith("cuda-events, shipped sm_")
    compiled = renderer.render(params, (250, 170), "2d", (16, 8))
    assert compiled.kernel.method == "cuda-events"
    np.testing.assert_array_equal(shipped.image, compiled.image)
    book = renderer.render(params, (40, 30), "book", shipped_image=True)  # one-thread blocks, same kernel
    assert book.block == (1, 1) and book.kernel.method.startswith("cuda-events, shipped sm_")
    np.testing.assert_array_equal(book.image, renderer.render(params, (40, 30), "book").image)


@pytest.mark.gpu
def test_gpu_the_windows_worker_draws_from_the_image_until_numba_has_compiled_the_kernel(cuda_backend, qtbot):
    """The render worker's first frame of a kind comes from the shipped image and starts numba's compile in
    the background; once that is done, frames come from numba's kernel."""
    from kernels.service.requests import RenderRequest
    from raytracer_app.gui.render.worker import RenderWorker

    worker = RenderWorker()
    try:
        from kernels.spheres.params import SphereParams

        request = RenderRequest("spheres", cuda_backend, (64, 48), params=SphereParams(generate_scene(20, seed=3)))
        assert "shipped image" in worker.loading(request)
        first = worker._start_frame(request)()
        assert first.kernel.method.startswith("cuda-events, shipped sm_")
        qtbot.waitUntil(lambda: ("spheres", "global", cuda_backend) in worker.gpu_kernels_ready, timeout=120_000)
        second = worker._start_frame(request)()
        assert second.kernel.method == "cuda-events"
        np.testing.assert_array_equal(first.image, second.image)
    finally:
        worker.end_children()


class FakeDriver:
    """The driver calls an image frame makes, counted; device memory is host memory here."""

    def __init__(self):
        self.calls: list[str] = []
        self.memory: dict[int, np.ndarray] = {}

    def __call__(self, name, *args):
        import ctypes

        self.calls.append(name)
        if name == "cuMemAlloc":
            block = np.zeros(int(args[0]), np.uint8)
            self.memory[block.ctypes.data] = block
            return block.ctypes.data
        if name == "cuMemFree":
            self.memory.pop(args[0])
        elif name in ("cuMemcpyHtoD", "cuMemcpyDtoH"):
            ctypes.memmove(args[0], args[1], args[2])
        elif name == "cuEventCreate":
            return object()
        elif name == "cuEventElapsedTime":
            return 0.25
        return None

    def count(self, name: str) -> int:
        return self.calls.count(name)


def test_an_images_frames_keep_their_device_buffers_between_frames(monkeypatch):
    """Issue 50 item 8: each frame from an image allocated, uploaded, launched twice, made two events and
    freed; now a frame of the same sizes only uploads, launches once and copies back."""
    fake = FakeDriver()
    monkeypatch.setattr(images.driver, "call", fake)
    monkeypatch.setattr(images, "KEPT", images._Kept())
    image = IMAGES[0]
    args = [np.arange(35, dtype=np.float32), np.int32(5), images.Output((4, 8), np.uint32)]
    widths = {1: "u8", 4: "u32", 8: "u64"}
    params = tuple(widths[w] for w, _ in images.parameters(args, [0, 0, 0]))
    monkeypatch.setattr(images, "load", lambda *_: images._Loaded("module", "function", params, "sm_90"))
    for _ in range(10):
        drawn = images.draw(image, 0, (1, 1), (8, 4), args)
    assert drawn.outputs[0].shape == (4, 8) and drawn.kernel_ms == 0.25
    assert fake.count("cuMemAlloc") == 2 and fake.count("cuMemFree") == 0  # once per buffer, then reused
    assert fake.count("cuLaunchKernel") == 11  # one set-up launch, then one per frame
    assert fake.count("cuEventCreate") == 2 and fake.count("cuEventDestroy") == 0
    assert fake.count("cuMemcpyHtoD") == 10 and fake.count("cuMemcpyDtoH") == 10
    args[2] = images.Output((8, 8), np.uint32)  # a new size: that buffer alone is made again
    images.draw(image, 0, (1, 1), (8, 8), args)
    assert fake.count("cuMemAlloc") == 3 and fake.count("cuMemFree") == 1
    images.KEPT.release()
    assert fake.count("cuMemFree") == 3 and fake.count("cuEventDestroy") == 2 and not fake.memory


@pytest.mark.gpu
def test_gpu_continuous_image_frames_allocate_nothing_after_the_first(cuda_backend):
    from kernels.spheres.renderer import SphereRenderer

    scene = generate_scene(60, seed=3)
    renderer = SphereRenderer(cuda_backend)
    first = renderer.render(scene, (512, 384), "global", (16, 16), shipped_image=True)
    assert first.kernel.method.startswith("cuda-events, shipped sm_")
    made = images.KEPT.allocations
    for _ in range(20):
        frame = renderer.render(scene, (512, 384), "global", (16, 16), shipped_image=True)
    assert images.KEPT.allocations == made
    assert np.abs(frame.image.astype(int) - spheres_reference(scene.spheres, 512, 384)).max() <= 1


def test_numbas_background_compile_waits_for_a_pause_in_the_frames(monkeypatch, qtbot):
    """Under Render Continuously numba's compile (seconds holding the GIL) starved the shipped image's frames:
    it starts only once frames stop coming for a moment, and then at once."""
    import time
    from types import SimpleNamespace

    from raytracer_app.gui.render import worker as worker_module

    compiled = []
    monkeypatch.setattr(worker_module, "gpu_kernel_key", lambda r: ("spheres", "global"))
    monkeypatch.setattr(worker_module, "compile_gpu_kernel", lambda r: compiled.append(r))
    worker = worker_module.RenderWorker()
    try:
        request = SimpleNamespace(backend="a GPU")
        worker._last_frame_at = time.monotonic()
        worker._compile_in_background(request)
        end = time.monotonic() + 3 * worker_module.COMPILE_AFTER_IDLE_S
        while time.monotonic() < end:  # frames keep coming, as under Render Continuously
            worker._last_frame_at = time.monotonic()
            time.sleep(worker_module.IDLE_POLL_S / 2)
        assert compiled == []
        qtbot.waitUntil(lambda: compiled == [request], timeout=5000)  # a pause: the compile runs
        assert ("spheres", "global", "a GPU") in worker.gpu_kernels_ready
    finally:
        worker.end_children()


@pytest.mark.parametrize("image", IMAGES, ids=lambda i: i.name)
def test_each_shipped_image_takes_numba_cudas_argument_layout_the_loader_packs(image):
    """The images are numba-cuda's (scripts/kernel_images.py builds them under it whatever RAYTRACER_COMPILER
    says): a 1-D array is 7 parameters, not numba-cuda-mlir's 5."""
    manifest = images.read_manifest(image)
    assert manifest["layout"] == images.LAYOUT == images.NUMBA_CUDA_LAYOUT
    widths = [images.PARAM_BYTES[p] for p in manifest["params"]]
    assert widths == images.signature_widths(manifest["signature"], images.NUMBA_CUDA_LAYOUT)
    assert widths != images.signature_widths(manifest["signature"], images.MLIR_LAYOUT)


def test_an_image_made_in_another_compilers_layout_is_refused_with_the_reason(monkeypatch):
    image = IMAGES[0]
    manifest = images.read_manifest(image)
    images._checked.cache_clear()
    try:
        monkeypatch.setattr(images, "read_manifest", lambda im: {**manifest, "layout": images.MLIR_LAYOUT})
        assert images._checked(image, (9, 0)) == ("made for numba-cuda-mlir's argument layout; the images launch "
                                                  "with numba-cuda's")
        images._checked.cache_clear()
        mlir_params = ["u64"] * len(images.signature_widths(manifest["signature"], images.MLIR_LAYOUT))
        monkeypatch.setattr(images, "read_manifest", lambda im: {**manifest, "params": mlir_params})
        assert "parameters are not numba-cuda's layout of" in images._checked(image, (9, 0))
        images._checked.cache_clear()
        monkeypatch.setattr(images, "read_manifest", lambda im: {k: v for k, v in manifest.items() if k != "layout"})
        assert isinstance(images._checked(image, (9, 0)), tuple)  # a manifest before the key: numba-cuda's
    finally:
        images._checked.cache_clear()


def test_numba_cuda_mlir_takes_an_array_as_a_memref():
    """Allocated and aligned pointers, offset, shape, strides in elements: 5 parameters for a 1-D array."""
    packed = images.parameters((np.zeros(21, np.float32), np.int32(20), images.Output((3, 5), np.uint32)),
                               (0x1000, 0, 0x2000), images.MLIR_LAYOUT)
    values = [int.from_bytes(raw, "little") for _, raw in packed]
    assert [w for w, _ in packed] == [8] * 5 + [4] + [8] * 7
    assert values == [0x1000, 0x1000, 0, 21, 1, 20, 0x2000, 0x2000, 0, 3, 5, 5, 1]


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda_mlir") is None,
                    reason="numba-cuda-mlir is not installed (the mlir extra)")
@pytest.mark.parametrize("signature", ["void(uint8[::1], int64, uint32[::1])",
                                       "void(float32[::1], int32, boolean, uint32[:, ::1])"])
def test_numba_cuda_mlirs_kernels_take_the_memref_layout(signature):
    """Offline: the PTX parameters numba-cuda-mlir gives a kernel are what the loader packs in its layout."""
    from numba_cuda_mlir import cuda

    from kernels.backend.mlir_private import target_cc

    def kernel_1d(a, n, out):
        out[0] = n

    def kernel_2d(a, n, flag, out):
        out[0, 0] = n

    kernel = kernel_1d if signature.count(",") == 2 else kernel_2d
    with target_cc((9, 0)):
        ptx, _ = cuda.compile_ptx(kernel, signature, cc=(9, 0))
    params = re.findall(r"\.param\s+\.(\w+)\s+\S+_param_\d+", ptx)
    assert [images.PARAM_BYTES[p] for p in params] == images.signature_widths(signature, images.MLIR_LAYOUT)
