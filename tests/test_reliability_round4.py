"""Issue 49 (reliability round 4), one section per class, each fixed in its shared mechanism: the one list
parser, reserved variant names, every child under one deadline, bounded reads, non-UTF-8 paths, SIGINT in
children, and the inconclusive cases settled. Everything in tmp_path; nothing of the system."""

from __future__ import annotations

import argparse

import pytest

from kernels.errors import InputError
from raytracer_app.cli import build_parser, main


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --- the one list parser: comma lists and repeated flags alike, for every list option of every command --------

def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                for deeper, subsub in _subparsers(sub):
                    yield f"{name} {deeper}", subsub


def _every_option():
    from raytracer_app.cli.parser import ListOption

    parser = build_parser()
    for where, sub in _subparsers(parser):
        for action in sub._actions:
            if action.option_strings:
                yield where, action, isinstance(action, ListOption)


def test_every_option_that_takes_several_values_uses_the_one_list_parser():
    """No option collects values any other way (argparse's append, nargs='+'), save a file option, where a
    comma may be part of the file's name: one file per flag, repeatable."""
    lists, others = set(), []
    for where, action, is_list in _every_option():
        if is_list:
            lists.add(action.option_strings[0])
        elif isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*") or \
                (isinstance(action.nargs, int) and action.nargs > 1):
            others.append((where, action.option_strings[0]))
    assert {"--variants", "--sizes", "--block", "--op", "--load", "--n"} <= lists, lists
    assert all(flag == "--variant-file" for _, flag in others), others


def _values(argv):
    return vars(build_parser().parse_args(["bench", *argv]))


@pytest.mark.parametrize("comma, repeated, key, expected", [
    (["hashtable", "--op", "insert,find"], ["hashtable", "--op", "insert", "--op", "find"], "op", ["insert", "find"]),
    (["hashtable", "--load", "0.5,0.9"], ["hashtable", "--load", "0.5", "--load", "0.9"], "load", [0.5, 0.9]),
    (["reduction", "--sizes", "1024,2048"], ["reduction", "--sizes", "1024", "--sizes", "2048"], "sizes",
     [1024, 2048]),
    (["reduction", "--block", "64,128"], ["reduction", "--block", "64", "--block", "128"], "block", [64, 128]),
    (["julia", "--block", "16x16,32x8"], ["julia", "--block", "16x16", "--block", "32x8"], "block",
     ["16x16", "32x8"]),
    (["reduction", "--variants", "numpy,cpu-parallel"], ["reduction", "--variants", "numpy", "--variants",
                                                         "cpu-parallel"], "variants", ["numpy", "cpu-parallel"]),
])
def test_a_comma_list_and_the_flag_repeated_give_the_same_values(comma, repeated, key, expected):
    assert _values(comma)[key] == _values(repeated)[key] == expected
    mixed = [*repeated[:2], ",".join(repeated[2::2])]
    assert _values(mixed)[key] == expected


def test_lesson_sizes_repeat_as_they_comma():
    parse = build_parser().parse_args
    assert parse(["lesson", "reduction", "--n", "1024,4096"]).n == parse(
        ["lesson", "reduction", "--n", "1024", "--n", "4096"]).n == [1024, 4096]


@pytest.mark.parametrize("argv, flag", [
    (("bench", "hashtable", "--op", "insert,"), "--op"),
    (("bench", "hashtable", "--op", "insert", "--op", ""), "--op"),
    (("bench", "hashtable", "--op", "insert,bogus"), "--op"),
    (("bench", "hashtable", "--load", "0.5", "--load", "0.5,,0.9"), "--load"),
    (("bench", "reduction", "--variants", ""), "--variants"),
    (("bench", "reduction", "--sizes", "1024", "--sizes", " , "), "--sizes"),
    (("lesson", "reduction", "--n", "1024", "--n", ""), "--n"),
])
def test_an_empty_or_bad_item_in_any_occurrence_is_exit_2_in_one_line(capsys, argv, flag):
    code, out, err = run(capsys, *argv[:2], "--backend", "cpu", *argv[2:])
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("raytracer-app: error:") and flag in lines[0], err


def _no_copy_peak(monkeypatch):
    """The copy-bandwidth ceiling (a 256 MiB copy) is not what these tests are about: not measured."""
    from kernels.harness.peak import Peak
    from kernels.service import bench

    monkeypatch.setattr(bench, "copy_peak", lambda backend: Peak(None, "not measured in this test"))


