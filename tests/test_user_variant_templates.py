"""`variant new`: a template of every built-in GPU variant of both targets verifies as it is in the
simulator (those the simulator cannot run are skipped, as the built-ins are) and compiles for sm_90 and sm_80.
The cases are the registry's GPU variants: a new built-in without a template fails here."""

import csv

import pytest

from kernels.inspector import toolchain
from kernels.registry import ALGORITHMS
from kernels.user_variants import templates
from raytracer_app.cli import main

# every built-in GPU variant of every algorithm that takes variant files (issue 24)
CASES = [(a.name, v) for a in ALGORITHMS if a.user is not None for v in a.variants if v.kind == "gpu"]
needs_compiler = pytest.mark.skipif(bool(toolchain.missing()), reason="the compiler packages are not installed "
                                    f"({toolchain.EXTRA_HINT})")


def test_a_paper_kernel_has_a_template(tmp_path, capsys):
    path = tmp_path / "t.py"
    assert main(["variant", "new", "reduction", "--from", "complete-unroll", str(path)]) == 0
    text = path.read_text()
    # the paper's launch rule (grid n / 2 block) and the per-block-size compile travel with the copy
    assert "def _two_per_thread(n: int, block: int)" in text and "grid_for_n=_two_per_thread" in text
    assert "complete_unroll_kernel(op, a.dtype.name, launch.block)" in text


def test_every_built_in_gpu_variant_has_a_template():
    targets = {a.name for a in ALGORITHMS if a.user is not None}
    assert targets == {"reduction", "histogram"}
    assert sorted((t, v.name) for t, v in CASES) == sorted((t, name) for t in targets for name in templates.names(t))


def _new(tmp_path, capsys, target, variant):
    path = tmp_path / f"{target}-{variant}.py"
    assert main(["variant", "new", target, "--from", variant, str(path)]) == 0
    capsys.readouterr()
    return path


@pytest.mark.slow
@pytest.mark.parametrize("target, variant", CASES, ids=lambda x: getattr(x, "name", x))
def test_the_template_verifies_in_the_simulator(tmp_path, capsys, target, variant):
    if variant.sim_skip:
        pytest.skip(f"{target} {variant.name}: {variant.sim_skip}")
    path = _new(tmp_path, capsys, target, variant.name)
    out_csv = tmp_path / "rows.csv"
    # dot (two inputs, float32) once, on the seed's sequential tree and on Harris's two-per-thread load
    two_ops = variant.name in ("sequential", "complete-unroll")
    ops = (("sum", "dot") if two_ops else ("sum",)) if target == "reduction" else (None,)
    for op in ops:
        extra = ["--op", op, "--dtype", "float32" if op == "dot" else "int32"] if op else []
        # the simulator runs every thread in Python: on a loaded 2-core CI machine one run can pass the
        # default 10 s watchdog, which is for kernels that never end, not for slow ones
        code = main(["bench", target, "--backend", "sim", "--n", "257", "--block", "64", "--repeats", "1",
                     "--variant-timeout", "120", "--variant-file", str(path), "--variants", f"my-{variant.name}",
                     "--csv", str(out_csv), *extra])
        out, err = capsys.readouterr()
        assert code == 0, out + err
        with open(out_csv, newline="") as f:
            (row,) = list(csv.DictReader(f))
        assert row["variant"] == f"my-{variant.name}" and row["verified"] == "yes", row


SIM_SKIPPED = [(t, v) for t, v in CASES if v.sim_skip]


