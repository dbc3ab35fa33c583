"""Honest measurement: the stopping rule, noise, cold runs' plumbing, cache residency, spec bandwidth, the
summary's win/loss wording and best's tuning cache. Fake timers and fake sweeps: no timing asserts."""

import json

import pytest

from kernels import timing
from kernels.harness import bench
from kernels.harness.rows import CSV_COLUMNS, PASSED, Row, SKIPPED
from kernels.harness.summary import summary_lines
from kernels.harness.table import table_line
from kernels.io import cache
from kernels.backend import devices
from kernels.launch import tuning
from kernels.timing import Policy, Timing, time_kernel


def _fake_sampler(values):
    it = iter(values)
    calls = []

    def sample():
        v = next(it)
        calls.append(v)
        return v

    return sample, calls


def test_without_tolerance_exactly_repeats():
    sample, calls = _fake_sampler([1.0] * 100)
    assert timing.repeat_until_stable(sample, 5, Policy()) == [1.0] * 5
    assert len(calls) == 5


def test_stable_median_stops_after_one_more_round():
    sample, calls = _fake_sampler([1.0] * 100)
    samples = timing.repeat_until_stable(sample, 5, Policy(tolerance=0.01), clock=lambda: 0.0)
    assert len(samples) == 10  # the first extra round left the median where it was


def test_drifting_median_repeats_up_to_the_cap():
    values = [float(i + 1) for i in range(1000)]  # the median keeps moving by far more than 1 percent
    sample, calls = _fake_sampler(values)
    samples = timing.repeat_until_stable(sample, 4, Policy(tolerance=0.01, max_repeats=20), clock=lambda: 0.0)
    assert len(samples) == 20
    assert samples == values[:20]


def test_default_cap_is_ten_times_repeats():
    sample, _ = _fake_sampler([float(i + 1) for i in range(1000)])
    assert len(timing.repeat_until_stable(sample, 3, Policy(tolerance=1e-6), clock=lambda: 0.0)) == 30


def test_time_cap_stops_repeating():
    ticks = iter([0.0, 1.0, 10.0])
    sample, _ = _fake_sampler([float(i + 1) for i in range(1000)])
    samples = timing.repeat_until_stable(sample, 2, Policy(tolerance=1e-6, max_seconds=5.0), clock=lambda: next(ticks))
    assert len(samples) == 4  # one extra round, then the clock says 10 s > 5 s


def test_is_stable_matches_the_rule():
    assert timing.is_stable([1.0, 1.0, 1.0, 1.0], 2, 0.01)
    assert not timing.is_stable([1.0, 1.0, 5.0, 5.0], 2, 0.01)
    assert not timing.is_stable([1.0, 1.0], 2, 0.01)  # no earlier median to compare with


def test_noise_is_relative_spread():
    t = Timing((1.0, 1.1, 0.9, 1.0), "wall")
    assert t.noise == pytest.approx((1.1 - 0.9) / 1.0)
    assert Timing((2.0, 2.0), "wall").noise == 0.0
    assert timing.relative_spread([]) is None
    assert timing.relative_spread([0.0, 0.0]) is None


def test_policy_reaches_backend_time_on_the_host(cpu_backend):
    count = []
    with timing.measurement(Policy(tolerance=0.5, max_repeats=6)):
        t = time_kernel(cpu_backend, lambda: count.append(1), 3)
    assert t.repeats == 6 and len(count) == 6 + 1  # 3, one more round of 3 reaches the cap; plus the warm-up
    assert timing.current_policy() == Policy()  # restored after the block


def test_time_kernel_with_result_keeps_the_last_calls_result(cpu_backend):
    """A library peer's check reads what the last timed call returned (the warm-up calls run first)."""
    calls = []

    def make():
        calls.append(len(calls) + 1)
        return calls[-1]

    with timing.measurement(Policy(warmup=2)):
        t, last = timing.time_kernel_with_result(cpu_backend, make, 3)
    assert len(t.samples_ms) == 3 and t.method == "wall"
    assert calls == [1, 2, 3, 4, 5] and last == 5


