"""The ceilings (kernels/harness/ceilings.py): each micro-kernel run on small inputs (in the simulator without
a GPU) against what it computes, written again here with Python ints and numpy; a CPU run's rows carrying %
of their ceiling; the sphere tests a culling variant performs, counted again by brute force; the new kernels
compiled offline for sm_90 and sm_80."""

import json

import numpy as np
import pytest

from kernels.harness import ceilings
from kernels.harness.rows import CSV_COLUMNS

M32 = 0xFFFFFFFF


def scatter(i: int, r: int, count: int) -> int:
    """The kernels' hash of (thread, access) onto 0..count-1, in Python ints."""
    h = (i * 0x9E3779B1) & M32
    h = (h + ((r * 0x85EBCA77) & M32)) & M32
    h ^= h >> 15
    h = (h * 0x2C1B3C6D) & M32
    h ^= h >> 12
    return (h * count) >> 32


def test_sector_reads_kernel_reads_the_hashed_sectors(cuda_backend):
    from kernels.backend import memory
    from kernels.harness.ceiling_kernels import read_sectors

    rng = np.random.default_rng(1)
    sectors, threads, rounds = 37, 70, 3
    slots = rng.integers(0, 2**63, sectors * 4, dtype=np.uint64)
    out = memory.empty(threads, np.uint64)
    read_sectors[3, 32](memory.to_device(slots), np.uint64(sectors), rounds, out)
    expected = []
    for i in range(threads):
        acc = 0
        for r in range(rounds):
            s = scatter(i, r, sectors)
            for k in range(4):
                acc ^= int(slots[4 * s + k])
        expected.append(acc)
    assert memory.to_host(out).tolist() == expected


def test_cas_kernel_fills_each_hashed_slot_once(cuda_backend):
    from kernels.backend import memory
    from kernels.harness.ceiling_kernels import swap_slots

    count, threads, rounds = 50, 40, 4
    slots = memory.zeros(count, np.uint64)
    won = memory.empty(threads, np.int64)
    swap_slots[2, 32](slots, rounds, won)
    table = memory.to_host(slots)
    keys_at = {}
    for i in range(threads):
        for r in range(rounds):
            keys_at.setdefault(scatter(i, r, count), set()).add(i * rounds + r + 1)
    assert set(np.flatnonzero(table).tolist()) == set(keys_at)
    assert all(int(table[s]) in keys for s, keys in keys_at.items())
    assert int(memory.to_host(won).sum()) == len(keys_at)  # one won swap per slot


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma_chains_run_each_chain_steps_times(cuda_backend, dtype):
    from kernels.backend import memory
    from kernels.harness.ceiling_kernels import fma_chains

    values = np.random.default_rng(2).uniform(0.5, 1.5, 8 * 40).astype(dtype)
    device = memory.to_device(values)
    fma_chains[2, 32](device, 5, dtype(0.75), dtype(0.125))
    expected = values.astype(np.float64)
    for _ in range(5):
        expected = expected * 0.75 + 0.125
    np.testing.assert_allclose(memory.to_host(device), expected, rtol=1e-6)


def nearest_colour_sums(spheres: np.ndarray, rays: np.ndarray) -> np.ndarray:
    """Per ray (ox, oy) the nearest hit's r + g + b times dz / radius (0 for a miss), the book's shading."""
    rgb, radius, centre = spheres[:, 0:3].astype(np.float64), spheres[:, 3].astype(np.float64), spheres[:, 4:7]
    dx = rays[:, 0:1] - centre[:, 0]
    dy = rays[:, 1:2] - centre[:, 1]
    inside = dx * dx + dy * dy < radius * radius
    dz = np.sqrt(np.where(inside, radius * radius - dx * dx - dy * dy, 0.0))
    depth = np.where(inside, dz + centre[:, 2], -np.inf)
    best = depth.argmax(axis=1)  # ties: the lower index, as the kernels break them
    hit = inside[np.arange(len(rays)), best]
    shade = dz[np.arange(len(rays)), best] / radius[best]
    return np.where(hit, rgb[best].sum(axis=1) * shade, 0.0)


