import os
import subprocess
import sys

import numpy as np
import pytest

from kernels import backend
from raytracer_app.cli import main
from raytracer_app.png import read_png_text
from tests.references import spheres_reference


def read_png(path):
    from PyQt6.QtGui import QImage

    img = QImage(str(path)).convertToFormat(QImage.Format.Format_RGBA8888)
    ptr = img.constBits()
    ptr.setsize(img.sizeInBytes())
    return np.frombuffer(ptr, np.uint8).reshape(img.height(), img.width(), 4).copy()


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_render_spheres_on_cpu_writes_the_definition(tmp_path, capsys):
    out = tmp_path / "s.png"
    scene = tmp_path / "scene.json"
    code, text, err = run(capsys, "render", "spheres", "--backend", "cpu", "--spheres", "12", "--seed", "4",
                          "--size", "320x200", "--repeats", "2", "--out", str(out), "--save-scene", str(scene))
    assert code == 0, err
    assert "kernel (wall time): median" in text and "cpu" in text
    from kernels.spheres.scene import load_scene

    ref = spheres_reference(load_scene(scene).spheres, 320, 200)
    assert np.abs(read_png(out).astype(int) - ref).max() <= 1
    meta = read_png_text(out)
    assert meta["raytracer:spheres"] == "12" and meta["raytracer:size"] == "320x200"


def test_render_spheres_on_cuda_kernels_from_a_scene_file(tmp_path, capsys, cuda_backend):
    scene = tmp_path / "tiny.json"
    scene.write_text('{"spheres": [{"center": [0, 0, 0], "radius": 6, "color": [1, 0.5, 0]},'
                     ' {"center": [4, 3, 10], "radius": 3, "color": [0, 0, 1]}]}')
    out = tmp_path / "s.png"
    code, text, err = run(capsys, "render", "spheres", "--backend", cuda_backend.kind, "--scene", str(scene),
                          "--size", "20x16", "--memory", "constant", "--block", "8x8", "--repeats", "1", "--out", str(out))
    assert code == 0, err
    assert "memory constant" in text and "block 8x8, grid 3x2" in text
    img = read_png(out)
    assert img.shape == (16, 20, 4)
    assert tuple(img[8 + 3, 10 + 4, :3]) == (0, 0, 255)  # the blue sphere (z 10) is nearer at its centre
    assert tuple(img[8, 10, :3]) == (255, 127, 0)  # the orange one alone at the image centre


def test_render_julia_writes_png(tmp_path, capsys):
    out = tmp_path / "j.png"
    code, text, err = run(capsys, "render", "julia", "--backend", "cpu", "--size", "100x80", "--colormap", "smooth",
                          "--c", "-0.7,0.27", "--iterations", "60", "--repeats", "1", "--out", str(out))
    assert code == 0, err
    assert read_png(out).shape == (80, 100, 4)
    assert read_png_text(out)["raytracer:c"] == "-0.7,0.27"


def test_devices_on_a_backend_that_is_not_here_is_exit_2(capsys):
    from kernels.backend import gpu_available

    if gpu_available():
        pytest.skip("this machine has a GPU: the cuda backend is there")
    code, _, err = run(capsys, "devices", "--backend", "cuda")
    assert code == 2 and "needs a CUDA GPU" in err and len(err.strip().splitlines()) == 1


def test_devices_lists_the_cpu_backend(capsys):
    code, text, _ = run(capsys, "devices")
    assert code == 0
    assert "CPU backend:" in text and "cores" in text


