"""Per-line figures on a real GPU (issue 37): the measured process's compile carries line information into
device functions, and Nsight Compute's per-PC source counters, folded onto lines, account for the kernel's
own totals as ncu gives them and put the strided shared access and the vector load on the lines they
are on. Skipped without a GPU; without ncu or permission to read counters, skipped with that line."""

import re

import pytest

from tests.conftest import run_fresh_python

pytestmark = pytest.mark.gpu

KERNEL = '''import numpy as np
from numba import cuda

from kernels.backend import memory
from kernels.backend.numba_private import lineinfo_everywhere


@cuda.jit(device=True)
def term(a, i):
    return a[i] * 2.0


def twice(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = term(a, i)


with lineinfo_everywhere():
    kernel = cuda.jit(twice)
    a = memory.to_device(np.arange(64, dtype=np.float32))
    out = memory.empty(64, np.float32)
    kernel[1, 64](a, out)
    print(kernel.inspect_asm(kernel.signatures[0]))
'''


def test_the_measured_processs_compile_puts_device_function_code_on_its_own_lines(tmp_path):
    script = tmp_path / "twice.py"
    script.write_text(KERNEL)
    done = run_fresh_python(f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    ptx = done.stdout
    term_line = KERNEL.splitlines().index("    return a[i] * 2.0") + 1
    call_line = KERNEL.splitlines().index("        out[i] = term(a, i)") + 1
    inlined = re.compile(rf"^\s*\.loc\s+\d+\s+{term_line}\s+\d+,.*inlined_at\s+\d+\s+{call_line}\b", re.M)
    assert inlined.search(ptx), ptx[-3000:]


@pytest.fixture(scope="module")
def measured():
    from kernels import backend as backends
    from kernels.counters.tool import why_not
    from kernels.inspector import toolchain
    from kernels.inspector.bench_columns import device_arch
    from kernels.inspector.lines import measure_lines

    backend = backends.resolve("cuda")
    reason = why_not(backend)
    if reason:
        pytest.skip(reason)
    static = {}
    if not toolchain.missing():
        from kernels.inspector.report import inspect_many

        reports = inspect_many([("reduction", v) for v in ("best", "interleaved-strided")], device_arch(backend))
        static = {v: r for (_, v), r in reports.items() if not isinstance(r, Exception)}
    got = measure_lines("reduction", ["best", "interleaved-strided"], backend, 1 << 22, static=static)
    for name, kernels in got.items():
        assert not isinstance(kernels, str), (name, kernels)
    return got


def _main(kernels, name):
    return next(k for k in kernels if k.name.split("#")[0] == name)


@pytest.mark.parametrize("variant, kernel", [("best", "best"), ("interleaved-strided", "interleaved_strided")])
def test_every_pcs_instructions_add_up_to_ncus_kernel_total(measured, variant, kernel):
    lines = _main(measured[variant], kernel)
    t = lines.totals["measured"]["inst_executed"]
    assert t["kernel"] and t["all"] == pytest.approx(t["kernel"], rel=0.01)  # the per-PC reading misses nothing
    assert t["lines"] >= 0.99 * t["kernel"], lines.notes  # and (nearly) every instruction found its line
    samples = lines.totals["measured"]["samples"]
    assert samples["all"] > 0 and samples["lines"] >= 0.99 * samples["all"]


def test_the_strided_shared_access_is_the_conflicting_line(measured):
    lines = _main(measured["interleaved-strided"], "interleaved_strided")
    top = lines.top("shared_conflicts", count=1)
    assert top and "shared[index] += shared[index + stride]" in top[0].source, [r.source for r in top]


def test_best_reads_its_global_memory_on_its_load_line(measured):
    """best's 16-byte loads are one intrinsic call in ``vector_term`` (``v = load_vector(a, j)``), inlined by
    the compiler into best's loop: that line leads by sectors read (4 bytes an element, 32 a sector), and
    every sector the kernel reads is on it or on the lines calling ``vector_term`` (the partial last tile's
    loads may be given the call's line). Before the device functions stopped being inlined by numba itself
    they sat on ``def best(...)`` (seen on an H100, 2026-11-26; tests/test_lines_static.py says why)."""
    lines = _main(measured["best"], "best")
    rows = lines.top("global_sectors", count=100)
    assert rows and "load_vector(" in rows[0].source, [(r.where, r.source) for r in rows]
    total = sum(r.get("global_sectors") or 0 for r in rows)
    reads = sum(r.get("global_sectors") or 0 for r in rows if "load_vector(" in r.source or "vector_term(" in r.source)
    assert reads >= 0.99 * 4 * (1 << 22) / 32, [(r.where, r.get("global_sectors")) for r in rows]
    assert reads >= 0.98 * total, [(r.where, r.get("global_sectors")) for r in rows]
    print("best's stall lines:", [(r.where, round(r.get("stall_pct"), 1), r.get("top_stall"))
                                  for r in lines.top("stall_samples", count=3)])


def test_bench_counters_names_the_hottest_line(capsys):
    from kernels import backend as backends
    from kernels.counters.tool import why_not
    from raytracer_app.cli import main

    reason = why_not(backends.resolve("cuda"))
    if reason:
        pytest.skip(reason)
    assert main(["bench", "reduction", "--backend", "cuda", "--variants", "interleaved-strided", "--n", "4194304",
                 "--repeats", "2", "--counters"]) == 0
    out = capsys.readouterr().out
    assert "of the stall samples at line" in out and "of them at line" in out, out[-3000:]
