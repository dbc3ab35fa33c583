"""Reductions (kernels.reduction): every variant against a numpy reference computed here, the benchmark
runner's handling of skipped and broken variants, and every bad input.

Without a GPU the CUDA kernels run in Numba's simulator, one Python thread per CUDA thread, so these tests
use a few thousand elements, 32-96 thread blocks and small grids. Tests marked ``gpu`` (warp shuffles,
large inputs, default launches, library peers) run only on a real GPU.
"""

import dataclasses
import math
import sys

import numpy as np
import pytest

from kernels.harness import bench
from kernels.harness.rows import ERROR, FAILED, Outcome, PASSED, SKIPPED
from kernels.service.bench_request import BenchRequest
from tests.runs import plan
from kernels import reduction as R
from kernels.backend import Skip, SkipKind
from kernels.launch import Launch
from kernels.errors import InputError

BY_NAME = {v.name: v for v in R.VARIANTS}
GPU_VARIANTS = [v.name for v in R.VARIANTS if v.kind == "gpu"]
SIM_GPU_VARIANTS = [v.name for v in R.VARIANTS if v.kind == "gpu" and not v.sim_skip]
SHUFFLE_VARIANTS = ["warp-shuffle", "best"]
# Mark Harris, "Optimizing Parallel Reduction in CUDA" (2007): kernels 2, 4, 5, 6, 7 (1 and 3 are the seeds')
HARRIS_VARIANTS = ["interleaved-strided", "first-add-load", "unroll-last-warp", "complete-unroll", "multiple-elements"]
CPU_VARIANTS = [v.name for v in R.VARIANTS if v.kind == "cpu"]
PEER_VARIANTS = [v.name for v in R.VARIANTS if v.kind == "peer"]
SMALL = Launch(block=32, grid=5)


@pytest.fixture(scope="module", autouse=True)
def quick_simulator_thread_switches():
    """The simulator polls its Python threads at every syncthreads; handing the GIL over more often
    than the default 5 ms makes those rounds several times faster. Restored after this module."""
    from kernels import backend

    if not backend.simulator_active():
        yield
        return
    previous = sys.getswitchinterval()
    sys.setswitchinterval(2e-4)
    yield
    sys.setswitchinterval(previous)


def reference(op, a, b):
    """(expected, tolerance) from numpy, independently of the module: exact int64 for int32 input;
    for float32 input, the correctly rounded float64 sum (math.fsum) and 1e-9 x sum of |terms|."""
    if a.dtype == np.int32:
        x = a.astype(np.int64)
        y = b.astype(np.int64) if b is not None else None
        terms = x if op == "sum" else x * x if op == "sumsq" else x * y
        return int(terms.sum()), 0.0
    x = a.astype(np.float64)
    terms = x if op == "sum" else x * x if op == "sumsq" else x * b.astype(np.float64)
    return math.fsum(terms), 1e-9 * float(np.abs(terms).sum())


def assert_matches_numpy(problem, result):
    expected, tol = reference(problem.op, problem.a, problem.b)
    if problem.dtype == "int32":
        assert type(result) is int
        assert result == expected
    else:
        assert type(result) is float
        assert abs(result - expected) <= tol, (result, expected, tol)
    ok, note = problem.verify(result)
    assert ok, note


def run_variant(name, problem, launch, backend, repeats=1):
    out = BY_NAME[name].run(problem, launch, backend, repeats)
    assert isinstance(out, Outcome), out
    assert out.timing.repeats == repeats
    return out


# --- GPU variants (the simulator here; the GPU when there is one) -------------------------------------


@pytest.mark.parametrize("op", R.OPS)
@pytest.mark.parametrize("name", SIM_GPU_VARIANTS)
def test_gpu_variant_int32_is_exact(cuda_backend, name, op):
    problem = R.make_problem(op, "int32", 1500, seed=3)  # 1500 is not a multiple of 32 x 5 threads
    out = run_variant(name, problem, SMALL, cuda_backend)
    assert_matches_numpy(problem, out.result)
    assert (out.block, out.grid) == (32, 5)


