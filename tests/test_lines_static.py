"""The static per-line mapping follows device functions (issue 37's case): a kernel calling a device function
whose loop body calls another device function, which calls a shared @numba.jit function, compiled for real
for sm_90 (NVIDIA's compiler packages, no GPU). Each inlined line keeps its own SASS, and a call line shows
the sum of what it inlines; the counts are checked against nvdisasm's text read here with a regex of its own."""

import json
import re

import pytest

from kernels.inspector import toolchain

needs_compiler = pytest.mark.skipif(bool(toolchain.missing()), reason="the compiler packages are not installed "
                                    f"({toolchain.EXTRA_HINT})")

SOURCE = '''import numba
from numba import cuda


@numba.jit(nopython=True)
def scale(x):
    return x * 3.0 + 1.0


@cuda.jit(device=True)
def term(a, b, i):
    return scale(a[i] * b[i])


@cuda.jit(device=True)
def partial(a, b):
    total = 0.0
    i = cuda.grid(1)
    while i < a.size:
        total += term(a, b, i)
        i += cuda.gridsize(1)
    return total


def dot(a, b, out):
    out[cuda.grid(1)] = partial(a, b)
'''
SIGNATURE = "void(float32[::1], float32[::1], float64[::1])"


def line_of(text: str) -> int:
    return next(i + 1 for i, line in enumerate(SOURCE.splitlines()) if line.strip() == text)


def independent_counts(sass_text: str, path: str):
    """(instructions per innermost line, instructions per line they are part of): each instruction's marker
    group read as nvdisasm prints it, first marker innermost, every 'line N' of the group one of its lines; a
    function that follows the kernel (the compiler's 64-bit division) counts on the line of its CALL."""
    own, part = {}, {}
    group, current, called = [], (set(), None), {}
    for raw in sass_text.splitlines():
        function = re.search(r"\.type\s+([^,\s]+),@function", raw)
        if function:
            group, current = [], called.get(function.group(1), (set(), None))
            continue
        if raw.strip().startswith("//## File"):
            group.append(raw)
            continue
        if not re.search(r"/\*[0-9a-f]{4,}\*/", raw):
            continue
        if group:
            mentioned = [int(n) for f, n in re.findall(r'"([^"]+)", line (\d+)', " ".join(group)) if f == path]
            first = re.match(r'.*File "([^"]+)", line (\d+)', group[0])
            current = (set(mentioned), int(first.group(2)) if first and first.group(1) == path else None)
            group = []
        target = re.search(r"CALL\S*\s+`\(([^)]+)\)", raw)
        if target:
            called[target.group(1)] = current
        lines, innermost = current
        if innermost is not None:
            own[innermost] = own.get(innermost, 0) + 1
        for n in lines:
            part[n] = part.get(n, 0) + 1
    return own, part


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    from kernels.inspector.compiler import compile_variant_file

    path = tmp_path_factory.mktemp("device-functions") / "dot_variant.py"
    path.write_text(SOURCE)
    return str(path), compile_variant_file("reduction", "dot", str(path), SOURCE,
                                           {"kernel": "dot", "signature": SIGNATURE}, "sm_90")


@pytest.fixture(scope="module")
def report(compiled):
    from kernels.harness.kernel_decl import KernelDecl, Traffic, no_dynamic_shared
    from kernels.inspector.report import build

    decl = KernelDecl("dot_variant", "dot", None, SIGNATURE, (128,), no_dynamic_shared,
                      lambda n, t, b: Traffic(8.0 * n, 2.0 * n, "fp32", "two loads an element"), 1 << 20)
    return build(compiled[1], (128,), decl)


@pytest.mark.slow
@needs_compiler
def test_a_device_functions_loop_body_has_its_own_sass(compiled, report):
    path, c = compiled
    own, part = independent_counts(c.sass_text, path)
    body = line_of("total += term(a, b, i)")
    # the loop body inside a device function: its own instructions (the add) and, with what its call of term
    # inlines, term's loads and multiply and scale's arithmetic
    assert len(report.sass_for_line(path, body, inlined=False)) == own.get(body, 0)
    assert len(report.sass_for_line(path, body)) == part[body] > own.get(body, 0)
    for text in ("return scale(a[i] * b[i])", "return x * 3.0 + 1.0"):  # term's and the @numba.jit function's
        line = line_of(text)
        assert own.get(line, 0) > 0, text
        assert len(report.sass_for_line(path, line, inlined=False)) == own[line], text
    loads = [report.sass[i].opcode for i in report.sass_for_line(path, line_of("return scale(a[i] * b[i])"))]
    assert any(op.startswith(("LDG", "LD.")) for op in loads), loads


