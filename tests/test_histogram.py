"""Histogram variants (seed 003) against np.bincount, on the CUDA simulator (or a real GPU), the CPU
backend, and through the benchmark runner; plus every bad input."""

import numpy as np
import pytest

from kernels import histogram
from kernels.service.bench_request import BenchRequest
from tests.runs import plan
from kernels.harness import bench
from kernels.harness.rows import PASSED, SKIPPED
from kernels.backend import SkipKind
from kernels.launch import Launch
from kernels.errors import InputError
from kernels.harness.variants import select

GPU_VARIANTS = [v.name for v in histogram.VARIANTS if v.kind == "gpu"]
CPU_VARIANTS = [v.name for v in histogram.VARIANTS if v.kind == "cpu"]
SMALL = Launch(block=64, grid=2)  # the simulator runs every thread as a Python thread


def variant(name):
    return select(histogram.VARIANTS, name)[0]


def counts_of(problem, name, backend, launch=SMALL):
    """Runs one variant and returns (its result, the counts it produced)."""
    out = variant(name).run(problem, launch, backend, 1)
    return out.result, problem.last_counts


def test_the_seed_kernels_exist_under_their_names_and_every_gpu_variant_has_a_launch_rule():
    by_name = {v.name: v for v in histogram.VARIANTS}
    # seed 003 defines a CPU histogram, global atomics and shared atomics
    assert {n for n, v in by_name.items() if v.seed == "003"} == {"cpu-numpy", "global-atomics", "shared-atomics"}
    for v in histogram.VARIANTS:
        assert v.description and v.run
        assert (v.launch is not None) == (v.kind == "gpu")


@pytest.mark.parametrize("pattern", ["uniform", "low-entropy"])
@pytest.mark.parametrize("name", GPU_VARIANTS)
def test_gpu_variant_matches_bincount(cuda_backend, name, pattern):
    problem = histogram.make_problem(4099, seed=3, pattern=pattern)  # 4099: not a multiple of 4
    result, counts = counts_of(problem, name, cuda_backend)
    np.testing.assert_array_equal(counts, np.bincount(problem.data, minlength=256))
    assert result == 256
    assert problem.verify(result) == (True, "")


@pytest.mark.parametrize("pattern", ["uniform", "low-entropy"])
@pytest.mark.parametrize("name", CPU_VARIANTS)
def test_cpu_variant_matches_bincount(cpu_backend, name, pattern):
    problem = histogram.make_problem(100_003, seed=5, pattern=pattern)
    result, counts = counts_of(problem, name, cpu_backend, Launch())
    np.testing.assert_array_equal(counts, np.bincount(problem.data, minlength=256))
    assert result == 256


@pytest.mark.parametrize("data", [
    np.full(100_000, 7, np.uint8),  # all one value: every increment on one counter of each sub-histogram
    np.array([200], np.uint8),  # a single byte: no whole word, only the tail
    np.arange(15, dtype=np.uint8),  # one byte short of a pair of words
    np.arange(16 * 1001 + 9, dtype=np.uint64).astype(np.uint8),  # pairs of words and a tail of 9 bytes
    np.full(2**16 + 3, 255, np.uint8),  # the largest byte value
], ids=["one-value", "single-byte", "15-bytes", "words-and-tail", "all-255"])
def test_cpu_sub_histograms_on_edge_patterns(cpu_backend, data):
    problem = histogram.make_problem(data=data)
    result, counts = counts_of(problem, "cpu-sub-histograms", cpu_backend, Launch())
    np.testing.assert_array_equal(counts, np.bincount(data, minlength=256))
    assert result == 256


@pytest.mark.parametrize("pattern", ["entropy-0.000", "entropy-0.201", "entropy-0.811"])
def test_cpu_sub_histograms_on_cub_patterns(cpu_backend, pattern):
    problem = histogram.make_problem(50_001, seed=11, pattern=pattern)
    result, counts = counts_of(problem, "cpu-sub-histograms", cpu_backend, Launch())
    np.testing.assert_array_equal(counts, np.bincount(problem.data, minlength=256))


def test_cpu_sub_histograms_start_from_zero_each_call(cpu_backend):
    problem = histogram.make_problem(30_000, seed=6, pattern="low-entropy")
    out = variant("cpu-sub-histograms").run(problem, Launch(), cpu_backend, 3)  # three counts, one histogram
    assert out.timing.repeats == 3
    np.testing.assert_array_equal(problem.last_counts, np.bincount(problem.data, minlength=256))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 15, 17, 31, 1030, 4099])  # whole 16-byte loads, then words, then bytes
