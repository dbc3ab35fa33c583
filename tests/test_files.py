"""Output files and input files (issue: never damage, never hang): the one writer (kernels.io.writer) and the
one reader (kernels.io.reader), through the real CLI. Every special file is made in tmp_path; nothing in
/dev is touched."""

from __future__ import annotations

import csv
import json
import os
import socket
import stat
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import child_pythonpath

from kernels.errors import InputError
from raytracer_app.cli import main

SCENE_RENDER = ("render", "spheres", "--backend", "cpu", "--size", "16x12", "--repeats", "1")
RENDER = (*SCENE_RENDER, "--spheres", "2")
BENCH = ("bench", "histogram", "--backend", "cpu", "--variants", "cpu-numpy", "--repeats", "1")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("raytracer-app: error: "), err
    assert "Traceback" not in err
    return lines[0]


def special_files(tmp_path):
    """(name, path, what the message must say) for each non-regular file we can make without root."""
    fifo = tmp_path / "fifo.png"
    os.mkfifo(fifo)
    sock = tmp_path / "sock.png"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    s.close()
    folder = tmp_path / "folder.png"
    folder.mkdir()
    return [("fifo", fifo, "FIFO"), ("socket", sock, "socket"), ("directory", folder, "directory")]


def make_device(tmp_path):
    """A character device node (1, 3 is what /dev/null is) in tmp_path; skipped where mknod needs root."""
    node = tmp_path / "null.png"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot create a device node here ({exc.strerror}); needs root")
    return node


def listing(folder):
    return sorted(p.name for p in folder.iterdir())


# ------------------------------------------------------------------------------------------- outputs

def test_out_refuses_fifo_socket_directory_and_leaves_them_alone(tmp_path, capsys):
    for name, path, what in special_files(tmp_path):
        before = os.lstat(path)
        code, _, err = run(capsys, *RENDER, "--out", path)
        line = one_error_line(err)
        assert code == 2 and what in line and str(path) in line and "--out" in line, (name, line)
        after = os.lstat(path)
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    assert listing(tmp_path) == ["fifo.png", "folder.png", "sock.png"]  # no temp file left behind


def test_out_refuses_a_device_node_and_keeps_it(tmp_path, capsys):
    node = make_device(tmp_path)
    code, _, err = run(capsys, *RENDER, "--out", node)
    assert code == 2 and "character device" in one_error_line(err)
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_fifo_output_does_not_hang_and_symlink_to_fifo_is_refused(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link.csv"
    link.symlink_to(fifo)
    code, _, err = run(capsys, *BENCH, "--n", "64", "--csv", link)
    assert code == 2 and "FIFO" in one_error_line(err) and "--csv" in err
    assert link.is_symlink() and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_symlink_is_followed_and_its_target_written(tmp_path, capsys):
    target = tmp_path / "real.png"
    target.write_bytes(b"old")
    link = tmp_path / "link.png"
    link.symlink_to(target)
    code, _, err = run(capsys, *RENDER, "--out", link)
    assert code == 0, err
    assert link.is_symlink() and target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_replaced_file_keeps_its_mode_and_new_files_get_the_umask_mode(tmp_path, capsys):
    old = tmp_path / "old.png"
    old.write_bytes(b"x")
    os.chmod(old, 0o640)
    mask = os.umask(0o027)
    try:
        assert run(capsys, *RENDER, "--out", old)[0] == 0
        assert run(capsys, *RENDER, "--out", tmp_path / "new.png", "--save-scene", tmp_path / "new.json")[0] == 0
        assert run(capsys, *BENCH, "--n", "64", "--csv", tmp_path / "new.csv")[0] == 0
    finally:
        os.umask(mask)
    assert stat.S_IMODE(os.stat(old).st_mode) == 0o640
    for name in ("new.png", "new.json", "new.csv"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o640, name  # 0o666 & ~0o027


@pytest.mark.parametrize("option, base", [("--out", RENDER), ("--csv", BENCH + ("--n", "64"))])
def test_trailing_slash_and_missing_folder_are_refused(tmp_path, capsys, option, base):
    code, _, err = run(capsys, *base, option, f"{tmp_path}/newdir/")
    assert code == 2 and "ends in '/'" in one_error_line(err) and option in err
    code, _, err = run(capsys, *base, option, tmp_path / "nope" / "x.png")
    assert code == 2 and "does not exist" in one_error_line(err) and option in err
    assert listing(tmp_path) == []


def test_save_scene_messages_name_save_scene(tmp_path, capsys):
    code, _, err = run(capsys, *RENDER, "--out", tmp_path / "a.png", "--save-scene", tmp_path / "dir" / "s.json")
    assert code == 2 and "--save-scene" in one_error_line(err) and "--out" not in err


def test_output_that_is_an_input_is_refused(tmp_path, capsys):
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)))
    code, _, err = run(capsys, *BENCH, "--input", data, "--csv", data)
    assert code == 2 and "same file as --input" in one_error_line(err) and "--csv" in err
    hard = tmp_path / "hard.csv"
    os.link(data, hard)  # the same inode under another name
    code, _, err = run(capsys, *BENCH, "--input", data, "--csv", hard)
    assert code == 2 and "same file as --input" in one_error_line(err)
    assert data.read_bytes() == bytes(range(256))
    code, _, err = run(capsys, *RENDER, "--out", tmp_path / "x.png", "--save-scene", tmp_path / "x.png")
    assert code == 2 and "same file as --out" in one_error_line(err)
    assert not (tmp_path / "x.png").exists()