@pytest.mark.slow  # the module's real compile of a variant file (the quick loop leaves it out)
@needs_compiler
def test_a_variant_files_sass_read_later_is_nvdisasms_text_of_its_cubin(compiled, tmp_path):
    """A variant file's SASS is disassembled when first read (kernels/inspector/compiler.py): it is what
    ptxas and nvdisasm, run here, make of its PTX."""
    import subprocess

    _, c = compiled
    ptx, cubin = tmp_path / "k.ptx", tmp_path / "k.cubin"
    ptx.write_text(c.ptx)
    subprocess.run([toolchain.ptxas_path(), "-arch=sm_90", "-lineinfo", str(ptx), "-o", str(cubin)], check=True)
    sass = subprocess.run([toolchain.nvdisasm_path(), "-gi", "-c", str(cubin)], capture_output=True, text=True,
                          check=True).stdout
    assert c.sass_text == sass and "//## File" in sass


@pytest.mark.slow  # the module's real compile of a variant file (the quick loop leaves it out)
@needs_compiler
def test_the_kernels_call_line_is_the_sum_of_what_it_inlines(compiled, report):
    path, c = compiled
    own, part = independent_counts(c.sass_text, path)
    call = line_of("out[cuda.grid(1)] = partial(a, b)")
    callee_lines = range(line_of("def scale(x):"), line_of("return total") + 1)
    inlined = sum(own.get(n, 0) for n in callee_lines)
    assert inlined > 0
    assert len(report.sass_for_line(path, call)) == part[call] == own.get(call, 0) + inlined
    assert not any(ins.file is None for ins in report.sass[:1])  # the first instruction has a line


@pytest.mark.slow  # the module's real compile of a variant file (the quick loop leaves it out)
@needs_compiler
def test_static_lines_and_the_ptx_follow_the_device_functions(compiled, report):
    from kernels.counters.lines import STATIC, WITH_INLINED
    from kernels.inspector.lines import static_lines

    path, c = compiled
    own, part = independent_counts(c.sass_text, path)
    lines = static_lines(report)
    body, call = line_of("total += term(a, b, i)"), line_of("out[cuda.grid(1)] = partial(a, b)")
    assert lines.row(path, body).get("sass_instructions", STATIC, WITH_INLINED) == part[body]
    assert lines.row(path, call).get("sass_instructions", STATIC, WITH_INLINED) == part[call]
    assert lines.row(path, line_of("return x * 3.0 + 1.0")).get("sass_instructions", STATIC) == \
        own[line_of("return x * 3.0 + 1.0")]
    # the PTX: numba-cuda wrote .loc lines inlined at the device functions' call sites
    assert "inlined_at" in c.ptx
    assert report.ptx_lines[(path, line_of("return scale(a[i] * b[i])"))]
    assert set(report.ptx_lines[(path, body)]) >= set(report.ptx_lines[(path, line_of("return x * 3.0 + 1.0"))])