def test_new_columns_are_appended_after_the_old_ones():
    assert CSV_COLUMNS[:24] == (
        "variant", "op", "dtype", "n", "block", "grid", "backend", "device", "repeats", "median_ms", "min_ms",
        "max_ms", "gbps", "pct_of_peak", "result", "expected", "verified", "app_version", "numba_version",
        "numba_cuda_version", "timestamp", "note", "rate", "rate_unit")
    assert CSV_COLUMNS[24:29] == ("noise", "cache_resident", "pct_of_spec", "cold_median_ms", "spec_gbps")
    assert CSV_COLUMNS[29:32] == ("registers", "shared_bytes", "occupancy_pct")  # bench --resources
    from kernels.counters.columns import CLOCK_COLUMNS, COUNTER_COLUMNS

    end = 32 + len(COUNTER_COLUMNS + CLOCK_COLUMNS)
    assert CSV_COLUMNS[32:end] == COUNTER_COLUMNS + CLOCK_COLUMNS  # bench --counters, then NVML's clocks
    assert CSV_COLUMNS[end] == "axes"  # the swept options' values
    assert CSV_COLUMNS[end + 1:] == ("ceiling", "ceiling_rate", "pct_of_ceiling", "rays_per_s", "tests_per_s",
                                     "all_tests_per_s", "iterations_per_s")  # kernels/harness/ceilings.py


def test_row_writes_noise_cold_and_spec():
    row = Row("best", "sum", "int32", 1 << 20, "cuda", "NVIDIA H200", timing=Timing((1.0, 1.2, 1.0), "cuda-events"),
                    verified=PASSED)
    row.cold_timing = Timing((2.0, 2.0, 2.0), "cuda-events-cold")
    row.cache_resident, row.spec_gbps, row.pct_of_spec = "yes", 4800.0, 50.0
    d = row.as_dict()
    assert d["noise"] == pytest.approx(0.2)
    assert d["cold_median_ms"] == 2.0 and d["cache_resident"] == "yes" and d["pct_of_spec"] == 50.0
    assert "cold 2.0000 ms" in table_line(row)


@pytest.mark.parametrize("name, gbps", [
    ("NVIDIA H100 80GB HBM3", 3350.0), ("NVIDIA H100 PCIe", 2000.0), ("NVIDIA H200", 4800.0),
    ("NVIDIA A100-SXM4-80GB", 2039.0), ("Some Future GPU", None), ("", None),
])
def test_spec_bandwidth_table(name, gbps):
    assert devices.spec_bandwidth_gbps(name) == gbps


@pytest.mark.parametrize("text, size", [("32K", 32768), ("1024K", 2**20), ("32M", 32 * 2**20), ("512", 512),
                                        ("junk", None)])
def test_cache_size_parsing(text, size):
    assert devices._cache_size_bytes(text) == size


def test_a_virtual_machines_huge_last_level_cache_is_not_believed(tmp_path, monkeypatch):
    """A 2-CPU VM reporting a 300 MiB L3 (its host's, or made up): at most 16 MiB per CPU sharing it count."""
    import glob as glob_module

    cache = tmp_path / "index3"
    cache.mkdir()
    (cache / "size").write_text("307200K\n")
    (cache / "shared_cpu_list").write_text("0-1\n")
    monkeypatch.setattr(glob_module, "glob", lambda pattern: [str(cache) + "/"])
    devices.cpu_last_level_cache_bytes.cache_clear()
    try:
        assert devices.cpu_last_level_cache_bytes() == 2 * devices.LLC_PER_CORE_CAP
        (cache / "size").write_text("8M\n")
        devices.cpu_last_level_cache_bytes.cache_clear()
        assert devices.cpu_last_level_cache_bytes() == 8 * 2**20  # a real cache is believed
    finally:
        devices.cpu_last_level_cache_bytes.cache_clear()


class _FakeBackend:
    is_gpu, is_host, device = True, False, 0


def test_cache_residency_and_spec_on_a_gpu(monkeypatch):
    monkeypatch.setattr(devices, "gpu_l2_bytes", lambda device=0: 50 * 2**20)

    class Problem:
        bytes_read = 4 * (1 << 20)

    row = Row("best", "sum", "int32", 1 << 20, "cuda", "NVIDIA H100 80GB HBM3", verified=PASSED)
    row.gbps = 1675.0
    bench.mark_memory_facts(row, Problem(), _FakeBackend())
    assert row.cache_resident == "yes" and row.spec_gbps == 3350.0 and row.pct_of_spec == pytest.approx(50.0)
    Problem.bytes_read = 4 * (1 << 28)
    bench.mark_memory_facts(row, Problem(), _FakeBackend())
    assert row.cache_resident == "no"