def test_best_counts_the_bytes_after_the_last_whole_word(cuda_backend, n):
    data = np.arange(n, dtype=np.uint64).astype(np.uint8)[::-1].copy()
    data[-1] = 200  # the very last byte is a tail byte whenever n % 4 != 0
    problem = histogram.make_problem(data=data)
    result, counts = counts_of(problem, "best", cuda_backend, Launch(block=32, grid=1))
    np.testing.assert_array_equal(counts, np.bincount(data, minlength=256))
    assert result == 256


@pytest.mark.parametrize("launch", [
    Launch(block=48, grid=3, items_per_thread=4),  # a block of one and a half warps
    Launch(block=96, grid=1, items_per_thread=12),
])
def test_best_with_other_launches(cuda_backend, launch):
    problem = histogram.make_problem(3001, seed=9)
    result, counts = counts_of(problem, "best", cuda_backend, launch)
    np.testing.assert_array_equal(counts, np.bincount(problem.data, minlength=256))


@pytest.mark.parametrize("block", [32, 320])  # fewer and more threads than bins
def test_shared_atomics_with_any_block_size(cuda_backend, block):
    problem = histogram.make_problem(2000, seed=4)
    result, counts = counts_of(problem, "shared-atomics", cuda_backend, Launch(block=block, grid=1))
    np.testing.assert_array_equal(counts, np.bincount(problem.data, minlength=256))


def test_repeated_runs_do_not_accumulate(cuda_backend):
    # every timed launch zeroes the counters first, so warm-up plus repeats still give one histogram
    problem = histogram.make_problem(1500, seed=2)
    out = variant("shared-atomics").run(problem, SMALL, cuda_backend, 3)
    assert out.timing.repeats == 3
    np.testing.assert_array_equal(problem.last_counts, np.bincount(problem.data, minlength=256))


def test_low_entropy_pattern_is_mostly_one_value():
    data = histogram.make_problem(200_000, seed=1, pattern="low-entropy").data
    top = np.bincount(data, minlength=256).max() / data.size
    assert 0.88 < top < 0.93  # 90% by construction, plus its share of the uniform 10%
    uniform = histogram.make_problem(200_000, seed=1).data
    assert np.bincount(uniform, minlength=256).max() / uniform.size < 0.01


def test_problem_is_seeded_and_describes_itself():
    a, b = histogram.make_problem(1000, seed=7), histogram.make_problem(1000, seed=7)
    np.testing.assert_array_equal(a.data, b.data)
    assert not np.array_equal(a.data, histogram.make_problem(1000, seed=8).data)
    described = (a.algorithm, a.op, a.dtype, a.n, a.bytes_read, a.expected)
    assert described == ("histogram", "histogram", "uint8", 1000, 1000, 256)


@pytest.mark.slow
def test_file_input(tmp_path, cpu_backend, cuda_backend):
    path = tmp_path / "input.bin"
    raw = bytes(range(256)) * 3 + b"hello, histogram"  # 784 bytes
    path.write_bytes(raw)
    problem = histogram.make_problem(data=histogram.load_input(path))
    expected = np.bincount(np.frombuffer(raw, np.uint8), minlength=256)
    assert problem.n == len(raw)
    for name, backend in [(name, cpu_backend) for name in CPU_VARIANTS] + [("best", cuda_backend)]:
        _, counts = counts_of(problem, name, backend)
        np.testing.assert_array_equal(counts, expected)


@pytest.mark.parametrize("data", [b"\x00\x01\x01", bytearray(b"\xff\xff"), np.array([3, 3, 9], np.uint8)])
def test_data_as_bytes_bytearray_or_uint8_array(data):
    problem = histogram.make_problem(data=data)
    np.testing.assert_array_equal(problem.reference, np.bincount(np.frombuffer(bytes(data), np.uint8), minlength=256))


def test_verify_names_the_differing_bins():
    problem = histogram.make_problem(data=b"\x11" * 6 + b"\x20")
    wrong = np.bincount(problem.data, minlength=256)
    wrong[17] -= 1
    wrong[40] += 3
    ok, note = problem.verify(problem.score(wrong))
    assert not ok
    assert note == "2 bins differ (first: bin 17 got 5 expected 6)"
    assert problem.verify(problem.score(np.bincount(problem.data, minlength=256))) == (True, "")