@pytest.mark.slow
@needs_compiler
def test_cli_lines_json_for_harris_kernel_2(tmp_path, monkeypatch, capsys):
    from raytracer_app.cli import main

    monkeypatch.setenv("RAYTRACER_INSPECT_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "lines.json"
    assert main(["inspect", "reduction", "interleaved-strided", "--lines", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "kernels/reduction/gpu.py" in printed and f"wrote {out}" in printed
    doc = json.loads(out.read_text())
    assert doc["schema"] == "raytracer-app/line-figures" and doc["measured"] is False and doc["arch"] == "sm_90"
    rows = {r["source"]: r for r in doc["variants"][0]["kernels"][0]["lines"]}
    body = rows["total += term(a, b, i)"]  # thread_partial's loop body, in gpu.py: the case
    assert body["file"] == "kernels/reduction/gpu.py" and body["figures"]["static/own"]["sass_instructions"] > 0
    call = rows["shared[t] = thread_partial(a, b)"]
    assert call["figures"]["static/with_inlined"]["sass_instructions"] > \
        call["figures"]["static/own"]["sass_instructions"] + body["figures"]["static/with_inlined"]["sass_instructions"]


# --- the measured path without a GPU: ncu's side replaced by a report made from the compile itself ------------


def _fake_ncu_run(monkeypatch, report, shift=0):
    """measure() answering as ncu would for interleaved-strided: one kernel, each instruction of ``report``
    executed once at PC base + its address (the text of the instruction ``shift`` places later, to make
    the SASS differ), located by ncu's source_info on the kernel's call line (as if it knew no inlining)."""
    from types import SimpleNamespace

    from kernels.counters import measure as counters_measure
    from kernels.counters.metrics import KernelCounters, Measured
    from kernels.service import bench_request

    base = 0x7F00_0000_0000
    call = next(s for s in report.sources[0].text.splitlines() if "thread_partial(a, b)" in s)
    call_line = report.sources[0].first_line + report.sources[0].text.splitlines().index(call)
    pcs = {hex(base + ins.address): {"file": report.sources[0].file, "line": call_line,
                                     "sass": report.sass[(i + shift) % len(report.sass)].text, "inst_executed": 1.0}
           for i, ins in enumerate(report.sass)}

    def measure(request, backend, on_progress=None, should_stop=None, raw_out=None, extra_metrics=(), lines=True):
        raw_out.extend([{"name": "counters_marker", "mangled": "counters_marker", "metrics": {"launch__grid_size": 1}},
                        {"name": "interleaved_strided(Array<int, 1>)", "mangled": "_Z20interleaved_strided",
                         "metrics": {"smsp__inst_executed.sum": float(len(pcs))}, "pcs": pcs, "pc_totals": {}}])
        return {"interleaved-strided": Measured((KernelCounters("interleaved_strided", {}),), "none")}

    monkeypatch.setattr(counters_measure, "measure", measure)
    monkeypatch.setattr(bench_request, "BenchRequest", lambda *a, **k: SimpleNamespace(
        to_json=lambda: {"sizes": list(k["sizes"]), "variants": list(k["variants"])}))
    return call_line


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
@needs_compiler
def test_measured_lines_take_the_compiles_chains(monkeypatch):
    from types import SimpleNamespace

    from kernels.counters.lines import MEASURED, STATIC, WITH_INLINED
    from kernels.inspector.lines import measure_lines, static_lines
    from kernels.inspector.report import inspect

    report = inspect("reduction", "interleaved-strided")
    call_line = _fake_ncu_run(monkeypatch, report)
    got = measure_lines("reduction", ["interleaved-strided"], SimpleNamespace(device_name="a GPU"), 1 << 20,
                        static={"interleaved-strided": report})
    measured, static = got["interleaved-strided"][0], static_lines(report)
    assert "from the sm_90 compile, instruction for instruction" in measured.notes[0]
    for where, row in static.rows.items():  # one execution per instruction: the counts are the static ones
        for scope in ("own", WITH_INLINED):
            assert row.get("sass_instructions", STATIC, scope) == measured.rows.get(where, row).get(
                "inst_executed", MEASURED, scope), (where, scope)
    body = measured.row("kernels/reduction/gpu.py", next(
        r.line for r in static.rows.values() if r.source == "total += term(a, b, i)"))
    assert body.get("inst_executed") > 0 and body.source == "total += term(a, b, i)"
    assert measured.row(report.sources[0].file, call_line).get("inst_executed", scope=WITH_INLINED) > 200

    _fake_ncu_run(monkeypatch, report, shift=1)  # another instruction stream: ncu's own lines are kept
    blind = measure_lines("reduction", ["interleaved-strided"], SimpleNamespace(device_name="a GPU"), 1 << 20,
                          static={"interleaved-strided": report})["interleaved-strided"][0]
    assert "differs from the sm_90 compile" in blind.notes[0]
    assert list(blind.rows) == [("kernels/reduction/gpu_harris.py", call_line)]


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
@needs_compiler
def test_cli_measured_lines_json_and_text(monkeypatch, tmp_path, capsys):
    from types import SimpleNamespace

    from raytracer_app.cli import inspect_lines, main
    from kernels.inspector.report import inspect

    _fake_ncu_run(monkeypatch, inspect("reduction", "interleaved-strided"))
    gpu = SimpleNamespace(device_name="NVIDIA H100 80GB HBM3", kind="cuda", is_gpu=True, is_host=False, device=0,
                          limits=SimpleNamespace(sm_count=132))
    monkeypatch.setattr(inspect_lines, "measuring_backend", lambda args: gpu)
    out = tmp_path / "measured.json"
    assert main(["inspect", "reduction", "interleaved-strided", "--lines", "--measured", "--arch", "sm_90",
                 "--n", "1048576", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert "1 variants measured per line in" in captured.err
    assert "kernel interleaved_strided: measured on NVIDIA H100 80GB HBM3 with ncu" in captured.out
    assert "instr exec" in captured.out  # every instruction on a line:
    assert re.search(r"100.0% of \d+ instructions executed are on a line", captured.out)
    print(captured.out)
    doc = json.loads(out.read_text())
    assert doc["measured"] is True and doc["n"] == 1048576 and doc["device"]["name"] == "NVIDIA H100 80GB HBM3"
    kernel = doc["variants"][0]["kernels"][0]
    kinds = {k.split("/")[0] for line in kernel["lines"] for k in line["figures"]}
    assert kinds == {"static", "measured"} and kernel["totals"]["measured"]["inst_executed"]["kernel"] > 0


@pytest.mark.slow
@needs_compiler
def test_cli_lines_with_the_simulators_prediction_beside_the_static_figures(tmp_path, monkeypatch, capsys):
    from raytracer_app.cli import main

    monkeypatch.setenv("RAYTRACER_INSPECT_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "predicted.json"
    assert main(["inspect", "reduction", "interleaved-strided", "--lines", "--predicted", "--json", str(out)]) == 0
    assert "predicted by the CUDA simulator's trace" in capsys.readouterr().out
    kernel = json.loads(out.read_text())["variants"][0]["kernels"][0]
    rows = {r["source"]: r["figures"] for r in kernel["lines"]}
    strided = rows["shared[index] += shared[index + stride]"]
    assert strided["static/own"]["sass_instructions"] > 0 and strided["predicted/own"]["shared_conflicts"] > 0
    assert rows["shared[t] = thread_partial(a, b)"]["predicted/own"]["shared_conflicts"] == 0  # stride 1


@pytest.mark.slow  # it takes the session's compile of every declared kernel for sm_90
@needs_compiler
def test_bests_vector_loads_sit_on_the_load_line_inlined_where_it_is_called(compiled_kernels):
    """best's 16-byte loads are an intrinsic called in a device function (``vector_term``). numba-cuda 0.30.4
    puts code that numba inlines itself (``inline="always"``) on the kernel's ``def`` line when the callee is
    written above the kernel (lowering's prologue rule), so the project's device functions are inlined by
    the compiler instead (the same SASS): their code keeps its own lines and the call lines above it."""
    from kernels.inspector.report import build
    from kernels.inspector.declarations import declaration

    decl = declaration("reduction", "best")
    report = build(compiled_kernels("sm_90")[("reduction", "best")], decl.default_block, decl)
    loads = [ins for ins in report.sass if ins.opcode.startswith("LDG") and ".128" in ins.opcode]
    assert loads, [ins.opcode for ins in report.sass if ins.opcode.startswith("LDG")]
    source = {}
    for ins in loads:
        text = open(ins.file).read().splitlines()[ins.line - 1]
        source[ins.line] = text
        assert "load_vector(" in text, (ins.line, text)
        assert ins.inlined_at and all(f == ins.file for f, _ in ins.inlined_at)  # called from best's loop
        callers = [open(f).read().splitlines()[n - 1] for f, n in ins.inlined_at]
        assert any("vector_term(" in c for c in callers), callers
