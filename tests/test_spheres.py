import json

import numpy as np
import pytest

from kernels import InputError
from kernels.spheres.renderer import SphereRenderer
from kernels.spheres.scene import (CONSTANT_CAPACITY, MAX_SPHERES, Scene, generate_scene, load_scene, max_spheres, presets,
                           radius_scale, save_scene, scene_from_dict)
from tests.references import spheres_reference, spheres_reference_sparse


def random_spheres(n, seed, radius, half_width, half_height, depth=lambda rng, n: rng.uniform(-20, 20, n)):
    """``n`` spheres (a Scene's seven columns): random colours, radii in ``radius`` (low, high), centres within
    +-half_width and +-half_height, depths drawn by ``depth(rng, n)``; drawn in that order from ``seed``."""
    rng = np.random.default_rng(seed)
    s = np.empty((n, 7), np.float32)
    s[:, 0:3] = rng.random((n, 3))
    s[:, 3] = rng.uniform(*radius, n)
    s[:, 4] = rng.uniform(-half_width, half_width, n)
    s[:, 5] = rng.uniform(-half_height, half_height, n)
    s[:, 6] = depth(rng, n)
    return s


def small_scene(n=6, seed=3, w=32, h=24):
    """Spheres that fit a small image, overlapping, with z spread so depth order matters."""
    return Scene(random_spheres(n, seed, (3, 10), w / 2, h / 2), "small")


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


@pytest.mark.parametrize("memory", ["global", "constant", "shared", "binned"])
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


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_staggered_pattern_on_cuda_kernels(cuda_backend):
    scene = small_scene(n=5)
    r = SphereRenderer(cuda_backend)
    for memory in ("global", "constant", "shared", "binned"):
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
    """A frame's block is checked once, by its request (renderers draw the blocks requests and bench launches
    checked)."""
    from kernels.service.requests import RenderRequest
    from kernels.spheres.params import SphereParams

    with pytest.raises(InputError, match=message):
        RenderRequest("spheres", cuda_backend, (8, 8), block, SphereParams(small_scene()))


@pytest.mark.parametrize("n, cap", [(0, MAX_SPHERES), (MAX_SPHERES + 1, MAX_SPHERES), (CONSTANT_CAPACITY + 1, CONSTANT_CAPACITY)])
def test_sphere_count_limits(n, cap):
    with pytest.raises(InputError, match=f"sphere count {n} is out of range; allowed 1..{cap} "):
        generate_scene(n, cap=cap)


