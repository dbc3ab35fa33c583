"""Issue 21, class A: edge values on the command line end in one line and exit 2 (bad input), and
output the user asked for is not lost when stdout's reader goes away."""

import json
import os
import subprocess
import sys

import pytest

from kernels.inspector import toolchain
from raytracer_app.cli import EXIT_BAD_INPUT, main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HUGE = "1" * 5000
LONG = "1" * 400


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_refusal(capsys, *argv):
    code, out, err = run(capsys, *argv)
    assert code == EXIT_BAD_INPUT, (code, out, err)
    assert err.count("\n") == 1 and err.startswith("raytracer-app: error: "), err
    assert len(err) < 400, err  # the 5000 digits are not echoed back
    return err


@pytest.mark.parametrize("argv, words", [
    (("render", "julia", "--size", HUGE), "size"),
    (("render", "julia", "--size", f"8x{HUGE}"), "image height"),
    (("render", "julia", "--size", f"{HUGE}x8"), "image width"),
    (("render", "julia", "--backend", "sim", "--size", "8x8", "--block", HUGE), "block"),
    (("render", "julia", "--backend", "sim", "--size", "8x8", "--block", f"{HUGE}x2"), "block x"),
    (("render", "julia", "--iterations", HUGE), "--iterations"),
    (("bench", "reduction", "--backend", "sim", "--block", HUGE), "--block"),
    (("bench", "reduction", "--n", HUGE), "--n"),
    (("bench", "hashtable", "--buckets", LONG), "--buckets"),
    (("inspect", "reduction", "best", "--block", HUGE), "--block"),
])
def test_numbers_with_thousands_of_digits_are_one_line(tmp_path, capsys, argv, words):
    argv = (*argv, "--out", str(tmp_path / "x.png")) if argv[0] == "render" else argv
    err = one_line_refusal(capsys, *argv)
    assert words in err and "characters" in err


def test_a_huge_bucket_count_is_blamed_not_n(capsys):
    err = one_line_refusal(capsys, "bench", "hashtable", "--backend", "cpu", "--buckets", "1099511627776")
    assert "--buckets 1099511627776 needs about" in err and "--n" not in err


@pytest.mark.parametrize("argv, option", [
    (("render", "julia", "--size", ""), "--size"),
    (("render", "julia", "--block", " "), "--block"),
    (("render", "spheres", "--scene", ""), "--scene"),
    (("bench", "reduction", "--csv", ""), "--csv"),
    (("bench", "reduction", "--block", ""), "--block"),
    (("inspect", "reduction", "best", "--arch", ""), "--arch"),
])
def test_empty_values_are_refused_not_taken_as_absent(tmp_path, capsys, argv, option):
    value = argv[-1]
    argv = (*argv, "--out", str(tmp_path / "x.png")) if argv[0] == "render" else argv
    err = one_line_refusal(capsys, *argv)
    assert f"{option} {value!r} is empty" in err
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("extra", [("--backend", "cuda"), ("--device", "99")])
def test_inspect_refuses_a_gpu_it_does_not_have(capsys, extra):
    from kernels import backend

    if backend.gpu_available():
        pytest.skip("a CUDA GPU is present: --backend cuda is valid here")
    err = one_line_refusal(capsys, "inspect", "reduction", "best", "--show", "source", *extra)
    assert extra[0] in err or "cuda" in err


@pytest.mark.parametrize("argv, option", [
    (("--c", "1e308,1e308"), "--c"),
    (("--c", "nan,0"), "--c"),
    (("--center", "1e200,0", "--precision", "float64"), "--center"),
    (("--c", "1e100,0"), "--c"),  # finite in float64, infinite in float32
    (("--zoom", "1e-300", "--precision", "float64"), "--zoom"),
])
def test_julia_values_whose_square_overflows_are_refused(tmp_path, capsys, argv, option):
    out = tmp_path / "j.png"
    with _no_warnings():
        err = one_line_refusal(capsys, "render", "julia", "--backend", "cpu", "--size", "8x8", *argv,
                               "--out", str(out))
    assert option in err and not out.exists()


def _no_warnings():
    import warnings

    class _Guard:
        def __enter__(self):
            self._cm = warnings.catch_warnings()
            self._cm.__enter__()
            warnings.simplefilter("error", RuntimeWarning)

        def __exit__(self, *exc):
            return self._cm.__exit__(*exc)
    return _Guard()