def test_the_documented_op_list_runs_each_op(capsys, monkeypatch):
    """`bench hashtable --op insert,find` (docs/cli.md) runs both ops: one row per op."""
    _no_copy_peak(monkeypatch)
    code, out, err = run(capsys, "bench", "hashtable", "--backend", "cpu", "--variants", "cpu", "--n", "512",
                         "--buckets", "64", "--op", "insert,find", "--repeats", "1")
    rows = [line for line in out.splitlines() if line.startswith("cpu ")]
    assert code == 0 and len(rows) == 2 and "find" in rows[1] and "find" not in rows[0], out + err


def test_list_values_is_usable_outside_argparse():
    from raytracer_app.cli.parser import list_values, whole_number

    assert list_values("1, 2", "--x", whole_number("--x", 1)) == [1, 2]
    with pytest.raises(InputError, match="--x 'c' is not one of a, b"):
        list_values("a,c", "--x", choices=("a", "b"))


# --- reserved names: what the variant selector gives a meaning, refused by `variant new` and the loader -------

def test_the_selector_s_own_words_are_reserved_names():
    from kernels.harness.variants import RESERVED_NAMES, select
    from kernels.registry import by_name

    variants = by_name("reduction").variants
    for name in RESERVED_NAMES:  # each means something other than one variant of that name
        assert len(select(variants, name)) == len(variants) > 1


@pytest.mark.parametrize("name", ["all"])
def test_variant_new_refuses_a_reserved_name(tmp_path, capsys, name):
    out = tmp_path / "mine.py"
    code, text, err = run(capsys, "variant", "new", "reduction", "--from", "warp-shuffle", "--name", name, out)
    assert code == 2 and "reserved" in err and "--name" in err and not out.exists()


def test_the_loader_refuses_a_reserved_name_in_the_file():
    from kernels.user_variants.child_side import BadFile, _declared, import_file
    from kernels.user_variants.templates import source

    text = source("reduction", "warp-shuffle", "my-x").replace("NAME = 'my-x'", "NAME = 'all'")
    assert "NAME = 'all'" in text
    module = import_file("/nonexistent/reserved.py", text)
    with pytest.raises(BadFile, match="NAME 'all' is reserved"):
        _declared(module, "/nonexistent/reserved.py")


# --- a UTF-8 variant file with a byte-order mark loads, as Python imports it ------------------------------------

def test_a_variant_file_with_a_byte_order_mark_is_read_as_python_reads_it(tmp_path):
    from kernels.user_variants import loader
    from kernels.user_variants.templates import source

    text = source("reduction", "warp-shuffle", "my-bom")
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    compile(path.read_bytes(), str(path), "exec")  # Python's own rule: accepted
    assert loader.read(path).source == text


# --- every child under one deadline: start, each message whole, the work's own beats, the end ------------------

JOBS = "tests.child_jobs"


def _gone(pid: int, seconds: float = 5.0) -> bool:
    import os
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":  # ended, not yet reaped by its new parent
                    return True
        except (ProcessLookupError, FileNotFoundError):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_a_child_beats_from_its_work_and_is_ended_when_the_work_is_stuck_or_a_message_half_written():
    import time

    from kernels.backend.child import SimulatorProcess, Stalled

    sim = SimulatorProcess(name="deadline-test")
    try:
        assert sim.call(f"{JOBS}:beating", 0, lambda: False, beats=True) == "done"  # started, warm
        # a job longer than its watchdog, beating from the thread that works: not taken for a stall
        assert sim.call(f"{JOBS}:beating", 1.2, lambda: False, watchdog_s=0.8, beats=True) == "done"
        # stuck in its own thread though another of its threads lives: ended
        t0 = time.monotonic()
        pid = sim.pid
        with pytest.raises(Stalled, match="stopped by the watchdog: nothing finished within 0.8 s"):
            sim.call(f"{JOBS}:stuck", None, lambda: False, watchdog_s=0.8, beats=True)
        assert time.monotonic() - t0 < 5 and not sim.running() and _gone(pid)
        # a half-written message blocks no read: the deadline ends it
        sim.call(f"{JOBS}:beating", 0, lambda: False, beats=True)
        t0 = time.monotonic()
        with pytest.raises(Stalled):
            sim.call(f"{JOBS}:half_message", None, lambda: False, watchdog_s=0.8, beats=True)
        assert time.monotonic() - t0 < 5 and not sim.running()
    finally:
        sim.end()


