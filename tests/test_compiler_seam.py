"""The compiler seam (kernels/backend/compiler.py): RAYTRACER_COMPILER and --compiler pick the compiler of the
CUDA kernels, numba-cuda by default; the simulator stays numba-cuda's; kernel modules take ``cuda`` from the
seam; numba-cuda-mlir's private names are checked on the installed version."""

from __future__ import annotations

import importlib.util
from importlib.metadata import version

import pytest

from kernels.backend import compiler
from kernels.errors import InputError
from raytracer_app.cli import EXIT_BAD_INPUT, main

HAS_MLIR = importlib.util.find_spec("numba_cuda_mlir") is not None


def test_numba_cuda_is_the_default(monkeypatch):
    monkeypatch.delenv(compiler.COMPILER_ENV, raising=False)
    assert compiler.requested() == "numba-cuda"
    monkeypatch.setenv(compiler.COMPILER_ENV, "  ")
    assert compiler.requested() == "numba-cuda"


def test_the_setting_picks_the_compiler_and_refuses_an_unknown_one(monkeypatch):
    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda-mlir")
    assert compiler.requested() == "numba-cuda-mlir"
    monkeypatch.setenv(compiler.COMPILER_ENV, "nvcc")
    with pytest.raises(InputError, match="RAYTRACER_COMPILER 'nvcc' is not one of numba-cuda, numba-cuda-mlir"):
        compiler.requested()


def test_the_simulator_stays_numba_cudas(monkeypatch):
    """The test session runs kernels in the simulator: whatever is asked for, its cuda is numba's."""
    from numba import config

    if not config.ENABLE_CUDASIM:
        pytest.skip("a GPU session: the simulator is off")
    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda-mlir")
    assert compiler.active() == "numba-cuda" and not compiler.uses_mlir()
    import numba.cuda

    assert compiler.cuda_module() is numba.cuda


def test_kernel_modules_take_cuda_from_the_seam():
    """The simulator swaps a kernel's module global ``cuda`` for its fake module only when it is numba's
    module object itself: the seam hands out that very object."""
    import numba.cuda

    from kernels.reduction import gpu

    assert gpu.cuda is numba.cuda


def test_choose_sets_the_setting_and_refuses_a_change_after_kernels_loaded(monkeypatch):
    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda")
    monkeypatch.setattr(compiler, "_taken", None)
    compiler.choose("numba-cuda-mlir")
    assert compiler.requested() == "numba-cuda-mlir"
    with pytest.raises(InputError, match="is not one of"):
        compiler.choose("clang")
    monkeypatch.setattr(compiler, "_taken", "numba-cuda")
    monkeypatch.setattr(compiler, "simulator_active", lambda: False)
    with pytest.raises(InputError, match="already compiles its kernels with numba-cuda"):
        compiler.choose("numba-cuda-mlir")
    compiler.choose("numba-cuda")  # the same one again is fine


def test_asking_for_mlir_without_it_installed_says_how_to_install(monkeypatch):
    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda-mlir")
    monkeypatch.setattr(compiler, "simulator_active", lambda: False)
    monkeypatch.setattr(compiler, "mlir_installed", lambda: False)
    with pytest.raises(InputError, match=r"needs numba-cuda-mlir: pip install -e '\.\[mlir\]'"):
        compiler.cuda_module()


@pytest.mark.parametrize("given, words", [
    (["--compiler", "numba-cuda,,numba-cuda-mlir"], "empty"),
    (["--compiler", "numba-cuda,numba-cuda"], "twice"),
    (["--compiler", "numba-cuda", "--compiler", "numba-cuda"], "twice"),  # the flag repeated: the same list
    (["--compiler", "numba-cuda,gcc"], "is not one of"),
])
def test_the_compiler_list_is_read_by_the_one_list_parser(capsys, given, words):
    assert main(["bench", "reduction", "--backend", "cpu", *given]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, words", [
    (["bench", "reduction", "--compiler", "gcc"], "--compiler 'gcc' is not one of numba-cuda, numba-cuda-mlir"),
    (["render", "julia", "--compiler", "numba-cuda,numba-cuda-mlir", "--out", "never-written.png"],
     "--compiler takes one of"),
    (["inspect", "reduction", "best", "--compiler", ""], "--compiler"),
    (["lesson", "reduction", "--compiler", "x"], "is not one of"),
    (["access", "reduction", "best", "--compiler", "x"], "is not one of"),
])
def test_a_bad_compiler_option_is_one_line_and_status_2(capsys, argv, words):
    assert main(argv) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_a_single_compiler_option_sets_the_process_setting(monkeypatch):
    from raytracer_app.cli.parser import apply_compiler

    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda")
    monkeypatch.setattr(compiler, "_taken", None)

    class Args:
        compiler = ["numba-cuda-mlir"]

    apply_compiler(Args())
    assert compiler.requested() == "numba-cuda-mlir"


