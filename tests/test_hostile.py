"""Hostile inputs and moments (issue 39), one class per section, each fixed in its shared mechanism: the one
reader (never blocks, regular files only, caches too), the one memory estimate (every input whose size
decides memory), the child processes' deadlines, variant files that cannot compile, option lists, signals,
compare's verdicts, and what the app writes reading back. Everything in tmp_path; nothing of the system."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from kernels.errors import InputError
from raytracer_app.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str, kind: str = "error") -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"raytracer-app: {kind}"), err
    return lines[0]


def within(seconds: float, call):
    """``call()``'s result, failing (instead of hanging the suite) when it takes longer than ``seconds``."""
    box = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s (blocked?)"
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture
def low_memory(monkeypatch):
    """Pretend ``free`` bytes of host memory are available (the estimate reads kernels.backend.devices)."""
    from kernels.backend import devices

    def set_free(free: int):
        monkeypatch.setattr(devices, "available_host_bytes", lambda: free)
    return set_free


# --- 1. every reader opens without blocking, regular files only -------------------------------------------------

READS = re.compile(r"(?<![\w.])open\(|\.read_text\((encoding=[^)]*)?\)|\.read_bytes\(\)|\.open\(|np\.load\(|"
                   r"json\.load\(|pickle\.load\(")
# the reader itself, the writer's own temporary files, the kernel's /proc and /sys files read for device facts,
# and files the app writes (mode "w")
ALLOWED = {"kernels/io/reader.py", "kernels/io/writer.py", "kernels/backend/devices.py"}


