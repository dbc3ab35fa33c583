"""Your own variant (docs/user-variants.md): a file loads in a child process as one more variant, runs and
verifies beside the built-ins; a file that does not load is one line with its file and line (exit 2), a
`run` that does nothing is FAILED (exit 1), and a kernel that never ends is stopped by the watchdog."""

import csv
import textwrap

import pytest

from raytracer_app.cli import main
from tests.runs import plan

GOOD = '''\
"""Atomics per thread: a plain grid-stride sum."""
import numba
from numba import cuda

TARGET = "reduction"
NAME = "my-atomics"
SUPPORTS = {"ops": ("sum",), "dtypes": ("int32",)}


@cuda.jit
def kernel(a, out):
    i = cuda.grid(1)
    total = numba.int64(0)
    while i < a.size:
        total += a[i]
        i += cuda.gridsize(1)
    cuda.atomic.add(out, 0, total)


def run(a, b, out, launch, op):
    kernel[launch.grid, launch.block](a, out)
'''


def write(tmp_path, text, name="variant.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def bench(capsys, path, *extra):
    code = main(["bench", "reduction", "--backend", "sim", "--n", "1000", "--block", "64", "--grid", "2",
                 "--repeats", "1", "--variant-file", path, *extra])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_a_good_file_verifies_and_gets_a_row_beside_the_built_ins(tmp_path, capsys):
    path = write(tmp_path, GOOD)
    out_csv = tmp_path / "rows.csv"
    code, out, err = bench(capsys, path, "--variants", "per-thread-partials,my-atomics", "--csv", str(out_csv))
    assert code == 0, err
    with open(out_csv, newline="") as f:
        rows = {r["variant"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"per-thread-partials", "my-atomics"}
    mine = rows["my-atomics"]
    assert mine["verified"] == "yes" and mine["result"] == mine["expected"]
    assert f"user variant {path} sha256 " in mine["note"]
    import hashlib

    assert hashlib.sha256(open(path, "rb").read()).hexdigest()[:12] in mine["note"]


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_an_op_the_file_does_not_support_is_skipped(tmp_path, capsys):
    code, out, err = bench(capsys, write(tmp_path, GOOD), "--variants", "my-atomics", "--op", "dot")
    assert code == 0, err
    assert "skipped" in out and "supports ops sum; not dot" in out


def test_a_syntax_error_is_one_line_with_file_and_line_exit_2(tmp_path, capsys):
    path = write(tmp_path, GOOD.replace("def run(a, b, out, launch, op):", "def run(a, b, out, launch, op:"))
    code, out, err = bench(capsys, path)
    assert code == 2
    assert err.strip().splitlines() == [err.strip()] and f"{path}:20: SyntaxError" in err
    assert "variant " not in out  # nothing ran


def test_a_file_that_raises_on_import_names_its_line(tmp_path, capsys):
    path = write(tmp_path, GOOD.replace('NAME = "my-atomics"', 'NAME = "my-atomics"\nBROKEN = 1 / 0'))
    code, out, err = bench(capsys, path)
    assert code == 2 and f"{path}:7: ZeroDivisionError" in err


@pytest.mark.parametrize("change, message", [
    (('TARGET = "reduction"', 'TARGET = "nothing"'), ":5: TARGET must be one of"),
    (('NAME = "my-atomics"', 'NAME = "best"'), ":6: NAME 'best' is a built-in reduction variant"),
    (("def run(a, b, out, launch, op):\n    kernel[launch.grid, launch.block](a, out)\n", ""), ": the file must define run"),
])
def test_declarations_are_checked(tmp_path, capsys, change, message):
    path = write(tmp_path, GOOD.replace(*change))
    code, out, err = bench(capsys, path)
    assert code == 2 and message in err, err


def test_a_run_that_does_nothing_is_failed_exit_1(tmp_path, capsys):
    path = write(tmp_path, GOOD.replace("    kernel[launch.grid, launch.block](a, out)", "    pass"))
    code, out, err = bench(capsys, path, "--variants", "my-atomics")
    assert code == 1
    row = next(line for line in out.splitlines() if line.startswith("my-atomics"))
    assert "FAILED" in row and "off by" in row  # the mismatch: the result against the reference


@pytest.mark.slow  # waits for the watchdog
def test_a_kernel_that_never_ends_is_stopped_by_the_watchdog(tmp_path, capsys):
    path = write(tmp_path, GOOD.replace("        i += cuda.gridsize(1)", "        i += 0"))
    code, out, err = bench(capsys, path, "--variants", "my-atomics", "--variant-timeout", "3")
    assert code == 1
    row = next(line for line in out.splitlines() if line.startswith("my-atomics"))
    assert "error" in row and "stopped by the watchdog" in row and "3 s" in row


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_user_code_never_runs_in_the_apps_process(tmp_path):
    """Loading only checks syntax here; the import happens in the child (its side effect is not ours)."""
    import os

    from kernels import backend
    from kernels.user_variants import loader

    marker = tmp_path / "ran-here"
    path = write(tmp_path, GOOD.replace('NAME = "my-atomics"',
                                        f'NAME = "my-atomics"\nimport os\nPID = os.getpid()\nopen({str(marker)!r}, "w").write(str(PID))'))
    variant = loader.load(path, backend.resolve("sim"))
    try:
        assert variant.name == "my-atomics" and loader.is_user(variant)
        assert marker.read_text() != str(os.getpid())
    finally:
        loader.end_children()


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_a_file_of_another_target_is_refused(tmp_path, capsys):
    code = main(["bench", "histogram", "--backend", "sim", "--n", "100", "--variant-file", write(tmp_path, GOOD)])
    assert code == 2 and "declares TARGET 'reduction'; this is `bench histogram`" in capsys.readouterr().err


def test_numba_compile_errors_are_bad_files_naming_their_line():
    """On a GPU numba compiles at the first call: its typing errors name the file's line, and the CLI exits 2
    on them as on a file that does not load (the simulator compiles nothing, so this is checked directly)."""
    from numba.core.errors import TypingError

    from kernels.user_variants import child_side

    exc = TypingError('Failed in cuda mode pipeline (step: nopython frontend)\nUnknown attribute \'sizee\'\n\n'
                      'File "/home/me/mine.py", line 12:\ndef kernel(a, out):\n    <source elided>')
    assert child_side._is_compile_error(exc) and not child_side._is_compile_error(ValueError("x"))
    assert child_side.where(exc, "/home/me/mine.py").startswith("/home/me/mine.py:12: TypingError: ")


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_the_problem_is_shipped_once_and_each_run_says_its_phases(tmp_path, monkeypatch):
    """A second run on the same problem (a re-run, or another file) sends the child no arrays; a new child
    (after a watchdog kill or a crash) asks for them again. Every run reports its phases."""
    from kernels import backend
    from kernels.harness import bench as harness
    from kernels.registry import by_name
    from kernels.user_variants import loader

    sent = []
    ask = loader._ask
    monkeypatch.setattr(loader, "_ask", lambda b, payload, *a: sent.append(payload.get("problem")) or ask(b, payload, *a))
    sim = backend.resolve("sim")
    spec = by_name("reduction")
    problem = spec.make_problem(1000, spec.options_for({}, sim), 0)
    try:
        variant = loader.load(write(tmp_path, GOOD), sim)
        for _ in range(2):
            sent.clear()
            (row,) = harness.run(plan(sim, 1, [harness.Launch(block=64, grid=2)]), [variant], [problem])
            assert row.verified == "yes" and row.result == row.expected
            assert set(variant.run.phases) >= {"ship", "copy", "time"} and "compile" not in variant.run.phases
            assert row.timing.repeats == 1  # the simulator: one call, verified and timed
        assert sent == [None]  # the second run: one ask, without the arrays
        loader.end_children()
        sent.clear()
        loader.load(variant.run.file.path, sim)
        harness.run(plan(sim, 1, [harness.Launch(block=64, grid=2)]), [variant], [problem])
        assert [p is None for p in sent] == [True, True, False]  # load; the run, answered 'need_problem'; again
    finally:
        loader.end_children()


def test_the_childs_warm_up_kernel_runs():
    """What the child compiles on a GPU before any Run (here in the simulator): 32 threads add one each."""
    from kernels.user_variants.warmup import first_compile

    assert first_compile() == 32