BAD_INPUTS = [
    # an option that belongs to the other target does not apply (never silently ignored)
    (["render", "julia", "--spheres", "5"], "--spheres does not apply to `render julia`"),
    (["render", "julia", "--scene", "x.json"], "--scene does not apply to `render julia`"),
    (["render", "julia", "--pattern", "staggered"], "--pattern does not apply to `render julia`"),
    (["render", "spheres", "--c", "0,1"], "--c does not apply to `render spheres`"),
    (["render", "spheres", "--zoom", "2"], "--zoom does not apply to `render spheres`"),
    (["render", "julia", "--center", "1;2"], "--center '1;2' is malformed"),
    (["render", "julia", "--c", "oops"], "--c 'oops' is malformed"),
    (["render", "spheres", "--spheres", "0"], "sphere count 0 is out of range; allowed 1..1000000"),
    (["render", "spheres", "--spheres", "1000001"], "sphere count 1000001 is out of range; allowed 1..1000000"),
    (["render", "spheres", "--memory", "texture"], "invalid choice: 'texture'"),
    (["render", "julia", "--precision", "float16"], "--precision: invalid choice: 'float16'"),
    (["render", "spheres", "--size", "0x100"], "width 0 is out of range; allowed 1..4096"),
    (["render", "spheres", "--size", "5000x100"], "width 5000 is out of range"),
    (["render", "spheres", "--size", "12xq"], "size '12xq' is malformed"),
    (["render", "julia", "--iterations", "-3"], "iterations -3 is out of range"),
    (["render", "spheres", "--scene", "/nonexistent/scene.json"], "does not exist"),
    (["render", "spheres", "--memory", "constant"], "--memory constant applies to CUDA kernels"),
    (["render", "spheres", "--seed", "x"], "--seed 'x' is not a whole number"),
    (["render", "julia", "--c", "abc"], "c 'abc' is malformed"),
]


@pytest.mark.parametrize("argv, message", BAD_INPUTS)
def test_bad_render_input_is_one_line_exit_2_and_no_file(tmp_path, capsys, argv, message):
    out = tmp_path / "x.png"
    code, text, err = run(capsys, *argv, "--backend", "cpu", "--repeats", "1", "--out", str(out))
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    "content, message",
    [
        ("{oops", "not valid JSON"),
        ('{"spheres": [{"center": "here", "radius": 1, "color": [0, 0, 0]}]}', "'center' must be a list of 3 numbers"),
        ('{"spheres": [{"center": [0, 0, 0], "radius": -1, "color": [0, 0, 0]}]}', "radius -1 must be positive"),
    ],
)
def test_bad_scene_files(tmp_path, capsys, content, message):
    scene, out = tmp_path / "bad.json", tmp_path / "x.png"
    scene.write_text(content)
    code, _, err = run(capsys, "render", "spheres", "--backend", "cpu", "--scene", str(scene), "--out", str(out))
    assert code == 2 and message in err and not out.exists()


@pytest.mark.parametrize("block, message", [("64x32", "at most 1024 per block"), ("0x16", "zero dimension")])
def test_bad_blocks_on_cuda_kernels(tmp_path, capsys, cuda_backend, block, message):
    out = tmp_path / "x.png"
    code, _, err = run(capsys, "render", "spheres", "--backend", cuda_backend.kind, "--size", "8x8",
                       "--block", block, "--out", str(out))
    assert code == 2 and message in err and not out.exists()


