"""Hardware counters (kernels/counters): finding ncu, the one-line refusals (no GPU, no ncu, no permission:
the last two simulated by a fake ncu in a temporary folder), the report's split into variants, and a real
ncu run on a GPU."""

import os
import stat
import subprocess
import sys
import types

import pytest

from kernels.counters import metrics as M
from kernels.counters import tool
from kernels.counters.report import MARKER, short_name, split

GPU = types.SimpleNamespace(is_gpu=True, is_simulator=False, device=0)  # what measure() asks of a backend
# a BenchRequest's JSON, as measure() takes it (kernels/service/bench_request.py)
REQUEST = {"algorithm": "reduction", "backend": {"kind": "cuda", "device": 0}, "sizes": [1 << 20],
           "options": {"op": "sum", "dtype": "int32"}, "variants": ["best"], "repeats": 1}
PERM_TEXT = ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
             "Counters on the target device 0. For instructions on enabling permissions and to get more "
             "information see https://developer.nvidia.com/ERR_NVGPUCTRPERM")


def _fake_ncu(folder, run_text: str, status: int = 1):
    """An Nsight Compute install: ncu (answers --query-metrics, prints run_text otherwise) and extras/python."""
    (folder / "extras" / "python").mkdir(parents=True)
    (folder / "extras" / "python" / "ncu_report.py").write_text("")
    ncu = folder / "ncu"
    ncu.write_text("#!/bin/sh\n"
                   'case "$*" in *--query-metrics*) echo "dram__bytes   # of bytes"; exit 0;; esac\n'
                   f"printf '%s\\n' '{run_text}'\nexit {status}\n")  # builtins only: PATH may be empty
    ncu.chmod(ncu.stat().st_mode | stat.S_IXUSR)
    return ncu


