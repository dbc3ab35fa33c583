import json

import numpy as np
import pytest

from kernels import InputError
from kernels.raytrace import SphereRenderer
from kernels.scene import CONSTANT_CAPACITY, Scene, generate_scene, load_scene, presets, save_scene, scene_from_dict
from tests.references import spheres_reference


def small_scene(n=6, seed=3, w=32, h=24):
    """Spheres that fit a small image, overlapping, with z spread so depth order matters."""
    rng = np.random.default_rng(seed)
    s = np.empty((n, 7), np.float32)
    s[:, 0:3] = rng.random((n, 3))
    s[:, 3] = rng.uniform(3, 10, n)
    s[:, 4] = rng.uniform(-w / 2, w / 2, n)
    s[:, 5] = rng.uniform(-h / 2, h / 2, n)
    s[:, 6] = rng.uniform(-20, 20, n)
    return Scene(s, "small")


def test_cpu_twin_matches_the_definition_at_1024(cpu_backend):
    scene = generate_scene(20, seed=1)
    frame = SphereRenderer(cpu_backend).render(scene, (1024, 1024))
    ref = spheres_reference(scene.spheres, 1024, 1024)
    assert frame.image.shape == (1024, 1024, 4)
    assert np.abs(frame.image.astype(int) - ref).max() <= 1
    assert (frame.image != ref).mean() < 1e-3
    assert (ref[..., :3] > 0).any(axis=2).mean() > 0.1  # the scene is really in the picture


def test_staggered_pattern_renders_the_same_image(cpu_backend):
    scene = generate_scene(50, seed=2)
    r = SphereRenderer(cpu_backend)
    a = r.render(scene, (256, 200), pattern="uniform").image
    b = r.render(scene, (256, 200), pattern="staggered").image
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("memory", ["global", "constant", "shared"])
def test_cuda_kernels_match_cpu_twin_and_reference(cuda_backend, cpu_backend, memory):
    scene = small_scene()
    w, h = 32, 24
    cpu = SphereRenderer(cpu_backend).render(scene, (w, h)).image
    gpu = SphereRenderer(cuda_backend).render(scene, (w, h), memory=memory, block=(8, 8)).image
    ref = spheres_reference(scene.spheres, w, h)
    tolerance = 0 if cuda_backend.kind == "sim" else 1  # a real GPU may fuse multiply-adds
    assert np.abs(gpu.astype(int) - cpu).max() <= tolerance
    assert np.abs(gpu.astype(int) - ref).max() <= 1


def test_constant_memory_follows_new_scenes(cuda_backend):
    """Writing new spheres into the constant array changes the next image (no stale data)."""
    r = SphereRenderer(cuda_backend)
    a, b = small_scene(seed=4), small_scene(seed=5)
    img_a = r.render(a, (24, 16), memory="constant", block=(8, 8)).image
    img_b = r.render(b, (24, 16), memory="constant", block=(8, 8)).image
    assert np.abs(img_a.astype(int) - spheres_reference(a.spheres, 24, 16)).max() <= 1
    assert np.abs(img_b.astype(int) - spheres_reference(b.spheres, 24, 16)).max() <= 1


def test_staggered_pattern_on_cuda_kernels(cuda_backend):
    scene = small_scene(n=5)
    r = SphereRenderer(cuda_backend)
    for memory in ("global", "constant", "shared"):
        a = r.render(scene, (16, 16), memory=memory, block=(16, 4), pattern="staggered").image
        assert np.abs(a.astype(int) - spheres_reference(scene.spheres, 16, 16)).max() <= 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"size": (0, 10)}, "width 0"),
        ({"size": (10, 4097)}, "height 4097"),
        ({"memory": "texture"}, "memory 'texture'"),
        ({"pattern": "random"}, "pattern 'random'"),
    ],
)
def test_bad_render_arguments(cpu_backend, kwargs, message):
    with pytest.raises(InputError, match=message):
        SphereRenderer(cpu_backend).render(generate_scene(3), **kwargs)


@pytest.mark.parametrize("block, message", [((0, 16), "zero dimension"), ((64, 32), "at most 1024")])
def test_bad_blocks(cuda_backend, block, message):
    with pytest.raises(InputError, match=message):
        SphereRenderer(cuda_backend).render(small_scene(), (8, 8), block=block)


@pytest.mark.parametrize("n", [0, CONSTANT_CAPACITY + 1])
def test_sphere_count_limits(n):
    with pytest.raises(InputError, match=f"sphere count {n} is out of range; allowed 1..{CONSTANT_CAPACITY}"):
        generate_scene(n)


