"""Binned tiles sorted nearest first (memory 'sorted', ``spheres-sorted``): the same image as global memory and
the definition, with lists sorted in one segment or many, and the depth bound its early stop relies on."""

import numpy as np
import pytest

from kernels.spheres.renderer import SphereRenderer
from kernels.spheres.scene import Scene, generate_scene
from tests.references import spheres_reference
from tests.test_spheres import random_spheres


def edge_case_scene():
    """Spheres across several tiles, off screen, at equal depths (the tie goes to the lower scene index) and one
    behind everything covering every tile."""
    s = random_spheres(40, 11, (1, 9), 20, 15, lambda rng, n: rng.choice(np.float32([-5, 0, 5]), n))
    s[0] = [1, 0, 0, 4, 1000, 0, 0]  # far off screen
    s[1] = [0, 1, 0, 30, 0, 0, -40]  # covers every tile, behind the rest
    s[2] = [0, 0, 1, 6, 3, 2, 0]  # the same reach as s[3]: equal keys in the sort
    s[3] = [1, 1, 0, 6, -3, -2, 0]
    return Scene(s, "sorted-edge-cases")


@pytest.mark.slow
@pytest.mark.parametrize("sort_cap", [1024, 8, 4])
def test_sorted_tiles_identical_to_global_memory(cuda_backend, monkeypatch, sort_cap):
    """One segment (the shipped cap) and lists split into segments of 8 and 4 (each sorted and walked on its
    own; the simulator reads the module's cap at run time), at an odd image size and block."""
    from kernels.spheres import sorted as nearest_first

    if sort_cap != nearest_first.SORT_CAP and not cuda_backend.is_simulator:
        pytest.skip("the segment cap is a compile-time constant on a GPU")
    monkeypatch.setattr(nearest_first, "SORT_CAP", sort_cap)
    scene, (w, h) = edge_case_scene(), (27, 19)
    r = SphereRenderer(cuda_backend)
    g = r.render(scene, (w, h), memory="global", block=(8, 4)).image
    for pattern in ("uniform", "staggered"):  # the pattern is ignored: the order is nearest first
        np.testing.assert_array_equal(r.render(scene, (w, h), memory="sorted", block=(8, 4), pattern=pattern).image, g)
    assert np.abs(g.astype(int) - spheres_reference(scene.spheres, w, h)).max() <= 1


@pytest.mark.slow
def test_sorted_tiles_are_the_definition_on_a_generated_scene(cuda_backend):
    scene = generate_scene(60, seed=9, size=(32, 24))  # laid out over the image: overlapping, many per tile
    image = SphereRenderer(cuda_backend).render(scene, (32, 24), memory="sorted", block=(8, 8)).image
    np.testing.assert_array_equal(image, spheres_reference(scene.spheres, 32, 24))


def test_sphere_reach_bounds_every_hit_depth():
    """The early stop is exact only if no hit on a sphere lies deeper than its reach: float32 hits through
    random pixels, with radii and depths of every scale, computed by the shared sphere_step itself."""
    import numba

    from kernels.spheres.layout import MISS, pack_spheres
    from kernels.spheres.shading import sphere_reach, sphere_step

    @numba.njit
    def reach_and_depths(packed, n, i, rays):  # compiled callers: the shared functions have no Python wrapper
        depths = np.empty(rays.shape[0], np.float32)
        for k in range(rays.shape[0]):
            zero = np.float32(0)
            depths[k] = sphere_step(packed, n * 4, i, i, rays[k, 0], rays[k, 1], zero, zero, zero, MISS, n)[3]
        return sphere_reach(packed, i), depths

    rng = np.random.default_rng(7)
    n = 400
    s = np.empty((n, 7), np.float32)
    s[:, 0:3] = 1
    s[:, 3] = np.exp(rng.uniform(-3, 8, n))  # radii 0.05 .. 3000
    s[:, 4:6] = rng.uniform(-50, 50, (n, 2))
    s[:, 6] = rng.choice([-1e6, -3.7, 0.0, 1.1, 12345.6], n) * rng.uniform(0.5, 1.5, n)
    packed = pack_spheres(s)
    hits = 0
    for i in range(n):
        reach, depths = reach_and_depths(packed, n, i, rng.uniform(-60, 60, (25, 2)).astype(np.float32))
        # an independent bound in float64: the reach is z + r, rounded once or twice
        assert abs(float(reach) - (float(s[i, 6]) + float(s[i, 3]))) <= 1e-6 * (abs(float(s[i, 6])) + float(s[i, 3]))
        assert ((depths == MISS) | (depths <= reach)).all()
        hits += int((depths != MISS).sum())
    assert hits > 1000  # the rays do hit


def test_bench_runs_sorted_tiles_and_verifies_them(cuda_backend):
    from kernels.launch import Launch
    from kernels.spheres import VARIANTS
    from kernels.spheres.runs import make_bench_problem

    variant = {v.name: v for v in VARIANTS}["spheres-sorted"]
    problem = make_bench_problem(6, (16, 8))
    outcome = variant.run(problem, Launch((8, 8)), cuda_backend, 1)
    assert outcome.result == problem.expected == 128  # every pixel matches the CPU twin


@pytest.mark.gpu
@pytest.mark.parametrize("n", [100_000, 1_000_000])
def test_gpu_sorted_tiles_identical_to_binned_at_many_spheres(cuda_backend, n):
    scene = generate_scene(n, seed=5)
    r = SphereRenderer(cuda_backend)
    binned = r.render(scene, (1024, 1024), memory="binned").image
    np.testing.assert_array_equal(r.render(scene, (1024, 1024), memory="sorted").image, binned)
    if n == 100_000:  # global memory takes seconds at a million
        np.testing.assert_array_equal(r.render(scene, (1024, 1024), memory="global").image, binned)