@pytest.fixture
def no_toolkit(monkeypatch, tmp_path):
    """No ncu anywhere the search looks, whatever this machine has installed."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for var in ("CUDA_HOME", "CUDA_PATH", "RAYTRACER_NCU"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(tool, "COMMON_GLOBS", ())
    return tmp_path


def test_no_ncu_is_one_line_naming_the_install(no_toolkit):
    reason = tool.why_not(GPU)
    assert reason.startswith("counters cannot be read: needs Nsight Compute's ncu")
    assert "CUDA toolkit" in reason and "\n" not in reason


def test_no_gpu_and_no_ncu_are_both_named(no_toolkit):
    reason = tool.why_not(types.SimpleNamespace(is_gpu=False, is_simulator=True, device=0))
    assert "a CUDA GPU" in reason and "simulator" in reason and "ncu" in reason


def test_the_current_folder_is_never_searched(no_toolkit, monkeypatch):
    here = no_toolkit / "here"
    here.mkdir()
    _fake_ncu(here, "")
    monkeypatch.chdir(here)
    monkeypatch.setenv("PATH", os.pathsep.join(["", ".", str(no_toolkit / "empty")]))
    assert tool.find_ncu() is None


def test_ncu_under_cuda_home_is_found(no_toolkit, monkeypatch):
    home = no_toolkit / "cuda"
    (home / "bin").mkdir(parents=True)
    ncu = _fake_ncu(home / "bin", "")
    monkeypatch.setenv("CUDA_HOME", str(home))
    assert tool.find_ncu() == ncu
    assert tool.report_module_dir(ncu) == home / "bin" / "extras" / "python"


def test_permission_denied_is_one_line_with_the_fix(no_toolkit, monkeypatch):
    from kernels.counters import measure

    ncu = _fake_ncu(no_toolkit / "nsight", PERM_TEXT)
    monkeypatch.setenv("RAYTRACER_NCU", str(ncu))
    measure.available_metrics.cache_clear()
    with pytest.raises(tool.CannotMeasure) as err:
        measure.measure(REQUEST, GPU)
    text = str(err.value)
    assert "ERR_NVGPUCTRPERM" in text and "NVreg_RestrictProfilingToAdminUsers=0" in text and "\n" not in text


def test_a_profiler_that_cannot_start_is_one_line(no_toolkit, monkeypatch):
    from kernels.counters import measure

    ncu = _fake_ncu(no_toolkit / "nsight", "==ERROR== Failed to initialize the profiler: LibraryNotLoaded")
    monkeypatch.setenv("RAYTRACER_NCU", str(ncu))
    measure.available_metrics.cache_clear()
    with pytest.raises(tool.CannotMeasure, match="could not start its profiler.*LibraryNotLoaded"):
        measure.measure(REQUEST, GPU)


def test_cli_without_a_gpu_exits_2_with_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.getcwd(), PATH=str(tmp_path), RAYTRACER_CACHE_DIR=str(tmp_path / "c"))
    done = subprocess.run([sys.executable, "-m", "raytracer_app", "bench", "reduction", "--backend", "cpu",
                           "--counters", "--n", "1000"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("raytracer-app: error: counters cannot be read: needs a CUDA GPU")
    assert "verified" not in done.stdout  # refused before anything was timed


def test_the_command_is_one_ncu_run_for_the_whole_batch():
    from kernels.counters.measure import command

    cmd = command("/opt/ncu", ["a.sum", "b.pct"], "none", "/tmp/r.ncu-rep", {"variants": ["x", "y"]})
    assert cmd[:3] == ["/opt/ncu", "--metrics", "a.sum,b.pct"]
    assert cmd[cmd.index("--clock-control") + 1] == "none" and "--profile-from-start" in cmd
    assert cmd[-3:-1] == ["-m", "kernels.service.counters_child"]


def test_metric_list_keeps_what_this_ncu_has():
    have = {M.base_name(m) for m in M.METRICS.values()} - {"lts__t_sector_hit_rate"}
    have |= {"smsp__average_warps_issue_stalled_barrier_per_issue_active",
             "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active"}
    wanted, left = M.metric_list(have)
    assert left == ["lts__t_sector_hit_rate.pct"]
    assert "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio" in wanted
    assert M.metric_list(None)[0][-1] == M.STALL_FALLBACK


def _action(name, grid=None, **metrics):
    m = {M.METRICS[k]: v for k, v in metrics.items()}
    if grid is not None:
        m[M.METRICS["grid"]] = grid
    return {"name": name, "mangled": name, "metrics": m}


def test_split_gives_each_variant_its_kernels_once():
    actions = [
        _action(MARKER, grid=1), _action("k::a(int)", duration_ns=5), _action("sleep_ns(long)"),
        _action("k::a(int)", duration_ns=7),
        _action(MARKER, grid=2), _action("k::b(int)", duration_ns=1), _action("k::b(long)", duration_ns=2),
        _action("sleep_ns(long)"), _action("k::b(int)", duration_ns=3), _action("k::b(long)", duration_ns=4),
    ]
    windows = split(actions, 2)
    assert [a["metrics"][M.METRICS["duration_ns"]] for a in windows[0]] == [7]  # the timed launch, not the warm-up
    assert [a["name"] for a in windows[1]] == ["k::b(int)", "k::b(long)"]
    assert [a["metrics"][M.METRICS["duration_ns"]] for a in windows[1]] == [3, 4]


def test_short_names():
    assert short_name("kernels::reduction::gpu::best_kernel::<locals>::best_tiles[abi:v1,cw5](Array<int>)") == "best_tiles"
    assert short_name("zero_counts(Array<unsigned int, 1>)") == "zero_counts"


def test_several_kernels_sum_and_weigh():
    a = M.kernel_counters("first", {M.METRICS["duration_ns"]: 3000, M.METRICS["dram_read"]: 400, M.METRICS["dram_write"]: 0,
                                    M.METRICS["dram_pct"]: 90.0, M.METRICS["instructions"]: 10,
                                    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": 4.0,
                                    "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio": 9.0})
    b = M.kernel_counters("second", {M.METRICS["duration_ns"]: 1000, M.METRICS["dram_read"]: 100,
                                     M.METRICS["dram_pct"]: 10.0, M.METRICS["instructions"]: 5,
                                     "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 2.0})
    m = M.Measured((a, b), "none")
    assert m.duration_ms == pytest.approx(0.004) and m.dram_bytes == 500 and m.instructions == 15
    assert m.dram_pct == pytest.approx((90 * 3 + 10 * 1) / 4)
    assert m.top_stall == "long_scoreboard"  # 'selected' is issuing, not a stall
    assert M.Measured.from_dict(m.as_dict()) == m


@pytest.mark.gpu
def test_real_counters_for_the_reduction_on_a_gpu():
    from kernels import backend as backends
    from kernels.counters.measure import measure

    backend = backends.resolve("cuda")
    reason = tool.why_not(backend)
    if reason:
        pytest.skip(reason)
    n = 1 << 26  # 256 MiB of int32: larger than any L2, so the bytes come from DRAM
    from kernels.service.bench_request import BenchRequest

    request = BenchRequest("reduction", backend, sizes=(n,), variants=("best", "two-kernel"), repeats=1)
    got = measure(request.to_json(), backend)
    best, two = got["best"], got["two-kernel"]
    assert isinstance(best, M.Measured), best
    assert 0.9 * 4 * n <= best.dram_bytes <= 1.2 * 4 * n  # reads every int32 once
    assert len(two.kernels) == 2 and two.duration_ms == pytest.approx(sum(k.duration_ms for k in two.kernels))
    assert 0 < best.occupancy_pct <= 100 and best.instructions > n / 32 / 8


# --- recorded metric sets (an H100, ncu 2025.3.1, --clock-control none; scripts/counters_record.py) ------------

def _recorded(target):
    import json
    from pathlib import Path

    from kernels.counters.measure import to_measured

    doc = json.loads((Path(__file__).parent / "data" / "counters" / f"{target}-h100.json").read_text())
    return doc, to_measured(doc["actions"], doc["variants"], {}, "none")


def test_recorded_reduction_gives_every_variant_its_kernels():
    doc, got = _recorded("reduction")
    assert set(got) == set(doc["variants"]) and all(isinstance(m, M.Measured) for m in got.values())
    assert [k.name for k in got["two-kernel"].kernels] == ["block_sums", "block_sums#2"]  # each, then the sum
    for m in got.values():  # every variant reads the 100M int32 once: 400 MB, whatever its kernel
        assert 4 * doc["n"] <= m.dram_bytes <= 1.02 * 4 * doc["n"]
    best = got["best"]
    # ncu by hand on the same machine (docs/measurements.md): 92.68% DRAM, 89.19% occupancy, 0.43% L2 hits
    assert abs(best.dram_pct - 92.68) < 2 and abs(best.occupancy_pct - 89.19) < 2 and abs(best.l2_hit_pct - 0.43) < 2
    assert best.top_stall == "long_scoreboard"


def test_recorded_bank_conflicts_tell_the_tree_kernels_apart():
    _, got = _recorded("reduction")
    strided, sequential = got["tree-mask"].conflicts_per_request, got["sequential"].conflicts_per_request
    assert strided > 0.3 and sequential < 0.01  # tid & mask strides across banks; t < stride does not


def test_recorded_histogram_kernels_and_their_sum():
    doc, got = _recorded("histogram")
    best = got["best"]
    assert [k.name for k in best.kernels] == ["zero_counts", "histo_best"]
    assert best.duration_ms == pytest.approx(sum(k.duration_ms for k in best.kernels))
    assert got["shared-atomics"].conflicts_per_request > 1  # every byte hits one of 256 bins in shared memory


def test_rules_on_recorded_sets():
    from kernels.counters.rules import Facts, analyse

    doc, red = _recorded("reduction")
    _, histo = _recorded("histogram")
    best = analyse(Facts(red["best"], n=doc["n"], model_bytes=4 * doc["n"]))
    assert best[0].startswith("Memory-bound: DRAM at 92.5% of its peak, within 7.5 percentage points")
    assert not any("traffic model" in s for s in best)  # 400 MB modelled, 402 MB measured
    seed = analyse(Facts(red["per-thread-partials"], n=doc["n"]))
    assert seed[0].startswith("Latency-bound: DRAM at 12.8%") and "12.4% achieved occupancy" in seed[0]
    shared = " ".join(analyse(Facts(histo["shared-atomics"], n=doc["n"])))
    assert "Shared-memory bank conflicts: 2.16 extra wavefronts per shared request" in shared
    atomics = " ".join(analyse(Facts(histo["global-atomics"], n=100 * 2**20)))
    assert "Atomics contention: 3.28 M warp-level global atomic instructions (one per 32 input elements)" in atomics
    wrong_model = analyse(Facts(red["best"], n=doc["n"], model_bytes=2 * doc["n"]))
    assert any(s.startswith("The traffic model disagrees") and "(101% apart)" in s for s in wrong_model)


def test_rules_for_short_kernels_and_l2_residency():
    from kernels.counters.rules import Facts, analyse

    tiny = M.Measured((M.kernel_counters("k", {M.METRICS["duration_ns"]: 1500.0,
                                                M.METRICS["l2_hit_pct"]: 97.0}),), "none")
    said = analyse(Facts(tiny, n=1000, gbps=5000.0, copy_peak_gbps=3000.0))
    assert "Launch overhead dominates: the kernels run 1.50 us" in said[0]
    assert any("Data resident in L2: 97.0% hit rate and 5000 GB/s, above the 3000 GB/s" in s for s in said)


def test_counter_cells_and_table_lines():
    from kernels.counters.columns import CLOCK_COLUMNS, COUNTER_COLUMNS, cells, table_lines
    from kernels.counters.clocks import Clocks, Snapshot

    _, got = _recorded("reduction")
    clocks = Clocks(Snapshot(1980, 2619, 132.1, 0), Snapshot(1755, 2619, 690.0, 0x4))
    c = cells(got["best"], "", clocks)
    assert set(c) == set(COUNTER_COLUMNS + CLOCK_COLUMNS)
    assert c["dram_pct"] == pytest.approx(92.5, abs=0.05) and 400e6 < c["dram_bytes"] < 405e6
    assert c["top_stall"] == "long_scoreboard" and c["clock_control"] == "none"
    assert c["sm_clock_mhz"] == 1980 and c["sm_clock_mhz_after"] == 1755
    assert c["throttled"] == "yes" and c["throttle_reasons"] == "power cap"
    lines = table_lines("two-kernel", got["two-kernel"])
    assert len(lines) == 3 and "sum of 2 kernels" in lines[0] and "block_sums#2" in lines[2]
    empty = cells(None, "no kernel was profiled for it", None)
    assert empty["dram_pct"] == "" and empty["counters_note"] == "no kernel was profiled for it"


def test_result_files_keep_counters_and_clocks(tmp_path):
    from kernels.counters.clocks import Clocks, Snapshot
    from kernels.harness import results, results_read
    from kernels.harness.rows import Row
    from kernels.harness.table import csv_text
    from kernels.timing import Timing

    _, got = _recorded("histogram")
    row = Row(variant="best", op="uniform", dtype="uint8", n=100, backend="cuda", device="H100",
                    timing=Timing((0.04, 0.05), "cuda-events"), verified="yes", counters=got["best"],
                    clocks=Clocks(Snapshot(1980, 2619, 130.0, 0), Snapshot(1980, 2619, 131.0, 0)))
    result = results.Result("histogram", [row], {"name": "H100", "backend": "cuda"}, date="2026-11-23T00:00:00Z",
                            versions={}, command=None)
    path = tmp_path / "r.json"
    results.write_result(path, result, "--json")
    back = results_read.read_result(path, "--json").rows[0]
    assert csv_text([back]) .splitlines()[1].split(",")[-18:] == csv_text([row]).splitlines()[1].split(",")[-18:]


def test_cli_puts_each_record_on_its_row():
    """Rows come size by size, launch by launch, variant by variant; counters are keyed by (size, launch)."""
    from kernels.harness.rows import Row
    from raytracer_app.cli.bench_counters import attach

    rows = [Row(v, "sum", "int32", n, "cuda", "GPU") for n in (10, 20) for _launch in (0, 1) for v in ("a", "b")]
    marks = {(s, k): {"a": M.Measured((M.kernel_counters(f"{s}{k}", {}),), "none"), "b": "it raised"}
             for s in (0, 1) for k in (0, 1)}
    attach(rows, marks)
    assert [r.counters.kernels[0].name for r in rows if r.variant == "a"] == ["00", "01", "10", "11"]
    assert all(r.counters is None and r.counters_note == "it raised" for r in rows if r.variant == "b")