def test_unwritable_out(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as root, who can write to a read-only folder (the /proc test covers this case)")
        code, _, err = run(capsys, "render", "spheres", "--backend", "cpu", "--out", str(locked / "x.png"))
        assert code == 2 and "not writable" in err
    finally:
        locked.chmod(0o700)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs Linux's /proc, where no one can create files")
def test_out_on_a_file_system_nobody_can_write(capsys):
    code, _, err = run(capsys, "render", "spheres", "--backend", "cpu", "--out", "/proc/raytracer-test.png")
    assert code == 2 and "is not writable" in err and len(err.strip().splitlines()) == 1
    assert not os.path.exists("/proc/raytracer-test.png")


def test_out_in_a_missing_folder(tmp_path, capsys):
    code, _, err = run(capsys, "render", "spheres", "--backend", "cpu", "--out", str(tmp_path / "no" / "x.png"))
    assert code == 2 and "does not exist" in err


def test_out_is_a_directory(tmp_path, capsys):
    code, _, err = run(capsys, "render", "spheres", "--backend", "cpu", "--out", str(tmp_path))
    assert code == 2 and "is a directory" in err


@pytest.mark.skipif(backend.gpu_available(), reason="this machine has a GPU, so --backend cuda is valid here")
def test_backend_cuda_without_gpu(tmp_path, capsys):
    out = tmp_path / "x.png"
    code, _, err = run(capsys, "render", "spheres", "--backend", "cuda", "--out", str(out))
    assert code == 2 and "backend 'cuda' needs a CUDA GPU" in err and not out.exists()


@pytest.mark.skipif(backend.gpu_available(), reason="this machine has a GPU")
def test_device_option_without_gpu(tmp_path, capsys):
    code, _, err = run(capsys, "render", "spheres", "--device", "1", "--out", str(tmp_path / "x.png"))
    assert code == 2 and "--device 1 needs a CUDA GPU" in err


@pytest.mark.slow  # a new interpreter
def test_sim_backend_selected_in_a_fresh_process(tmp_path):
    """--backend sim switches a new process to the simulator before numba loads."""
    out = tmp_path / "s.png"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run(
        [sys.executable, "-m", "raytracer_app", "render", "spheres", "--backend", "sim", "--spheres", "3",
         "--size", "12x12", "--block", "4x4", "--repeats", "1", "--out", str(out)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "sim (CUDA simulator)" in proc.stdout and out.exists()


def test_render_julia_in_float64_prints_a_view_that_renders_again(tmp_path, capsys):
    import shlex

    out, again = tmp_path / "deep.png", tmp_path / "again.png"
    code, text, err = run(capsys, "render", "julia", "--backend", "cpu", "--size", "40x30", "--c", "-0.123,0.745",
                          "--center", "-0.0123456789012345,0.3", "--zoom", "1e9", "--iterations", "80",
                          "--precision", "float64", "--repeats", "1", "--out", str(out))
    assert code == 0, err
    assert read_png_text(out)["raytracer:precision"] == "float64"
    assert "view: centre -0.0123456789012345, 0.3  zoom 1000000000.0" in text
    line = next(t for t in text.splitlines() if t.startswith("again: "))[len("again: "):]
    argv = shlex.split(line.replace(str(out), str(again)))
    assert argv[0] == "raytracer-app" and "--precision" in argv
    code, _, err = run(capsys, *argv[1:], "--backend", "cpu", "--repeats", "1")
    assert code == 0, err
    np.testing.assert_array_equal(read_png(again), read_png(out))


def test_render_julia_in_float32_past_its_resolution_says_so(tmp_path, capsys):
    code, text, err = run(capsys, "render", "julia", "--backend", "cpu", "--size", "20x20", "--zoom", "1e9",
                          "--center", "0.3,0.1", "--iterations", "20", "--repeats", "1", "--out", str(tmp_path / "j.png"))
    assert code == 0, err
    assert "float32 cannot resolve this view" in text and "--precision float64" in text


@pytest.mark.parametrize("memory", ["shared", "binned"])
def test_render_spheres_with_every_memory_on_cuda_kernels(tmp_path, capsys, cuda_backend, memory):
    scene = tmp_path / "three.json"
    scene.write_text('{"spheres": [{"center": [0, 0, 0], "radius": 5, "color": [1, 0.5, 0]},'
                     ' {"center": [4, 3, 10], "radius": 3, "color": [0, 0, 1]},'
                     ' {"center": [-6, -4, -5], "radius": 4, "color": [0, 1, 0]}]}')
    out = tmp_path / "s.png"
    code, text, err = run(capsys, "render", "spheres", "--backend", cuda_backend.kind, "--scene", str(scene),
                          "--size", "20x16", "--memory", memory, "--block", "8x8", "--repeats", "1", "--out", str(out))
    assert code == 0, err
    assert f"memory {memory}" in text
    from kernels.spheres.scene import load_scene

    assert np.abs(read_png(out).astype(int) - spheres_reference(load_scene(scene).spheres, 20, 16)).max() <= 1


def test_constant_memory_stops_at_its_capacity(tmp_path, capsys, cuda_backend):
    out = tmp_path / "x.png"
    code, _, err = run(capsys, "render", "spheres", "--backend", cuda_backend.kind, "--memory", "constant",
                       "--spheres", "2341", "--size", "8x8", "--out", str(out))
    assert code == 2 and not out.exists()
    assert "sphere count 2341 is out of range; allowed 1..2340 (64 KiB of constant memory / 28 bytes per sphere)" in err