@pytest.mark.parametrize("name", SIM_GPU_VARIANTS)
def test_gpu_variant_float32_dot_within_tolerance(cuda_backend, name):
    problem = R.make_problem("dot", "float32", 1200, seed=4)
    assert_matches_numpy(problem, run_variant(name, problem, SMALL, cuda_backend).result)


@pytest.mark.parametrize("dtype", R.DTYPES)
@pytest.mark.parametrize("op", R.OPS)
@pytest.mark.parametrize("name", HARRIS_VARIANTS)
def test_harris_kernels_every_op_and_dtype(cuda_backend, name, op, dtype):
    problem = R.make_problem(op, dtype, 700, seed=14)  # 64 x 3 threads: several passes of the loop each
    out = run_variant(name, problem, Launch(block=64, grid=3), cuda_backend)
    assert (out.block, out.grid) == (64, 3)
    assert_matches_numpy(problem, out.result)


@pytest.mark.parametrize("name, grid", [("interleaved-strided", 5), ("first-add-load", 3), ("unroll-last-warp", 3),
                                        ("complete-unroll", 3),
                                        ("multiple-elements", 3)])  # 16 per SM, fewer for 600
def test_harris_kernels_default_launch_is_the_papers(cuda_backend, name, grid):
    # 128 threads per block; one element per thread (kernel 2), two (kernels 4-6), a fixed grid (kernel 7)
    problem = R.make_problem("sumsq", "int32", 600, seed=15)
    out = run_variant(name, problem, Launch(), cuda_backend)
    assert out.block == 128
    assert out.grid == grid
    assert_matches_numpy(problem, out.result)


def test_complete_unroll_is_compiled_once_per_block_size(cuda_backend):
    from kernels.reduction import gpu_harris

    assert gpu_harris.complete_unroll_kernel("sum", "int32", 64) is gpu_harris.complete_unroll_kernel("sum", "int32", 64)
    assert gpu_harris.complete_unroll_kernel("sum", "int32", 64) is not gpu_harris.complete_unroll_kernel("sum", "int32", 32)
    with pytest.raises(ValueError, match="power-of-two block"):
        gpu_harris.complete_unroll_kernel("sum", "int32", 96)


@pytest.mark.parametrize("name", ["unroll-last-warp", "complete-unroll"])
def test_last_warp_stage_survives_extreme_values(cuda_backend, name):
    # every slot of the last warp carries a large partial: a lost or doubled step shows as a wrong sum
    problem = R.make_problem("sum", "int32", None, data=np.full(320, 2**31 - 1, np.int64))
    out = run_variant(name, problem, Launch(block=32, grid=2), cuda_backend)
    assert out.result == 320 * (2**31 - 1)


@pytest.mark.parametrize("name", ["per-thread-partials", "block-serial", "two-kernel", "last-block"])
def test_variants_without_power_of_two_constraint_take_block_96(cuda_backend, name):
    problem = R.make_problem("sumsq", "float32", 700, seed=5)
    out = run_variant(name, problem, Launch(block=96, grid=3), cuda_backend)
    assert out.block == 96
    assert_matches_numpy(problem, out.result)


def test_seed_default_launch(cuda_backend):
    problem = R.make_problem("sumsq", "int32", 300, seed=7)
    out = run_variant("tree-mask", problem, Launch(), cuda_backend)
    assert (out.block, out.grid) == (256, 2)  # seed 000's 256 threads; seed 003's min(32, blocks needed)
    assert_matches_numpy(problem, out.result)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["last-block", "two-kernel"])
