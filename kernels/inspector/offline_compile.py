"""Compiling a kernel to PTX for a chosen architecture with no GPU and no driver (the child side).

numba-cuda's ``compile_ptx`` takes the target ``cc``, but a kernel that calls a device function compiles
that callee for ``get_current_device()``'s compute capability (``numba.cuda.dispatcher``), which needs a
driver. :func:`kernels.backend.numba_private.target_device` replaces that one name for the duration of a
compile with an object that reports the target: the only place the inspector touches numba-cuda's internals
(checked on the version that module names; a test fails when the installed version differs), and
:func:`kernels.backend.numba_private.lineinfo_everywhere` gives the device functions a kernel calls line
information as the kernel has, so that their inlined code maps to their own lines. Callees are
cached per argument types, not per architecture, so one process compiles for architectures that numba-cuda
lowers alike only (:func:`kernels.backend.numba_private.lowering_group`): each kernel is lowered once and
NVVM makes its PTX for each of them (:func:`kernels.backend.numba_private.ptx_for_each`).
:mod:`kernels.inspector.compiler` starts a child per such group, with the CUDA simulator off
(``compile_ptx`` does not work in a simulator process).

Under numba-cuda-mlir (``RAYTRACER_COMPILER``, which the parent sets for the child) each kernel is compiled
by its public ``compile_ptx`` once per architecture, inside :func:`kernels.backend.mlir_private.target_cc`
(numba-cuda-mlir 0.6.0 otherwise asks the driver for a device even with ``cc=``), with line information.

Run as ``python -m kernels.inspector.offline_compile JOBS.json RESULT.json``; JOBS names the compute
capabilities (``ccs``), and each kernel's answer lists its PTX in their order.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys

from kernels.backend.compiler import uses_mlir
from kernels.backend.numba_private import lineinfo_everywhere, ptx_for_each, target_device


def resolve_kernel(job: dict):
    """The Python function of the kernel a declaration job names (in a user's variant file: 'file' and
    'source', imported as the user-variant child does)."""
    if job.get("file"):
        from kernels.user_variants.child_side import import_file

        module = import_file(job["file"], job["source"])
    else:
        module = importlib.import_module(job["module"])
    obj = getattr(module, job["function"])
    if job.get("args") is not None:
        obj = obj(*job["args"])
    if job.get("item") is not None:
        obj = obj[job["item"]]
    return getattr(obj, "py_func", obj)


def _callee_sources(fn, seen: dict) -> None:
    """Source of ``fn`` and of every jitted function it calls (module globals or closure cells)."""
    key = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
    if key in seen:
        return
    lines, first = inspect.getsourcelines(fn)
    seen[key] = {"name": fn.__qualname__, "file": fn.__code__.co_filename, "first_line": first,
                 "source": "".join(lines)}
    candidates = [fn.__globals__.get(name) for name in fn.__code__.co_names]
    candidates += [cell.cell_contents for cell in (fn.__closure__ or ()) if _filled(cell)]
    for obj in candidates:
        py_func = getattr(obj, "py_func", None)
        if callable(py_func) and hasattr(py_func, "__code__"):
            _callee_sources(py_func, seen)


def callee_sources(fn) -> list[dict]:
    """Source blocks of ``fn`` and of every jitted function it calls, the kernel first."""
    seen: dict = {}
    _callee_sources(fn, seen)
    return list(seen.values())


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - reading an empty cell raises
    except ValueError:
        return False
    return True


def compile_job(job: dict, ccs: list[tuple[int, int]]) -> dict:
    fn = resolve_kernel(job)
    if uses_mlir():
        ptxes = _mlir_ptx_for_each(fn, job["signature"], ccs)
    else:
        with target_device(ccs[0]), lineinfo_everywhere():
            ptxes = ptx_for_each(fn, job["signature"], ccs)
    return {"ptx": ptxes, "sources": callee_sources(fn)}


def _mlir_ptx_for_each(fn, signature: str, ccs: list[tuple[int, int]]) -> list[str]:
    from kernels.backend.compiler import cuda
    from kernels.backend.mlir_private import target_cc

    ptxes = []
    for cc in ccs:
        with target_cc(cc):
            ptx, _ = cuda.compile_ptx(fn, signature, cc=tuple(cc), lineinfo=True)
        ptxes.append(ptx.rstrip("\x00"))  # 0.6.0 ends sm_100 and later PTX with a NUL, which ptxas refuses
    return ptxes


def main(argv: list[str]) -> int:
    jobs_path, result_path = argv
    from kernels.io.reader import read_json

    from kernels.backend import watchdog

    request = read_json(jobs_path, "the compile jobs", 64 * 2**20, "a list of kernels to compile")
    ccs = [tuple(cc) for cc in request["ccs"]]
    results = {}
    watchdog.ignore_interrupts()  # Ctrl-C is the parent's, which ends this process
    watchdog.say_started()
    with watchdog.beats_to(watchdog.beat_on_stderr):
        for job in request["jobs"]:
            try:
                results[job["key"]] = compile_job(job, ccs)
            except Exception as exc:  # noqa: BLE001 - reported per kernel: one broken kernel must not hide the others
                # numba's messages open with the failing pipeline stage and put the cause on the next line
                text = [ln.strip() for ln in str(exc).splitlines() if ln.strip()][:2]
                results[job["key"]] = {"error": f"{type(exc).__name__}: {' '.join(text)[:400]}"}
            watchdog.beat()  # a kernel compiled: the parent's deadline counts from here
    with open(result_path, "w") as f:
        json.dump({"results": results}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
