"""Compile the declared kernels for an architecture, with a disk cache.

The numba step runs in a child process with the CUDA simulator off (see
:mod:`kernels.inspector.offline_compile`), one per group of architectures numba-cuda lowers alike; ptxas and
nvdisasm run from here. Results are cached as JSON per (target, variant, signature, architecture, numba-cuda
version, ptxas and nvdisasm versions, source of the kernels package) in ``RAYTRACER_INSPECT_CACHE`` or the
user's cache folder, or the ``cache_dir`` given.

The cache heals: an entry that cannot be read, is not valid JSON, or does not claim the target, variant,
architecture, signature and numba-cuda version of its key is compiled again (one warning); a folder that
cannot be used (a file, read-only, cannot be created) means no cache (one warning), never a failed inspect.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path

from kernels.backend.numba_private import lowering_group
from kernels.inspector import toolchain
from kernels.inspector.declarations import declaration
from kernels.errors import InputError
from kernels.inspector.errors import CompileFailed
from kernels.inspector.occupancy import DEFAULT_ARCH, limits_for

CACHE_ENV = "RAYTRACER_INSPECT_CACHE"
# the compiler child's deadline (kernels/backend/watchdog.py): its start (interpreter, numba), then each kernel
# it compiles (NVVM for every architecture of its group) at most this long
CHILD_START_S = 120.0
CHILD_SILENCE_S = 300.0
_KERNELS_DIR = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Compiled:
    """What the tools produced for one kernel: the raw material of a report."""

    target: str
    variant: str
    arch: str
    signature: str
    numba_cuda: str
    ptx: str
    ptxas_report: str
    # nvdisasm's text, or the cubin it is made from when sass_text is first read: nvdisasm costs about half a
    # second of CPU a kernel, and a look at the PTX or the resources alone never needs it
    sass_or_cubin: str | bytes = field(repr=False)
    sources: list  # [{"name", "file", "first_line", "source"}]: the kernel, then the functions it calls
    entry: Path | None = field(default=None, repr=False, compare=False)  # its cache entry, made whole on first read

    @functools.cached_property
    def sass_text(self) -> str:
        if isinstance(self.sass_or_cubin, str):
            return self.sass_or_cubin
        text = toolchain.disassemble(self.sass_or_cubin)
        if self.entry is not None:  # the entry keeps the text from now on: nvdisasm runs once a kernel
            _store(self.entry, replace(self, sass_or_cubin=text), quiet=True)
        return text


def cache_dir(override: str | os.PathLike | None = None) -> Path:
    if override:
        return Path(override)
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    from kernels.io.cache import cache_root

    return cache_root() / "inspect"


def _arch_number(arch: str) -> int:
    return int(arch.split("_")[1])


def check_arch(arch: str | None) -> str:
    arch = arch or DEFAULT_ARCH
    limits_for(arch)  # InputError for an architecture without published limits
    return arch


def _cc(arch: str) -> tuple[int, int]:
    number = _arch_number(arch)
    return number // 10, number % 10


def _source_hash() -> str:
    from kernels.io.reader import read_bytes

    digest = hashlib.sha256()
    for path in sorted(_KERNELS_DIR.rglob("*.py")):  # every module of every package: a callee may live anywhere
        source = read_bytes(path, "the kernels' source", 16 * 2**20, "a module of the app")
        digest.update(path.relative_to(_KERNELS_DIR).as_posix().encode() + source)
    return digest.hexdigest()[:16]


def _cache_key(target: str, variant: str, arch: str, numba_cuda: str, sources: str,
               tools: dict | None = None) -> str:
    decl = declaration(target, variant)
    tools = toolchain.tool_versions() if tools is None else tools
    ident = [target, variant, decl.module, decl.function, repr(decl.args), decl.item, decl.signature, arch,
             numba_cuda, sources, tools.get("ptxas"), tools.get("nvdisasm")]
    return hashlib.sha256(json.dumps(ident, default=str).encode()).hexdigest()[:24]


def compile_kernels(pairs: list[tuple[str, str]], arch: str = DEFAULT_ARCH, cache: str | os.PathLike | None = None,
                    compiler: str | None = None) -> dict[tuple[str, str], Compiled | CompileFailed]:
    """Compiled kernels for (target, variant) pairs, from the cache or one child process; a kernel that
    fails to compile maps to its CompileFailed instead of stopping the others. ``compiler``: numba-cuda or
    numba-cuda-mlir (default: the process's setting, kernels/backend/compiler.py)."""
    return compile_for_archs(pairs, [arch], cache, compiler)[check_arch(arch)]


def compiler_version(compiler: str) -> str:
    """What a Compiled's ``numba_cuda`` field holds: numba-cuda's version, or 'numba-cuda-mlir VERSION'
    (a cache entry of one compiler is never taken for the other's)."""
    from kernels.backend.compiler import NUMBA_CUDA_MLIR, mlir_installed

    if compiler != NUMBA_CUDA_MLIR:
        return version("numba-cuda")
    if not mlir_installed():
        from kernels.backend.compiler import MLIR_INSTALL_HINT

        raise InputError(f"compiling with numba-cuda-mlir needs it installed: {MLIR_INSTALL_HINT}")
    return f"{NUMBA_CUDA_MLIR} {version('numba-cuda-mlir')}"


def compiled_by(numba_cuda_field: str) -> str:
    """The compiler and version a Compiled's ``numba_cuda`` field names, in words ('numba-cuda 0.30.4')."""
    from kernels.backend.compiler import NUMBA_CUDA_MLIR

    return numba_cuda_field if numba_cuda_field.startswith(NUMBA_CUDA_MLIR) else f"numba-cuda {numba_cuda_field}"


def compile_for_archs(pairs: list[tuple[str, str]], archs: list[str], cache: str | os.PathLike | None = None,
                      compiler: str | None = None) -> dict[str, dict[tuple[str, str], Compiled | CompileFailed]]:
    """:func:`compile_kernels` for each of ``archs`` ({arch: {pair: ...}}), what the cache lacks compiled by
    one child process for the architectures numba-cuda lowers alike (:func:`_run_child`)."""
    from kernels.backend.compiler import requested

    compiler = compiler or requested()
    toolchain.require()
    archs = list(dict.fromkeys(check_arch(arch) for arch in archs))
    for arch in archs:
        if arch not in toolchain.ptxas_archs():
            raise InputError(f"the installed ptxas cannot compile for {arch}")
    from kernels.io.cache import usable_dir

    folder = usable_dir(cache_dir(cache), "inspector cache")
    numba_cuda, sources, tools = compiler_version(compiler), _source_hash(), toolchain.tool_versions()
    results: dict = {arch: {} for arch in archs}
    misses: dict = {}  # arch -> [(target, variant, path, warned)]
    for arch in archs:
        for target, variant in pairs:
            path, entry = None, None
            if folder is not None:
                path = folder / f"{_cache_key(target, variant, arch, numba_cuda, sources, tools)}.json"
                entry = _read_entry(path, target, variant, arch, numba_cuda)
                if isinstance(entry, Compiled):
                    results[arch][(target, variant)] = entry
                    continue
            misses.setdefault(arch, []).append((target, variant, path, entry == "warned"))
    if misses:
        missed = list(dict.fromkeys((t, v) for arch_misses in misses.values() for t, v, _, _ in arch_misses))
        outcomes = _compile_in_child(missed, list(misses), compiler)
        for arch, arch_misses in misses.items():
            for target, variant, path, warned in arch_misses:
                outcome = outcomes[arch][(target, variant)]
                if "error" in outcome:
                    failed = f"{target} {variant} for {arch}: {outcome['error']}"
                    results[arch][(target, variant)] = CompileFailed(failed)
                    continue
                try:
                    assembled = toolchain.assemble(outcome["ptx"], arch)
                except CompileFailed as exc:  # this kernel's PTX only: the others are still reported
                    results[arch][(target, variant)] = CompileFailed(f"{target} {variant} for {arch}: {exc}")
                    continue
                compiled = Compiled(target, variant, arch, declaration(target, variant).signature, numba_cuda,
                                    outcome["ptx"], assembled.report, assembled.cubin, outcome["sources"], path)
                if path is not None:
                    _store(path, compiled, quiet=warned)  # rebuilt; one warning per entry all told
                results[arch][(target, variant)] = compiled
    return results


def _compile_in_child(pairs: list[tuple[str, str]], archs: list[str], compiler: str | None = None) -> dict:
    """{arch: {pair: the child's outcome}} for the declared kernels ``pairs``."""
    jobs = []
    for target, variant in pairs:
        decl = declaration(target, variant)
        jobs.append({"key": f"{target}/{variant}", "module": decl.module, "function": decl.function,
                     "args": list(decl.args) if decl.args is not None else None, "item": decl.item,
                     "signature": decl.signature})
    results = _run_child(jobs, archs, compiler)
    return {arch: {(t, v): results[arch][f"{t}/{v}"] for t, v in pairs} for arch in archs}


def compile_variant_file(target: str, name: str, path: str, source: str, inspect: dict,
                         arch: str = DEFAULT_ARCH) -> Compiled:
    """A user variant file's kernel (its INSPECT: kernel or factory, arguments, signature) compiled for
    ``arch`` in the compiler's child process: the file's code never runs in this one. Not cached (the file
    is being edited). CompileFailed names what went wrong."""
    (result,) = compile_variant_files([(target, name, path, source, inspect)], arch)
    if isinstance(result, Exception):
        raise result
    return result


def compile_variant_files(files: list[tuple[str, str, str, str, dict]], arch: str = DEFAULT_ARCH
                          ) -> list[Compiled | CompileFailed]:
    """:func:`compile_variant_file` for several (target, name, path, source, inspect) files in one child
    process, in order; a file that fails maps to its CompileFailed instead of stopping the others."""
    return variant_files_for_archs(files, [arch])[check_arch(arch)]


def variant_files_for_archs(files: list[tuple[str, str, str, str, dict]], archs: list[str]
                            ) -> dict[str, list[Compiled | CompileFailed]]:
    """:func:`compile_variant_files` for each of ``archs`` ({arch: [...]}), numba's work shared as
    :func:`compile_for_archs` shares it. The SASS is disassembled when first read."""
    toolchain.require()
    archs = list(dict.fromkeys(check_arch(arch) for arch in archs))
    jobs = [{"key": str(i), "file": path, "source": source, "function": inspect["kernel"], "args": inspect.get("args"),
             "item": inspect.get("item"), "signature": inspect["signature"]}
            for i, (_, _, path, source, inspect) in enumerate(files)]
    outcomes = _run_child(jobs, archs)
    results: dict = {arch: [] for arch in archs}
    for arch in archs:
        for i, (target, name, path, _, inspect) in enumerate(files):
            outcome = outcomes[arch][str(i)]
            if "error" in outcome:
                results[arch].append(CompileFailed(f"{path} for {arch}: {outcome['error']}"))
                continue
            assembled = toolchain.assemble(outcome["ptx"], arch)
            results[arch].append(Compiled(target, name, arch, inspect["signature"], version("numba-cuda"),
                                          outcome["ptx"], assembled.report, assembled.cubin, outcome["sources"]))
    return results


def _run_child(jobs: list[dict], archs: list[str], compiler: str | None = None) -> dict:
    """{arch: {job key: {"ptx", "sources"} or {"error"}}}: one child process per group of ``archs`` that
    numba-cuda lowers alike (in it each kernel is lowered once, and NVVM makes its PTX per architecture)."""
    from kernels.backend.compiler import NUMBA_CUDA_MLIR

    groups: dict = {}
    for arch in archs:  # numba-cuda-mlir compiles each architecture apart: one child for all
        groups.setdefault(0 if compiler == NUMBA_CUDA_MLIR else lowering_group(_cc(arch)), []).append(arch)
    results: dict = {}
    for group in groups.values():
        answers = _run_one_child(jobs, group, compiler)
        for i, arch in enumerate(group):
            results[arch] = {key: ({"ptx": a["ptx"][i], "sources": a["sources"]} if "ptx" in a else a)
                             for key, a in answers.items()}
    return results


def _run_one_child(jobs: list[dict], archs: list[str], compiler: str | None = None) -> dict:
    from kernels.backend.compiler import COMPILER_ENV

    env = dict(os.environ)
    if compiler:
        env[COMPILER_ENV] = compiler
    env.pop("NUMBA_ENABLE_CUDASIM", None)  # compile_ptx does not work in a simulator process
    root = str(_KERNELS_DIR.parent)
    env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    with tempfile.TemporaryDirectory(prefix="inspect-") as tmp:
        request, answer = os.path.join(tmp, "jobs.json"), os.path.join(tmp, "result.json")
        with open(request, "w") as f:
            json.dump({"ccs": [list(_cc(arch)) for arch in archs], "jobs": jobs}, f)
        from kernels.backend import watchdog

        proc = watchdog.popen([sys.executable, "-m", "kernels.inspector.offline_compile", request, answer],
                              env=env, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
        try:  # the one deadline: started within CHILD_START_S, then a kernel compiled every CHILD_SILENCE_S
            code, err = watchdog.watch(proc, watchdog.Deadline(CHILD_START_S, CHILD_SILENCE_S))
        except watchdog.Stalled as exc:
            raise CompileFailed(f"the compiler process: {exc}") from None
        if code != 0 or not os.path.exists(answer):
            lines = [ln for ln in err.splitlines() if ln.strip()]
            raise CompileFailed(f"the compiler process failed: {lines[-1] if lines else code}")
        from kernels.io.reader import read_json

        return read_json(answer, "the compiler process's answer", 1 << 30, "PTX of a few kernels")["results"]


# an entry holds Compiled's fields, and the SASS as text under "sass_text" or, until it is first read, the
# cubin it is made from under "cubin" (base64)
_FIELDS = {name: (list if name == "sources" else str) for name in Compiled.__dataclass_fields__
           if name not in ("sass_or_cubin", "entry")}
_SASS_KEYS = ("sass_text", "cubin")
MAX_ENTRY_BYTES = 64 * 2**20  # one kernel's PTX, SASS and sources: a few MiB at most


def _read_entry(path: Path, target: str, variant: str, arch: str, numba_cuda: str) -> Compiled | str | None:
    """The cached Compiled at ``path``; None when there is none; 'warned' after one warning when the entry
    cannot be read or does not hold what its key says (it is compiled again)."""
    from kernels.io.cache import BadEntry, read_entry, warn_once

    try:
        raw = read_entry(path, "inspector cache", MAX_ENTRY_BYTES)
        if raw is None:
            return None
        data = json.loads(raw)
    except BadEntry as exc:
        warn_once(f"inspector cache entry {path} is unusable ({exc}); compiling again")
        return "warned"
    except (ValueError, RecursionError) as exc:
        warn_once(f"inspector cache entry {path} is unreadable ({type(exc).__name__}); compiling again")
        return "warned"
    claimed = {"target": target, "variant": variant, "arch": arch, "numba_cuda": numba_cuda,
               "signature": declaration(target, variant).signature}
    problem, sass = None, None
    if (not isinstance(data, dict) or set(data) - set(_SASS_KEYS) != set(_FIELDS)
            or len(set(data) & set(_SASS_KEYS)) != 1):
        problem = "not a compiled kernel"
    elif any(not isinstance(data[name], kind) for name, kind in _FIELDS.items()):
        problem = "a field of the wrong type"
    elif (sass := _sass_of(data)) is None:
        problem = "SASS of the wrong type"
    else:
        wrong = [name for name, want in claimed.items() if data[name] != want]
        if wrong:
            problem = f"{', '.join(wrong)} differ from its key"
        elif not all(isinstance(s, dict) for s in data["sources"]):
            problem = "sources of the wrong shape"
    if problem:
        warn_once(f"inspector cache entry {path} is invalid ({problem}); compiling again")
        return "warned"
    return Compiled(**{name: data[name] for name in _FIELDS}, sass_or_cubin=sass, entry=path)


def _sass_of(data: dict) -> str | bytes | None:
    """An entry's SASS text, or the cubin it holds instead; None when neither is what it should be."""
    import base64
    import binascii

    if "sass_text" in data:
        return data["sass_text"] if isinstance(data["sass_text"], str) else None
    try:
        return base64.b64decode(data["cubin"], validate=True) if isinstance(data["cubin"], str) else None
    except (binascii.Error, ValueError):
        return None


def _store(path: Path, compiled: Compiled, quiet: bool = False) -> None:
    """Write one entry through the project's one writer (atomic); a failure is one warning (none when
    ``quiet``: the entry was already warned about), not an error."""
    from kernels.errors import InputError
    from kernels.io.cache import warn_once
    from kernels.io.writer import WriteFailed, write_output

    try:
        write_output(path, json.dumps(_entry_of(compiled)), "inspector cache", backup=False)
    except (OSError, InputError, WriteFailed) as exc:
        if not quiet:
            warn_once(f"inspector cache entry {path} cannot be written ({getattr(exc, 'strerror', None) or exc}); "
                      "not kept")


def _entry_of(compiled: Compiled) -> dict:
    import base64

    sass = compiled.sass_or_cubin
    return {name: getattr(compiled, name) for name in _FIELDS} | (
        {"sass_text": sass} if isinstance(sass, str) else {"cubin": base64.b64encode(sass).decode("ascii")})