def test_grid_larger_than_block_is_correct(cuda_backend, name):
    # seed 004's last block only read blockDim partials, so grid 40 > block 32 lost 8 of them
    problem = R.make_problem("sum", "int32", 2600, seed=6)
    out = run_variant(name, problem, Launch(block=32, grid=40), cuda_backend, repeats=2)
    assert out.grid == 40
    assert_matches_numpy(problem, out.result)


def test_last_block_resets_its_ticket_for_the_next_launch(cuda_backend):
    """Two launches on the same ticket counter with different data: the second must still find its last
    block (a stale ticket would leave the first launch's sum in place)."""
    from numba import cuda

    from kernels.reduction.gpu import last_block_kernel

    kernel = last_block_kernel("sum", "int32")
    grid, block = 3, 32
    partials = cuda.device_array(grid, np.int64)
    out = cuda.device_array(1, np.int64)
    tickets = cuda.to_device(np.zeros(1, np.int32))
    for seed in (1, 2):
        a = np.random.default_rng(seed).integers(-100, 101, 500, dtype=np.int32)
        d_a = cuda.to_device(a)
        kernel[grid, block, 0, block * 8](d_a, d_a, partials, out, tickets)
        assert out.copy_to_host()[0] == a.astype(np.int64).sum()
        assert tickets.copy_to_host()[0] == 0


@pytest.mark.parametrize("n", [1, 7])
@pytest.mark.parametrize("name", ["per-thread-partials", "sequential", "last-block"])
def test_fewer_elements_than_threads(cuda_backend, name, n):
    problem = R.make_problem("dot", "int32", n, seed=8)
    assert_matches_numpy(problem, run_variant(name, problem, Launch(block=32, grid=2), cuda_backend).result)


@pytest.mark.parametrize("name", SHUFFLE_VARIANTS)
def test_shuffle_variants_in_this_session(cuda_backend, name):
    variant = BY_NAME[name]
    if cuda_backend.is_simulator:
        reason = variant.skip_reason(cuda_backend)
        assert reason.kind is SkipKind.NOT_IN_SIMULATOR and "warp shuffles" in reason.text
        return
    problem = R.make_problem("sum", "int32", 5000, seed=9)
    assert_matches_numpy(problem, run_variant(name, problem, Launch(block=64, grid=3), cuda_backend).result)


# --- CPU references --------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("dtype", R.DTYPES)
@pytest.mark.parametrize("op", R.OPS)
@pytest.mark.parametrize("name", CPU_VARIANTS)
def test_cpu_references(cpu_backend, name, op, dtype):
    problem = R.make_problem(op, dtype, 10_001, seed=10)
    out = run_variant(name, problem, Launch(), cpu_backend, repeats=2)
    assert out.timing.method == "wall"
    assert_matches_numpy(problem, out.result)


def test_int64_accumulation_where_int32_would_overflow(cpu_backend):
    # 3000 values of 2**20: the sum of squares (2**40 each) overflows any int32 accumulator
    problem = R.make_problem("sumsq", "int32", None, data=np.full(3000, 2**20, np.int64))
    assert problem.expected == 3000 * 2**40
    for name in CPU_VARIANTS:
        assert run_variant(name, problem, Launch(), cpu_backend).result == 3000 * 2**40


def test_int64_accumulation_on_the_gpu_path(cuda_backend):
    problem = R.make_problem("dot", "int32", None, data=np.full(400, -(2**30), np.int64))
    out = run_variant("last-block", problem, Launch(block=32, grid=3), cuda_backend)
    assert_matches_numpy(problem, out.result)


# --- through the benchmark runner ------------------------------------------------------------------------