@pytest.mark.skipif(not HAS_MLIR, reason="numba-cuda-mlir is not installed (the mlir extra)")
def test_numba_cuda_mlir_private_names_are_checked_on_the_installed_version():
    from numba_cuda_mlir import tools

    from kernels.backend.mlir_private import CHECKED_ON

    assert version("numba-cuda-mlir") == CHECKED_ON, "re-check kernels/backend/mlir_private.py on this numba-cuda-mlir"
    assert hasattr(tools, "_cached_cc") and callable(tools.get_gpu_compute_capability)


def test_a_variant_numba_cuda_mlir_cannot_compile_is_a_skipped_row_naming_the_feature(monkeypatch):
    """Under numba-cuda-mlir on a GPU the constant-memory sphere variants are skipped, saying which feature
    is missing; under numba-cuda, and in the simulator, they run."""
    from kernels.backend import SkipKind
    from kernels.spheres import VARIANTS

    by_name = {v.name: v for v in VARIANTS}

    class Gpu:
        is_simulator = False

        def skip_reason(self, kind):
            return None

    monkeypatch.setattr(compiler, "simulator_active", lambda: False)
    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda-mlir")
    for name in ("spheres-constant", "spheres-frame-to-host"):
        reason = by_name[name].skip_reason(Gpu())
        assert reason.kind is SkipKind.NOT_UNDER_COMPILER
        assert reason.text == "numba-cuda-mlir lacks a run-time-writable __constant__ array (cudaMemcpyToSymbol)"
    assert by_name["spheres-global"].skip_reason(Gpu()) is None
    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda")
    assert by_name["spheres-constant"].skip_reason(Gpu()) is None


@pytest.mark.slow
@pytest.mark.skipif(not HAS_MLIR, reason="numba-cuda-mlir is not installed (the mlir extra)")
def test_every_declared_kernel_compiles_under_numba_cuda_mlir_but_the_skipped_ones(tmp_path):
    """Offline, for sm_90 and sm_120, in the inspector's child: every declared kernel but those whose variant
    names the feature numba-cuda-mlir lacks (about a minute: slow). sm_120's PTX comes from 0.6.0 ending in a
    NUL byte, which the inspector strips (ptxas refuses it)."""
    from importlib.metadata import PackageNotFoundError

    try:
        version("nvidia-nvjitlink")
    except PackageNotFoundError:
        pytest.skip("numba-cuda-mlir links with nvJitLink (nvidia-nvjitlink, in the mlir extra)")
    from kernels.inspector import toolchain
    from kernels.inspector.declarations import all_declarations
    from kernels.registry import ALGORITHMS

    if toolchain.missing():
        pytest.skip("needs NVIDIA's compiler packages (the test extra)")
    lacking = {(a.name, v.name) for a in ALGORITHMS for v in a.variants if v.mlir_lacks}
    from kernels.inspector.compiler import compile_for_archs

    by_arch = compile_for_archs(list(all_declarations()), ["sm_90", "sm_120"], tmp_path, "numba-cuda-mlir")
    for arch, compiled in by_arch.items():
        failed = {pair: str(c) for pair, c in compiled.items() if not hasattr(c, "ptx")}
        assert set(failed) == lacking, (arch, failed)
        assert all(c.numba_cuda.startswith("numba-cuda-mlir ") for c in compiled.values() if hasattr(c, "ptx"))