def test_a_processes_child_that_stalls_after_it_started_is_ended_with_its_group(tmp_path, monkeypatch):
    """The issue's example: a `bench --processes 2` child that says it started and then stalls."""
    import time

    from kernels import backend
    from kernels.service import bench_processes
    from kernels.service.bench_request import BenchRequest

    marker = tmp_path / "grandchild.pid"
    monkeypatch.setenv("RAYTRACER_TEST_GRANDCHILD", str(marker))
    monkeypatch.setattr(bench_processes, "CHILD_MODULE", JOBS)
    monkeypatch.setattr(bench_processes, "SILENCE_S", 0.5)
    request = BenchRequest(algorithm="reduction", backend=backend.resolve("cpu"), sizes=(1024,),
                           variants=("numpy",), repeats=2, processes=2, variant_timeout=0.25)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"process 1 of 2 went 0.5 s without progress .*ended with its process group"):
        bench_processes.run_in_processes(request, lambda kind, value: None, lambda: False)
    assert time.monotonic() - t0 < 15
    assert _gone(int(marker.read_text())), "the child's own child outlived it"


def test_watch_ends_a_child_silent_after_its_start_and_keeps_only_its_tail():
    import sys

    from kernels.backend import watchdog

    loud = ("import sys, time; from kernels.backend import watchdog; watchdog.say_started(); "
            "sys.stderr.write('x' * 300000 + '\\nlast words\\n'); sys.stderr.flush(); time.sleep(60)")
    proc = watchdog.popen([sys.executable, "-c", loud], stderr=__import__("subprocess").PIPE)
    with pytest.raises(watchdog.Stalled) as stalled:
        watchdog.watch(proc, watchdog.Deadline(30, 0.3))
    assert stalled.value.started and proc.poll() is not None


@pytest.mark.slow
def test_access_ends_a_variant_file_whose_kernel_never_ends_with_bench_s_watchdog(tmp_path, capsys):
    """The issue's example: `access` with a variant file whose kernel loops forever is ended by the watchdog
    `bench` uses (--variant-timeout), in one line, exit 1."""
    import time

    from tests.test_user_variants import GOOD

    looping = GOOD.replace("    while i < a.size:\n", "    while i >= 0:  # forever\n").replace(
        "i += cuda.gridsize(1)", "i += 0").replace("total += a[i]", "total += 1")
    assert looping != GOOD
    path = tmp_path / "loop.py"
    path.write_text(looping)
    t0 = time.monotonic()
    code, out, err = run(capsys, "access", "reduction", "--variant-file", path, "--n", "256", "--blocks", "1",
                         "--variant-timeout", "2")
    lines = [x for x in err.splitlines() if x.startswith("raytracer-app")]
    assert code == 1 and len(lines) == 1 and "stopped by the watchdog" in lines[0], err
    assert time.monotonic() - t0 < 60


# --- children ignore SIGINT: a terminal's Ctrl-C is the parent's, which ends them --------------------------------

@pytest.mark.slow
def test_a_child_of_the_simulator_kind_ignores_sigint_and_goes_on_serving(capfd):
    import os
    import signal
    import time

    from kernels.backend.child import SimulatorProcess

    sim = SimulatorProcess(name="user-variants")
    try:
        sim.call(f"{JOBS}:beating", 0, lambda: False, beats=True)
        pid = sim.pid
        os.kill(pid, signal.SIGINT)  # what a terminal's Ctrl-C sends its whole foreground group
        time.sleep(0.3)
        assert sim.call(f"{JOBS}:beating", 0.1, lambda: False, beats=True) == "done" and sim.pid == pid
    finally:
        sim.end()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Process user-variants" not in err, err


def test_a_popen_child_starts_with_sigint_blocked_in_a_session_of_its_own():
    import os
    import subprocess
    import sys

    from kernels.backend import watchdog

    code = ("import os, signal; print(int(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])), "
            "int(os.getsid(0) == os.getpid()))")
    proc = watchdog.popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    out, _ = proc.communicate(timeout=30)
    assert out.split() == ["1", "1"] and os.getsid(0) != proc.pid