def test_generated_scenes_are_deterministic_and_follow_the_book():
    a, b = generate_scene(100, seed=7), generate_scene(100, seed=7)
    np.testing.assert_array_equal(a.spheres, b.spheres)
    assert not np.array_equal(a.spheres, generate_scene(100, seed=8).spheres)
    s = a.spheres
    assert s.dtype == np.float32 and s.shape == (100, 7)
    assert (s[:, :3] >= 0).all() and (s[:, :3] < 1).all()
    assert (s[:, 3] >= 20).all() and (s[:, 3] < 120).all()
    assert (np.abs(s[:, 4:]) <= 500).all()


def test_scene_json_round_trip(tmp_path):
    scene = generate_scene(5, seed=1)
    path = tmp_path / "scene.json"
    save_scene(scene, path)
    doc = json.loads(path.read_text())
    assert len(doc["spheres"]) == 5 and set(doc["spheres"][0]) == {"center", "radius", "color"}
    np.testing.assert_array_equal(load_scene(path).spheres, scene.spheres)


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not valid JSON"),
        ('{"spheres": 3}', "list 'spheres'"),
        ('{"spheres": [{"center": [0, 0], "radius": 5, "color": [1, 0, 0]}]}', "'center' must be a list of 3 numbers"),
        ('{"spheres": [{"center": [0, 0, 0], "radius": "big", "color": [1, 0, 0]}]}', "'radius' must be a number"),
        ('{"spheres": [{"center": [0, 0, 0], "radius": -5, "color": [1, 0, 0]}]}', "radius -5 must be positive"),
        ('{"spheres": [{"center": [0, 0, 0], "radius": 5, "color": [2, 0, 0]}]}', "in 0..1"),
        ('{"spheres": []}', "no spheres"),
    ],
)
def test_malformed_scene_files(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        load_scene(path)


def test_missing_scene_file(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_scene(tmp_path / "nope.json")


def test_presets_load_and_include_the_books_scene():
    found = presets()
    assert "book-20" in found
    for path in found.values():
        scene = load_scene(path)
        assert 1 <= scene.count <= CONSTANT_CAPACITY
    assert load_scene(found["book-20"]).count == 20


def test_scene_from_dict_rejects_too_many_spheres():
    doc = {"spheres": [{"center": [0, 0, 0], "radius": 1, "color": [0, 0, 0]}] * 5}
    with pytest.raises(InputError, match="above the capacity 4"):
        scene_from_dict(doc, "x", cap=4)


@pytest.mark.gpu
def test_gpu_constant_kernel_reads_constant_memory_and_needs_no_recompile(cuda_backend):
    from kernels.raytrace import constant_ptx, gpu_kernel

    ptx = constant_ptx()
    assert ".visible .const" in ptx and "ld.const" in ptx
    r = SphereRenderer(cuda_backend)
    kernel = gpu_kernel("constant")
    a, b = generate_scene(20, seed=1), generate_scene(200, seed=2)
    img_a = r.render(a, (1024, 1024), memory="constant").image
    overloads = len(kernel.overloads)
    img_b = r.render(b, (1024, 1024), memory="constant").image
    assert len(kernel.overloads) == overloads  # new spheres, same compiled kernel
    assert np.abs(img_a.astype(int) - spheres_reference(a.spheres, 1024, 1024)).max() <= 1
    assert np.abs(img_b.astype(int) - spheres_reference(b.spheres, 1024, 1024)).max() <= 1


def test_shared_kernel_with_more_spheres_than_a_chunk(cuda_backend):
    """More spheres than one shared-memory chunk, many overlapping one tile: the culled passes must
    keep the nearest hit across chunks."""
    from kernels.raytrace import TILE_CHUNK

    rng = np.random.default_rng(9)
    n = TILE_CHUNK + 44
    s = np.empty((n, 7), np.float32)
    s[:, 0:3] = rng.random((n, 3))
    s[:, 3] = rng.uniform(2, 6, n)
    s[:, 4:6] = rng.uniform(-10, 10, (n, 2))
    s[:, 6] = rng.uniform(-50, 50, n)
    scene = Scene(s, "dense")
    img = SphereRenderer(cuda_backend).render(scene, (16, 16), memory="shared", block=(8, 8)).image
    assert np.abs(img.astype(int) - spheres_reference(s, 16, 16)).max() <= 1


@pytest.mark.gpu
@pytest.mark.parametrize("n", [20, 200, 2000])
def test_gpu_all_memories_identical_at_1024(cuda_backend, n):
    scene = generate_scene(n, seed=n)
    r = SphereRenderer(cuda_backend)
    g = r.render(scene, (1024, 1024), memory="global", block=(32, 8)).image
    for memory in ("constant", "shared"):
        for pattern in ("uniform", "staggered"):
            np.testing.assert_array_equal(g, r.render(scene, (1024, 1024), memory=memory, block=(32, 8), pattern=pattern).image)
    assert np.abs(g.astype(int) - spheres_reference(scene.spheres, 1024, 1024)).max() <= 1