@pytest.mark.slow
def test_bench_run_all_variants(cuda_backend):
    problem = R.make_problem("sum", "int32", 600, seed=11)
    rows = bench.run(plan(cuda_backend, 1, [Launch(block=32, grid=4)]), R.VARIANTS, [problem])
    by_name = {r.variant: r for r in rows}
    assert list(by_name) == [v.name for v in R.VARIANTS]
    for name in SIM_GPU_VARIANTS + CPU_VARIANTS:
        assert by_name[name].verified == PASSED, by_name[name]
        assert by_name[name].result == problem.expected
    for name in SHUFFLE_VARIANTS:
        row = by_name[name]
        if cuda_backend.is_simulator:
            assert (row.verified, row.skip.kind) == (SKIPPED, SkipKind.NOT_IN_SIMULATOR)
        else:
            assert row.verified == PASSED, row
    for name in PEER_VARIANTS:
        if cuda_backend.is_simulator:
            assert by_name[name].verified == SKIPPED
            assert by_name[name].skip.kind is SkipKind.NEEDS_GPU
    assert by_name["cuda-reduce"].verified in (PASSED, SKIPPED)


def test_bench_run_cpu_backend_skips_gpu_variants(cpu_backend):
    problem = R.make_problem("dot", "float32", 300, seed=12)
    rows = bench.run(plan(cpu_backend, 1, [Launch(block=32)]), R.VARIANTS, [problem])
    for row in rows:
        if row.variant in CPU_VARIANTS:
            assert row.verified == PASSED, row
        else:
            assert row.verified == SKIPPED
            assert "needs a CUDA backend" in row.note


def test_a_broken_variant_does_not_stop_the_others(cuda_backend):
    def crash(problem, launch, backend, repeats):
        raise RuntimeError("kernel exploded")

    def wrong(problem, launch, backend, repeats):
        out = BY_NAME["sequential"].run(problem, launch, backend, repeats)
        return dataclasses.replace(out, result=out.result + 1)

    variants = [
        dataclasses.replace(BY_NAME["block-serial"], name="crashes", run=crash),
        dataclasses.replace(BY_NAME["sequential"], name="off-by-one", run=wrong),
        BY_NAME["tree-mask"],
        BY_NAME["numpy"],
    ]
    problem = R.make_problem("sumsq", "int32", 400, seed=13)
    rows = bench.run(plan(cuda_backend, 1, [Launch(block=32, grid=2)]), variants, [problem])
    assert [(r.variant, r.verified) for r in rows] == [
        ("crashes", ERROR), ("off-by-one", FAILED), ("tree-mask", PASSED), ("numpy", PASSED),
    ]
    assert "kernel exploded" in rows[0].note
    assert rows[1].note.startswith("off by 1")


def test_peer_that_does_not_apply_returns_its_reason():
    problem = R.make_problem("sumsq", "int32", 10)
    # decided before touching the GPU, so this runs anywhere
    skip = BY_NAME["cuda-reduce"].run(problem, Launch(), None, 1)
    assert skip.kind is SkipKind.NOT_APPLICABLE and "sum" in skip.text
    float_sum = R.make_problem("sum", "float32", 10)
    skip = BY_NAME["cuda-reduce"].run(float_sum, Launch(), None, 1)
    assert skip.kind is SkipKind.NOT_APPLICABLE and "float32" in skip.text


# --- problems and verify -------------------------------------------------------------------------------


def test_problem_attributes():
    p = R.make_problem("dot", "float32", 1000, seed=1)
    assert (p.algorithm, p.op, p.dtype, p.n, p.bytes_read) == ("reduction", "dot", "float32", 1000, 8000)
    assert p.a.dtype == p.b.dtype == np.float32 and p.a.shape == p.b.shape == (1000,)
    assert np.all((p.a >= -1) & (p.a < 1))
    assert isinstance(p.expected, np.float64)
    assert R.make_problem("sum", "int32", 1000).bytes_read == 4000
    q = R.make_problem("sum", np.dtype(np.int32), 1000, seed=1)
    assert q.b is None and isinstance(q.expected, np.int64)
    assert np.all((q.a >= -100) & (q.a <= 100))