@pytest.mark.parametrize("kwargs, message", [
    (dict(n=0), "at least 1"),
    (dict(n=-5), "at least 1"),
    (dict(n=None), "at least 1"),
    (dict(n=2.5), "whole number"),
    (dict(n=10, pattern="zipf"), "unknown histogram pattern 'zipf'"),
    (dict(data=b""), "empty"),
    (dict(data=np.zeros(0, np.uint8)), "empty"),
    (dict(data=np.arange(5, dtype=np.int32)), "uint8"),
])
def test_bad_problem_inputs(kwargs, message):
    with pytest.raises(InputError, match=message):
        histogram.make_problem(**kwargs)


def test_bad_input_files(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        histogram.load_input(tmp_path / "missing.bin")
    with pytest.raises(InputError, match="directory"):
        histogram.load_input(tmp_path)
    (tmp_path / "empty.bin").write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        histogram.load_input(tmp_path / "empty.bin")


@pytest.mark.parametrize("launch, message", [
    (Launch(block=0), "block size 0"),
    (Launch(block=4096), "block size 4096"),
    (Launch(grid=0), "grid 0"),
    (Launch(grid_sm=-1), "grid_sm"),
    (Launch(items_per_thread=0), "items_per_thread 0"),
    (Launch(items_per_thread=17), "items_per_thread 17 must be a multiple of 4"),
    (Launch(items_per_thread=68), "items_per_thread 68 is out of range"),
])
def test_bad_launches_are_refused_before_anything_runs(cuda_backend, launch, message):
    with pytest.raises(InputError, match=message):
        BenchRequest("histogram", cuda_backend, sizes=(100,), launches=(launch,), variants="shared-atomics,best",
                     repeats=1)


def test_runner_on_the_cpu_backend_skips_gpu_and_peer_variants(cpu_backend):
    rows = bench.run(plan(cpu_backend, 1, [Launch()]), histogram.VARIANTS, [histogram.make_problem(5000)])
    by_name = {r.variant: r for r in rows}
    assert [by_name[n].verified for n in CPU_VARIANTS] == [PASSED] * len(CPU_VARIANTS)
    for name in GPU_VARIANTS + ["cupy-histogram"]:
        assert by_name[name].verified == SKIPPED
        assert "CUDA backend" in by_name[name].note
    assert by_name["cpu-numpy"].gbps > 0


def test_runner_on_the_cuda_backend(cuda_backend):
    problem = histogram.make_problem(3000, pattern="low-entropy")
    rows = bench.run(plan(cuda_backend, 1, [SMALL]), histogram.VARIANTS, [problem])
    by_name = {r.variant: r for r in rows}
    for name in CPU_VARIANTS + GPU_VARIANTS:
        assert by_name[name].verified == PASSED, (name, by_name[name].note)
        assert by_name[name].result == 256
    for name in GPU_VARIANTS:
        assert (by_name[name].block, by_name[name].grid) == (64, 2)
    peer = by_name["cupy-histogram"]
    assert peer.verified in (PASSED, SKIPPED), peer.note
    if cuda_backend.is_simulator:
        assert peer.skip.kind is SkipKind.NEEDS_GPU


PEER_NAMES = {v.name for v in histogram.VARIANTS if v.kind == "peer"}


@pytest.mark.gpu
@pytest.mark.parametrize("pattern", ["uniform", "low-entropy"])
def test_16_mib_on_a_real_gpu(cuda_backend, pattern):
    problem = histogram.make_problem(16 * 2**20 + 3, seed=11, pattern=pattern)
    launches = [Launch(), Launch(grid_sm=32), Launch(block=1024, grid_sm=2, items_per_thread=8)]
    rows = bench.run(plan(cuda_backend, 3, launches), histogram.VARIANTS, [problem])
    for row in rows:
        if row.variant in PEER_NAMES and row.verified == SKIPPED:  # an optional library not installed
            assert row.skip.kind is SkipKind.MISSING_LIBRARY
            continue
        assert row.verified == PASSED, (row.variant, row.block, row.grid, row.note)


@pytest.mark.gpu
def test_default_launches_follow_the_sm_count(cuda_backend):
    sms = cuda_backend.limits.sm_count
    problem = histogram.make_problem(2**20)
    shared = variant("shared-atomics").run(problem, Launch(), cuda_backend, 1)
    best = variant("best").run(problem, Launch(), cuda_backend, 1)
    assert (shared.block, shared.grid) == (256, 2 * sms)  # the seed's launch
    rule = histogram.BEST_LAUNCH
    assert (best.block, best.grid) == (rule.block, rule.grid_sm * sms)
    assert shared.result == best.result == 256
