"""Library peers and CUB's entropy patterns. Without a GPU: missing libraries give typed skips, ops a peer
cannot do say why, and the histogram patterns have the byte entropy CUB's benchmark means. On a GPU (marked
``gpu``): every peer's result verified on real data."""

import math

import numpy as np
import pytest

from kernels import hashtable, histogram, reduction
from tests.runs import plan
from kernels.backend import peers as optional_libraries
from kernels.hashtable import peers as hashtable_peers
from kernels.histogram import peers as histogram_peers
from kernels.reduction import peers as reduction_peers
from kernels.io import cache
from kernels.backend import Backend, Skip, SkipKind
from kernels.launch import Launch

@pytest.fixture(autouse=True)
def private_tuning_cache(tmp_path, monkeypatch):
    """best's tuning cache in a temp dir: no test writes the user's cache."""
    from kernels.launch import tuning

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(tuning, "_RETUNED_HERE", set())


REDUCTION_PEERS = {
    "cub-reduce": ("cuda.compute", reduction_peers.run_cub_reduce),
    "triton-sum": ("triton", reduction_peers.run_triton_sum),
    "torch-sum": ("torch", reduction_peers.run_torch_sum),
    "cupy-sum-cub": ("cupy", reduction_peers.run_cupy_sum_cub),
}
HISTOGRAM_PEERS = {
    "cub-histogram": ("cuda.compute", histogram_peers.run_cub_histogram),
    "torch-bincount": ("torch", histogram_peers.run_torch_bincount),
}
HASHTABLE_PEERS = {
    "torch-sort-groupby": ("torch", hashtable_peers.run_torch_sort_groupby),
    "cupy-sort-groupby": ("cupy", hashtable_peers.run_cupy_sort_groupby),
}


def _library_lookup(monkeypatch, lookup):
    """Answer every peer module's optional-library lookup with ``lookup`` (e.g. 'not installed')."""
    for module in (optional_libraries, reduction_peers, histogram_peers, hashtable_peers):
        monkeypatch.setattr(module, "optional_module", lookup)


def _absent(missing):
    def optional_module(name):
        if name == missing:
            return Skip(SkipKind.MISSING_LIBRARY, f"{name} is not installed")
        return object()  # every other library "installed": the missing one must still decide the row

    return optional_module


def test_peers_are_registered_as_peers():
    by_name = {v.name: v for v in reduction.VARIANTS}
    for name in REDUCTION_PEERS:
        assert by_name[name].kind == "peer" and by_name[name].run.resolve() is REDUCTION_PEERS[name][1]
    hist = {v.name: v for v in histogram.VARIANTS}
    for name in HISTOGRAM_PEERS:
        assert hist[name].kind == "peer" and hist[name].run.resolve() is HISTOGRAM_PEERS[name][1]
    table = {v.name: v for v in hashtable.VARIANTS}
    for name in HASHTABLE_PEERS:
        assert table[name].kind == "peer" and table[name].run.resolve() is HASHTABLE_PEERS[name][1]
        # honest about what it builds: a static table grouped by bucket, not the chained one
        assert "not a chained table" in table[name].description and "CSR" in table[name].description


@pytest.mark.parametrize("name", sorted(REDUCTION_PEERS))
def test_reduction_peer_missing_library(name, monkeypatch):
    module, run = REDUCTION_PEERS[name]
    _library_lookup(monkeypatch, _absent(module))
    problem = reduction.make_problem("sum", "int32", 64)
    out = run(problem, Launch(), None, 1)
    assert isinstance(out, Skip) and out.kind is SkipKind.MISSING_LIBRARY
    assert "not installed" in out.text


@pytest.mark.parametrize("name", sorted(HISTOGRAM_PEERS))
def test_histogram_peer_missing_library(name, monkeypatch):
    module, run = HISTOGRAM_PEERS[name]
    _library_lookup(monkeypatch, _absent(module))
    out = run(histogram.make_problem(64), Launch(), None, 1)
    assert isinstance(out, Skip) and out.kind is SkipKind.MISSING_LIBRARY


@pytest.mark.parametrize("name", sorted(HASHTABLE_PEERS))
def test_hashtable_peer_missing_library(name, monkeypatch):
    module, run = HASHTABLE_PEERS[name]
    _library_lookup(monkeypatch, _absent(module))
    out = run(hashtable.make_problem(64, buckets=8), Launch(), None, 1)
    assert isinstance(out, Skip) and out.kind is SkipKind.MISSING_LIBRARY and "not installed" in out.text


@pytest.mark.parametrize("name", sorted(HASHTABLE_PEERS))
def test_hashtable_peer_declines_more_buckets_than_32_bit_ids(name, monkeypatch):
    _library_lookup(monkeypatch, lambda module: object())  # "installed"
    problem = hashtable.HashProblem(np.arange(4, dtype=np.uint32), hashtable_peers.GROUPBY_MAX_BUCKETS + 1)
    out = HASHTABLE_PEERS[name][1](problem, Launch(), None, 1)
    assert isinstance(out, Skip) and out.kind is SkipKind.NOT_APPLICABLE and "32 bits" in out.text