# --- every read whose size decides memory checks it first: numba's cache entries too ----------------------------

@pytest.mark.parametrize("name, missing", [("f-1.py311.nbi", {}), ("f-1.py311.1.nbc", None)])
def test_a_numba_cache_file_padded_to_3_gib_is_removed_unread(tmp_path, monkeypatch, name, missing):
    """numba reads an index and a data file whole: one padded to 3 GiB (sparse here: no disk used) is removed
    with one warning and compiled again, never read."""
    from kernels.io import cache, numba_cache

    monkeypatch.setattr(cache, "_warned", set())
    path = tmp_path / name
    with open(path, "wb") as f:
        f.truncate(3 * 2**30)
    read = []
    wrapped = numba_cache._regular_first(lambda self, *args: read.append(path) or "read", lambda self, *a: str(path),
                                         missing)
    if missing is None:
        with pytest.raises(OSError, match="too large to read"):
            wrapped(None, "x")
    else:
        assert wrapped(None) == {}
    assert read == [] and not path.exists()


def test_a_numba_cache_file_of_a_sane_size_is_read_by_numba(tmp_path):
    from kernels.io import numba_cache

    path = tmp_path / "f-1.py311.nbi"
    path.write_bytes(b"x" * 100)
    wrapped = numba_cache._regular_first(lambda self: "read", lambda self: str(path), {})
    assert wrapped(None) == "read" and path.exists()


def test_a_npy_header_declaring_more_than_its_file_is_refused_before_anything_is_allocated(tmp_path, monkeypatch):
    import numpy as np

    from kernels.io import reader

    path = tmp_path / "big.npy"
    np.save(path, np.zeros(4, np.int32))
    raw = path.read_bytes()
    head_len = int.from_bytes(raw[8:10], "little")  # version 1.0: the header's length, then the header
    head = raw[10:10 + head_len].decode("latin1").replace("(4,)", "(1099511627776,)").rstrip() + " "
    assert len(head) <= head_len  # numpy pads its header: the longer shape fits in the padding
    path.write_bytes(raw[:10] + (head.ljust(head_len - 1) + "\n").encode("latin1") + raw[10 + head_len:])
    allocated = []
    monkeypatch.setattr(np.lib.format, "read_array", lambda *a, **k: allocated.append(1))
    with pytest.raises(InputError, match="promises 4,398,046,511,104 bytes of data but the file holds 16"):
        reader.read_npy(path, "--input")
    assert allocated == []


@pytest.mark.parametrize("head", [b"\x93NUMPY\x02\x00" + (2**32 - 1).to_bytes(4, "little") + b"{",
                                  b"\x93NUMPY\x01\x00" + (60000).to_bytes(2, "little") + b"{"])
def test_a_npy_header_length_larger_than_its_file_is_refused_before_numpy_reads_it(tmp_path, monkeypatch, head):
    """numpy asks for the declared header length at once (4 GiB here): refused from the file's size first."""
    import numpy as np

    from kernels.io import reader

    path = tmp_path / "head.npy"
    path.write_bytes(head)
    monkeypatch.setattr(np.lib.format, "read_array_header_2_0", lambda *a: pytest.fail("numpy read the header"))
    monkeypatch.setattr(np.lib.format, "read_array_header_1_0", lambda *a: pytest.fail("numpy read the header"))
    with pytest.raises(InputError, match=r"its header declares [\d,]+ bytes; the file holds 1 after it"):
        reader.read_npy(path, "--input")


# --- a file name that is not UTF-8 (legal on Linux) loses no output; one failed output loses no other ----------

@pytest.fixture(scope="module")
def result_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("results") / "base.json"
    with pytest.MonkeyPatch.context() as patch:
        _no_copy_peak(patch)
        assert main(["bench", "reduction", "--backend", "cpu", "--n", "1000", "--variants", "numpy", "--repeats",
                     "2", "--json", str(path)]) == 0
    return path


def test_compare_markdown_with_a_result_file_whose_name_is_not_utf8(tmp_path, capsys, result_file):
    import os
    import shutil

    odd = os.fsencode(tmp_path) + b"/r\xe9sult.json"
    shutil.copyfile(result_file, odd)
    name = os.fsdecode(odd)  # as argv gives it: the byte as a lone surrogate
    md, csv = tmp_path / "out.md", tmp_path / "out.csv"
    code, out, err = run(capsys, "compare", result_file, name, "--markdown", md, "--csv", csv)
    assert code == 0, err
    assert "r\\udce9sult.json" in md.read_text(encoding="utf-8") and csv.exists()
    assert f"wrote markdown to {md}" in out