def test_ray_sphere_kernel_shades_each_ray_by_its_nearest_sphere(cuda_backend):
    from kernels.backend import memory
    from kernels.spheres import ceiling
    from kernels.spheres.scene import generate_scene

    threads, rays, width, height = 40, 2, 64, 48
    out = memory.empty(threads, np.float32)
    ceiling.ray_sphere_tests[2, 32](memory.to_device(ceiling.ceiling_scene()), rays, width, height, out)
    p = np.arange(threads * rays)
    origins = np.stack([p % width - width // 2, (p // width) % height - height // 2], axis=1).astype(np.float64)
    spheres = generate_scene(ceiling.CEILING_SPHERES, 0).spheres
    expected = nearest_colour_sums(spheres, origins).reshape(threads, rays).sum(axis=1)
    np.testing.assert_allclose(memory.to_host(out), expected, rtol=1e-4, atol=1e-4)


def brute_force_tile_tests(spheres, width, height, tw, th) -> int:
    """spheres-shared's cull, tile by tile and sphere by sphere: each kept sphere costs every thread of the tile."""
    total = 0
    for by in range(-(-height // th)):
        for bx in range(-(-width // tw)):
            left, bottom = bx * tw - width // 2 - 1, by * th - height // 2 - 1
            right, top = left + tw + 1, bottom + th + 1
            for s in spheres:
                sx, sy, r = float(s[4]), float(s[5]), float(s[3])
                if sx + r >= left and sx - r <= right and sy + r >= bottom and sy - r <= top:
                    total += tw * th
    return total


def test_sphere_tests_performed_by_culling_variants():
    from kernels.spheres.scene import generate_scene
    from kernels.spheres.work import all_tests, tests_performed

    spheres = generate_scene(30, 3, size=(96, 80)).spheres
    assert all_tests(spheres, (96, 80)) == 96 * 80 * 30
    assert tests_performed(spheres, (96, 80), "spheres-global", "16x16") == 96 * 80 * 30
    assert tests_performed(spheres, (96, 80), "spheres-shared", "16x8") == brute_force_tile_tests(spheres, 96, 80, 16, 8)
    rows = sum(96 for y in range(80) for s in spheres if (np.float32(y - 40) - s[5]) ** 2 < s[3] ** 2)
    assert tests_performed(spheres, (96, 80), "spheres-cpu") == rows
    # the sorted tiles stop early, so their tile lists bound what they test: never every pixel x sphere
    binned = tests_performed(spheres, (96, 80), "spheres-binned", "16x16")
    assert tests_performed(spheres, (96, 80), "spheres-sorted", "16x16") == binned < 96 * 80 * 30


def test_cpu_rows_carry_percent_of_their_ceiling(cpu_backend, capsys, tmp_path):
    from raytracer_app.cli import main

    rc = main(["bench", "hashtable", "--backend", "cpu", "--n", "4096", "--op", "find", "--variants", "cpu",
               "--repeats", "1", "--json", str(tmp_path / "r.json")])
    assert rc == 0
    out = capsys.readouterr().out
    assert "%ceil" in out and "ceiling sector-reads:" in out
    result = json.loads((tmp_path / "r.json").read_text())
    (row,) = [r for r in result["rows"] if r["variant"] == "cpu"]
    assert row["ceiling"] == "sector-reads" and row["ceiling_rate"] > 0
    assert row["pct_of_ceiling"] == pytest.approx(100 * 4096 / (row["median_ms"] * 1e-3) / row["ceiling_rate"],
                                                  rel=1e-6)
    (figure,) = [f for f in result["device"]["ceilings"] if f["ceiling"] == "sector-reads"]
    assert figure["table_bytes"] == 8 * row_capacity(4096) and figure["how"]
    assert CSV_COLUMNS[-7:-4] == ("ceiling", "ceiling_rate", "pct_of_ceiling")


def row_capacity(keys: int) -> int:
    from kernels.hashtable.layout import capacity_for
    from kernels.hashtable.problem import DEFAULT_LOAD

    return capacity_for(keys, DEFAULT_LOAD)


def test_figures_of_several_places_are_each_kept_once_naming_who_measured_them():
    def fig(rate, table=1024, name="cas"):
        return ceilings.Figure(name, rate, "G CAS/s", 1e9, "a stand-in", table)

    got = ceilings.gathered([("worker a", [fig(2e9), fig(None, 0, "fma-float32")]),
                             ("worker b", [fig(3e9), fig(2e9, 2048)]),
                             ("worker c", [fig(2e9)]), ("worker a", [fig(2e9)])])
    # one ceiling and table size together, in the order first seen; equal figures once, naming each place once
    assert [(f.ceiling, f.table_bytes, f.rate, f.by) for f in got] == [
        ("cas", 1024, 2e9, "worker a, worker c"), ("cas", 1024, 3e9, "worker b"),
        ("fma-float32", 0, None, "worker a"), ("cas", 2048, 2e9, "worker b")]
    assert got[0].text() == "cas: 2 G CAS/s (a stand-in; measured by worker a, worker c)"
    assert got[2].text() == "fma-float32: not measured (a stand-in; measured by worker a)"
    assert [ceilings.Figure.from_json(json.loads(json.dumps(f.to_json()))) for f in got] == got
    with pytest.raises(ValueError, match="process 2's ceiling is not a measured ceiling"):
        ceilings.Figure.from_json({"ceiling": "cas", "rate": "fast"}, "process 2's ceiling")


@pytest.mark.slow  # two new interpreters
def test_processes_bring_back_the_ceiling_their_rows_are_judged_against(cpu_backend, capsys, tmp_path):
    from raytracer_app.cli import main

    rc = main(["bench", "hashtable", "--backend", "cpu", "--n", "4096", "--op", "find", "--variants", "cpu",
               "--repeats", "2", "--processes", "2", "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert rc == 0, out
    (line,) = [x for x in out.splitlines() if x.startswith("ceiling ")]
    assert line.startswith("ceiling sector-reads: ") and line.endswith("; measured by process 1)")
    result = json.loads((tmp_path / "r.json").read_text())
    (row,) = [r for r in result["rows"] if r["variant"] == "cpu"]
    (figure,) = result["device"]["ceilings"]  # the first process alone measures, as a run in one process does
    assert figure["ceiling"] == row["ceiling"] == "sector-reads" and figure["by"] == "process 1"
    assert figure["rate"] == row["ceiling_rate"] > 0 and figure["table_bytes"] == 8 * row_capacity(4096)
    assert row["pct_of_ceiling"] == pytest.approx(100 * 4096 / (row["median_ms"] * 1e-3) / row["ceiling_rate"],
                                                  rel=1e-6)


def test_each_algorithm_declares_its_ceiling():
    from kernels.registry import ALGORITHMS

    assert all(a.judge is not None for a in ALGORITHMS)
    judged = {a.name: a.judge for a in ALGORITHMS}
    row = type("R", (), {"variant": "julia-2d-float64"})()
    assert judged["julia"].ceiling(None, row) is ceilings.FMA64
    assert judged["reduction"].ceiling(None, row) is ceilings.COPY


OFFLINE = """
import json
from kernels.inspector.offline_compile import compile_job
jobs = [("kernels.harness.ceiling_kernels", "read_sectors", "void(uint64[::1], uint64, int64, uint64[::1])"),
        ("kernels.harness.ceiling_kernels", "swap_slots", "void(uint64[::1], int64, int64[::1])"),
        ("kernels.harness.ceiling_kernels", "fma_chains", "void(float32[::1], int64, float32, float32)"),
        ("kernels.harness.ceiling_kernels", "fma_chains", "void(float64[::1], int64, float64, float64)"),
        ("kernels.spheres.ceiling", "ray_sphere_tests", "void(float32[::1], int64, int64, int64, float32[::1])")]
ptx = [compile_job({"module": m, "function": f, "signature": s}, [(9, 0), (8, 0)])["ptx"] for m, f, s in jobs]
print(json.dumps(ptx))
"""


@pytest.mark.slow
def test_ceiling_kernels_compile_offline_for_sm90_and_sm80():
    from tests.conftest import run_fresh_python

    done = run_fresh_python(OFFLINE, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    ptx = json.loads(done.stdout.strip().splitlines()[-1])
    for arch in (0, 1):  # sm_90, sm_80
        sectors, cas, fma32, fma64, spheres = (kernel[arch] for kernel in ptx)
        assert "ld.global.v2.u64" in sectors
        assert "atom.global.cas.b64" in cas
        assert "fma.rn.f32" in fma32 and "fma.rn.f64" in fma64
        assert ".shared" in spheres and "sqrt" in spheres


def test_counters_sentence_and_roofline_use_the_measured_ceiling():
    from kernels.counters.rules import Facts, measured_ceiling
    from kernels.inspector.roofline import published, with_measured_ceilings

    said = measured_ceiling(Facts(None, ceiling="sector-reads", ceiling_rate=20e9, pct_of_ceiling=50.0))
    assert said == ("At 50.0% of its ceiling (random 32-byte sector reads at 20 G/s, measured in this run): "
                    "2.0x below it.")
    assert measured_ceiling(Facts(None, ceiling="copy", ceiling_rate=4e12, pct_of_ceiling=90.0)) is None
    h100 = published("sm_90")
    measured = with_measured_ceilings(h100, {"fma-float32": 30e12, "sector-reads": 20e9})
    assert measured.peak_ops("fp32") == 60e12  # an FMA is two operations
    assert measured.peak_ops("fp64") == h100.peak_ops("fp64")  # not measured: the formula's
    assert measured.bandwidth_gbs == 640.0  # 32 bytes per random sector


def test_chart_draws_the_ceiling_in_the_rows_unit(qtbot):
    from kernels.harness.rows import Row
    from kernels.timing import Timing
    from raytracer_app.gui.common.charts import BenchChart

    chart = BenchChart("G ops/s")
    qtbot.addWidget(chart)
    row = Row("best", "find", "uint32", 1024, "cpu", "cpu", timing=Timing((1.0,), "wall"), rate=5.0,
              rate_unit="G ops/s", verified="yes", ceiling="sector-reads", ceiling_rate=20e9, pct_of_ceiling=25.0)
    chart.points.append((row, 0))
    assert chart.ceiling_value() == (20.0, "sector-reads")


@pytest.mark.slow  # compiles three parallel CPU functions (seconds on a 2-core machine)
def test_cpu_twins_compute_what_the_kernels_compute():
    from kernels.harness import ceiling_host as host

    slots = np.random.default_rng(4).integers(0, 2**63, 37 * 4, dtype=np.uint64)
    out = np.empty(70, np.uint64)
    host.read_sectors(slots, np.uint64(37), 3, out)
    assert out.tolist() == [int(np.bitwise_xor.reduce(np.concatenate([slots[4 * scatter(i, r, 37):][:4]
                                                                       for r in range(3)]))) for i in range(70)]
    table, won = np.zeros(50, np.uint64), np.empty(40, np.int64)
    host.swap_slots(table, 4, won)
    targeted = {scatter(i, r, 50) for i in range(40) for r in range(4)}
    # no CAS on the CPU: two threads may both claim a slot, so only the slots filled are certain
    assert set(np.flatnonzero(table).tolist()) == targeted and int(won.sum()) >= len(targeted)
    values = np.random.default_rng(5).uniform(0.5, 1.5, 128).astype(np.float32)
    expected = values.astype(np.float64)
    host.fma_chains(values, 5, np.float32(0.75), np.float32(0.125))
    for _ in range(5):
        expected = expected * 0.75 + 0.125
    np.testing.assert_allclose(values, expected, rtol=1e-6)


def test_the_panel_shows_percent_of_ceiling_only_where_it_is_not_the_copy_bandwidth(qtbot):
    """A reduction's ceiling is the copy bandwidth: its "% ceiling" would repeat "% copy BW", so the column
    shows once a row is judged against another ceiling (a hash table's find against sector reads)."""
    from kernels.harness.rows import Row
    from kernels.timing import Timing
    from raytracer_app.gui.benchmarks.panel_table import ResultsTable

    table = ResultsTable("GB/s")
    qtbot.addWidget(table)
    column = table.columns.index("% ceiling")
    copy_row = Row("best", "sum", "int32", 1024, "cpu", "cpu", timing=Timing((1.0,), "wall"), verified="yes",
                   ceiling="copy", ceiling_rate=20e9, pct_of_ceiling=40.0)
    table.add_measured(copy_row)
    assert table.isColumnHidden(column)
    find_row = Row("best", "find", "uint32", 1024, "cpu", "cpu", timing=Timing((1.0,), "wall"), rate=5.0,
                   rate_unit="G ops/s", verified="yes", ceiling="sector-reads", ceiling_rate=20e9, pct_of_ceiling=25.0)
    table.add_measured(find_row)
    assert not table.isColumnHidden(column) and table.item(1, column).text() == "25.0"


def test_a_result_file_lists_the_ceilings_its_rows_are_judged_against_not_the_processs_others(monkeypatch,
                                                                                                cpu_backend):
    """A window (or a lesson) measures each ceiling once per process: a reduction's result file made after a
    hash table's run must not list the hash table's sector reads."""
    from kernels.harness import ceilings
    from kernels.harness.results import make_result
    from kernels.harness.rows import Row
    from kernels.service.bench_request import BenchRequest
    from kernels.timing import Timing

    sectors = ceilings.Figure("sector-reads", 2e9, "G sectors/s", 1e9, "earlier hash table run", 1 << 20)
    copy = ceilings.Figure("copy", 20e9, "GB/s", 1e9, "numpy copy")
    monkeypatch.setattr(ceilings, "_MEASURED", {("s", "cpu", 0, 1 << 20): sectors, ("c", "cpu", 0, 0): copy})
    row = Row("numpy", "sum", "int32", 1024, "cpu", "cpu", timing=Timing((1.0,), "wall"), verified="yes",
              ceiling="copy", ceiling_rate=20e9, pct_of_ceiling=1.0)
    request = BenchRequest("reduction", cpu_backend, sizes=[1024], variants=["numpy"])
    listed = make_result(request, [row], None).device["ceilings"]
    assert [f["ceiling"] for f in listed] == ["copy"]
