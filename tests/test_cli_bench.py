import csv

import numpy as np
import pytest

from kernels.harness.rows import CSV_COLUMNS, Row
from kernels.launch import Launch
from kernels.timing import Timing
from raytracer_app.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def read_rows(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == CSV_COLUMNS
        return list(reader)


def test_csv_columns_start_as_the_issue_lists():
    assert CSV_COLUMNS[:17] == ("variant", "op", "dtype", "n", "block", "grid", "backend", "device", "repeats",
                                "median_ms", "min_ms", "max_ms", "gbps", "pct_of_peak", "result", "expected", "verified")
    assert CSV_COLUMNS[17:21] == ("app_version", "numba_version", "numba_cuda_version", "timestamp")


@pytest.mark.slow
def test_bench_raytrace_on_cuda_kernels_writes_csv(tmp_path, capsys, cuda_backend):
    out = tmp_path / "rt.csv"
    code, text, err = run(capsys, "bench", "spheres", "--backend", cuda_backend.kind, "--size", "16x16",
                          "--sizes", "3,40", "--block", "8x8,16x4", "--repeats", "1", "--csv", str(out))
    assert code == 0, err
    rows = read_rows(out)
    assert len(rows) == 2 * 2 * 9  # sphere counts x block shapes x variants
    ran = [r for r in rows if r["verified"] == "yes"]
    assert {r["variant"] for r in ran} >= {"spheres-global", "spheres-constant", "spheres-shared", "spheres-binned",
                                           "spheres-sorted", "spheres-cpu", "spheres-cpu-serial", "spheres-cpu-tiles"}
    assert all(r["result"] == r["expected"] == "256" for r in ran)
    assert {r["block"] for r in ran if r["variant"] == "spheres-shared"} == {"8x8", "16x4"}
    assert "progress: 8/36" in err


@pytest.mark.slow
def test_bench_julia_on_cpu(capsys):
    code, text, err = run(capsys, "bench", "julia", "--backend", "cpu", "--size", "64x48", "--repeats", "2")
    assert code == 0, err
    assert "julia-cpu" in text and "skipped" in text  # the GPU launches skip on the cpu backend


def test_bench_reduction_on_cpu_and_csv(tmp_path, capsys):
    out = tmp_path / "r.csv"
    code, text, err = run(capsys, "bench", "reduction", "--backend", "cpu", "--n", "5000", "--op", "sumsq",
                          "--variants", "numpy,cpu-parallel,tree-mask", "--repeats", "2", "--csv", str(out))
    assert code == 0, err
    rows = {r["variant"]: r for r in read_rows(out)}
    assert rows["numpy"]["verified"] == rows["cpu-parallel"]["verified"] == "yes"
    assert rows["tree-mask"]["verified"] == "skipped"
    assert "peak:" in text


def test_bench_reduction_from_npy_input(tmp_path, capsys, cuda_backend):
    data = np.arange(-300, 700, dtype=np.int32)
    path = tmp_path / "a.npy"
    np.save(path, data)
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "bench", "reduction", "--backend", cuda_backend.kind, "--input", str(path),
                       "--variants", "numpy,sequential", "--block", "64", "--grid", "4", "--repeats", "1", "--csv", str(out))
    assert code == 0, err
    rows = read_rows(out)
    assert {r["result"] for r in rows} == {str(int(data.astype(np.int64).sum()))}


@pytest.mark.slow
def test_bench_histogram_from_any_file(tmp_path, capsys):
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)) * 7 + b"tail")
    code, text, err = run(capsys, "bench", "histogram", "--backend", "cpu", "--input", str(path),
                          "--variants", "cpu-numpy,cpu-parallel", "--repeats", "1")
    assert code == 0, err
    assert text.count(" yes") == 2


def test_bench_list_prints_every_variant(capsys):
    from kernels.reduction import VARIANTS

    code, text, _ = run(capsys, "bench", "reduction", "--list")
    assert code == 0
    for v in VARIANTS:
        assert v.name in text