def test_a_failure_to_write_one_output_never_loses_the_others(tmp_path, capsys, monkeypatch, result_file):
    from kernels.harness import compare_report

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(compare_report, "csv_text", full)
    md, csv = tmp_path / "out.md", tmp_path / "out.csv"
    code, out, err = run(capsys, "compare", result_file, result_file, "--csv", csv, "--markdown", md)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "No space left" in lines[0] and lines[0].startswith("raytracer-app: failed")
    assert md.exists() and not csv.exists()


def test_bench_writes_its_result_file_though_its_csv_fails(tmp_path, capsys, monkeypatch):
    from kernels.io.writer import WriteFailed
    from raytracer_app.cli import bench

    def fail(*args, **kwargs):
        raise WriteFailed("cannot write --csv: No space left on device")

    monkeypatch.setattr(bench, "write_csv", fail)
    _no_copy_peak(monkeypatch)
    result = tmp_path / "run.json"
    code, out, err = run(capsys, "bench", "reduction", "--backend", "cpu", "--n", "1000", "--variants", "numpy",
                         "--repeats", "2", "--csv", tmp_path / "run.csv", "--json", result)
    assert code == 1 and result.exists() and "No space left" in err


# --- writing through a link to another user's file keeps its owner, group and mode, or is refused -------------

def test_a_file_replaced_through_a_link_keeps_its_owner_group_and_mode(tmp_path):
    import os

    from kernels.io.writer import write_output

    target = tmp_path / "theirs.csv"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    if os.geteuid() == 0:
        os.chown(target, 12345, 23456)  # another user's file (root can give it away, in a temp folder)
    before = os.stat(target)
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    write_output(link, "new\n", "--csv")
    after = os.stat(target)
    assert target.read_text() == "new\n" and link.is_symlink()
    assert (after.st_uid, after.st_gid, after.st_mode) == (before.st_uid, before.st_gid, before.st_mode)


def test_a_file_whose_owner_cannot_be_kept_is_refused_and_left_as_it_was(tmp_path, monkeypatch):
    import os

    from kernels.io import writer

    target = tmp_path / "theirs.csv"
    target.write_text("old\n")
    real = os.stat

    def another_users(path, *args, **kwargs):  # as a user who is not root sees another user's file
        st = real(path, *args, **kwargs)
        if os.fspath(path) == target.name:
            return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid + 1, st.st_gid,
                                   st.st_size, st.st_atime, st.st_mtime, st.st_ctime))
        return st

    def not_root(fd, uid, gid):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(writer.os, "stat", another_users)
    monkeypatch.setattr(writer.os, "fchown", not_root)
    with pytest.raises(InputError, match="belongs to another user or group .*left as it is"):
        writer.write_output(target, "new\n", "--csv")
    monkeypatch.undo()
    assert target.read_text() == "old\n" and not [p for p in tmp_path.iterdir() if p.name != "theirs.csv"]


# --- RAYTRACER_MEMORY=bogus is refused on every backend, as the docs say ------------------------------------------

@pytest.mark.parametrize("argv", [("bench", "reduction", "--backend", "cpu", "--n", "64", "--variants", "numpy"),
                                  ("bench", "reduction", "--backend", "sim", "--n", "64", "--variants", "numpy"),
                                  ("devices",)])
def test_a_bogus_memory_setting_is_refused_on_every_backend(capsys, monkeypatch, argv):
    monkeypatch.setenv("RAYTRACER_MEMORY", "bogus")
    code, out, err = run(capsys, *argv)
    assert code == 2 and err.strip() == "raytracer-app: error: RAYTRACER_MEMORY 'bogus' is not one of numba, cuda-core"


# --- absent-key finds in the two-choice table: one or two buckets while buckets have room, a walk when full ------