@pytest.mark.slow
def test_the_largest_allowed_float64_view_renders_without_warnings(tmp_path, capsys):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        code, out, err = run(capsys, "render", "julia", "--backend", "cpu", "--size", "8x8", "--c=-1e150,1e150",
                             "--precision", "float64", "--repeats", "1", "--out", str(tmp_path / "j.png"))
    assert code == 0, err


def test_scene_names_are_printed_with_control_characters_escaped(tmp_path, capsys):
    scene = tmp_path / "evil.json"
    scene.write_text(json.dumps({"name": "\x1b]0;pwned\x07\x1b[31m<b>red</b>\nline",
                                 "spheres": [{"center": [0, 0, 0], "radius": 3, "color": [1, 0, 0]}]}))
    code, out, err = run(capsys, "render", "spheres", "--backend", "cpu", "--scene", str(scene), "--size", "8x8",
                         "--repeats", "1", "--out", str(tmp_path / "s.png"))
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert "scene \\x1b]0;pwned\\x07\\x1b[31m<b>red</b>\\nline" in out


def test_error_lines_escape_control_characters(tmp_path, capsys):
    err = one_line_refusal(capsys, "render", "julia", "--size", "\x1b[2J8x8", "--out", str(tmp_path / "x.png"))
    assert "\x1b" not in err and "\\x1b[2J" in err


@pytest.mark.slow  # a new interpreter
def test_csv_is_written_when_stdout_is_closed_early(tmp_path):
    csv = tmp_path / "rows.csv"
    env = dict(os.environ, PYTHONPATH=ROOT)
    cmd = [sys.executable, "-m", "raytracer_app", "bench", "reduction", "--backend", "cpu", "--n", "4096",
           "--repeats", "1", "--csv", str(csv)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    first = proc.stdout.readline()  # as `| head -1`: one line, then the reader is gone
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=300)
    assert first.startswith(b"backend:")
    assert code == 0, err
    assert "BrokenPipe" not in err and "Traceback" not in err and "Exception ignored" not in err
    assert csv.exists() and csv.read_text().count("\n") >= 2


def test_inspector_never_runs_a_ptxas_from_the_current_folder(tmp_path):
    # a folder laid out like NVIDIA's wheels (nvidia/<pkg>/bin/ptxas) where the user merely stands
    planted = tmp_path / "nvidia" / "cu13" / "bin"
    planted.mkdir(parents=True)
    for tool in ("ptxas", "nvdisasm"):
        (planted / tool).write_text("#!/bin/sh\ntouch ran\n")
        (planted / tool).chmod(0o755)
    code = ("from kernels.inspector import toolchain as t; "
            "print(t.ptxas_path()); print(t.nvdisasm_path()); print(t.nvvm_library())")
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    for found in set(done.stdout.split()) - {"None"}:
        assert not os.path.realpath(os.path.join(tmp_path, found)).startswith(str(tmp_path.resolve())), found
    assert not (tmp_path / "ran").exists()
@pytest.mark.slow  # a new interpreter and a real compile
@pytest.mark.skipif(bool(toolchain.missing()), reason=f"the compiler packages are not installed ({toolchain.EXTRA_HINT})")
def test_inspect_sass_into_a_reader_that_closes_early_ends_quietly():
    """`raytracer-app inspect reduction best --show sass | head -1`: the reader is gone while the SASS is
    printed. No message, no traceback, the command's own status."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    cmd = [sys.executable, "-m", "raytracer_app", "inspect", "reduction", "best", "--show", "sass"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=300)
    assert first.startswith(b"reduction best: sm_90")
    assert code == 0 and err == "", err


@pytest.mark.parametrize("argv, choices", [(["render"], "one of spheres, julia"),
                                           (["lesson"], "one of reduction, constant-memory, atomics")])
def test_a_missing_command_argument_lists_the_choices(capsys, argv, choices):
    """Issue 50 item 19: `lesson` and `render` alone said "required" without the choices."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and choices in err and len(err.strip().splitlines()) == 1


def test_a_render_says_what_it_waits_for_before_it_waits(capsys, tmp_path):
    code = main(["render", "spheres", "--backend", "cpu", "--size", "16x12", "--spheres", "2", "--repeats", "1",
                 "--out", str(tmp_path / "s.png")])
    out = capsys.readouterr().out
    assert code == 0 and out.splitlines()[0].startswith("rendering spheres 16x12 on cpu: ")
    assert "CPU kernel" in out.splitlines()[0]