def test_triton_without_torch_says_why(monkeypatch):
    def optional_module(name):
        return Skip(SkipKind.MISSING_LIBRARY, "x") if name == "torch" else object()

    _library_lookup(monkeypatch, optional_module)
    out = reduction_peers.run_triton_sum(reduction.make_problem("sum", "int32", 64), Launch(), None, 1)
    assert out.kind is SkipKind.MISSING_LIBRARY and "PyTorch" in out.text


@pytest.mark.parametrize("name", ["cub-reduce", "torch-sum", "cupy-sum-cub"])
@pytest.mark.parametrize("op", ["sumsq", "dot"])
def test_sum_only_peers_decline_other_ops(name, op, monkeypatch):
    _library_lookup(monkeypatch, lambda module: object())  # "installed"
    out = REDUCTION_PEERS[name][1](reduction.make_problem(op, "int32", 64), Launch(), None, 1)
    assert isinstance(out, Skip) and out.kind is SkipKind.NOT_APPLICABLE and op in out.text


def test_peers_skip_in_the_simulator_and_on_the_cpu(cpu_backend):
    from kernels.harness import bench
    from kernels.harness.rows import SKIPPED

    problem = reduction.make_problem("sum", "int32", 64)
    peers = [v for v in reduction.VARIANTS if v.name in REDUCTION_PEERS]
    rows = bench.run(plan(cpu_backend, 1, [Launch()]), peers, [problem])
    assert [r.verified for r in rows] == [SKIPPED] * len(peers)
    assert all(r.skip.kind is SkipKind.NEEDS_CUDA_BACKEND for r in rows)


def test_hashtable_peers_skip_on_the_cpu_and_in_the_simulator(cpu_backend):
    from kernels.harness import bench
    from kernels.harness.rows import SKIPPED

    peers = [v for v in hashtable.VARIANTS if v.name in HASHTABLE_PEERS]
    rows = bench.run(plan(cpu_backend, 1, [Launch()]), peers, [hashtable.make_problem(64, buckets=8)])
    assert [(r.verified, r.skip.kind) for r in rows] == [(SKIPPED, SkipKind.NEEDS_CUDA_BACKEND)] * 2
    # the simulator's skip is decided by the backend before anything runs (a Backend object, not a switch
    # of this process to the simulator)
    assert [v.skip_reason(Backend("sim")).kind for v in peers] == [SkipKind.NEEDS_GPU] * 2


# --- CUB's entropy patterns -------------------------------------------------------------------------------


def _byte_entropy(data: np.ndarray) -> float:
    counts = np.bincount(data, minlength=256).astype(np.float64)
    p = counts[counts > 0] / data.size
    return float(-(p * np.log2(p)).sum())


def _bit_entropy(p_one: float) -> float:
    return -(p_one * math.log2(p_one) + (1 - p_one) * math.log2(1 - p_one))


@pytest.mark.parametrize("pattern, bit_entropy", [
    ("uniform", 1.0), ("entropy-0.811", 0.811), ("entropy-0.544", 0.544), ("entropy-0.337", 0.337),
    ("entropy-0.201", 0.201),
])
def test_entropy_patterns_have_cubs_entropy(pattern, bit_entropy):
    data = histogram.make_problem(1 << 18, seed=3, pattern=pattern).data
    # independent bits, each 1 with probability 2**-(k+1): the bytes carry 8 x the bit entropy
    assert _byte_entropy(data) == pytest.approx(8 * bit_entropy, abs=0.02)
    ones = np.unpackbits(data).mean()
    assert _bit_entropy(ones) == pytest.approx(bit_entropy, abs=0.005)


def test_entropy_zero_is_one_value():
    data = histogram.make_problem(4096, seed=1, pattern="entropy-0.000").data
    assert _byte_entropy(data) == 0.0 and np.unique(data).size == 1


def test_low_entropy_keeps_ninety_percent_one_value():
    data = histogram.make_problem(1 << 16, seed=2, pattern="low-entropy").data
    share = np.count_nonzero(data == histogram.LOW_ENTROPY_VALUE) / data.size
    assert share == pytest.approx(0.9 + 0.1 / 256, abs=0.01)


def test_patterns_are_the_cli_choices():
    from kernels.registry import by_name

    assert by_name("histogram").option("pattern").choices == histogram.PATTERNS
    assert {"entropy-0.544", "entropy-0.201", "entropy-0.000", "uniform", "low-entropy"} <= set(histogram.PATTERNS)


def test_entropy_pattern_through_the_cli(capsys):
    from raytracer_app.cli import main

    assert main(["bench", "histogram", "--backend", "cpu", "--n", "4096", "--pattern", "entropy-0.201",
                 "--variants", "cpu-numpy", "--repeats", "1"]) == 0
    assert "cpu-numpy" in capsys.readouterr().out


