"""Kernel images: cubins saved by the numba path and launched through the CUDA driver by the next process's
first frame (kernels/kernel_images.py, kernels/cuda_driver.py). Without a GPU: the argument flattening, the
cache's keys and refusals. On a GPU: the driver's frames against numba's own, in a fresh process."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import numpy as np
import pytest

from kernels import cuda_driver, kernel_images
from tests.conftest import run_fresh_python


def test_an_array_is_flattened_as_numba_passes_it():
    a = np.zeros((3, 5), np.uint32)
    flat = kernel_images.flatten(a, 0xABC0)
    # meminfo, parent, size, itemsize, data, shape, strides: numpy's own view of the same array
    expected = [0, 0, a.size, a.itemsize, 0xABC0, *a.shape, *a.strides]
    assert [int(v) for v in flat] == expected
    assert all(v.nbytes == 8 for v in flat)
    out = kernel_images.Output((7, 2, 3), np.float32)
    ref = np.empty((7, 2, 3), np.float32)
    assert [int(v) for v in kernel_images.flatten(out, 16)] == [0, 0, ref.size, 4, 16, *ref.shape, *ref.strides]


def test_scalars_keep_their_width_and_a_boolean_is_one_byte():
    assert [v.nbytes for v in kernel_images.flatten(np.int32(7))] == [4]
    assert [v.nbytes for v in kernel_images.flatten(np.float64(0.5))] == [8]
    (flag,) = kernel_images.flatten(np.bool_(True))
    assert flag.nbytes == 1 and int(flag) == 1
    with pytest.raises(TypeError, match="numpy scalar"):
        kernel_images.flatten(3)  # a Python int has no width: refused rather than guessed


def _fake_dispatcher(setup=(), debug=False):
    library = SimpleNamespace(_setup_functions=list(setup), get_cubin=lambda cc: b"\x7fELF fake cubin " + bytes(cc))
    kernel = SimpleNamespace(library=library, entry_name="_Z6kernelPj", debug=debug, cooperative=False, extensions=[])
    return SimpleNamespace(overloads={("sig",): kernel})


def test_save_writes_one_image_per_kernel_signature_and_architecture(monkeypatch, tmp_path):
    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(tmp_path))
    assert kernel_images.save("demo", "void(int32)", _fake_dispatcher(), (9, 0))
    assert kernel_images.save("demo", "void(int32)", _fake_dispatcher(), (9, 0))  # already there: kept
    assert kernel_images.save("demo", "void(int64)", _fake_dispatcher(), (9, 0))
    assert kernel_images.save("demo", "void(int32)", _fake_dispatcher(), (8, 0))
    assert kernel_images.save("demo.other", "void(int32)", _fake_dispatcher(), (9, 0))
    cubins = sorted(p.name for p in (tmp_path / "kernel-images").glob("*.cubin"))
    assert len(cubins) == 4 and len(set(cubins)) == 4
    assert sum(name.startswith("demo-sm80-") for name in cubins) == 1
    assert sum(name.startswith("demo.other-sm90-") for name in cubins) == 1
    assert not list((tmp_path / "kernel-images").glob(".*"))  # no temporary files left behind


def test_what_a_plain_driver_launch_would_not_reproduce_is_not_saved(monkeypatch, tmp_path):
    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(tmp_path))
    assert not kernel_images.save("demo", "void()", _fake_dispatcher(setup=[print]), (9, 0))
    assert not kernel_images.save("demo", "void()", _fake_dispatcher(debug=True), (9, 0))
    assert not kernel_images.save("demo", "void()", object(), (9, 0))  # not a compiled kernel: never raises
    assert not (tmp_path / "kernel-images").exists() or not list((tmp_path / "kernel-images").iterdir())


def test_no_saved_image_means_no_driver_launch(monkeypatch, tmp_path):
    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cuda_driver, "compute_capability", lambda device: (9, 0))
    assert kernel_images.launch("demo", "void()", [], (1, 1), (1, 1)) is None
    assert not kernel_images.usable("demo", "void()")
    kernel_images.save("demo", "void()", _fake_dispatcher(), (9, 0))
    monkeypatch.delitem(sys.modules, "numba.cuda", raising=False)
    assert kernel_images.usable("demo", "void()")
    assert not kernel_images.usable("demo", "void(int32)") and not kernel_images.usable("other", "void()")
    # once numba.cuda is loaded, launching through the driver would gain nothing
    monkeypatch.setitem(sys.modules, "numba.cuda", SimpleNamespace())
    assert not kernel_images.usable("demo", "void()")


def test_no_driver_library_means_no_gpu(monkeypatch):
    monkeypatch.setattr(cuda_driver, "library", lambda: None)
    assert cuda_driver.device_count() == 0
    with pytest.raises(cuda_driver.DriverError, match="cannot be loaded"):
        cuda_driver.device_name(0)


CHILD = r"""
import sys
import numpy as np
from kernels import backend as backends
from kernels.julia import JuliaParams, JuliaRenderer
from kernels.raytrace import SphereRenderer
from kernels.scene import generate_scene

b = backends.resolve("cuda")
scene = generate_scene(int(sys.argv[2]), 3)
out, by_driver = {}, []
for memory in ("global", "constant", "shared"):
    r = SphereRenderer(b)
    by_driver.append(r.first_frame_by_driver(memory))
    out[memory] = r.render(scene, (301, 203), memory, (16, 8)).image
for precision in ("float32", "float64"):
    r = JuliaRenderer(b)
    by_driver.append(r.first_frame_by_driver(precision))
    out[precision] = r.render(JuliaParams(zoom=3.0, precision=precision), (257, 130), block=(32, 4)).image
print("by-driver", all(by_driver), "numba.cuda", "numba.cuda" in sys.modules)
np.savez(sys.argv[1], **out)
"""


@pytest.mark.gpu
def test_driver_first_frames_equal_numbas_frames(cuda_backend, tmp_path):
    """Every kernel a first frame can launch through the driver, in a fresh process that never loads
    numba.cuda, against the same frame rendered by numba here (pixel for pixel)."""
    from kernels.julia import JuliaParams, JuliaRenderer
    from kernels.raytrace import SphereRenderer
    from kernels.scene import generate_scene

    count = 57
    scene = generate_scene(count, 3)
    spheres, julia = SphereRenderer(cuda_backend), JuliaRenderer(cuda_backend)
    expected = {m: spheres.render(scene, (301, 203), m, (16, 8), repeats=2).image.copy()
                for m in ("global", "constant", "shared")}  # repeats=2: numba's path, which saves the images
    for precision in ("float32", "float64"):
        expected[precision] = julia.render(JuliaParams(zoom=3.0, precision=precision), (257, 130),
                                           block=(32, 4), repeats=2).image.copy()
    out = tmp_path / "frames.npz"
    proc = run_fresh_python(CHILD, str(out), str(count), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "by-driver True numba.cuda False" in proc.stdout, proc.stdout + proc.stderr
    frames = np.load(out)
    for name, image in expected.items():
        assert image.any(), name  # something was drawn
        np.testing.assert_array_equal(frames[name], image, err_msg=name)