def test_wrong_image_extension_is_refused(tmp_path, capsys):
    code, _, err = run(capsys, *RENDER, "--out", tmp_path / "x.jpg")
    assert code == 2 and ".png" in one_error_line(err) and "--out" in err
    assert listing(tmp_path) == []


def test_csv_onto_an_existing_file_says_it_overwrites(tmp_path, capsys):
    path = tmp_path / "rows.csv"
    path.write_text("old\n")
    code, out, err = run(capsys, *BENCH, "--n", "300", "--csv", path)
    assert code == 0, err
    assert "its old text will be kept as rows.csv.~1~" in out
    assert (tmp_path / "rows.csv.~1~").read_text() == "old\n"
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["variant"] for r in rows] == ["cpu-numpy"] and rows[0]["n"] == "300"


def test_csv_that_cannot_be_written_after_the_run_keeps_the_rows(tmp_path, capsys, monkeypatch):
    from kernels.io import writer as files

    path = tmp_path / "rows.csv"

    def disk_full(*args, **kwargs):
        raise files.WriteFailed(f"cannot write --csv {str(path)!r}: No space left on device")

    monkeypatch.setattr(files, "write_output", disk_full)  # the run is fine; the final write fails
    code, out, err = run(capsys, *BENCH, "--n", "300", "--csv", path)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "No space left" in lines[0] and "printed above" in lines[0]
    text = out[out.index("# the CSV could not be written"):].splitlines()[1:]
    rows = list(csv.DictReader(text))
    assert [r["variant"] for r in rows] == ["cpu-numpy"] and rows[0]["n"] == "300"
    assert not path.exists() and listing(tmp_path) == []


def test_writer_refuses_a_non_regular_destination_swapped_in_before_the_rename(tmp_path, monkeypatch):
    """The check is repeated just before os.replace: a FIFO created meanwhile is never replaced."""
    from kernels.io import writer as files

    path = tmp_path / "late.csv"
    real_check = files.check_output

    def check_then_swap(*args, **kwargs):
        target = real_check(*args, **kwargs)
        os.mkfifo(path)
        return target

    monkeypatch.setattr(files, "check_output", check_then_swap)
    with pytest.raises(InputError, match="FIFO"):
        files.write_output(path, "a,b\n", "--csv")
    assert stat.S_ISFIFO(os.lstat(path).st_mode) and listing(tmp_path) == ["late.csv"]


# -------------------------------------------------------------------------------------------- inputs

def test_inputs_refuse_fifo_socket_directory_without_opening(tmp_path, capsys):
    for name, path, what in special_files(tmp_path):
        for argv in ((*SCENE_RENDER, "--out", tmp_path / "o.png", "--scene", path),
                     ("bench", "reduction", "--backend", "cpu", "--variants", "numpy", "--input", path),
                     (*BENCH, "--input", path)):
            code, _, err = run(capsys, *argv)  # a FIFO would hang here if it were opened
            line = one_error_line(err)
            assert code == 2 and what in line and str(path) in line, (name, line)
    assert not (tmp_path / "o.png").exists()


def test_inputs_refuse_a_device_node(tmp_path, capsys):
    node = make_device(tmp_path)
    code, _, err = run(capsys, *BENCH, "--input", node)
    assert code == 2 and "character device" in one_error_line(err)


