"""The kernel inspector: every GPU variant compiled for real (sm_90 and sm_80) in a child process, facts
checked against the compiler's own output parsed here, independently of the inspector's parsing."""

import importlib.util
import json
import os
import re
import subprocess
import tempfile
from importlib.metadata import version

import pytest

from kernels.inspector import declarations, toolchain
from kernels.inspector.occupancy import occupancy
from raytracer_app.cli import main

needs_compiler = pytest.mark.skipif(bool(toolchain.missing()), reason="the compiler packages are not installed "
                                    f"({toolchain.EXTRA_HINT})")
ALL = list(declarations.all_declarations())
SECOND_ARCH = "sm_80"


def real_compile(test):
    """A test of the session's real compiles (tests/conftest.py: each architecture compiled once, about
    half a minute each on a 2-core machine): slow, and skipped without the compiler packages."""
    return needs_compiler(pytest.mark.slow(test))


@pytest.fixture(scope="module")
def cache(compiled_kernels):
    return compiled_kernels.folder


@pytest.fixture(scope="module")
def compiled90(compiled_kernels):
    return compiled_kernels("sm_90")


@pytest.fixture(scope="module")
def compiled80(compiled_kernels):
    return compiled_kernels(SECOND_ARCH)


def reports(compiled):
    from kernels.inspector.report import build

    return {pair: build(c) for pair, c in compiled.items()}