@pytest.mark.parametrize("target, variant", SIM_SKIPPED, ids=lambda x: getattr(x, "name", x))
def test_a_template_the_simulator_cannot_run_is_skipped_as_its_built_in(tmp_path, capsys, target, variant):
    """Issue 35: the template of best failed in the simulator with "AttributeError: 'FakeCUDAModule' object has
    no attribute 'shfl_down_sync'" where the built-in says skipped: both now skip, in the same words."""
    path = _new(tmp_path, capsys, target, variant.name)
    out_csv = tmp_path / "rows.csv"
    code = main(["bench", target, "--backend", "sim", "--n", "1024", "--repeats", "1", "--variant-file", str(path),
                 "--variants", f"{variant.name},my-{variant.name}", "--csv", str(out_csv)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    with open(out_csv, newline="") as f:
        rows = {r["variant"]: r for r in csv.DictReader(f)}
    built_in, mine = rows[variant.name], rows[f"my-{variant.name}"]
    assert built_in["verified"] == mine["verified"] == "skipped"
    assert built_in["note"] == mine["note"] == variant.sim_skip
    assert "AttributeError" not in out + err


def test_only_a_missing_warp_intrinsic_is_said_as_the_simulators_lack():
    from kernels.harness.variants import NO_WARP_SHUFFLES, sim_lacks

    error = "v.py:41: AttributeError: 'FakeCUDAModule' object has no attribute 'shfl_down_sync'"
    assert sim_lacks(error) == NO_WARP_SHUFFLES
    assert sim_lacks("v.py:3: AttributeError: 'FakeCUDAModule' object has no attribute 'bogus'") == ""
    assert sim_lacks("v.py:9: ZeroDivisionError: division by zero") == ""


@pytest.fixture(scope="module")
def compiled_templates(tmp_path_factory):
    """compiled(target, variant, arch): every template compiled for ``arch`` as a variant file is, all of
    them for both architectures in one compiler process (a process each costs a numba start per template;
    numba lowers each kernel once for both)."""
    import ast

    from kernels.inspector.compiler import variant_files_for_archs

    folder = tmp_path_factory.mktemp("templates")
    files = []
    for target, variant in CASES:
        text = templates.source(target, variant.name)
        inspect = ast.literal_eval(next(line for line in text.splitlines() if line.startswith("INSPECT = "))
                                   .split(" = ", 1)[1].split("  #")[0])
        files.append((target, f"my-{variant.name}", str(folder / f"{target}-{variant.name}.py"), text, inspect))
    by_arch: dict = {}

    def compiled(target, variant, arch):
        if arch not in by_arch:
            for each, results in variant_files_for_archs(files, ["sm_90", "sm_80"]).items():
                by_arch[each] = dict(zip([(t, v.name) for t, v in CASES], results))
        return by_arch[arch][(target, variant)]

    return compiled


@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
@pytest.mark.parametrize("target, variant", CASES, ids=lambda x: getattr(x, "name", x))
def test_the_template_compiles(compiled_templates, target, variant, arch):
    compiled = compiled_templates(target, variant.name, arch)
    if isinstance(compiled, Exception):
        raise compiled
    assert compiled.arch == arch and compiled.variant == f"my-{variant.name}"
    assert ".entry" in compiled.ptx and "registers" in compiled.ptxas_report.lower()


def test_an_unknown_built_in_is_one_line_exit_2(tmp_path, capsys):
    assert main(["variant", "new", "reduction", "--from", "numpy", str(tmp_path / "x.py")]) == 2
    assert "templates exist for every built-in GPU variant of reduction" in capsys.readouterr().err


@pytest.mark.slow
@needs_compiler
def test_inspect_a_variant_file_beside_a_built_in(tmp_path, capsys):
    path = _new(tmp_path, capsys, "reduction", "sequential")
    code = main(["inspect", "reduction", "--variant-file", str(path), "--compare", "best", "--backend", "sim"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "my-sequential" in out and "best" in out and "registers per thread" in out
    code = main(["inspect", "reduction", "--variant-file", str(path), "--show", "source", "--backend", "sim"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"({path}, line" in out and "def sequential(a, b, block_partials):" in out  # the file's own lines


def test_inspect_a_file_without_inspect_is_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "v.py"
    path.write_text('from numba import cuda\nTARGET = "reduction"\nNAME = "v"\n\n\ndef run(a, b, out, launch, op):\n'
                    '    pass\n')
    assert main(["inspect", "reduction", "--variant-file", str(path), "--backend", "sim"]) == 2
    assert "declares no INSPECT" in capsys.readouterr().err