@pytest.mark.parametrize("argv, words", [
    (["bench", "reduction", "--backend", "cpu", "--compiler", "numba-cuda,numba-cuda-mlir"],
     "the cpu backend runs numba CPU twins"),
    (["bench", "reduction", "--backend", "sim", "--compiler", "numba-cuda-mlir"],
     "the sim backend runs numba-cuda in its simulator"),
    (["render", "julia", "--out", "j.png", "--backend", "cpu", "--compiler", "numba-cuda-mlir"],
     "the cpu backend runs numba CPU twins"),
    (["lesson", "reduction", "--backend", "sim", "--compiler", "numba-cuda-mlir"], "simulator"),
])
def test_numba_cuda_mlir_is_refused_where_no_cuda_kernel_it_builds_would_run(capsys, argv, words):
    """The CPU twins are numba's and the simulator is numba-cuda's: asking for numba-cuda-mlir there would
    silently measure something else."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and "use --backend cuda" in err and len(err.strip().splitlines()) == 1


def test_a_side_by_side_bench_needs_a_gpu(capsys):
    from raytracer_app.cli import bench_compilers

    class Cpu:
        is_gpu, kind = False, "cpu"

    class Args:
        argv = ["raytracer-app", "bench", "reduction"]

    with pytest.raises(InputError, match="the cpu backend has one compiler"):
        bench_compilers.run(Args(), ["numba-cuda", "numba-cuda-mlir"], Cpu())

    class Gpu:
        is_gpu, kind = True, "cuda"

    for option, value, words in (("json", "r.json", "--csv and --json write one compiler's run"),
                                 ("variant_file", ["mine.py"], "a variant file is numba-cuda code")):
        args = Args()
        setattr(args, option, value)
        with pytest.raises(InputError, match=words):
            bench_compilers.run(args, ["numba-cuda", "numba-cuda-mlir"], Gpu())


def test_each_compilers_run_is_the_same_command_with_its_compiler_and_result_file():
    from raytracer_app.cli.bench_compilers import child_argv

    argv = ["bench", "reduction", "--n", "1000", "--compiler", "numba-cuda,numba-cuda-mlir", "--variants=best",
            "--compiler=numba-cuda", "--repeats", "3"]
    assert child_argv(argv, "numba-cuda-mlir", "/r.json") == [
        "bench", "reduction", "--n", "1000", "--variants=best", "--repeats", "3",
        "--compiler", "numba-cuda-mlir", "--json", "/r.json"]


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_MLIR, reason="numba-cuda-mlir is not installed (the mlir extra)")
def test_the_truncated_64_bit_shuffle_is_a_failed_row_under_numba_cuda_mlir(tmp_path, capfd):
    """Values near 2^30 make every thread's int64 partial sum exceed 32 bits at once: numba-cuda-mlir 0.6.0's
    shuffles keep the low 32 bits only, so warp-shuffle and best give a wrong sum under it (FAILED rows with
    the mismatch), while the same source verifies under numba-cuda and sequential (no shuffle) under both."""
    import numpy as np

    data = tmp_path / "big.npy"
    np.save(data, np.full(1 << 22, (1 << 30) - 1, np.int32))
    code = main(["bench", "reduction", "--backend", "cuda", "--input", str(data), "--repeats", "2",
                 "--variants", "sequential,warp-shuffle,best", "--compiler", "numba-cuda,numba-cuda-mlir"])
    out = capfd.readouterr().out
    assert code == 1
    under_cuda, under_mlir = out.split("== under numba-cuda-mlir")
    under_mlir = under_mlir.split("== numba-cuda-mlir against")[0]

    def verdict(section, variant):
        line = next(ln for ln in section.splitlines() if ln.startswith(variant + " "))
        return "FAILED" if " FAILED" in line else "yes" if " yes" in line else line

    assert [verdict(under_cuda, v) for v in ("sequential", "warp-shuffle", "best")] == ["yes", "yes", "yes"]
    assert [verdict(under_mlir, v) for v in ("sequential", "warp-shuffle", "best")] == ["yes", "FAILED", "FAILED"]
    assert "FAILED verification in NEW" in out  # the comparison names it, never judges its time



def test_compiler_compare_takes_one_variant_and_names_a_missing_feature(capsys):
    assert main(["inspect", "reduction", "--all", "--compiler-compare"]) == EXIT_BAD_INPUT
    assert "--compiler-compare takes one VARIANT" in capsys.readouterr().err
    assert main(["inspect", "spheres", "spheres-constant", "--compiler-compare"]) == 1
    err = capsys.readouterr().err
    assert "numba-cuda-mlir cannot compile spheres spheres-constant: it lacks a run-time-writable __constant__" in err


@pytest.mark.slow
@pytest.mark.skipif(not HAS_MLIR, reason="numba-cuda-mlir is not installed (the mlir extra)")
def test_compiler_compare_shows_the_truncated_64_bit_shuffles(capsys):
    """warp-shuffle's 64-bit tree: numba-cuda shuffles each 64-bit value as two 32-bit halves (10 SASS
    shuffles), numba-cuda-mlir 0.6.0 only the low half (5), and the sentence says what that means."""
    import json

    from kernels.inspector import toolchain

    if toolchain.missing():
        pytest.skip("needs NVIDIA's compiler packages (the test extra)")
    assert main(["inspect", "reduction", "warp-shuffle", "--compiler-compare", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["compilers"] == ["numba-cuda", "numba-cuda-mlir"]
    rows = {quantity.strip(): (a, b) for quantity, a, b in doc["rows"]}
    assert rows["warp shuffle"] == ("10", "5")
    assert "truncates a 64-bit shfl_*_sync to 32 bits" in doc["sentence"]


def test_under_numba_cuda_mlir_launches_are_its_own_and_the_constant_array_refuses(monkeypatch):
    """numba-cuda-mlir's launch has its own argument layout: no numba-cuda packed launch for its kernels; and
    the run-time __constant__ array, which it lacks, refuses with the words the skipped rows use."""
    import kernels.backend as backend_pkg
    from kernels.device_functions import constant_memory
    from kernels.launch.packed import packed_launch
    from kernels.spheres import MLIR_LACKS_CONSTANT

    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda-mlir")
    monkeypatch.setattr(compiler, "simulator_active", lambda: False)
    monkeypatch.setattr(backend_pkg, "simulator_active", lambda: False)
    monkeypatch.setattr(constant_memory, "simulator_active", lambda: False)
    assert packed_launch(object(), 1, 32, ()) is None
    array = constant_memory.ConstantArray("test_symbol", 4)
    with pytest.raises(InputError, match="numba-cuda-mlir lacks a run-time-writable __constant__ array"):
        array.write([1, 2, 3, 4], kernel=object())
    with pytest.raises(InputError, match="numba-cuda-mlir lacks"):
        array.get()
    assert constant_memory.MLIR_LACKS == MLIR_LACKS_CONSTANT


def test_numba_cuda_mlir_refuses_the_cuda_core_arrays_that_carry_numba_cudas_types(monkeypatch):
    from kernels.backend import memory

    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda-mlir")
    monkeypatch.setenv(memory.ENV, "cuda-core")
    monkeypatch.setattr(compiler, "simulator_active", lambda: False)
    monkeypatch.setattr(memory, "simulator_active", lambda: False)
    with pytest.raises(InputError, match="RAYTRACER_MEMORY=cuda-core hands kernels numba-cuda's array types"):
        memory.implementation.__wrapped__()
    monkeypatch.setenv(memory.ENV, "")
    assert memory.implementation.__wrapped__() == "numba"


def test_a_variant_file_is_numba_cuda_code_and_refused_under_numba_cuda_mlir(monkeypatch, tmp_path):
    from kernels.user_variants import loader

    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda-mlir")
    monkeypatch.setattr(compiler, "simulator_active", lambda: False)
    with pytest.raises(InputError, match="a variant file is numba-cuda code .* run it with --compiler numba-cuda"):
        loader.load(str(tmp_path / "mine.py"), backend=None)


def test_the_overheads_table_puts_the_compilers_side_by_side():
    """scripts/compiler_overheads.py (the gates cold compile and launch overhead, measured in one run): a row per
    figure, a column per compiler, a figure one of them lacks as '-', and the kernels one did not compile named."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "compiler_overheads.py"
    spec = importlib.util.spec_from_file_location("compiler_overheads", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    text = script.table([
        {"compiler": "numba-cuda", "import_s": 1.25, "kernels": 30, "compile_s": 5.3, "first_compile_s": 0.8,
         "failed": [], "launch_us": 5.94, "launch_sync_us": 12.0, "first_launch_s": 0.4},
        {"compiler": "numba-cuda-mlir", "import_s": 1.5, "kernels": 29, "compile_s": 8.7, "first_compile_s": 2.1,
         "failed": ["spheres/spheres-shared: TypingError"], "launch_us": 3.0, "launch_sync_us": None,
         "first_launch_s": 0.9}])
    lines = text.splitlines()
    assert lines[0].split() == ["numba-cuda", "numba-cuda-mlir"]
    assert lines[3].split()[-2:] == ["5.30", "8.70"] and lines[3].startswith("cold compile, all (s)")
    assert lines[6].split()[-2:] == ["5.94", "3.00"] and lines[7].split()[-2:] == ["12.00", "-"]
    assert lines[-1] == "numba-cuda-mlir did not compile spheres/spheres-shared: TypingError"