BAD = [
    (["bench", "reduction", "--variants", "turbo"], "unknown variant 'turbo'"),
    (["bench", "reduction", "--n", "10", "--sizes", "10,20"], "either --n or --sizes"),
    (["bench", "hashtable", "--input", "x.bin"], "--input does not apply to `bench hashtable`"),
    (["bench", "reduction", "--pattern", "uniform"], "--pattern does not apply to `bench reduction`"),
    (["bench", "histogram", "--size", "8x8"], "--size does not apply to `bench histogram`"),
    (["bench", "julia", "--n", "5"], "--n does not apply to `bench julia`"),
    (["bench", "reduction", "--block", "64"], "--block 64 applies to CUDA kernels; the cpu backend has none"),
    (["bench", "reduction", "--grid-sm", "0"], "--grid-sm 0 must be a positive finite number"),
    (["bench", "reduction", "--grid-sm", "-1"], "--grid-sm -1 must be a positive finite number"),
    (["bench", "reduction", "--grid-sm", "nan"], "--grid-sm nan must be a positive finite number"),
    (["bench", "reduction", "--grid-sm", "inf"], "--grid-sm inf must be a positive finite number"),
    (["bench", "reduction", "--repeats", "1000000000"], "--repeats 1000000000 is out of range"),
    (["bench", "reduction", "--n", "10", "--input", "x.npy"], "--input sets the problem size"),
    (["bench", "reduction", "--block", "abc"], "--block 'abc' is not a whole number"),
    (["bench", "reduction", "--n", "0"], "--n 0 must be at least 1"),
    (["bench", "reduction", "--input", "/nonexistent.npy"], "does not exist"),
    (["bench", "reduction", "--grid", "4", "--grid-sm", "2"], "not allowed with argument"),
    (["bench", "spheres", "--pattern", "zigzag"], "--pattern: invalid choice: 'zigzag'"),
    (["bench", "reduction", "--repeats", "2", "--rounds", "3"], "--rounds 3 is more than --repeats 2"),
    (["bench", "reduction", "--repeats", "4", "--rounds", "2", "--tolerance", "0.01"], "without --tolerance"),
    (["bench", "reduction", "--rounds", "0"], "--rounds 0 must be at least 1"),
]


@pytest.mark.parametrize("argv, message", BAD)
def test_bad_bench_input(tmp_path, capsys, argv, message):
    out = tmp_path / "x.csv"
    if "--backend" not in argv:
        argv += ["--backend", "cpu"]
    code, _, err = run(capsys, *argv, "--csv", str(out))
    assert code == 2, err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_the_simulator_refuses_a_launch_it_could_never_finish(capsys, cuda_backend):
    if not cuda_backend.is_simulator:
        pytest.skip("this session runs real CUDA, not the simulator")
    code, _, err = run(capsys, "bench", "reduction", "--backend", "sim", "--n", "100", "--variants", "sequential",
                       "--grid", "1000000000")
    assert code == 2 and "at most 65536 per launch" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [
    ["bench", "reduction", "--n", "2147483647"],
    ["bench", "histogram", "--n", "4294967295"],
    ["bench", "hashtable", "--n", "1000", "--buckets", "1000000000"],
    ["bench", "reduction", "--sizes", "1000,2000000000"],
])
def test_runs_that_cannot_fit_in_memory_are_refused_before_allocating(tmp_path, capsys, monkeypatch, argv):
    import kernels.backend.devices

    monkeypatch.setattr(kernels.backend.devices, "available_host_bytes", lambda: 2**30)  # a machine with 1 GiB free
    out = tmp_path / "x.csv"
    code, text, err = run(capsys, *argv, "--backend", "cpu", "--csv", str(out))
    assert code == 2, err
    assert "of host memory; 1.0 GiB is free" in err and len(err.strip().splitlines()) == 1
    blamed = "--sizes" if "--sizes" in argv else "--buckets 1000000000" if "--buckets" in argv else "--n"
    assert blamed in err  # the option that makes it too big, even at the smallest --n
    assert not out.exists() and "variant" not in text  # refused before the table


def test_block_above_the_device_limit(tmp_path, capsys, cuda_backend):
    out = tmp_path / "x.csv"
    code, _, err = run(capsys, "bench", "spheres", "--block", "64x64", "--backend", cuda_backend.kind, "--csv", str(out))
    assert code == 2 and "at most 1024 per block" in err and not out.exists()


def test_constraint_break_names_the_constraint(capsys, cuda_backend):
    code, _, err = run(capsys, "bench", "reduction", "--backend", cuda_backend.kind, "--n", "100",
                       "--variants", "tree-mask", "--block", "96")
    assert code == 2
    assert "tree-mask" in err and "power-of-two block size, got 96" in err


def test_summary_compares_best_with_the_registry_peers():
    from kernels.harness.rows import PASSED, Row, SKIPPED
    from kernels.harness.peak import Peak
    from kernels.harness.summary import summary_lines
    from kernels.reduction import VARIANTS
    from kernels.timing import Timing

    from kernels.backend import Skip, SkipKind

    def row(variant, ms, gbps=None, verified=PASSED, note="", skip=None):
        r = Row(variant, "sum", "int32", 1000, "cuda", "gpu", verified=verified, note=note, gbps=gbps, skip=skip)
        r.timing = Timing((ms,), "cuda-events") if ms else None
        return r

    rows = [row("best", 0.1, gbps=3000.0), row("warp-shuffle", 0.05), row("cupy-sum", 0.2),
            row("cuda-reduce", 0.4), row("cupy-dot", None, verified=SKIPPED, note="CuPy is not installed",
                skip=Skip(SkipKind.MISSING_LIBRARY, "CuPy is not installed")),
            # a skip for another reason is not reported as a missing library, whatever its words
            row("cuda-reduce", None, verified=SKIPPED, note="not installed",
                skip=Skip(SkipKind.NOT_APPLICABLE, "not installed"))]
    [line] = summary_lines(rows, Peak(4000.0, "copy"), VARIANTS)
    # warp-shuffle is ours, not a peer: the fastest peer is cupy-sum
    assert "75% of copy bandwidth" in line and "2.00x the speed of cupy-sum" in line
    assert "cupy-dot: not installed" in line and "cuda-reduce: not installed" not in line