def ptxas_registers(ptx: str, arch: str) -> int:
    """Registers of the entry function, by running ptxas -v here and reading its report."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        out = subprocess.run([toolchain.ptxas_path(), f"-arch={arch}", "-v", src, "-o", os.path.join(tmp, "k.cubin")],
                             capture_output=True, text=True, check=True)
    entry = (out.stdout + out.stderr).split("Compiling entry function")[1]
    return int(re.search(r"Used (\d+) registers", entry).group(1))


def expected_occupancy(threads, regs, smem, max_warps, max_blocks, smem_per_sm, reserved=1024, gran=128):
    """The occupancy calculator's formula, written out again here: registers in 256-register units per
    warp within 4 quarters of a 64K register file; shared memory with the per-block reservation."""
    warps = -(-threads // 32)
    per_warp = -(-regs * 32 // 256) * 256
    by_regs = (65536 // 4 // per_warp) * 4 // warps
    limits = [max_warps // warps, max_blocks, by_regs]
    if smem:
        limits.append(smem_per_sm // (-(-(smem + reserved) // gran) * gran))
    blocks = min(limits)
    return blocks, blocks * warps


# --- pure computation (no compiler needed) --------------------------------------------------------------


def test_known_case_best_reduction_40_registers_256_threads_sm90():
    o = occupancy("sm_90", 256, 40, 256)
    assert (o.blocks_per_sm, o.warps_per_sm, o.max_warps_per_sm, round(o.percent)) == (6, 48, 64, 75)
    assert o.limiter == "registers"


def test_occupancy_limiters():
    assert occupancy("sm_90", 1, 32, 0).limiter == "blocks"  # one-thread blocks: 32 blocks of 1 warp
    assert occupancy("sm_90", 1024, 32, 0).limiter == "registers"  # 2 blocks = 64 warps; registers tie first
    o = occupancy("sm_90", 512, 16, 32768)
    assert o.limiter == "warps" and o.blocks_per_sm == 4  # 4 x (32 KiB + 1 KiB) fits 228 KiB; 4 x 16 warps = 64
    o = occupancy("sm_86", 256, 16, 48 * 1024)
    assert (o.blocks_per_sm, o.limiter) == (2, "shared memory")  # 100 KiB // 49 KiB
    assert occupancy("sm_90", 1024, 255, 0).blocks_per_sm == 0  # 1024 x 256 registers > 64K per block
    assert occupancy("sm_90", 256, 255, 0).blocks_per_sm == 1  # 256 x 256 = 64K: just fits


def test_roofline_point_against_hand_arithmetic():
    from kernels.inspector.roofline import place, published

    h100 = published("sm_90")
    assert h100.label == "published figure for H100 SXM5"
    assert h100.peak_ops("fp32") == pytest.approx(132 * 128 * 2 * 1.98e9)
    point = place(4e8, 1e8, 1e-4, h100, "int32")  # a reduction of 1e8 int32 in 0.1 ms
    assert point.intensity == pytest.approx(0.25)
    assert point.achieved_gbs == pytest.approx(4000)
    assert point.bound == "memory"
    assert point.ceiling_ops == pytest.approx(0.25 * 3350e9)


def test_benchmark_row_placed_by_its_variants_traffic_model():
    from kernels.inspector.roofline import place_run, published

    # per-thread-partials reads n int32 and writes one int64 per thread of 32 x 256 (8192 partials)
    point = place_run("reduction", "per-thread-partials", 2**24, 256, 32, 1e-3, published("sm_90"))
    assert point.intensity == pytest.approx(2**24 / (4 * 2**24 + 8 * 8192))
    assert point.achieved_gbs == pytest.approx((4 * 2**24 + 8 * 8192) / 1e-3 / 1e9)


def test_the_inspected_default_block_is_the_variants_own():
    from kernels.registry import ALGORITHMS

    for algorithm in ALGORITHMS:
        for v in algorithm.variants:
            if v.kind == "gpu":
                block = v.launch.block if isinstance(v.launch.block, tuple) else (v.launch.block,)
                assert declarations.declaration(algorithm.name, v.name).default_block == block, v.name


def test_catalog_names_every_gpu_variant_of_every_algorithm():
    from kernels.registry import ALGORITHMS

    assert declarations.targets() == tuple(a.name for a in ALGORITHMS)
    for algorithm in ALGORITHMS:  # none missing, none stale, in the registry's order
        assert declarations.variants(algorithm.name) == [v.name for v in algorithm.variants if v.kind == "gpu"]


def test_numba_cuda_private_names_are_checked_on_the_installed_version():
    from kernels.backend.numba_private import CHECKED_ON, NUMBA_CHECKED_ON

    assert version("numba-cuda") == CHECKED_ON, "re-check kernels/backend/numba_private.py on this numba-cuda"
    assert version("numba").startswith(NUMBA_CHECKED_ON + "."), "re-check kernels/backend/numba_private.py on this numba"


def test_cli_bad_input_exits_2_with_one_line(capsys):
    for argv in (["inspect", "reduction", "best", "--arch", "sm_70"], ["inspect", "reduction", "nope"],
                 ["inspect", "reduction", "best", "--block", "0"], ["inspect", "reduction", "best", "--block", "2048"],
                 ["inspect", "spheres", "spheres-global", "--block", "256"], ["inspect", "reduction"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("raytracer-app: error: ") and err.count("\n") == 1, (argv, err)


def test_cli_without_compiler_shows_source_and_names_the_extra(monkeypatch, capsys):
    monkeypatch.setattr(toolchain, "missing", lambda: ["ptxas (nvidia-cuda-nvcc)"])
    assert main(["inspect", "reduction", "best", "--show", "source"]) == 0
    out = capsys.readouterr().out
    assert "def best(a, b, result, slot):" in out and "def warp_sum(value):" in out
    assert out.strip().splitlines()[-1].endswith("pip install -e '.[inspect]')")
    assert main(["inspect", "reduction", "best", "--show", "sass"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[inspect]'" in err


# --- real compiles --------------------------------------------------------------------------------------


@real_compile
def test_numba_cudas_ptx_is_as_recorded_before_the_portable_edits(compiled90):
    """The kernels' edits for the subset both compilers accept (docs/compilers.md) left numba-cuda's code as
    it was: each kernel's sm_90 PTX has the instruction counts per kind recorded at the commit before them
    (tests/data/ptx; tests/ptx_mix.py rewrites it when a kernel is meant to change)."""
    import json

    from tests.ptx_mix import RECORDED, ptx_mix

    recorded = json.loads(RECORDED.read_text())
    assert set(recorded) == {f"{t}/{v}" for t, v in compiled90}
    changed = {key: {op: (recorded[key].get(op, 0), mix.get(op, 0)) for op in set(recorded[key]) | set(mix)
                     if recorded[key].get(op, 0) != mix.get(op, 0)}
               for key, mix in ((f"{t}/{v}", ptx_mix(c.ptx)) for (t, v), c in compiled90.items())}
    assert not {k: v for k, v in changed.items() if v}, "numba-cuda's PTX changed (recorded, now)"


@real_compile
def test_every_gpu_variant_compiles_for_sm90_and_sm80(compiled90, compiled80):
    for compiled in (compiled90, compiled80):
        failed = {pair: str(c) for pair, c in compiled.items() if isinstance(c, Exception)}
        assert not failed
    assert {c.arch for c in compiled80.values()} == {SECOND_ARCH}


def _unnamed(ptx: str) -> list[str]:
    """PTX lines with numba's mangled names blanked (they carry a tag of the flags the kernel was lowered
    with), without the debug sections' bytes (those names again); shared arrays' numbers and the global
    declarations' order are the process's (how many kernels it compiled before)."""
    lines = [re.sub(r"_cudapy_smem_\d+", "_cudapy_smem", re.sub(r"_Z\w+", "_Z", line))
             for line in ptx.splitlines() if not line.lstrip().startswith(".b8")]
    return sorted(ln for ln in lines if ln.startswith(".common")) + [ln for ln in lines if not ln.startswith(".common")]


@real_compile
def test_sm80_from_the_shared_lowering_is_the_code_of_a_compile_for_sm80_alone(compiled80):
    """The session lowers each kernel once for sm_90 and sm_80 (kernels/backend/numba_private.ptx_for_each):
    its sm_80 PTX is what a child compiling for sm_80 alone makes, but for the mangled names."""
    from kernels.inspector.compiler import _compile_in_child

    pairs = [("reduction", "best"), ("histogram", "shared-atomics"), ("julia", "julia-2d-float64"),
             ("spheres", "spheres-constant")]
    alone = _compile_in_child(pairs, [SECOND_ARCH])[SECOND_ARCH]
    for pair in pairs:
        assert _unnamed(compiled80[pair].ptx) == _unnamed(alone[pair]["ptx"]), pair


@real_compile
def test_register_counts_equal_what_ptxas_prints(compiled90, compiled80):
    for compiled in (compiled90, compiled80):
        for pair, report in reports(compiled).items():
            assert report.resources.registers == ptxas_registers(compiled[pair].ptx, report.arch), pair


@real_compile
def test_constant_kernel_loads_spheres_with_ld_const_and_global_one_with_ld_global(compiled90):
    constant = compiled90[("spheres", "spheres-constant")].ptx
    glob = compiled90[("spheres", "spheres-global")].ptx
    assert ".visible .const" in constant and "ld.const.f32" in constant and "ld.global" not in constant
    assert "ld.global" in glob and "ld.const" not in glob
    sass = compiled90[("spheres", "spheres-constant")].sass_text
    assert re.search(r"\bU?LDC\b", sass) and not re.search(r"\bLDG\b", sass)


@real_compile
def test_shuffles_and_atomics_in_ptx_and_sass(compiled90):
    for variant in ("warp-shuffle", "best"):
        c = compiled90[("reduction", variant)]
        assert "shfl.sync" in c.ptx and re.search(r"\bSHFL\.", c.sass_text), variant
    assert re.search(r"\bATOMS\.", compiled90[("histogram", "shared-atomics")].sass_text)
    assert re.search(r"\b(ATOMG|REDG|RED)\.", compiled90[("histogram", "global-atomics")].sass_text)
    assert not re.search(r"\bATOMS\.", compiled90[("histogram", "global-atomics")].sass_text)
    mixes = reports(compiled90)
    assert mixes[("histogram", "shared-atomics")].mix["shared atomic"] >= 1
    assert mixes[("reduction", "best")].mix["warp shuffle"] >= 10  # 5 steps of warp_sum, twice


@real_compile
def test_julia_launches_match_the_occupancy_formula(compiled90, compiled80):
    specs = {"sm_90": (64, 32, 233472), "sm_80": (64, 32, 167936)}
    for compiled in (compiled90, compiled80):
        for variant in ("julia-book", "julia-2d"):
            report = reports(compiled)[("julia", variant)]
            regs = ptxas_registers(compiled[("julia", variant)].ptx, report.arch)
            threads = 1 if variant == "julia-book" else 256
            assert report.threads == threads
            blocks, warps = expected_occupancy(threads, regs, 0, *specs[report.arch])
            assert (report.occupancy.blocks_per_sm, report.occupancy.warps_per_sm) == (blocks, warps), variant
    book = reports(compiled90)[("julia", "julia-book")].occupancy
    assert (book.blocks_per_sm, book.warps_per_sm, book.limiter) == (32, 32, "blocks")


@real_compile
def test_every_sass_line_marker_points_into_the_kernels_sources(compiled90):
    """Each marker names a line of the kernel's own module or of a function it calls (device functions carry
    line information since issue 37, so their inlined code is on their own lines), within the file."""
    for (target, variant), c in compiled90.items():
        own = importlib.util.find_spec(declarations.all_declarations()[(target, variant)].module).origin
        files = {own} | {s["file"] for s in c.sources}
        markers = re.findall(r'//## File "([^"]+)", line (\d+)', c.sass_text)
        assert markers, (target, variant)
        assert any(file == own for file, _ in markers), (target, variant)
        for file, line in markers:
            with open(file) as f:
                length = len(f.read().splitlines())
            assert file in files and 1 <= int(line) <= length, (variant, file, line)


@real_compile
def test_best_reduction_known_case_from_the_compile(compiled90):
    best = reports(compiled90)[("reduction", "best")]
    # ptxas 13 for sm_90: 25 registers since best reads by 16-byte loads (its grid-stride form had 40,
    # which ncu confirmed on an H100); at 256 threads 8 blocks then fit, every warp slot of the SM
    assert best.resources.registers == 25
    o = best.occupancy
    assert (o.blocks_per_sm, o.warps_per_sm, round(o.percent)) == (8, 64, 100)
    assert any(p.threads_per_block == 256 for p in best.curve) and len(best.curve) == 32


@real_compile
def test_cache_serves_a_second_request_without_compiling(cache, compiled90, monkeypatch):
    from kernels.inspector import compiler

    def no_compile(*args):
        raise AssertionError("compiled again instead of reading the cache")

    monkeypatch.setattr(compiler, "_compile_in_child", no_compile)
    again = compiler.compile_kernels([("reduction", "best")], "sm_90", cache)
    assert again[("reduction", "best")].ptx == compiled90[("reduction", "best")].ptx


@real_compile
def test_cli_all_table_compare_and_json(cache, compiled90, monkeypatch, capsys):
    monkeypatch.setenv("RAYTRACER_INSPECT_CACHE", str(cache))
    assert main(["inspect", "reduction", "--all", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    rows = {r["variant"]: r for r in table["variants"]}
    assert list(rows) == declarations.variants("reduction")
    assert (rows["best"]["registers"], rows["best"]["blocks_per_sm"], rows["best"]["warps_per_sm"]) == (25, 8, 64)
    assert main(["inspect", "spheres", "spheres-global", "--compare", "spheres-constant"]) == 0
    out = capsys.readouterr().out
    assert "global load" in out and "spheres-constant keeps 64 warps" in out
    assert main(["inspect", "reduction", "best", "--show", "sass"]) == 0
    sass = capsys.readouterr().out
    assert "SHFL" in sass and "reduction/gpu.py:" in sass
    assert main(["inspect", "julia", "julia-2d", "--block", "32x8", "--show", "occupancy", "--json"]) == 0
    occ = json.loads(capsys.readouterr().out)["occupancy"]
    assert occ["threads_per_block"] == 256


# --- a real GPU -----------------------------------------------------------------------------------------


def _three_blocks(decl):
    if decl.fixed_block:
        return [decl.default_block]
    return [(8, 8), (16, 16), (32, 32)] if len(decl.default_block) == 2 else [(64,), (256,), (1024,)]


@pytest.mark.gpu
def test_occupancy_api_and_loaded_resources_agree_with_the_inspector(tmp_path):
    from tests.inspector_on_gpu import load
    from kernels.inspector.report import inspect_many

    arch = load("reduction", "best").arch
    offline = inspect_many(ALL, arch, cache=tmp_path) if not toolchain.missing() else {}
    disagreements = []
    for pair, decl in declarations.all_declarations().items():
        loaded = load(*pair)
        for block in _three_blocks(decl):
            threads = declarations.threads(block)
            dynamic = decl.dynamic_shared(threads)
            api = loaded.active_blocks_per_sm(block, dynamic)
            computed = occupancy(arch, threads, loaded.registers, loaded.static_shared + dynamic).blocks_per_sm
            if api != computed:
                disagreements.append((pair, block, api, computed))
        report = offline.get(pair)
        if report is not None:
            assert not isinstance(report, Exception), report
            got = (report.resources.registers, report.resources.static_shared, report.resources.stack_frame)
            assert got == (loaded.registers, loaded.static_shared, loaded.local_per_thread), pair
    assert not disagreements



@real_compile
@pytest.mark.usefixtures("compiled90")  # the columns and the report below read the session's compiles
def test_bench_resources_columns_match_the_inspector(tmp_path, capsys, cuda_backend):
    import csv

    from kernels.inspector.report import inspect
    from raytracer_app.cli import main

    out = tmp_path / "r.csv"
    code = main(["bench", "reduction", "--backend", cuda_backend.kind, "--n", "1000", "--variants", "tree-mask,numpy",
                 "--block", "128", "--resources", "--repeats", "1", "--csv", str(out)])
    assert code == 0, capsys.readouterr().err
    rows = {r["variant"]: r for r in csv.DictReader(open(out, newline=""))}
    arch = "sm_90" if not cuda_backend.is_gpu else None
    report = inspect("reduction", "tree-mask", arch=arch or _device_arch(cuda_backend), block=(128,))
    assert int(rows["tree-mask"]["registers"]) == report.resources.registers
    assert int(rows["tree-mask"]["shared_bytes"]) == report.shared_per_block == 128 * 8  # one int64 per thread
    assert float(rows["tree-mask"]["occupancy_pct"]) == pytest.approx(report.occupancy.percent, abs=0.05)
    assert rows["numpy"]["registers"] == ""  # host code has no kernel


def _device_arch(backend):
    from kernels.inspector.bench_columns import device_arch

    return device_arch(backend)