def test_every_read_of_the_app_goes_through_the_one_reader():
    offenders = []
    for folder in ("kernels", "raytracer_app"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in ALLOWED:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                if READS.search(code) and not re.search(r"""["'][wa]b?["']""", code) and "os.open(" not in code \
                        and "def open(" not in code and ".open(self" not in code and "self.open(" not in code \
                        and "buffer.open(" not in code:
                    offenders.append(f"{rel}:{number}: {line.strip()}")
    assert offenders == [], "read these through kernels.io.reader:\n" + "\n".join(offenders)


def _fifo(tmp_path, name):
    path = tmp_path / name
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("argv, name", [
    (("compare", "{f}", "{f}"), "base.json"),
    (("render", "spheres", "--backend", "cpu", "--size", "8x8", "--repeats", "1", "--out", "{d}/a.png",
      "--scene", "{f}"), "scene.json"),
    (("bench", "reduction", "--backend", "cpu", "--variants", "numpy", "--repeats", "1", "--input", "{f}"), "in.npy"),
    (("bench", "histogram", "--backend", "cpu", "--variants", "cpu-numpy", "--repeats", "1", "--input", "{f}"), "in.bin"),
    (("bench", "reduction", "--backend", "sim", "--n", "64", "--variant-file", "{f}"), "variant.py"),
])
def test_a_fifo_as_any_input_is_refused_at_once(tmp_path, capsys, argv, name):
    fifo = _fifo(tmp_path, name)
    argv = [a.format(f=fifo, d=tmp_path) for a in argv]
    code, _, err = within(30, lambda: run(capsys, *argv))
    assert code == 2 and "FIFO" in one_line(err)


def test_the_reader_refuses_what_was_swapped_in_after_its_check(tmp_path, monkeypatch):
    """A FIFO put in place of a checked file before the open: opened without blocking, refused by fstat."""
    from kernels.io import reader

    path = tmp_path / "in.json"
    path.write_text("{}")
    real_open = os.open

    def swap_then_open(p, flags, *args):
        if os.fspath(p) == str(path):
            os.unlink(path)
            os.mkfifo(path)
            assert flags & os.O_NONBLOCK
        return real_open(p, flags, *args)

    monkeypatch.setattr(os, "open", swap_then_open)
    with pytest.raises(reader.NotAFile, match="FIFO"):
        within(10, lambda: reader.read_json(path, "--x", 1000, "test"))


def test_settings_lesson_references_and_cache_entries_are_checked_without_blocking(tmp_path, monkeypatch, capsys):
    from kernels.io import cache, reader

    fifo = _fifo(tmp_path, "settings.ini")
    with pytest.raises(InputError, match="FIFO"):
        within(10, lambda: reader.check_optional_input(fifo, "the settings file", 1 << 16, "small"))
    monkeypatch.setattr(cache, "_warned", set())
    with pytest.raises(cache.BadEntry, match="FIFO.*removed"):
        within(10, lambda: cache.read_entry(fifo, "some cache", 1 << 16))
    assert not fifo.exists()  # discarded, so that the entry is rebuilt
    assert cache.read_entry(tmp_path / "missing.json", "some cache", 10) is None


# --- 2. every input whose size decides memory gets the estimate --n gets, before it is read --------------------

def _sparse_npy(path: Path, count: int, dtype="int8") -> Path:
    """A .npy file whose header promises ``count`` elements, its data a hole (no disk used)."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": np.dtype(dtype).str, "fortran_order": False,
                                                 "shape": (count,)})
        f.truncate(f.tell() + count * np.dtype(dtype).itemsize)
    return path


def test_every_algorithm_that_loads_an_input_estimates_it_first():
    from kernels.registry import ALGORITHMS

    loaders = [a for a in ALGORITHMS if a.load_input is not None]
    assert loaders and all(a.input_size is not None for a in loaders)


def test_a_sparse_npy_for_the_reduction_is_refused_by_the_estimate_before_its_data_is_read(
        tmp_path, capsys, monkeypatch, low_memory):
    path = _sparse_npy(tmp_path / "big.npy", 2_100_000_000)  # 2 GB of int8 as float32: ~30 GB of run
    low_memory(19 * 2**30)
    monkeypatch.setattr(np.lib.format, "read_array", lambda *a, **k: pytest.fail("read the data"))
    code, _, err = run(capsys, "bench", "reduction", "--backend", "cpu", "--variants", "numpy", "--dtype", "float32",
                       "--input", path)
    line = one_line(err)
    assert code == 2 and "(2,100,000,000 elements) needs about" in line and "19.0 GiB is free" in line


@pytest.mark.parametrize("argv", [
    ("compare", "{f}", "{f}"),
    ("render", "spheres", "--backend", "cpu", "--size", "8x8", "--repeats", "1", "--out", "{d}/a.png", "--scene", "{f}"),
])
def test_a_sparse_json_input_is_refused_by_the_estimate_before_it_is_read(tmp_path, capsys, monkeypatch, low_memory,
                                                                          argv):
    from kernels.io import reader

    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.truncate(40 * 2**20)  # 40 MiB of holes: under each reader's size limit
    low_memory(100 * 2**20)
    monkeypatch.setattr(reader, "_read_all", lambda *a: pytest.fail("read before the estimate"))
    monkeypatch.setattr(reader, "_read_compacted", lambda *a: pytest.fail("read before the estimate"))
    code, _, err = run(capsys, *[a.format(f=path, d=tmp_path) for a in argv])
    line = one_line(err)
    assert code == 2 and "reading it needs about" in line and "100.0 MiB is free" in line


def test_a_variant_file_is_refused_by_the_estimate_of_compiling_it(tmp_path, low_memory):
    from kernels.user_variants import loader

    path = tmp_path / "v.py"
    path.write_text("x = 1\n" * 50_000)  # 300 KB
    low_memory(10 * 2**20)
    with pytest.raises(InputError, match="compiling it needs about"):
        loader.read(path)


def test_a_lesson_reference_too_large_for_memory_is_refused_not_shown(tmp_path, low_memory):
    from kernels.lessons import results

    path = tmp_path / "NVIDIA-H100-lesson-reduction.json"
    with open(path, "wb") as f:
        f.truncate(8 * 2**20)
    low_memory(16 * 2**20)
    with pytest.raises(InputError, match="reading it needs about"):
        results.read(path, "reference")


# --- 3. every exchange with a child process is under the run's deadline ----------------------------------------



STALL = """
import time
with open("/proc/self/cmdline", "rb") as f:  # the job's child only, not multiprocessing's resource tracker
    if b"spawn_main" in f.read():
        time.sleep(120)
"""


@pytest.fixture
def stalling_children(tmp_path, monkeypatch):
    """Child processes spawned from now on sleep in their sitecustomize before they read anything (the
    loader's children an earlier test left running are ended first: they would take the job at once)."""
    from kernels.user_variants import loader

    loader.end_children()
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(STALL)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")]))


@pytest.mark.slow
def test_a_child_that_stalls_at_start_is_ended_though_its_job_fills_the_pipe(tmp_path, stalling_children):
    from kernels import backend
    from kernels.backend.child import Stalled
    from kernels.user_variants import loader

    path = tmp_path / "big.py"
    path.write_text('"""A large but valid file."""\n' + "x = 1\n" * 150_000)  # 900 KB: more than a pipe holds
    start = time.monotonic()
    try:
        with pytest.raises(Stalled, match="did not start and take the job within 2 s"):
            within(20, lambda: loader.load(path, backend.resolve("sim"), watchdog_s=2))
    finally:
        loader.end_children()
    assert time.monotonic() - start < 10


@pytest.mark.slow
def test_the_windows_render_call_has_a_deadline(monkeypatch, stalling_children):
    from kernels import backend
    from kernels.spheres.scene import generate_scene
    from kernels.backend import child
    from kernels.service.requests import RenderRequest

    monkeypatch.setattr(child, "START_S", 2.0)
    sim = child.SimulatorProcess()
    from kernels.spheres.params import SphereParams

    request = RenderRequest("spheres", backend.resolve("cpu"), (8, 8), (8, 8), SphereParams(generate_scene(2, 0)))
    try:
        with pytest.raises(child.Stalled):
            within(20, lambda: sim.call("render", (request, 1), lambda: False))
    finally:
        sim.end()
    assert not sim.running()


@pytest.mark.slow
def test_a_stalled_variant_child_is_exit_1_in_one_line(tmp_path, capsys, stalling_children):
    path = tmp_path / "big.py"
    path.write_text('"""A large but valid file."""\n' + "x = 1\n" * 150_000)
    code, _, err = within(30, lambda: run(capsys, "bench", "reduction", "--backend", "sim", "--n", "64",
                                          "--variant-file", path, "--variant-timeout", "2"))
    assert code == 1 and "stopped by the watchdog" in one_line(err, "failed")


def test_the_app_s_own_jobs_beat_from_their_work_not_from_a_thread_beside_it():
    """A long job is not taken for a stall as long as its work beats (tests/test_reliability_round4.py runs
    it in a child); a beat outside a served child goes nowhere."""
    from kernels.backend import watchdog

    sent = []
    watchdog.beat()
    with watchdog.beats_to(lambda: sent.append("tick")):
        watchdog.beat()
        watchdog.beat()  # within BEAT_S of the first: not sent again
    watchdog.beat()
    assert sent == ["tick"]


# --- 4. a variant file that cannot be compiled is exit 2 naming it; variant new keeps the loader's rule --------

@pytest.mark.parametrize("text, says", [
    ("x = " + "+".join(["1"] * 150_000) + "\n", "RecursionError"),
    ("x = (\n", ":1: SyntaxError"),
    ("def f():\nreturn 1\n", ":2: IndentationError"),
    ("x = 1\n\0y = 2\n", "null bytes"),
    (b"x = 1\n# caf\xe9\n", ":2: not UTF-8 text"),
    ("x = 1\n" * 200_000, "at most 1,048,576"),
])
def test_a_file_that_cannot_compile_is_exit_2_naming_it(tmp_path, capsys, text, says):
    path = tmp_path / "bad.py"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    code, _, err = run(capsys, "bench", "reduction", "--backend", "sim", "--n", "64", "--variant-file", path)
    line = one_line(err)
    assert code == 2 and str(path) in line and says in line, line


@pytest.mark.parametrize("name", ["a b/c", "x,y", "-lead", "", "a" * 49, "best", "é"])
def test_variant_new_refuses_a_name_its_loader_would_refuse(tmp_path, capsys, name):
    out = tmp_path / "mine.py"
    code, text, err = run(capsys, "variant", "new", "reduction", "--from", "warp-shuffle", "--name", name, out)
    assert code == 2 and "--name" in one_line(err) and not out.exists() and text == ""


def test_every_name_variant_new_accepts_loads(tmp_path):
    from kernels.user_variants.names import name_problem
    from kernels.user_variants.templates import source

    for name in ("my-best", "v2.1+fast", "A_b"):
        assert name_problem(name, "reduction") is None
        assert f"NAME = {name!r}" in source("reduction", "warp-shuffle", name)


# --- 5. lists refuse empty items; SIGINT and SIGTERM stop every long command ---------------------------------------

@pytest.mark.parametrize("argv, option", [
    (("bench", "reduction", "--sizes", "1024,,2048"), "--sizes"),
    (("bench", "reduction", "--sizes", "1024,2048,"), "--sizes"),
    (("bench", "reduction", "--sizes", ",1024"), "--sizes"),
    (("bench", "reduction", "--n", "1024", "--block", "64,,128"), "--block"),
    (("bench", "reduction", "--n", "1024", "--block", "64,"), "--block"),
    (("bench", "reduction", "--n", "1024", "--variants", "numpy,,cpu-parallel"), "--variants"),
    (("bench", "reduction", "--n", "1024", "--variants", "numpy,"), "--variants"),
    (("bench", "julia", "--block", "16x16,,8x8"), "--block"),
    (("lesson", "reduction", "--n", "1024,,2048"), "--n"),
])
def test_a_list_with_an_empty_item_is_refused(capsys, argv, option):
    code, out, err = run(capsys, *argv[:2], "--backend", "cpu", *argv[2:])
    line = one_line(err)
    assert code == 2 and option in line and ("has an empty" in line or "at least one value" in line), line


def test_the_one_list_rule():
    from kernels.errors import items, whole_items

    assert items(" a, b ,c", "--x") == ["a", "b", "c"] and whole_items("1, 2", "--n", 1) == [1, 2]
    for bad in ("a,,b", "a,", ",a", ",", " , ", ""):
        with pytest.raises(InputError, match="--x"):
            items(bad, "--x")


CPU_KERNEL = re.compile(r"numba\.(njit|jit)\(([^)]*)\)")


def test_every_cpu_kernel_releases_the_gil_so_a_signal_can_end_it():
    """A CPU kernel cannot be interrupted mid-call; the signal watchdog (kernels/signals.py) can end the
    process beside it only if the kernel does not hold the GIL."""
    found = []
    for path in sorted((ROOT / "kernels").rglob("*.py")):
        for match in CPU_KERNEL.finditer(path.read_text(encoding="utf-8")):
            args = match.group(2)
            if "parallel=True" in args or "cache=" in args:  # entry points called from Python
                found.append((path.name, "nogil=True" in args))
    assert len(found) >= 8 and all(nogil for _, nogil in found), found


def _cli_child(*argv, code=None, **env):
    import subprocess
    import sys

    from tests.conftest import child_pythonpath

    child_env = {**os.environ, "PYTHONPATH": child_pythonpath(), **env}
    child_env.pop("NUMBA_ENABLE_CUDASIM", None)
    args = ["-c", code] if code else ["-m", "raytracer_app", *map(str, argv)]
    return subprocess.Popen([sys.executable, *args], env=child_env, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _stop_after(proc, line_start: str, sig, delay: float = 0.3) -> float:
    """Send ``sig`` ``delay`` s after the child printed a line starting with ``line_start`` (so that it is
    inside what follows); the seconds it took to end."""
    for line in proc.stdout:
        if line.startswith(line_start):
            break
    else:
        pytest.fail(f"the child ended before saying {line_start!r}: {proc.stderr.read()}")
    time.sleep(delay)
    sent = time.monotonic()
    proc.send_signal(sig)
    proc.wait(30)
    return time.monotonic() - sent


SPIN = """
import numba
from kernels import signals

@numba.njit(nogil=True)
def spin(n):
    total = 0.0
    for i in range(n):
        total += (i % 7) * 0.5
    return total

spin(10)
with signals.stoppable():
    print("ready", flush=True)
    spin(10**12)  # minutes of one uninterruptible call
print("returned")
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig, status", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_ends_a_cpu_kernel_that_cannot_be_interrupted_within_a_second(sig, status):
    import signal

    proc = _cli_child(code=SPIN)
    took = _stop_after(proc, "ready", getattr(signal, sig))
    assert proc.returncode == status and took < 1.5
    assert "returned" not in proc.stdout.read() and proc.stderr.read().strip().endswith(
        "terminated" if status == 143 else "interrupted")


@pytest.mark.slow
@pytest.mark.parametrize("sig, status, says", [("SIGINT", 130, "raytracer-app: interrupted"),
                                               ("SIGTERM", 143, "raytracer-app: terminated"),
                                               ("SIGKILL", -9, None)])
def test_a_signal_stops_a_long_bench_at_once_and_leaves_no_partial_file(tmp_path, sig, status, says):
    """Stopped: the rows that finished are written whole, marked partial (Ctrl-C, SIGTERM), or nothing is
    (SIGKILL); never a torn file or a temporary one."""
    import signal

    from kernels.harness.results_read import read_result

    csv, js = tmp_path / "rows.csv", tmp_path / "rows.json"
    proc = _cli_child("bench", "reduction", "--backend", "cpu", "--sizes", ",".join(["16777216"] * 20),
                      "--variants", "numpy", "--repeats", "10000", "--csv", csv, "--json", js)
    took = _stop_after(proc, "backend:", getattr(signal, sig))
    assert proc.returncode == status and took < 1.5
    err = proc.stderr.read().strip().splitlines()
    assert (err == []) if says is None else (len(err) == 1 and err[0].startswith(says)), err
    assert {p.name for p in tmp_path.iterdir()} <= {"rows.csv", "rows.json"}  # no temporary file
    if js.exists():
        assert read_result(js, "--json").partial
    if csv.exists():
        assert csv.read_text().startswith("variant,") or csv.read_text().splitlines()[0].count(",") > 3


# --- 8. a write killed midway leaves no partial file, and the next one heals -------------------------------------

KILLED_WRITE = """
import os, sys, time
from kernels.io import writer

def never(*args, **kwargs):  # killed between writing the temporary file and renaming it
    print("written", flush=True)
    time.sleep(600)

os.replace = never
writer.write_output(sys.argv[1], b"x" * 1000, "--csv")
"""


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM"])
def test_a_write_killed_before_its_rename_leaves_no_file_and_the_next_write_heals(tmp_path, sig):
    import signal
    import subprocess
    import sys

    from tests.conftest import child_pythonpath
    from kernels.io import writer

    target = tmp_path / "rows.csv"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITE, str(target)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": child_pythonpath()}, cwd=ROOT)
    assert proc.stdout.readline() == "written\n"
    proc.send_signal(getattr(signal, sig))
    proc.wait(10)
    (left,) = tmp_path.iterdir()
    assert left.name.startswith(writer.TEMP_PREFIX) and not target.exists()  # never a partial rows.csv
    os.utime(left, (time.time() - 5, time.time() - 5))
    writer.write_output(tmp_path / "other.csv", "a\n", "--csv")  # the next write to the folder heals it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.csv"]


def test_a_live_writers_temporary_file_is_never_removed(tmp_path):
    import fcntl

    from kernels.io import writer

    live = tmp_path / f"{writer.TEMP_PREFIX}abcd1234-rows.csv"
    live.write_text("half")
    os.utime(live, (time.time() - 60, time.time() - 60))
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a writer holds it
        assert writer.remove_stale_temps(tmp_path) == 0 and live.exists()
    finally:
        os.close(fd)
    assert writer.remove_stale_temps(tmp_path) == 1 and not live.exists()


def test_numbas_leftover_cache_temporaries_are_removed_by_the_next_save(tmp_path):
    from kernels.io import numba_cache

    stale = tmp_path / "cpu.render-12.py311.nbi.tmp.0123456789abcdef"
    fresh = tmp_path / "cpu.render-12.py311.1.nbc.tmp.fedcba9876543210"
    other = tmp_path / "cpu.render-12.py311.nbi"
    for path in (stale, fresh, other):
        path.write_bytes(b"x")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    assert numba_cache.remove_stale_temps(tmp_path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([fresh.name, other.name])


# --- 6. compare never calls drift FASTER / SLOWER, and never UNSURE a difference far beyond any noise -----------

def _tight(rng, centre, n=20, sigma=0.002):
    return tuple(float(x) for x in centre * rng.lognormal(0, sigma, n))


@pytest.mark.parametrize("method", ["wall", "cuda-events"])
def test_one_process_a_side_a_difference_within_the_drift_is_unsure_and_says_why(method):
    from kernels.harness import compare
    from kernels.timing import Timing

    rng = np.random.default_rng(5)
    base = Timing(_tight(rng, 0.2455), method)
    new = Timing(_tight(rng, 0.2455 * 1.045), method)  # two identical runs 4.5% apart, each tight: p ~ 1e-7
    v = compare.timing_verdict(base, new)
    assert v.name == compare.UNSURE and v.p_value < 1e-5
    assert "one process a side" in v.reason and "bench --processes" in v.reason


def test_the_issues_cpu_rows_identical_runs_5_9_percent_apart_are_not_slower():
    from kernels.harness import compare
    from kernels.timing import Timing

    rng = np.random.default_rng(9)
    base, new = Timing(_tight(rng, 0.386), "wall"), Timing(_tight(rng, 0.386 * 1.059), "wall")
    assert compare.timing_verdict(base, new).name == compare.UNSURE
    assert compare.timing_verdict(new, base).name == compare.UNSURE


def test_measured_drift_judges_the_same_difference():
    """Ten processes a side show how little their medians drift: then 5.9% is SLOWER, said so."""
    from kernels.harness import compare
    from kernels.timing import Timing

    rng = np.random.default_rng(3)

    def processes(factor):
        return Timing(tuple(x for _ in range(10) for x in _tight(rng, 0.386 * factor * rng.lognormal(0, 0.003), 2)),
                      "wall", (2,) * 10)

    v = compare.timing_verdict(processes(1.0), processes(1.059))
    assert v.name == compare.SLOWER and "drift measured" in v.reason


def test_a_difference_far_beyond_the_noise_is_never_unsure_though_one_repeat_is_an_outlier():
    """Every sample 50% slower; one repeat of the 20 an outlier (fast or slow) on either side."""
    from kernels.harness import compare
    from kernels.timing import Timing

    rng = np.random.default_rng(2)
    for outlier in (0.5, 3.0):
        samples = list(_tight(rng, 0.25, sigma=0.01))
        samples[7] *= outlier
        base = Timing(tuple(samples), "wall")
        slower = Timing(tuple(x * 1.5 for x in samples), "wall")
        assert compare.timing_verdict(base, slower).name == compare.SLOWER
        assert compare.timing_verdict(slower, base).name == compare.FASTER


def test_a_real_noisy_cpu_row_made_50_percent_slower_is_slower():
    from kernels.harness import compare
    from kernels.harness.results_read import read_result
    from kernels.timing import Timing

    row = next(r for r in read_result(ROOT / "tests" / "data" / "reduction-cpu-1.json", "t").rows
               if r.variant == "numpy")  # a body 4% above its fastest repeats, three slow outliers
    slower = Timing(tuple(x * 1.5 for x in row.timing.samples_ms), "wall")
    v = compare.timing_verdict(row.timing, slower)
    assert v.name == compare.SLOWER and "beyond its 20%" in v.reason


# --- 7. whatever the app writes, it reads back ----------------------------------------------------------------------

@pytest.mark.parametrize("radius", [1e-46, 5e-324, 1e-300])
def test_a_radius_positive_as_typed_but_zero_as_stored_is_refused_when_read(tmp_path, radius):
    from kernels.spheres.scene import load_scene

    path = tmp_path / "tiny.json"
    path.write_text(json.dumps({"spheres": [{"center": [0, 0, 0], "radius": radius, "color": [1, 1, 1]}]}))
    with pytest.raises(InputError, match="radius .* is 0 as a float32"):
        load_scene(path)


def test_a_scene_that_would_not_load_back_is_never_written(tmp_path):
    from kernels.spheres.scene import Scene, save_scene

    for bad in ([1, 1, 1, 0, 0, 0, 0], [1, 1, 1, 1, np.inf, 0, 0], [2, 1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 2e19, 0, 0]):
        with pytest.raises(InputError, match="would not load back"):
            save_scene(Scene(np.array([bad], np.float32)), tmp_path / "s.json")
    assert list(tmp_path.iterdir()) == []


def test_scenes_round_trip_at_the_edges_of_float32(tmp_path):
    from kernels.spheres.scene import Scene, load_scene, save_scene

    tiny, big = np.float32(1.4e-45), np.float32(1.8e19)  # the least positive radius; the largest value
    spheres = np.array([[0, 1, 0.5, tiny, -big, big, 0], [1e-40, 0.1, 0.3, big, 1e-45, -0.0, 3.3]], np.float32)
    path = save_scene(Scene(spheres, "edges \u202e\n"), tmp_path / "s.json")
    back = load_scene(path)
    np.testing.assert_array_equal(back.spheres, spheres)
    assert back.name == "edges \u202e\n"


def test_result_files_round_trip_whatever_their_text_and_numbers(tmp_path):
    from kernels.harness import results
    from kernels.harness.rows import Row
    from kernels.harness.results_read import read_result
    from kernels.timing import Timing

    odd = "v\x1b[31m\u202e\udcff \"rows\": [] \n"
    rows = [Row(variant=odd, op="sum", dtype="int32", n=2**62, backend="cpu", device=odd, block="16x16",
                      grid="", timing=Timing((5e-324, 1e300, 0.0, 1e-9), "wall"), verified="yes", note=odd),
            Row(variant="skipped", op="sum", dtype="int32", n=0, backend="cpu", device="cpu", block=0, grid=0,
                      timing=None, verified="skipped", note="")]
    result = results.Result(target="reduction", rows=rows, device={"name": odd, "backend": "cpu"}, date="d",
                            versions={"app": odd}, commit=None, command=["raytracer-app", odd, '"rows": []'],
                            options={"rows": [], "x": float("nan")})
    path = results.write_result(tmp_path / "r.json", result, "--json")
    back = read_result(path, "--json")
    assert [r.variant for r in back.rows] == [odd, "skipped"] and back.rows[0].timing.samples_ms == \
        rows[0].timing.samples_ms and back.rows[0].n == 2**62 and back.command == result.command
    assert back.options == {"rows": [], "x": None}  # NaN is written as null


# --- 8. the cases not tried before: huge result files, loud variants, one cache shared by two processes ---------

def _result_file(path, rows):
    head = {"schema": "raytracer-app/bench-result", "version": 1, "target": "reduction", "date": "d",
            "device": {"name": "cpu", "backend": "cpu"}, "versions": {}, "commit": None, "command": None,
            "options": {}}
    path.write_text(json.dumps({**head, "rows": [
        {"variant": f"v{i}", "op": "sum", "dtype": "int32", "n": 1000, "block": 0, "grid": 0, "samples_ms": samples,
         "median_ms": 1.0, "noise": 0.1, "verified": "yes", "timing_method": "wall"} for i, samples in enumerate(rows)]}))
    return path


@pytest.mark.parametrize("rows, says", [
    ([[1.0] * 10_001], "has 10,001 samples; at most 10,000"),
    ([[1.0]] * 20_001, "has 20,001 rows; at most 20,000"),
])
def test_compare_refuses_a_file_larger_than_any_bench_run_in_one_line(tmp_path, capsys, rows, says):
    path = _result_file(tmp_path / "big.json", rows)
    code, _, err = run(capsys, "compare", path, path)
    assert code == 2 and says in one_line(err)


def test_compare_of_the_largest_rows_takes_numpy_time(tmp_path, capsys):
    """10,000 samples a side (the repeats' cap): the rank test sorts once in numpy, not per pair in Python."""
    from kernels.harness import compare

    rng = np.random.default_rng(4)
    a, b = rng.lognormal(0, 0.01, 10_000), rng.lognormal(0.06, 0.01, 10_000)
    u, mean, var = compare.mann_whitney_u(a, b)
    ranks = np.argsort(np.argsort(np.r_[a, b])) + 1.0  # no ties in continuous draws: plain ranks
    assert u == ranks[:10_000].sum() - 10_000 * 10_001 / 2 and mean == 5e7
    assert compare.verdict(a.tolist(), b.tolist()).name == compare.SLOWER


LOUD = """
import sys
line = "x" * 1023 + "\\n"
for _ in range(100 * 1024):  # 100 MB on each stream
    sys.stdout.write(line)
    sys.stderr.write(line)
sys.stderr.write("raytracer-app: error: the last word\\n")
sys.exit(2)
"""


def test_a_loud_child_of_bench_processes_costs_no_memory_and_keeps_its_last_line():
    import resource
    import sys

    from kernels.service import bench_processes

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code, tail = within(120, lambda: bench_processes._run_child([sys.executable, "-c", LOUD], dict(os.environ),
                                                                lambda: False))
    grew_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert code == 2 and tail.endswith("the last word\n") and len(tail) <= bench_processes.LOG_TAIL_BYTES
    assert grew_kb < 50_000  # of 200 MB printed


SHARER = """
import sys
from pathlib import Path
from kernels.inspector import compiler
from kernels.launch import tuning

who, entry = sys.argv[1], Path(sys.argv[2])
signature = compiler.declaration("reduction", "best").signature
mine = compiler.Compiled("reduction", "best", "sm_90", signature, "x", "p" * 300_000, who, "s" * 300_000, [{}])
for i in range(25):
    compiler._store(entry, mine)
    got = compiler._read_entry(entry, "reduction", "best", "sm_90", "x")
    assert isinstance(got, compiler.Compiled), got
    tuning.choose(f"{who}-{i}", lambda items, block: 1.0)
    tuning.choose("shared", lambda items, block: 1.0)
print("done")
"""


def test_the_window_and_the_cli_writing_one_cache_at_once_lose_nothing_and_read_no_torn_entry(tmp_path):
    """Two processes (as the window and a CLI command) store and read the same inspector entry and the
    tuning file at once: every read sees a whole entry, no warning, every tuning key kept."""
    import subprocess
    import sys

    from tests.conftest import child_pythonpath
    from kernels.launch import tuning

    cache = tmp_path / "cache"
    entry = cache / "inspect" / "entry.json"
    entry.parent.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": child_pythonpath(), "RAYTRACER_CACHE_DIR": str(cache)}
    procs = [subprocess.Popen([sys.executable, "-c", SHARER, who, str(entry)], env=env, cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for who in ("window", "cli")]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "done" and "warning" not in err, err
    keys = json.loads((cache / tuning.CACHE_FILE).read_text())
    assert set(keys) == {"shared"} | {f"{who}-{i}" for who in ("window", "cli") for i in range(25)}
    assert sorted(p.name for p in entry.parent.iterdir()) == ["entry.json"]  # no temporary file left


def test_a_runs_own_stop_line_is_the_only_one(capsys):
    """bench's 'interrupted after N row(s)' is the line: should writing its partial outputs outlast the
    watchdog's grace, the watchdog ends the process without saying 'interrupted' again (seen under load)."""
    from kernels import signals

    try:
        assert signals.say_stopped(signals.Terminated(), 3) == 143
        assert signals.say_stopped(KeyboardInterrupt()) == 130  # what the watchdog's exit path checks too
        assert capsys.readouterr().err.splitlines() == ["raytracer-app: terminated after 3 row(s)"]
    finally:
        signals._said.clear()