def test_ctrl_c_keeps_the_finished_rows_and_writes_them_marked_partial(tmp_path, capsys, monkeypatch):
    """The first row finishes, then Ctrl-C: the row is printed, both files are written with it (the result
    file marked partial) and the exit status is 130."""
    import json

    from raytracer_app.cli import bench as cli_bench
    from kernels.service import bench as service

    real = service.run_bench

    def interrupted(request, progress=None, stop=None, **kw):
        def relay(kind, value):
            progress(kind, value)
            if kind == "row":
                raise KeyboardInterrupt
        return real(request, relay, stop, **kw)

    monkeypatch.setattr(cli_bench, "run_bench", interrupted)
    out_json, out_csv = tmp_path / "r.json", tmp_path / "r.csv"
    code, text, err = run(capsys, "bench", "reduction", "--backend", "cpu", "--n", "3000", "--variants",
                          "numpy,cpu-parallel", "--repeats", "2", "--json", str(out_json), "--csv", str(out_csv))
    assert code == 130 and "interrupted after 1 row(s)" in err
    doc = json.loads(out_json.read_text())
    assert doc["partial"] is True and [r["variant"] for r in doc["rows"]] == ["numpy"]
    assert len(out_csv.read_text().splitlines()) == 2  # the header and the one finished row


def test_skipped_rows_are_said_once_per_reason_and_the_hash_table_shows_ops(tmp_path, capsys):
    """Issue 50 items 18-19: on the CPU `bench reduction` printed 21 skipped lines around 2 timed ones, and
    the hash table's table had a GB/s column that means nothing for it."""
    out = tmp_path / "r.csv"
    code, text, err = run(capsys, "bench", "reduction", "--backend", "cpu", "--n", "3000", "--repeats", "1",
                          "--variants", "numpy,tree-mask,sequential", "--csv", str(out))
    assert code == 0, err
    lines = [line for line in text.splitlines() if "skipped" in line and not line.startswith("wrote")]
    assert lines == [lines[0]] and lines[0].startswith("skipped (2): tree-mask, sequential (")
    assert {r["variant"]: r["verified"] for r in read_rows(out)} == {"numpy": "yes", "tree-mask": "skipped",
                                                                      "sequential": "skipped"}
    code, text, err = run(capsys, "bench", "hashtable", "--backend", "cpu", "--n", "2000", "--repeats", "1",
                          "--variants", "cpu")
    assert code == 0, err
    header = next(line for line in text.splitlines() if line.startswith("variant"))
    assert "G ops/s" in header and "GB/s" not in header and "%peak" not in text


def test_a_row_estimated_far_past_max_seconds_is_skipped_with_its_estimate(capsys):
    """Issue 50 item 20: CPU twins at a million spheres took minutes in a GPU sweep."""
    from kernels.harness.estimate import FAR_PAST, Guard

    code, text, err = run(capsys, "bench", "spheres", "--backend", "cpu", "--sizes", "2,400", "--size", "32x32",
                          "--max-seconds", "0.0001", "--variants", "spheres-cpu-serial", "--repeats", "1")
    assert code == 0, err
    line = next(line for line in text.splitlines() if line.startswith("skipped"))
    assert "spheres-cpu-serial" in line and "estimated" in line and "at n 400" in line and "--max-seconds" in line
    guard = Guard(1.0)
    row = Row("v", "op", "f32", 1000, "cpu", "test", timing=Timing((100.0,), "wall"), verified="yes")
    guard.record(row, None)
    assert guard.skip("v", None, 1000 * FAR_PAST * 10 - 1) is None  # 2 s: at the limit, run
    assert guard.skip("v", None, 1000 * FAR_PAST * 10 + 1000) is not None
    assert guard.skip("other", None, 10 ** 9) is None  # nothing known: run


def test_frame_to_host_past_constant_memory_is_a_skip(cuda_backend):
    from kernels.backend import Skip
    from kernels.spheres.runs import make_bench_problem, run_frame_to_host

    problem = make_bench_problem(2341, size=(8, 8))
    out = run_frame_to_host(problem, Launch(), cuda_backend, 1)
    assert isinstance(out, Skip) and "constant memory holds at most 2340" in out.text