def test_problems_are_seeded():
    a = R.make_problem("dot", "int32", 100, seed=5)
    b = R.make_problem("dot", "int32", 100, seed=5)
    c = R.make_problem("dot", "int32", 100, seed=6)
    assert np.array_equal(a.a, b.a) and np.array_equal(a.b, b.b)
    assert not np.array_equal(a.a, c.a)


def test_data_replaces_the_first_vector():
    data = np.arange(1, 11, dtype=np.int16)
    p = R.make_problem("sumsq", "int32", 999, data=data)  # n comes from the data
    assert p.n == 10 and p.a.dtype == np.int32 and p.expected == 385
    d = R.make_problem("dot", "float32", None, seed=2, data=[0.5, 1.0, 2.0])
    again = R.make_problem("dot", "float32", None, seed=2, data=[0.5, 1.0, 2.0])
    assert np.array_equal(d.b, again.b)  # the second vector comes from the seed
    assert d.expected == pytest.approx(0.5 * d.b[0] + d.b[1] + 2 * d.b[2], rel=1e-12)
    assert R.make_problem("sum", "int32", None, data=np.array([3.0, -4.0])).expected == -1


def test_verify_notes():
    p = R.make_problem("sum", "int32", None, data=np.array([1, 2, 3]))
    assert p.verify(6) == (True, "exact (int64 accumulation)")
    assert p.verify(np.int64(7)) == (False, "off by 1")
    assert p.verify(6.0)[0] is False  # an int problem wants an integer
    f = R.make_problem("sum", "float32", None, data=np.array([1.0, -0.5, 0.25]))
    ok, note = f.verify(0.75)
    assert ok and "1e-09 x sum of |terms|" in note
    assert f.verify(0.75 + 1e-6)[0] is False
    assert f.verify(float("nan"))[0] is False


def test_each_device_copy_is_made_once(cuda_backend):
    p = R.make_problem("dot", "int32", 50)
    first = p.device_inputs(cuda_backend)
    assert p.device_inputs(cuda_backend) is first
    assert first[0] is not first[1]
    q = R.make_problem("sum", "int32", 50)
    d_a, d_b = q.device_inputs(cuda_backend)
    assert d_a is d_b


# --- bad input -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(op="max", dtype="int32", n=10), "unknown op 'max'; allowed: sum, sumsq, dot"),
        (dict(op="sum", dtype="int64", n=10), "unknown dtype 'int64'; allowed: int32, float32"),
        (dict(op="sum", dtype="half-float", n=10), "unknown dtype 'half-float'"),
        (dict(op="sum", dtype="int32", n=0), "n 0 is out of range; allowed 1.."),
        (dict(op="sum", dtype="int32", n=-5), "n -5 is out of range"),
        (dict(op="sum", dtype="int32", n=2.5), "n 2.5 must be a whole number"),
        (dict(op="sum", dtype="int32", n=10, seed=-1), "seed -1 must be a whole number >= 0"),
        (dict(op="sum", dtype="int32", n=None, data=np.ones((3, 3))), "data must be a 1-D array, got shape (3, 3)"),
        (dict(op="sum", dtype="int32", n=None, data=np.array([], np.int32)), "data is empty"),
        (dict(op="sum", dtype="int32", n=None, data=np.array(["a", "b"])), "cannot be represented as int32"),
        (dict(op="sum", dtype="float32", n=None, data=np.array([1 + 2j])), "cannot be represented as float32"),
        (dict(op="sum", dtype="int32", n=None, data=np.array([0.5, 1.0])), "int32 needs whole numbers"),
        (dict(op="sum", dtype="int32", n=None, data=np.array([2**31])), "do not fit int32"),
        (dict(op="sum", dtype="float32", n=None, data=np.array([1.0, np.nan])), "infinite or NaN"),
        (dict(op="sum", dtype="float32", n=None, data=np.array([1e300])), "infinite or NaN"),
        (dict(op="sumsq", dtype="int32", n=None, data=np.full(3, 2**31 - 1)), "does not fit int64"),
    ],
)
def test_bad_problem_input(kwargs, message):
    with pytest.raises(InputError) as err:
        R.make_problem(**kwargs)
    assert message in str(err.value)


