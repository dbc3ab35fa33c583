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