def test_host_rows_use_the_cpu_cache(monkeypatch):
    monkeypatch.setattr(devices, "cpu_last_level_cache_bytes", lambda: 1000)

    class Problem:
        bytes_read = 2000

    row = Row("numpy", "sum", "int32", 500, "cuda", "NVIDIA H200", verified=PASSED)
    bench.mark_memory_facts(row, Problem(), _FakeBackend(), host=True)
    assert row.cache_resident == "no" and row.spec_gbps is None


def _row(variant, samples):
    return Row(variant, "sum", "int32", 1 << 28, "cuda", "NVIDIA H200", timing=Timing(samples, "cuda-events"),
                     verified=PASSED)


def test_summary_names_a_loss():
    from kernels.reduction import VARIANTS

    rows = [_row("best", (0.2492, 0.2500, 0.2490)), _row("cub-reduce", (0.2392, 0.2393, 0.2392))]
    [line] = summary_lines(rows, None, VARIANTS)
    assert "0.96x the speed of cub-reduce" in line and line.endswith("a loss")


def test_summary_names_a_win_and_a_loss_within_noise():
    from kernels.reduction import VARIANTS

    rows = [_row("best", (0.100, 0.100, 0.100)), _row("triton-sum", (0.120, 0.120, 0.120))]
    [line] = summary_lines(rows, None, VARIANTS)
    assert "1.20x the speed of triton-sum" in line and line.endswith("a win")
    noisy = [_row("best", (0.100, 0.110, 0.090)), _row("triton-sum", (0.099, 0.099, 0.099))]
    [line] = summary_lines(noisy, None, VARIANTS)
    assert line.endswith("a loss within the noise")


# --- tuning -------------------------------------------------------------------------------------------------


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(tuning, "_RETUNED_HERE", set())
    return tmp_path


def test_size_buckets():
    assert tuning.size_bucket(1 << 20) == "2^20"
    assert tuning.size_bucket((1 << 21) - 1) == "2^20"
    assert tuning.size_bucket(100_000_000) == "2^26"
    assert tuning.size_bucket(1) == "2^0"


def test_sweep_picks_the_fastest_and_skips_failures():
    times = {(4, 512): 1.0, (8, 256): 2.0}
    choice = tuning.sweep(lambda i, b: times.get((i, b)))
    assert (choice.items, choice.block, choice.median_ms, choice.configurations) == (4, 512, 1.0, 2)
    with pytest.raises(RuntimeError):
        tuning.sweep(lambda i, b: None)


def test_cache_round_trip_and_retune(cache_dir):
    calls = []

    def measure(items, block):
        calls.append((items, block))
        return 1.0 if (items, block) == (8, 256) else 2.0

    key = tuning.cache_key("NVIDIA H200", "0.30.4", "sum", "int32", 1 << 20)
    choice, source = tuning.choose(key, measure)
    assert (choice.items, choice.block, source) == (8, 256, "tuned now")
    swept = len(calls)
    assert swept == len(tuning.SWEEP_ITEMS) * len(tuning.SWEEP_BLOCKS)
    stored = json.loads((cache_dir / tuning.CACHE_FILE).read_text())
    assert stored[key]["items"] == 8 and stored[key]["block"] == 256

    again, source = tuning.choose(key, measure)
    assert again == choice and source == "cached" and len(calls) == swept  # no sweep

    with tuning.retuning():
        _, source = tuning.choose(key, lambda i, b: 1.0 if (i, b) == (16, 1024) else 3.0)
        assert source == "tuned now"
        _, source = tuning.choose(key, lambda i, b: pytest.fail("--retune sweeps once per process"))
        assert source == "cached"
    assert json.loads((cache_dir / tuning.CACHE_FILE).read_text())[key]["block"] == 1024


def test_other_device_or_version_tunes_separately(cache_dir):
    k1 = tuning.cache_key("NVIDIA H200", "0.30.4", "sum", "int32", 1 << 24)
    k2 = tuning.cache_key("NVIDIA H100 80GB HBM3", "0.30.4", "sum", "int32", 1 << 24)
    k3 = tuning.cache_key("NVIDIA H200", "0.31.0", "sum", "int32", 1 << 24)
    k4 = tuning.cache_key("NVIDIA H200", "0.30.4", "sum", "int32", 1 << 24, kernel="another layout")
    assert len({k1, k2, k3, k4}) == 4
    tuning.choose(k1, lambda i, b: 1.0)
    assert tuning.choose(k2, lambda i, b: 1.0)[1] == "tuned now"


def test_unreadable_cache_tunes_again(cache_dir):
    (cache_dir / tuning.CACHE_FILE).write_text("{not json")
    assert tuning.load_cache() == {}
    choice, source = tuning.choose("k", lambda i, b: float(i * b))
    assert source == "tuned now" and (choice.items, choice.block) == (4, 128)  # the smallest launch of the sweep