@pytest.mark.parametrize(
    "name, launch, message",
    [
        ("tree-mask", Launch(block=96), "tree-mask needs a power-of-two block size, got 96"),
        ("interleaved-divergent", Launch(block=48), "interleaved-divergent needs a power-of-two block size, got 48"),
        ("sequential", Launch(block=160), "sequential needs a power-of-two block size, got 160"),
        ("warp-shuffle", Launch(block=48),
         "warp-shuffle needs a block size that is a multiple of the warp size 32, got 48"),
        ("best", Launch(block=100), "best needs a block size that is a multiple of the warp size 32"),
        ("block-serial", Launch(block=16), "block-serial: block size 16 is out of range; allowed 32..1024"),
        ("two-kernel", Launch(block=2048), "two-kernel: block size 2048 is out of range; allowed 32..1024"),
        ("last-block", Launch(block=64, grid=0), "last-block: grid 0 is out of range"),
        ("per-thread-partials", Launch(block=64.0), "block size 64.0 must be a whole number"),
        ("best", Launch(items_per_thread=0), "best: items_per_thread 0 is out of range; allowed 4..64"),
        ("best", Launch(items_per_thread=68), "items_per_thread 68 is out of range"),
        ("best", Launch(items_per_thread=6), "best: items_per_thread 6 must be a multiple of 4"),
    ],
)
def test_bad_launch(cuda_backend, name, launch, message):
    with pytest.raises(InputError) as err:
        BY_NAME[name].check(launch, cuda_backend)
    assert message in str(err.value)


def test_bad_launch_is_refused_when_the_request_is_made(cuda_backend):
    with pytest.raises(InputError, match="tree-mask needs a power-of-two block size, got 96"):
        BenchRequest("reduction", cuda_backend, sizes=(100,), launches=(Launch(block=96, grid=2),), repeats=1)