def test_limits_per_memory(cuda_backend, cpu_backend):

    assert [max_spheres(m) for m in ("global", "constant", "shared", "binned")] == [1_000_000, 2340, 1_000_000, 1_000_000]
    assert 65536 // 28 == 2340
    limits = cuda_backend.limits
    assert max_spheres("constant", limits) == min(2340, limits.total_constant_memory // 28)
    gpu, cpu = SphereRenderer(cuda_backend), SphereRenderer(cpu_backend)
    assert gpu.max_spheres("binned") == gpu.max_spheres("global") == 1_000_000
    assert cpu.max_spheres("constant") == 1_000_000  # the CPU twin reads host memory whatever is asked
    with pytest.raises(InputError, match="memory 'texture'"):
        max_spheres("texture")
    big = Scene(np.tile(small_scene(n=1).spheres, (2341, 1)), "2341 copies")
    with pytest.raises(InputError, match="sphere count 2341 is out of range; allowed 1..2340 .64 KiB of constant memory"):
        gpu.render(big, (8, 8), memory="constant", block=(8, 8))


def test_radii_shrink_with_the_count_above_2000_only():
    assert radius_scale(20) == radius_scale(2000) == 1.0
    assert radius_scale(8000) == pytest.approx(0.5) and radius_scale(1_000_000) == pytest.approx((2000 / 1e6) ** 0.5)
    book = generate_scene(2000, seed=3).spheres
    rng = np.random.default_rng(3)  # the book's draws, independently
    rng.random((2000, 3))
    np.testing.assert_array_equal(book[:, 3], (rng.random(2000) * 100.0 + 20.0).astype(np.float32))
    many = generate_scene(200_000, seed=3).spheres
    assert many.shape == (200_000, 7) and many[:, 3].max() < 120 * 0.1 + 1e-3 and many[:, 3].min() >= 20 * 0.1 - 1e-3
    # total disc area stays that of 2000 book spheres: the picture is neither empty nor a wall
    area = lambda s: float(np.pi * (s[:, 3].astype(np.float64) ** 2).sum())  # noqa: E731
    assert area(many) == pytest.approx(area(book), rel=0.05)


def test_radii_and_layout_follow_the_image_size():
    s = generate_scene(50, seed=1, size=(64, 32)).spheres
    assert (np.abs(s[:, 4]) <= 32).all() and (np.abs(s[:, 5]) <= 16).all() and (np.abs(s[:, 6]) <= 32).all()
    assert (s[:, 3] >= 20 * 32 / 1000 - 1e-4).all() and (s[:, 3] < 120 * 32 / 1000).all()
    ref = spheres_reference(s, 64, 32)
    covered = (ref[..., :3] > 0).any(axis=2).mean()
    assert 0.2 < covered < 1.0  # a small image of a generated scene is neither empty nor a wall


@pytest.mark.slow
def test_binned_tiles_identical_to_global_memory(cuda_backend):
    """Binned tiles are pixel-identical to global memory: spheres spanning several tiles, spheres off
    screen, equal depths (the tie goes to the lower scene index), an odd image size and block."""
    n, w, h = 40, 27, 19
    s = random_spheres(n, 11, (1, 9), 20, 15, lambda rng, n: rng.choice(np.float32([-5, 0, 5]), n))  # equal depths
    s[0] = [1, 0, 0, 4, 1000, 0, 0]  # far off screen
    s[1] = [0, 1, 0, 30, 0, 0, -40]  # covers every tile, behind the rest
    scene = Scene(s, "binned-edge-cases")
    r = SphereRenderer(cuda_backend)
    g = r.render(scene, (w, h), memory="global", block=(8, 4)).image
    for pattern in ("uniform", "staggered"):
        np.testing.assert_array_equal(r.render(scene, (w, h), memory="binned", block=(8, 4), pattern=pattern).image, g)
    assert np.abs(g.astype(int) - spheres_reference(s, w, h)).max() <= 1
    # one list entry per sphere per tile its bounding square touches, counted independently
    tiles = 0
    for sx, sy, rad in s[:, [4, 5, 3]]:
        xs = [x for x in range(w) if abs(x - w // 2 - sx) <= rad + 1]
        ys = [y for y in range(h) if abs(y - h // 2 - sy) <= rad + 1]
        tiles += len({x // 8 for x in xs}) * len({y // 4 for y in ys})
    assert r._binned.entries >= tiles  # the conservative margin may add a tile, never drop one


@pytest.mark.slow
def test_binned_tiles_split_a_spheres_tiles_over_any_number_of_threads(cuda_backend):
    """The count and fill kernels give each sphere ``lanes`` threads, each taking every lanes-th tile of its
    square: the same list and image for one thread, an odd count (a row split between threads) and a warp."""
    from kernels.spheres.binned import BinnedTiles

    n, w, h = 12, 21, 14
    s = random_spheres(n, 5, (2, 12), 12, 9, lambda rng, n: rng.uniform(-5, 5, n))
    s[0] = [1, 0, 0, 3, 500, 0, 0]  # off screen: no tile
    scene = Scene(s, "binned-lanes")
    r = SphereRenderer(cuda_backend)
    g = r.render(scene, (w, h), memory="global", block=(4, 4)).image
    entries = set()
    for lanes in (1, 3, 32):
        r._binned = BinnedTiles(lanes)
        np.testing.assert_array_equal(r.render(scene, (w, h), memory="binned", block=(4, 4)).image, g)
        assert r._binned.frame_lanes == lanes
        entries.add(r._binned.entries)
    assert len(entries) == 1


@pytest.mark.parametrize("entries, count, lanes", [(0, 0, 1), (5, 5, 1), (6, 5, 2), (9, 2, 8), (10**6, 20, 32),
                                                   (2_000_000, 1_000_000, 2), (7, 1, 8)])
def test_binned_tiles_give_a_sphere_as_many_threads_as_it_covers_tiles(entries, count, lanes):
    from kernels.spheres.binned import lanes_for

    assert lanes_for(entries, count) == lanes


def test_frame_time_is_never_below_kernel_time(cuda_backend, cpu_backend):
    scene = small_scene()
    for backend, memory in ((cpu_backend, "global"), (cuda_backend, "global"), (cuda_backend, "binned")):
        frame = SphereRenderer(backend).render(scene, (16, 8), memory=memory, block=(8, 8), repeats=2)
        assert all(f >= k for f, k in zip(frame.frame_timing.samples_ms, frame.kernel.samples_ms))
        assert frame.frame_ms >= frame.kernel.median_ms


def test_gpu_frames_rotate_through_three_host_buffers(cuda_backend):
    """A frame handed out is not overwritten by the next two (the window shows frame N while N+1 waits to
    be shown and N+2 renders); the fourth reuses the first one's buffer."""
    r = SphereRenderer(cuda_backend)
    scenes = [small_scene(seed=s) for s in (4, 5, 6)]
    frames = [r.render(scene, (16, 8), block=(8, 8)).image for scene in scenes[:1]]
    kept = frames[0].copy()
    frames += [r.render(scene, (16, 8), block=(8, 8)).image for scene in scenes[1:]]
    np.testing.assert_array_equal(frames[0], kept)
    assert not any(np.shares_memory(frames[i], frames[j]) for i in range(3) for j in range(i + 1, 3))
    for frame, scene in zip(frames, scenes):
        np.testing.assert_array_equal(frame, spheres_reference(scene.spheres, 16, 8))
    assert np.shares_memory(r.render(scenes[0], (16, 8), block=(8, 8)).image, frames[0])


def test_constant_frames_follow_another_writer_of_the_constant_array(cuda_backend):
    """Frames of one scene stay right after another writer (another renderer, a benchmark) copied its own
    spheres into the constant array in between: ConstantArray.write skips only bytes still in place."""
    first, second = SphereRenderer(cuda_backend), SphereRenderer(cuda_backend)
    a, b = small_scene(seed=4), small_scene(seed=5)
    for renderer, scene in ((first, a), (first, a), (second, b), (first, a)):
        image = renderer.render(scene, (24, 16), memory="constant", block=(8, 8)).image
        assert np.abs(image.astype(int) - spheres_reference(scene.spheres, 24, 16)).max() <= 1


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
    from kernels.spheres.gpu import constant_ptx, gpu_kernel

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
    from kernels.spheres.layout import TILE_CHUNK

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
    for memory in ("constant", "shared", "binned"):
        for pattern in ("uniform", "staggered"):
            np.testing.assert_array_equal(g, r.render(scene, (1024, 1024), memory=memory, block=(32, 8), pattern=pattern).image)
    assert np.abs(g.astype(int) - spheres_reference(scene.spheres, 1024, 1024)).max() <= 1


@pytest.mark.gpu
def test_gpu_untimed_frames_draw_the_same_image_without_a_kernel_time(cuda_backend):
    scene = generate_scene(20, seed=3)
    r = SphereRenderer(cuda_backend)
    for memory in ("global", "constant", "shared", "binned"):
        timed = r.render(scene, (256, 256), memory=memory)
        untimed = r.render(scene, (256, 256), memory=memory, timed=False, repeats=3)
        assert timed.kernel.method == "cuda-events" and untimed.kernel is None and untimed.outside_kernel_ms is None
        assert untimed.frame_timing.repeats == 3 and untimed.frame_ms > 0
        np.testing.assert_array_equal(untimed.image, timed.image)
    assert np.abs(timed.image.astype(int) - spheres_reference(scene.spheres, 256, 256)).max() <= 1


@pytest.mark.gpu
def test_gpu_binned_tiles_identical_to_global_at_100k_spheres(cuda_backend):
    scene = generate_scene(100_000, seed=5)
    r = SphereRenderer(cuda_backend)
    g = r.render(scene, (1024, 1024), memory="global").image
    np.testing.assert_array_equal(r.render(scene, (1024, 1024), memory="binned").image, g)
    np.testing.assert_array_equal(r.render(scene, (1024, 1024), memory="shared").image, g)
    covered = (g[..., :3] > 0).any(axis=2).mean()
    assert 0.3 < covered  # 100,000 shrunken spheres still fill the picture


def test_bench_sweep_past_constant_capacity_skips_constant_and_runs_binned(cuda_backend):
    from kernels.backend import SkipKind
    from kernels.launch import Launch
    from kernels.spheres import VARIANTS
    from kernels.spheres.runs import make_bench_problem

    by_name = {v.name: v for v in VARIANTS}
    problem = make_bench_problem(CONSTANT_CAPACITY + 1, (8, 8))
    reason = by_name["spheres-constant"].run(problem, Launch(None), cuda_backend, 1)
    assert reason.kind is SkipKind.NOT_APPLICABLE and reason.text == "constant memory holds at most 2340 spheres"
    small = make_bench_problem(4, (16, 8))
    outcome = by_name["spheres-binned"].run(small, Launch((8, 8)), cuda_backend, 1)
    assert outcome.result == small.expected == 128  # every pixel matches the CPU twin


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_binned_tiles_follow_new_scenes_sizes_and_blocks(cuda_backend):
    """The tile lists are sized once per scene, image size and block; any change bins again."""
    r = SphereRenderer(cuda_backend)
    a, b = small_scene(n=5, seed=4), small_scene(n=7, seed=5)
    for scene, size, block in ((a, (16, 8), (8, 8)), (b, (16, 8), (8, 8)), (b, (8, 16), (8, 8)), (a, (16, 8), (4, 4))):
        image = r.render(scene, size, memory="binned", block=block).image
        assert np.abs(image.astype(int) - spheres_reference(scene.spheres, *size)).max() <= 1


# --- the tiled CPU twin (the renderer's host path) against the definition ----------------------------------

TILES_SIZE = (256, 192)  # 16 x 12 tiles of 16x16


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 20, 2000])
def test_tiled_twin_is_the_definition(cpu_backend, n):
    scene = generate_scene(n, seed=3, size=TILES_SIZE)  # laid out over the image: overlapping, across tiles
    frame = SphereRenderer(cpu_backend).render(scene, TILES_SIZE)
    assert frame.meta["twin"] == "tiles"
    np.testing.assert_array_equal(frame.image, spheres_reference(scene.spheres, *TILES_SIZE))


@pytest.mark.slow
def test_tiled_twin_at_100k_spheres(cpu_backend):
    scene = generate_scene(100_000, seed=4, size=TILES_SIZE)  # ~35 spheres deep at every pixel
    image = SphereRenderer(cpu_backend).render(scene, TILES_SIZE).image
    ref = spheres_reference_sparse(scene.spheres, *TILES_SIZE)
    assert (ref[..., :3] > 0).any(axis=2).mean() > 0.99
    np.testing.assert_array_equal(image, ref)


def test_tiled_twin_on_tile_borders_ties_and_off_screen(cpu_backend):
    w, h = 100, 70  # edge tiles of 4 x 6 pixels
    rows = [
        [1.0, 0.0, 0.0, 8.0, -34.0, -19.0, 5.0],  # centred on a tile corner (x = 16, y = 16)
        [0.0, 1.0, 0.0, 8.0, -34.0, -19.0, 5.0],  # the same sphere again: the tie goes to the first
        [0.0, 0.0, 1.0, 30.0, 0.0, 0.0, -10.0],  # behind both, across many tiles
        [0.5, 0.5, 0.5, 200.0, 0.0, 0.0, -500.0],  # larger than the image, furthest
        [1.0, 1.0, 0.0, 12.0, 48.5, 33.5, 40.0],  # over the bottom-right corner, half off screen
        [0.2, 0.3, 0.4, 5.0, 400.0, -300.0, 90.0],  # off screen
        [0.9, 0.1, 0.9, 0.4, -2.0, 3.0, 60.0],  # smaller than a pixel
        [0.3, 0.9, 0.6, 6.0, -18.0, -19.0, 5.0 + 2.0],  # crosses the first pair, nearer
    ]
    scene = Scene(np.array(rows, np.float32), "borders")
    r = SphereRenderer(cpu_backend)
    image = r.render(scene, (w, h)).image
    np.testing.assert_array_equal(image, spheres_reference(scene.spheres, w, h))
    np.testing.assert_array_equal(image, r.render(scene, (w, h), twin="rows").image)
    assert image[-19 + h // 2, -34 + w // 2 - 6, 0] > 0 == image[-19 + h // 2, -34 + w // 2 - 6, 1]  # red won the tie


def test_tiled_twin_ignores_the_visiting_pattern_and_reuses_nothing_stale(cpu_backend):
    r = SphereRenderer(cpu_backend)
    a, b = generate_scene(300, seed=5, size=(64, 48)), generate_scene(30, seed=6, size=(64, 48))
    img_a = r.render(a, (64, 48), pattern="staggered").image.copy()
    np.testing.assert_array_equal(img_a, spheres_reference(a.spheres, 64, 48))
    np.testing.assert_array_equal(r.render(b, (64, 48)).image, spheres_reference(b.spheres, 64, 48))
    np.testing.assert_array_equal(r.render(a, (40, 40)).image, spheres_reference(a.spheres, 40, 40))


def test_host_sphere_frames_say_which_twin_drew_them(cpu_backend):
    from kernels.harness.render import frame_row, frame_variant

    r = SphereRenderer(cpu_backend)
    scene = small_scene()
    images = []
    for twin, name in (("tiles", "spheres-cpu-tiles"), ("rows", "spheres-cpu"), ("rows-serial", "spheres-cpu-serial")):
        frame = r.render(scene, (32, 24), twin=twin)
        assert frame.block is None and frame.meta["memory"] == "host" and frame.meta["twin"] == twin
        assert frame_variant(frame) == name == frame_row(frame).variant
        images.append(frame.image.copy())
    for image in images:  # one picture, the definition's
        np.testing.assert_array_equal(image, spheres_reference(scene.spheres, 32, 24))
    with pytest.raises(InputError, match="CPU twin 'bvh' is not one of tiles, rows"):
        r.render(scene, (8, 8), twin="bvh")