def _absent_walks(load: float, n: int = 8192, bucket: int = 8, lookups: int = 512):
    """Buckets an absent key's find reads in a two-choice table built by the CPU twin's own insert, counted
    here with plain numpy from the slots (independent of find_one): the two buckets, then the following ones
    up to the first with an empty slot."""
    import numpy as np

    from kernels.hashtable.open_cpu import insert_all
    from kernels.hashtable.probing import KEY_EMPTY32, bucket_of, pack

    nbuckets = int(np.ceil(n / load / bucket))
    empty = pack(np.uint32(KEY_EMPTY32), np.uint32(0))
    slots = np.full(nbuckets * bucket, empty, np.uint64)
    rng = np.random.default_rng(1)
    keys = rng.choice(2**31, size=n, replace=False).astype(np.uint32) + 1
    assert insert_all(keys, slots, bucket, 2, nbuckets, False) == n
    room = ((slots & np.uint64(0xFFFFFFFF)) == np.uint64(KEY_EMPTY32)).reshape(nbuckets, bucket).any(axis=1)
    walks = []
    for key in rng.integers(2**31 + 1, 2**32 - 3, size=lookups).astype(np.uint32):
        first, second = int(bucket_of(key, 0, nbuckets)), int(bucket_of(key, 1, nbuckets))
        if room[first]:
            walks.append(1)
            continue
        b, read = second, 2
        while not room[b]:
            b, read = (b + 1) % nbuckets, read + 1
        walks.append(read)
    return np.array(walks)


@pytest.mark.slow  # compiles the CPU twin's insert on a cold cache
def test_absent_finds_read_one_or_two_buckets_while_buckets_have_room_and_walk_when_nearly_full():
    import numpy as np

    half, high, full = _absent_walks(0.5), _absent_walks(0.9), _absent_walks(0.9999)
    assert np.median(half) == 1 and np.median(high) <= 2  # what README and docs/cli.md say
    assert np.mean(full) > 50 * np.mean(high)  # the walk docs/cli.md describes near a full table


def test_a_short_tool_past_its_time_is_ended_with_its_group(tmp_path):
    """git, ptxas, nvcc and ncu's queries run through watchdog.run: on their deadline the whole group goes."""
    import subprocess
    import sys

    from kernels.backend import watchdog

    marker = tmp_path / "grandchild.pid"
    with pytest.raises(subprocess.TimeoutExpired):
        watchdog.run(["sh", "-c", f"sleep 60 & echo $! > '{marker}'; wait"], 0.5, capture_output=True, text=True)
    assert _gone(int(marker.read_text()))
    done = watchdog.run([sys.executable, "-c", "print('ok')"], 30, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "ok\n")


def test_render_writes_its_image_though_its_scene_cannot_be_saved(tmp_path, capsys, monkeypatch):
    from kernels.io.writer import WriteFailed
    from kernels.spheres import render_kind

    def fail(*args, **kwargs):
        raise WriteFailed("cannot write --save-scene: No space left on device")

    monkeypatch.setattr(render_kind, "save_scene", fail)
    out = tmp_path / "frame.png"
    code, _, err = run(capsys, "render", "spheres", "--backend", "cpu", "--size", "16x16", "--spheres", "2",
                       "--repeats", "1", "--out", out, "--save-scene", tmp_path / "scene.json")
    assert code == 1 and out.exists() and "No space left" in err and not (tmp_path / "scene.json").exists()


def test_a_popen_child_whose_parent_has_gone_ends_at_its_next_beat():
    import subprocess
    import sys

    from kernels.backend import watchdog

    code = ("import time; from kernels.backend import watchdog\n"
            "with watchdog.beats_to(watchdog.beat_on_stderr):\n"
            "    while True:\n        time.sleep(0.05); watchdog.beat()\n")
    proc = watchdog.popen([sys.executable, "-c", code], stderr=subprocess.PIPE)
    proc.stderr.read(len(watchdog.ALIVE))  # it beats
    proc.stderr.close()  # what its parent's death does to the pipe
    assert proc.wait(10) == 1


def test_nsight_compute_silent_past_its_deadline_is_ended(monkeypatch):
    """The counters' ncu run (here a stand-in that never speaks) is under the same deadline."""
    import sys

    from kernels.backend import watchdog
    from kernels.counters import measure

    monkeypatch.setattr(measure, "NCU_START_S", 0.5)
    with pytest.raises(watchdog.Stalled, match="ncu: stopped by the watchdog"):
        measure.run_ncu([sys.executable, "-c", "import time; time.sleep(60)"])