def test_fifo_input_does_not_hang_in_a_subprocess(tmp_path):
    fifo = tmp_path / "in.npy"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "raytracer_app", "bench", "reduction", "--backend", "cpu",
                           "--input", str(fifo)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": child_pythonpath()})
    assert proc.returncode == 2 and "FIFO" in one_error_line(proc.stderr)


def test_scene_larger_than_any_renderable_scene_is_refused_from_its_size(tmp_path, capsys, monkeypatch, cuda_backend):
    from kernels.spheres import scene

    path = tmp_path / "big.json"
    with open(path, "w") as f:  # sparse: the size is what matters, not the bytes
        f.write('{"spheres": []}')
        f.truncate(scene.MAX_SCENE_FILE_BYTES + 1)
    monkeypatch.setattr(json, "loads", lambda *a, **k: pytest.fail("parsed a file refused by its size"))
    code, _, err = run(capsys, *SCENE_RENDER, "--out", tmp_path / "o.png", "--scene", path)
    assert code == 2 and "bytes" in one_error_line(err) and f"{scene.MAX_SPHERES} spheres" in err
    # constant memory's own limit is far smaller, and so is the file it accepts
    small = tmp_path / "small.json"
    with open(small, "w") as f:
        f.write('{"spheres": []}')
        f.truncate(scene.CONSTANT_CAPACITY * 512 + 65537)
    code, _, err = run(capsys, *SCENE_RENDER, "--backend", cuda_backend.kind, "--memory", "constant",
                       "--out", tmp_path / "o.png", "--scene", small)
    assert code == 2 and "bytes" in one_error_line(err) and f"{scene.CONSTANT_CAPACITY} spheres" in err


def test_a_long_sphere_list_is_refused_before_each_sphere_is_checked(tmp_path, capsys, cuda_backend):
    sphere = {"center": [0, 0, 0], "radius": 1, "color": [0, 0, 0]}
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"spheres": [sphere] * 3000}))  # above constant memory's 2340
    code, _, err = run(capsys, *SCENE_RENDER, "--backend", cuda_backend.kind, "--memory", "constant",
                       "--out", tmp_path / "o.png", "--scene", path)
    assert code == 2 and "at most 2340 spheres" in one_error_line(err)  # from counts, before parsing