# --- on a real GPU: every peer verified -----------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize("name", ["cub-reduce", "triton-sum", "torch-sum", "cupy-sum", "cupy-sum-cub", "cuda-reduce"])
def test_gpu_reduction_peer_verified(name, dtype, cuda_backend):
    from kernels.harness import bench
    from kernels.harness.rows import PASSED

    problem = reduction.make_problem("sum", dtype, (1 << 20) + 3, seed=5)
    [row] = bench.run(plan(cuda_backend, 2, [Launch()]), [reduction.VARIANT_BY_NAME[name]], [problem])
    if row.skip is not None:
        pytest.skip(f"{name}: {row.note}")
    assert row.verified == PASSED, row.note


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["sumsq", "dot"])
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_gpu_triton_other_ops_verified(op, dtype, cuda_backend):
    from kernels.harness import bench
    from kernels.harness.rows import PASSED

    problem = reduction.make_problem(op, dtype, 100_003, seed=7)
    [row] = bench.run(plan(cuda_backend, 2, [Launch()]), [reduction.VARIANT_BY_NAME["triton-sum"]], [problem])
    if row.skip is not None and row.skip.kind is SkipKind.MISSING_LIBRARY:
        pytest.skip(row.note)
    assert row.verified == PASSED, row.note


@pytest.mark.gpu
@pytest.mark.parametrize("pattern", histogram.PATTERNS)
@pytest.mark.parametrize("name", ["cub-histogram", "torch-bincount", "cupy-histogram", "best"])
def test_gpu_histogram_peer_verified(name, pattern, cuda_backend):
    from kernels.harness import bench
    from kernels.harness.rows import PASSED

    problem = histogram.make_problem((1 << 20) + 1, seed=4, pattern=pattern)
    variant = {v.name: v for v in histogram.VARIANTS}[name]
    [row] = bench.run(plan(cuda_backend, 2, [Launch()]), [variant], [problem])
    if row.skip is not None:
        pytest.skip(f"{name}: {row.note}")
    assert row.verified == PASSED, row.note


@pytest.mark.gpu
@pytest.mark.parametrize("buckets", [1024, 65536])
@pytest.mark.parametrize("name", sorted(HASHTABLE_PEERS))
def test_gpu_hashtable_peer_verified(name, buckets, cuda_backend):
    from kernels.harness import bench
    from kernels.harness.rows import PASSED

    problem = hashtable.make_problem((1 << 20) + 7, buckets=buckets, seed=11)
    variant = {v.name: v for v in hashtable.VARIANTS}[name]
    [row] = bench.run(plan(cuda_backend, 2, [Launch()], unit=hashtable.ALGORITHM.unit), [variant], [problem])
    if row.skip is not None:
        pytest.skip(f"{name}: {row.note}")
    assert row.verified == PASSED, row.note
    assert row.result == problem.n and problem.last_check == (problem.n, 0, 0)
    assert problem.verify(row.result) == (True, "")
    assert row.rate_unit == "G ops/s" and row.rate == pytest.approx(problem.n / 1e9 / (row.timing.median_ms * 1e-3))


@pytest.mark.gpu
@pytest.mark.parametrize("op, dtype", [("sum", "int32"), ("sum", "float32"), ("dot", "int32"), ("sumsq", "float32")])
def test_gpu_whole_call_verified(op, dtype, cuda_backend):
    from kernels.harness.rows import PASSED, SKIPPED
    from kernels.reduction import whole_call

    problem = reduction.make_problem(op, dtype, 1 << 20, seed=9)
    rows = whole_call.run(problem, whole_call.WHOLE_CALL_VARIANTS, cuda_backend, 5)
    for row in rows:
        assert row.verified in (PASSED, SKIPPED), f"{row.variant}: {row.note}"
    assert rows[0].variant == "best" and rows[0].verified == PASSED
    lean = whole_call.BestCall(problem, cuda_backend)
    assert problem.verify(lean())[0] and problem.verify(lean())[0]  # both result slots


@pytest.mark.gpu
def test_gpu_best_tuned_and_cached(cuda_backend):
    from kernels.harness import bench
    from kernels.harness.rows import PASSED
    from kernels.launch import tuning

    problem = reduction.make_problem("sum", "int32", 1 << 16, seed=1)
    [row] = bench.run(plan(cuda_backend, 2, [Launch()]), [reduction.VARIANT_BY_NAME["best"]], [problem])
    assert row.verified == PASSED and "tuned:" in row.note and "tuned now" in row.note
    [row] = bench.run(plan(cuda_backend, 2, [Launch()]), [reduction.VARIANT_BY_NAME["best"]], [problem])
    assert "cached" in row.note
    assert len(tuning.load_cache()) == 1
