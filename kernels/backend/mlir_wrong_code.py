"""numba-cuda-mlir's known wrong code: what each bug does, in words, and the variants it stops from running.

Found in the PTX of numba-cuda-mlir ``CHECKED_ON`` (:mod:`kernels.backend.mlir_private`, the pinned release);
docs/compilers.md has each one's reproduction, a kernel of a few lines, and ``tests/test_mlir_wrong_code.py``
compiles those offline and fails once a release no longer shows the bug (then re-check this list).

Wrong code that only gives wrong results is left to run: the lab shows it as FAILED rows with the mismatch
(the same source verifies under numba-cuda). Wrong code that addresses memory no kernel owns would end the
process's CUDA context (``CUDA_ERROR_ILLEGAL_ADDRESS``) and every row after it, so the variants it hits are
declared here (``mlir_wrong_code`` on the variant) and are skipped rows under numba-cuda-mlir, naming the bug.

Imports nothing: the algorithm packages read it without importing numba.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WrongCode:
    name: str
    what: str  # the bug, in words
    effect: str  # what it does to a kernel that meets it


SHUFFLE_64 = WrongCode(
    "64-bit-shuffle", "cuda.shfl_*_sync of a 64-bit value is truncated to 32 bits (an int64 through an int32)",
    "wrong sums once a partial sum needs more than 32 bits: FAILED rows")
UNSIGNED_INDEX_SIGN_EXTENDED = WrongCode(
    "unsigned-index-sign-extended", "an unsigned integer narrower than 64 bits used as an array index is "
    "sign-extended (a uint8 128..255 indexes -128..-1)",
    "bytes 128..255 counted in the 512 bytes below the histogram's counters: FAILED rows")
SHARED_ATOMIC_IN_DEVICE_FUNCTION = WrongCode(
    "shared-atomic-in-device-function", "cuda.atomic.add on a shared array passed to a device function is "
    "emitted as atom.global at address 0 + offset",
    "an illegal address, which ends the process's CUDA context")

KNOWN = {w.name: w for w in (SHUFFLE_64, UNSIGNED_INDEX_SIGN_EXTENDED, SHARED_ATOMIC_IN_DEVICE_FUNCTION)}


def skip_text(name: str) -> str:
    """A skipped row's words for a variant that meets the known wrong code ``name``."""
    from kernels.backend.mlir_private import CHECKED_ON

    bug = KNOWN[name]
    return f"numba-cuda-mlir {CHECKED_ON} wrong code: {bug.what}, {bug.effect} (docs/compilers.md)"