@pytest.mark.parametrize("name, raw, message", [
    ("latin1", '{"name": "caf\xe9", "spheres": []}'.encode("latin-1"), "not UTF-8"),
    ("utf16", '{"spheres": []}'.encode("utf-16"), "UTF-16"),
    ("deep", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ("bigint", b'{"spheres": [{"center": [0, 0, 0], "radius": 1' + b"0" * 400 + b', "color": [1, 0, 0]}]}',
     "radius 1000"),
    ("huge-digits", b'{"spheres": [' + b"1" * 5000 + b"]}", "cannot be read"),
    ("radius1e20", b'{"spheres": [{"center": [0, 0, 0], "radius": 1e20, "color": [1, 0, 0]}]}', "radius 1e+20 is too large"),
    ("center1e308", b'{"spheres": [{"center": [1e308, 0, 0], "radius": 1, "color": [1, 0, 0]}]}', "center 1e+308 is too large"),
])
def test_malformed_scene_is_one_line_and_exit_2(tmp_path, capsys, name, raw, message):
    path = tmp_path / f"{name}.json"
    path.write_bytes(raw)
    code, _, err = run(capsys, *SCENE_RENDER, "--out", tmp_path / "o.png", "--scene", path)
    assert code == 2 and message in one_error_line(err), err
    assert not (tmp_path / "o.png").exists()


def test_a_saved_scene_always_loads_back(tmp_path, capsys):
    from kernels.spheres.scene import Scene, load_scene, save_scene

    big = np.float32(1.8e19)  # the largest kind of value the loader accepts: its square still fits float32
    spheres = np.array([[1, 0.5, 0, big, -big, 0, big]], np.float32)
    path = tmp_path / "s.json"
    save_scene(Scene(spheres, "edge"), path)
    assert "Infinity" not in path.read_text()
    np.testing.assert_array_equal(load_scene(path).spheres, spheres)


def npy_bytes(arr) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


@pytest.mark.parametrize("name, raw, message", [
    ("empty", b"", "empty (0 bytes), not a .npy file"),
    ("text", b"1 2 3\n", "not a .npy file"),
    ("npz", None, "not a .npy file (it is a .npz archive"),
    ("pickled", npy_bytes(np.array([{"a": 1}], dtype=object)), "pickled"),
    ("truncated", npy_bytes(np.arange(100, dtype=np.int32))[:-40], "header promises 400 bytes"),
])
def test_malformed_npy_is_one_line_and_exit_2(tmp_path, capsys, name, raw, message):
    path = tmp_path / f"{name}.npy"
    if raw is None:
        np.savez(tmp_path / "arrays.npz", a=np.arange(3))
        (tmp_path / "arrays.npz").rename(path)
    else:
        path.write_bytes(raw)
    code, _, err = run(capsys, "bench", "reduction", "--backend", "cpu", "--variants", "numpy", "--input", path)
    assert code == 2 and message in one_error_line(err), err


def test_npy_header_promising_more_than_memory_is_refused_from_the_header(tmp_path, capsys, monkeypatch):
    from kernels.backend import devices

    arr = np.arange(1000, dtype=np.int32)
    path = tmp_path / "a.npy"
    np.save(path, arr)
    monkeypatch.setattr(devices, "available_host_bytes", lambda: 1000)  # 4000 bytes of data do not fit
    monkeypatch.setattr(np.lib.format, "read_array", lambda *a, **k: pytest.fail("read the data"))
    code, _, err = run(capsys, "bench", "reduction", "--backend", "cpu", "--variants", "numpy", "--input", path)
    line = one_error_line(err)  # the run's estimate, from the header, as --n gets it
    assert code == 2 and "(1,000 elements) needs about" in line and "1,000 bytes is free" in line


def test_histogram_input_larger_than_memory_is_refused_before_reading(tmp_path, capsys, monkeypatch):
    from kernels.backend import devices

    path = tmp_path / "data.bin"
    path.write_bytes(bytes(5000))
    monkeypatch.setattr(devices, "available_host_bytes", lambda: 4096)
    code, _, err = run(capsys, *BENCH, "--input", path)
    line = one_error_line(err)  # the run's estimate (11 bytes per input byte) is checked before reading
    assert code == 2 and "(5,000 bytes) needs about 55,000 bytes of host memory; 4,096 bytes is free" in line


def test_available_memory_is_a_positive_number_here():
    from kernels.backend.devices import available_host_bytes

    avail = available_host_bytes()
    assert avail is None or avail > 0


@pytest.mark.parametrize("values, fits", [
    ([2147483647, 1, 1, 1], True),            # refused by the old n x max^2 bound; the exact total fits
    ([-2147483648] * 2, False),               # exactly 2**63: one past int64
    ([-2147483648, 2147483647, 3], True),
])
def test_sumsq_refuses_only_what_does_not_fit_int64(tmp_path, capsys, values, fits):
    path = tmp_path / "v.npy"
    np.save(path, np.array(values, dtype=np.int64))
    code, out, err = run(capsys, "bench", "reduction", "--backend", "cpu", "--variants", "numpy",
                         "--op", "sumsq", "--input", path, "--repeats", "1")
    exact = sum(v * v for v in values)  # Python ints: the independent reference
    assert (exact < 2**63) == fits
    if fits:
        assert code == 0 and "numpy" in out and "yes" in out, err
    else:
        assert code == 2 and "does not fit int64" in one_error_line(err)


# ------------------------------------------------------------------ bounded memory for inputs (issue 21, D)
def test_histogram_input_gets_the_memory_estimate_before_a_byte_is_read(tmp_path, capsys, monkeypatch):
    import kernels.backend.devices
    import kernels.io.reader

    data = tmp_path / "big.bin"
    with open(data, "wb") as f:
        f.truncate(8 * 2**20)  # sparse: 8 MiB that use no disk
    monkeypatch.setattr(kernels.backend.devices, "available_host_bytes", lambda: 16 * 2**20)
    monkeypatch.setattr(kernels.io.reader, "open_input", lambda *a: pytest.fail("read before the estimate"))
    code, text, err = run(capsys, *BENCH, "--input", data)
    line = one_error_line(err)
    assert code == 2 and "(8,388,608 bytes) needs about 88.0 MiB of host memory; 16.0 MiB is free" in line and "--input" in line


def test_read_bytes_allocates_the_file_size_not_the_limit(tmp_path, monkeypatch):
    from kernels.io import reader

    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    sizes = []
    real_open = reader.open_input

    def spying(*a):
        f = real_open(*a)
        read = f.read
        f_read = lambda n=-1: (sizes.append(n), read(n))[1]  # noqa: E731
        return _Proxy(f, f_read)

    monkeypatch.setattr(reader, "open_input", spying)
    assert reader.read_bytes(path, "--input", 2**40, "test") == b"abc"
    assert max(sizes) == 3  # never the 1 TiB limit


def test_a_file_reporting_size_zero_is_read_with_a_bound(tmp_path, monkeypatch):
    from kernels.io import reader

    path = tmp_path / "proc-like"
    path.write_bytes(b"x" * 5000)
    real_fstat = os.fstat

    def zero(fd):
        st = real_fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_size == 5000:  # as /proc's files: size 0, content >0
            return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 0,
                                   st.st_atime, st.st_mtime, st.st_ctime))
        return st

    monkeypatch.setattr(reader.os, "fstat", zero)
    assert reader.read_bytes(path, "--input", 10_000, "test") == b"x" * 5000
    with pytest.raises(InputError, match="more than 4,096 bytes"):
        reader.read_bytes(path, "--input", 4096, "test")


