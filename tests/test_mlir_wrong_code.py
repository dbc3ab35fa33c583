"""numba-cuda-mlir's known wrong code (kernels/backend/mlir_wrong_code.py, docs/compilers.md): each bug's
reproduction still shows it in the installed release's PTX (offline, no GPU), the inspector's comparison names
it, a variant it would crash is a skipped row naming it, and the histogram's counters keep a guard below them so
that a sign-extended byte index is a FAILED row saying where the counts went, not a write into another array."""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest

from kernels.backend import SkipKind, compiler
from kernels.backend.mlir_wrong_code import KNOWN, SHARED_ATOMIC_IN_DEVICE_FUNCTION, skip_text
from kernels.inspector.compare import _NARROW_SIGNED_LOAD, zero_based_global_atomics

HAS_MLIR = importlib.util.find_spec("numba_cuda_mlir") is not None
needs_mlir = pytest.mark.skipif(not HAS_MLIR, reason="numba-cuda-mlir is not installed (the mlir extra)")


class _Gpu:
    is_simulator = False

    def skip_reason(self, kind):
        return None


def test_every_declared_wrong_code_is_a_known_bug():
    from kernels.registry import ALGORITHMS

    declared = {(a.name, v.name): v.mlir_wrong_code for a in ALGORITHMS for v in a.variants if v.mlir_wrong_code}
    assert declared == {("histogram", "best"): SHARED_ATOMIC_IN_DEVICE_FUNCTION.name,
                        ("hashtable", "gpu-counting-sort"): SHARED_ATOMIC_IN_DEVICE_FUNCTION.name}
    assert set(declared.values()) <= set(KNOWN)


def test_a_variant_the_wrong_code_would_crash_is_a_skipped_row_naming_the_bug(monkeypatch):
    from kernels.histogram import VARIANTS

    by_name = {v.name: v for v in VARIANTS}
    monkeypatch.setattr(compiler, "simulator_active", lambda: False)
    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda-mlir")
    reason = by_name["best"].skip_reason(_Gpu())
    assert reason.kind is SkipKind.COMPILER_WRONG_CODE
    assert reason.text == skip_text("shared-atomic-in-device-function")
    assert reason.text.startswith("numba-cuda-mlir 0.6.0 wrong code: cuda.atomic.add on a shared array passed to a "
                                  "device function is emitted as atom.global at address 0 + offset, an illegal address")
    # the seed kernels' wrong code gives wrong counts, not a crash: they run, as FAILED rows
    assert by_name["global-atomics"].skip_reason(_Gpu()) is None
    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda")
    assert by_name["best"].skip_reason(_Gpu()) is None


def test_counts_below_the_counters_are_named_in_the_mismatch():
    from kernels.histogram.problem import BINS, make_problem

    problem = make_problem(data=np.array([1, 200, 200, 3], np.uint8))
    counts = problem.reference.copy()
    counts[200] = 0  # what a sign-extended index does: byte 200 counted at index -56
    guard = np.zeros(BINS, np.uint32)
    guard[BINS - 56] = 2
    assert problem.score(counts) == BINS - 1
    problem.note_stray_counts(guard)
    assert problem.verify(BINS - 1) == (False, "1 bins differ (first: bin 200 got 0 expected 2); 2 counts landed in "
                                               "the 256 words below the counters (a negative index)")
    problem.score(problem.reference)
    problem.note_stray_counts(np.zeros(BINS, np.uint32))
    assert problem.last_mismatch == ""


def test_the_counters_follow_their_guard_in_one_allocation():
    from kernels.histogram.problem import BINS, make_problem

    problem = make_problem(n=64)
    counts, guard = problem.device_counts(), problem.device_guard()
    assert counts.shape == (BINS,) and guard.shape == (BINS,)
    assert problem.device_counts() is counts  # allocated once


# --- the reproductions (docs/compilers.md), compiled offline for sm_90 --------------------------------------

def _mlir_ptx(kernel, signature: str) -> str:
    from numba_cuda_mlir import cuda

    from kernels.backend.mlir_private import target_cc

    with target_cc((9, 0)):
        ptx, _ = cuda.compile_ptx(kernel, signature, cc=(9, 0))
    return ptx


def _count_by_byte_kernel():
    from numba_cuda_mlir import cuda

    def kernel(data, counts):
        i = cuda.grid(1)
        if i < data.size:
            cuda.atomic.add(counts, data[i], 1)

    return kernel


@needs_mlir
@pytest.mark.slow
def test_a_uint8_index_is_still_sign_extended():
    ptx = _mlir_ptx(_count_by_byte_kernel(), "void(uint8[::1], uint32[::1])")
    assert re.search(r"ld\.global\.s8\s", ptx), "re-check UNSIGNED_INDEX_SIGN_EXTENDED: fixed in this release?"
    assert len(_NARROW_SIGNED_LOAD.findall(ptx)) == 1


def _atomic_in_device_function_kernel():
    from numba_cuda_mlir import cuda
    from numpy import uint32

    @cuda.jit(device=True)
    def bump(sub, j):
        cuda.atomic.add(sub, j, 1)

    def kernel(out):
        sub = cuda.shared.array(32, uint32)
        sub[cuda.threadIdx.x] = 0
        cuda.syncthreads()
        bump(sub, cuda.threadIdx.x)
        cuda.syncthreads()
        out[cuda.threadIdx.x] = sub[cuda.threadIdx.x]

    return kernel


@needs_mlir
@pytest.mark.slow
def test_a_shared_atomic_in_a_device_function_still_has_no_base():
    ptx = _mlir_ptx(_atomic_in_device_function_kernel(), "void(uint32[::1])")
    assert "atom.shared" not in ptx, "re-check SHARED_ATOMIC_IN_DEVICE_FUNCTION: fixed in this release?"
    assert zero_based_global_atomics(ptx) == 1


def test_the_detectors_read_ptx_text():
    ptx = """
        add.s64 	%rd8, 0, %rd7;
        atom.global.add.u32 	%r2, [%rd8], 1;
        add.s64 	%rd9, %rd5, %rd7;
        atom.global.add.u32 	%r3, [%rd9], 1;
        ld.global.s8 	%rd15, [%rd14];
        ld.global.u8 	%rd16, [%rd14];
        ld.global.s32 	%rd17, [%rd14];
    """
    assert zero_based_global_atomics(ptx) == 1
    assert len(_NARROW_SIGNED_LOAD.findall(ptx)) == 1


@needs_mlir
@pytest.mark.slow
@pytest.mark.parametrize("variant, words", [
    ("best", "53 global atomics at address 0 + offset"),
    ("global-atomics", "sign-extends an unsigned index narrower than 64 bits"),
])
def test_compiler_compare_names_the_histograms_wrong_code(capsys, variant, words):
    import json

    from kernels.inspector import toolchain
    from raytracer_app.cli import main

    if toolchain.missing():
        pytest.skip("needs NVIDIA's compiler packages (the test extra)")
    assert main(["inspect", "histogram", variant, "--compiler-compare", "--json"]) == 0
    assert words in json.loads(capsys.readouterr().out)["sentence"]