def test_cli_retune_off_a_gpu_writes_no_cache(cache_dir, capsys):
    from raytracer_app.cli import main

    assert main(["bench", "reduction", "--backend", "cpu", "--n", "1000", "--variants", "numpy,best",
                 "--retune", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    assert "tuned:" not in out and not (cache_dir / tuning.CACHE_FILE).exists()


def test_cli_refuses_cold_and_whole_call_off_a_gpu(capsys):
    from raytracer_app.cli import main

    for extra in (["--cold"], ["--whole-call"], ["--max-repeats", "5"], ["--tolerance", "1.5"]):
        assert main(["bench", "reduction", "--backend", "cpu", "--n", "1000", "--variants", "numpy", *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("raytracer-app: error: ")


def test_cli_tolerance_runs_on_the_host(capsys):
    from raytracer_app.cli import main

    assert main(["bench", "reduction", "--backend", "cpu", "--n", "1000", "--variants", "numpy",
                 "--repeats", "3", "--tolerance", "0.5", "--max-repeats", "9"]) == 0
    assert "numpy" in capsys.readouterr().out


def test_whole_call_off_a_gpu_is_a_skipped_row(cpu_backend):
    from kernels.reduction import whole_call
    from kernels.reduction import make_problem

    rows = whole_call.run(make_problem("sum", "int32", 100), ["best", "cub-reduce"], cpu_backend, 3)
    assert [r.verified for r in rows] == [SKIPPED, SKIPPED]
    assert all("real GPU" in r.note for r in rows)


def test_whole_call_refuses_unknown_names(capsys):
    from raytracer_app.cli import main

    assert main(["bench", "reduction", "--backend", "cpu", "--n", "100", "--whole-call", "--variants", "tree-mask"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("raytracer-app: error: --whole-call measures best") and "'tree-mask'" in err


def test_summary_compares_cold_runs_too():
    from kernels.reduction import VARIANTS

    best, peer = _row("best", (0.10, 0.10)), _row("cub-reduce", (0.11, 0.11))
    best.cold_timing, peer.cold_timing = Timing((0.20, 0.20), "cuda-events-cold"), Timing((0.19, 0.19), "cuda-events-cold")
    [line] = summary_lines([best, peer], None, VARIANTS)
    hot, cold = line.split("cold (L2 flushed): ")
    assert hot.rstrip("; ").endswith("a win") and cold.endswith("a loss")


def test_the_warm_up_is_the_timers_own_unless_the_run_asks_for_more():
    from kernels import timing

    calls = []
    assert timing.warmups() == 1 and timing.warmups(0) == 0 and timing.warmups(3) == 3
    with timing.measurement(timing.Policy(warmup=5)):
        assert timing.warmups() == 5 and timing.warmups(0) == 5 and timing.warmups(7) == 7
        t = timing.time_wall(lambda: calls.append(1), 2)
    assert len(calls) == 5 + 2 and t.repeats == 2  # five untimed calls, then the two timed ones


def test_a_stop_is_heard_between_two_samples_of_a_timing():
    """Stop (a window's, a cluster's) ends a timing within one sample or warm-up call: a row of many repeats
    on a large problem no longer runs to its end first."""
    calls = []
    with pytest.raises(timing.Stopped):
        with timing.stopping(lambda: len(calls) >= 3):
            timing.time_wall(lambda: calls.append(1), 1000, warmup=1)
    assert len(calls) == 3  # the warm-up call and two samples, of the 1001 asked


def test_a_run_stopped_inside_a_row_keeps_the_finished_rows_and_drops_that_row(cpu_backend):
    from kernels.service.bench_request import BenchRequest

    request = BenchRequest("reduction", cpu_backend, sizes=(4096,), variants=("numpy", "cpu-parallel"), repeats=400)
    asked = []

    def should_stop():  # false until the second row's timing has taken a few samples
        asked.append(1)
        return len(rows) == 1 and len(asked) > len(first_row_asks) + 4

    rows, first_row_asks = [], []
    out = bench.run(request, request.selected(request.spec.variants), should_stop=should_stop,
                    on_row=lambda row: (rows.append(row), first_row_asks.extend(asked)))
    assert [r.variant for r in out] == ["numpy"] and out[0].verified == PASSED
    assert len(asked) - len(first_row_asks) < 50  # stopped a few samples into the second row, not after 400