class _Proxy:
    def __init__(self, f, read):
        self._f, self.read = f, read

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()

    def __getattr__(self, name):
        return getattr(self._f, name)


@pytest.mark.parametrize("name, raw, says", [
    ("empty objects", b'{"spheres": [' + b"{}," * 4000 + b"{}]}", "more objects, lists or values"),
    ("empty lists", b'{"spheres": [' + b"[]," * 4000 + b"[]]}", "more objects, lists or values"),
    ("numbers", b'{"spheres": [' + b"0," * 30000 + b"0]}", "more objects, lists or values"),
    ("one empty object", b'{"spheres": [{}]}', "sphere 0: 'center' must be a list of 3 numbers"),
    ("object under an unknown key", b'{"spheres": [{"center": [0, 0, 0], "radius": 1, "color": [0, 0, 0], '
                                    b'"extra": {"x": 1}}]}', "unknown key 'x'"),
    ("too many spheres", b'{"spheres": [' + b",".join([b'{"center":[0,0,0],"radius":1,"color":[0,0,0]}'] * 11)
     + b"]}", "more than 10 spheres"),
])
def test_scene_files_are_bounded_while_parsing(tmp_path, name, raw, says):
    from kernels.spheres.scene import load_scene

    path = tmp_path / "s.json"
    path.write_bytes(raw)
    with pytest.raises(InputError, match=says):
        load_scene(path, cap=10 if name == "too many spheres" else 1000)


def test_scene_padded_with_whitespace_is_read_compacted(tmp_path, monkeypatch):
    # whitespace outside strings is dropped as the file streams in, chunk by chunk, so a padded file
    # never sits in memory whole; strings (the name) keep theirs, escapes included
    from kernels.io import reader
    from kernels.spheres.scene import load_scene

    monkeypatch.setattr(reader, "COMPACT_CHUNK", 7)  # chunk edges inside strings, escapes and numbers
    sphere = b'{ "center" : [ 1.5 ,\n -2 , 3e1 ] ,\t"radius": 0.25, "color": [0, 0.5 , 1] }'
    raw = b'{\r\n "name" : "two  \\"spaced\\"\\\\ words" ,  "spheres" : [ ' + sphere + b' ,\n\n' + sphere + b" ] }  "
    path = tmp_path / "padded.json"
    path.write_bytes(raw.replace(b" [ ", b" [" + b" " * 5000 + b" "))
    scene = load_scene(path, cap=2)
    assert scene.name == 'two  "spaced"\\ words'
    np.testing.assert_array_equal(scene.spheres[0], np.array([0, 0.5, 1, 0.25, 1.5, -2, 30], np.float32))
    assert scene.count == 2


def test_scene_bound_counts_json_not_whitespace(tmp_path):
    from kernels.spheres.scene import COMPACT_BYTES_PER_SPHERE, load_scene

    path = tmp_path / "long.json"
    # within the file-size bound (512 bytes a sphere) but more JSON than 2 spheres can hold
    name = "n" * (2 * COMPACT_BYTES_PER_SPHERE + 65536)
    path.write_text('{"name": "%s", "spheres": []}' % name)
    with pytest.raises(InputError, match="bytes of JSON besides whitespace"):
        load_scene(path, cap=2)
    whitespace = tmp_path / "white.json"
    whitespace.write_text('{"spheres": [' + " " * 100_000 + '{"center": [0, 0, 0], "radius": 1, "color": [0, 0, 0]}]}')
    assert load_scene(whitespace, cap=200).count == 1