def test_defaults_and_grid_from_sm_count(cuda_backend):
    limits = cuda_backend.limits

    def resolved(name, launch=Launch(), n=None):
        r = BY_NAME[name].resolve(launch, limits, n)
        return r.block, r.grid, r.items

    assert resolved("per-thread-partials") == (256, 32, None)  # seed 000: 32 x 256
    assert resolved("sequential", n=1000) == (256, 4, None)  # seed 003: no idle blocks
    assert resolved("block-serial", Launch(block=32), n=100) == (32, 4, None)
    assert resolved("last-block") == (min(1024, limits.max_threads_per_block), 2 * limits.sm_count, None)
    assert resolved("best", Launch(block=128, grid_sm=3)) == (128, 3 * limits.sm_count, R.DEFAULT_ITEMS_PER_THREAD)
    # best: one block per tile of block x items elements
    assert resolved("best", n=1_000_003) == (256, -(-1_000_003 // (256 * R.DEFAULT_ITEMS_PER_THREAD)), 8)
    assert resolved("best", Launch(block=512, items_per_thread=32), n=2**28) == (512, 2**28 // (512 * 32), 32)
    with pytest.raises(InputError, match="numpy runs on the host"):
        BY_NAME["numpy"].resolve(Launch(), limits)
    assert resolved("tree-mask", Launch(items_per_thread=4))[2] is None  # only variants with the knob take it


def test_the_fixed_grid_is_capped_where_two_elements_per_thread_fill_fewer_blocks():
    # the paper's sample: blocks = min(maxBlocks, n / (2 x threads)) for kernel 7; an H100 has 132 SMs
    from kernels.backend.devices import DeviceLimits

    h100 = DeviceLimits(name="H100", sm_count=132)
    rule = BY_NAME["multiple-elements"]

    def grid(n, launch=Launch()):
        return rule.resolve(launch, h100, n).grid

    assert grid(2**22) == 16 * 132  # the lesson's sizes: the fixed grid, about 15 elements per thread
    assert grid(None) == 16 * 132  # size unknown (the inspector): the fixed grid
    assert grid(600) == 3 and grid(256) == 1 and grid(257) == 2  # no block without two elements to add
    assert grid(600, Launch(grid=40)) == 40  # a grid the user asks for is kept
    assert "fewer when the input fills fewer" in rule.launch.describe()


@pytest.mark.parametrize("variant", R.VARIANTS, ids=lambda v: v.name)
def test_every_variant_is_described_and_runnable(variant):
    assert variant.description and "\n" not in variant.description
    assert variant.run is not None and variant.kind in ("gpu", "cpu", "peer")
    if variant.kind == "gpu":
        assert variant.launch is not None and variant.rules  # its launch rule, in words
        assert variant.seed or variant.name == "best"  # every seed kernel names its seed (or the paper)
    if variant.name in HARRIS_VARIANTS:
        assert 'Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007)' in variant.description


@pytest.mark.parametrize("variant", [v for v in R.VARIANTS if v.kind == "gpu"], ids=lambda v: v.name)
@pytest.mark.parametrize("n", [1, 1000, 10**8])
def test_every_gpu_variant_default_launch_resolves_and_satisfies_its_own_rule(cuda_backend, variant, n):
    n = min(n, R.ALGORITHM.size.maximum[cuda_backend.kind])  # a size this backend accepts
    limits = cuda_backend.limits
    r = variant.resolve(Launch(), limits, n)
    assert 1 <= r.block <= limits.max_threads_per_block and r.grid >= 1
    # the defaults must pass the same check a user's explicit values get
    variant.check(Launch(block=r.block, grid=r.grid, items_per_thread=r.items), cuda_backend)


# --- real GPU only ---------------------------------------------------------------------------------------

LARGE_N = 10_000_001  # odd, so no launch divides it evenly


@pytest.fixture(scope="module")
def large_problems():
    return {(op, dtype): R.make_problem(op, dtype, LARGE_N, seed=20) for op in R.OPS for dtype in R.DTYPES}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", R.DTYPES)
@pytest.mark.parametrize("op", R.OPS)
@pytest.mark.parametrize("name", GPU_VARIANTS)
def test_gpu_large_default_launch(cuda_backend, large_problems, name, op, dtype):
    problem = large_problems[(op, dtype)]
    out = run_variant(name, problem, Launch(), cuda_backend, repeats=3)
    assert out.timing.method == "cuda-events"
    assert_matches_numpy(problem, out.result)


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 31, 4097, 1_000_003])
@pytest.mark.parametrize("launch", [
    Launch(block=32, grid=1), Launch(block=96, grid=3), Launch(block=256, grid_sm=8), Launch(block=1024, grid_sm=2),
    Launch(block=256, grid=5000),
])
@pytest.mark.parametrize("name", SHUFFLE_VARIANTS + ["last-block", "two-kernel"])
def test_gpu_launch_shapes(cuda_backend, name, launch, n):
    problem = R.make_problem("dot", "int32", n, seed=21)
    out = run_variant(name, problem, launch, cuda_backend, repeats=3)
    assert_matches_numpy(problem, out.result)


@pytest.mark.gpu
@pytest.mark.parametrize("items", [4, 8, 12, 32, 64])
@pytest.mark.parametrize("op", R.OPS)
def test_gpu_best_items_per_thread(cuda_backend, large_problems, op, items):
    for dtype in R.DTYPES:
        problem = large_problems[(op, dtype)]
        for launch in (Launch(block=512, items_per_thread=items),  # one tile per block
                       Launch(block=512, grid_sm=4, items_per_thread=items)):  # fewer blocks stride over the tiles
            out = run_variant("best", problem, launch, cuda_backend)
            assert_matches_numpy(problem, out.result)


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 3, 4, 5, 2047, 2048, 2049, 1_000_003])
def test_gpu_best_default_grid_is_one_block_per_tile(cuda_backend, n):
    # ragged ends: a partial last tile, and n % 4 elements after the last 16-byte load
    problem = R.make_problem("sum", "int32", n, seed=23)
    # a given block and items: the tile grid, not the tuned launch (tests/test_peers.py covers tuning)
    out = run_variant("best", problem, Launch(block=256, items_per_thread=R.DEFAULT_ITEMS_PER_THREAD), cuda_backend)
    assert (out.block, out.grid) == (256, -(-n // (256 * R.DEFAULT_ITEMS_PER_THREAD)))
    assert_matches_numpy(problem, out.result)


@pytest.mark.gpu
def test_gpu_best_refuses_inputs_not_aligned_to_its_loads(cuda_backend, monkeypatch):
    problem = R.make_problem("sum", "int32", 1000, seed=24)
    d_a, d_b = problem.device_inputs(cuda_backend)
    monkeypatch.setattr(problem, "device_inputs", lambda backend: (d_a[1:], d_b[1:]))  # 4 bytes off
    with pytest.raises(InputError, match="best loads 16 bytes at a time"):
        run_variant("best", problem, Launch(block=256), cuda_backend)


@pytest.mark.gpu
def test_gpu_best_tuning_sweep_reports_misaligned_input(cuda_backend, monkeypatch, tmp_path):
    # no launch given and an empty tuning cache: the sweep must not hide the input's fault
    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(tmp_path))
    problem = R.make_problem("sum", "int32", 1000, seed=24)
    d_a, d_b = problem.device_inputs(cuda_backend)
    monkeypatch.setattr(problem, "device_inputs", lambda backend: (d_a[1:], d_b[1:]))
    with pytest.raises(InputError, match="best loads 16 bytes at a time"):
        run_variant("best", problem, Launch(), cuda_backend)
    assert not (tmp_path / "tuning.json").exists()


@pytest.mark.gpu
def test_gpu_last_block_with_the_grid_that_broke_the_seed(cuda_backend, large_problems):
    # grid 1056 with 1024-thread blocks gave a wrong sum with seed 004's kernel on an H200
    problem = large_problems[("sum", "int32")]
    out = run_variant("last-block", problem, Launch(block=1024, grid=1056), cuda_backend, repeats=5)
    assert_matches_numpy(problem, out.result)


@pytest.mark.gpu
@pytest.mark.parametrize("name", PEER_VARIANTS)
def test_gpu_peers(cuda_backend, large_problems, name):
    ran = 0
    for problem in large_problems.values():
        out = BY_NAME[name].run(problem, Launch(), cuda_backend, 3)
        if isinstance(out, Skip):  # the op or dtype does not apply; a missing library is a failure here
            assert out.kind is SkipKind.NOT_APPLICABLE, out.text
            continue
        ran += 1
        assert_matches_numpy(problem, out.result)
    # what each peer must have run: cuda-reduce int32 sum, cupy-sum, cub-reduce and torch-sum both sums,
    # cupy-dot int32 dot, triton-sum everything; cupy-sum-cub only where CuPy's CUB path takes the dtypes
    assert ran in {"cuda-reduce": {1}, "cupy-sum": {2}, "cupy-dot": {1}, "cub-reduce": {2}, "torch-sum": {2},
                   "triton-sum": {6}, "cupy-sum-cub": {0, 1, 2}}[name]


@pytest.mark.gpu
def test_gpu_bench_run_has_no_errors(cuda_backend):
    problems = [R.make_problem(op, "int32", 1_000_003, seed=22) for op in R.OPS]
    rows = bench.run(plan(cuda_backend, 3, [Launch()]), R.VARIANTS, problems)
    assert [r for r in rows if r.verified in (ERROR, FAILED)] == []
    assert all(r.gbps for r in rows if r.verified == PASSED)