@pytest.mark.slow
def test_scene_file_padded_to_its_size_limit_peaks_far_below_500_mb(tmp_path):
    # issue 21's goal: no scene file costs more than 500 MB before it is read or refused; a file of the
    # largest size the reader takes, nearly all whitespace, measured in a fresh interpreter
    from kernels.spheres.scene import MAX_SCENE_FILE_BYTES

    if not os.path.exists("/proc/self/status"):
        pytest.skip("reads the peak memory from /proc/self/status (Linux)")
    path = tmp_path / "padded.json"
    with open(path, "wb") as f:
        f.write(b'{"spheres": [')
        for _ in range(MAX_SCENE_FILE_BYTES // (1 << 20) - 1):
            f.write(b" " * (1 << 20))
        f.write(b'{"center": [0, 0, 0], "radius": 1, "color": [0, 0, 0]}]}')
    # VmHWM, not ru_maxrss: the latter keeps the parent's peak across a vfork and exec
    code = ("from kernels.spheres.scene import load_scene; "
            f"assert load_scene({str(path)!r}).count == 1; "
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=child_pythonpath()))
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) * 1024 < 200e6  # KiB on Linux; the file is 512 MB


def test_compacted_read_refuses_a_string_longer_than_its_bound(tmp_path, monkeypatch):
    from kernels.io import reader
    from kernels.spheres.scene import load_scene

    monkeypatch.setattr(reader, "COMPACT_CHUNK", 64)
    monkeypatch.setattr(reader, "MAX_COMPACT_STRING", 1000)
    path = tmp_path / "name.json"
    path.write_text('{"name": "%s", "spheres": []}' % ("n" * 2000))
    with pytest.raises(InputError, match="a string longer than 1,000 bytes"):
        load_scene(path, cap=100)


def test_variant_new_onto_an_edited_file_keeps_it_as_a_numbered_backup(tmp_path, capsys):
    """Issue 50 item 1: the README's step 5 run twice on an edited mine.py loses nothing."""
    mine = tmp_path / "mine.py"
    argv = ("variant", "new", "reduction", "--from", "sequential", mine)
    assert run(capsys, *argv)[0] == 0
    first = mine.read_text()
    mine.write_text(first + "# my edit\n")
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "kept as" in out and "mine.py.~1~" in out
    assert (tmp_path / "mine.py.~1~").read_text() == first + "# my edit\n" and mine.read_text() == first
    code, out, _ = run(capsys, *argv)  # the same text again: nothing to keep
    assert code == 0 and "kept" not in out and not (tmp_path / "mine.py.~2~").exists()
    mine.write_text("# second edit\n")
    assert run(capsys, *argv)[0] == 0 and (tmp_path / "mine.py.~2~").read_text() == "# second edit\n"


def test_the_writer_keeps_other_text_and_skips_its_own(tmp_path):
    from kernels.io.writer import write_output

    path = tmp_path / "f.txt"
    assert write_output(path, "a", "--out").backup is None  # a new file
    assert write_output(path, "a", "--out").backup is None  # the same bytes
    written = write_output(path, "b", "--out")
    assert written.backup == tmp_path / "f.txt.~1~" and written.backup.read_text() == "a"
    assert write_output(path, "c", "--out", replaces="b").backup is None  # the caller's own last text
    assert write_output(path, "d", "--out", backup=False).backup is None and path.read_text() == "d"
    (tmp_path / "f.txt.~7~").write_text("x")
    assert write_output(path, "e", "--out").backup.name == "f.txt.~8~"


def test_a_gui_export_onto_an_edited_file_says_where_its_old_text_is(tmp_path):
    """Every button too: Export… through the shared export_to keeps the old file and says so."""
    from kernels.io.writer import write_output
    from raytracer_app.gui.common.saving import export_to

    path = tmp_path / "rows.csv"
    path.write_text("my notes\n")
    saved = export_to(None, lambda p: write_output(p, "a,b\n", "Export CSV"), pytest.fail, "t", "CSV (*.csv)",
                      "rows.csv", str(path))
    assert saved == str(path) and "rows.csv.~1~" in saved.kept
    assert (tmp_path / "rows.csv.~1~").read_text() == "my notes\n" and path.read_text() == "a,b\n"
