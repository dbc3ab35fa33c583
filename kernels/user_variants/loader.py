"""The app's side of a user variant file: read it, check its syntax (compiling is not running), ask a child
process what it declares, and wrap it as a :class:`Variant` whose ``run`` sends each job to that child under
a watchdog. The file's own code runs only in the child."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
import time
import uuid

from kernels.backend import Skip, SkipKind
from kernels.errors import BackendUnavailable, InputError
from kernels.harness.variants import Variant, sim_lacks
from kernels.backend.child import SimulatorProcess, Stalled
from kernels.harness.user_calls import Phases, detached

OPTION = "--variant-file"
USER_JOB = "kernels.user_variants.child_side:serve"  # what the child runs for each of this module's jobs
MAX_BYTES = 1 << 20  # a variant file is source code: a megabyte is plenty
DEFAULT_WATCHDOG_S = 10.0

_CHILDREN: dict[tuple, SimulatorProcess] = {}
_CHILDREN_LOCK = threading.Lock()
_SHIPPED: dict[tuple, tuple] = {}  # child key -> (its process id, the token of the problem it holds)


class UserFileError(InputError):
    """The file does not load or compile; the message is 'path:line: what'."""


@dataclasses.dataclass(frozen=True)
class VariantFile:
    path: str
    source: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]


# What compiling costs in memory per byte of source (the tree of a long expression: ~100 bytes per term)
COMPILE_PEAK_PER_BYTE = 256


def read(path, option: str = OPTION) -> VariantFile:
    """The file's text through the one input reader (its size and what compiling it costs checked against
    the memory free, before it is read), its syntax checked here (``compile`` runs nothing): a file that
    cannot be compiled for any reason is one UserFileError naming the file, and its line where there is one."""
    from kernels.io.reader import check_fits, input_size, read_bytes

    path = os.fspath(path)
    check_fits(path, option, input_size(path, option) * COMPILE_PEAK_PER_BYTE, "compiling it")
    raw = read_bytes(path, option, MAX_BYTES, "a variant file is source code")
    try:
        source = raw.decode("utf-8-sig")  # a leading byte-order mark, as Python itself accepts in a source file
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise UserFileError(f"{path}:{line}: not UTF-8 text (byte {exc.start} is {raw[exc.start]:#04x})") from None
    del raw
    check_compiles(source, path)
    return VariantFile(path, source)


def check_compiles(source: str, path: str) -> None:
    """UserFileError ('path:line: what', or 'path: what') unless ``source`` compiles: a syntax error, a NUL
    byte, an expression nested past Python's compiler (RecursionError), or one too large to compile."""
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:  # IndentationError and TabError too
        where = f"{path}:{exc.lineno}" if exc.lineno else path
        raise UserFileError(f"{where}: {type(exc).__name__}: {exc.msg}") from None
    except RecursionError:
        raise UserFileError(f"{path}: an expression or block nested too deeply for Python's compiler "
                            "(RecursionError); split it into smaller statements") from None
    except MemoryError:
        raise UserFileError(f"{path}: too large for Python's compiler to hold in memory") from None
    except (ValueError, OverflowError) as exc:  # a NUL byte; a value too large
        raise UserFileError(f"{path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None


def child_for(backend) -> SimulatorProcess:
    """The child process that runs user files for ``backend`` (the simulator's, or one on the real GPU),
    shared by every file; started on first use."""
    key = (backend.is_gpu, backend.device)
    with _CHILDREN_LOCK:
        if key not in _CHILDREN:
            _CHILDREN[key] = SimulatorProcess(simulate=not backend.is_gpu, name="user-variants")
        return _CHILDREN[key]


def end_children() -> None:
    with _CHILDREN_LOCK:
        for child in _CHILDREN.values():
            child.end()


def _ask(backend, payload: dict, watchdog_s: float, should_stop=lambda: False) -> dict:
    return child_for(backend).call(USER_JOB, payload, should_stop, watchdog_s=watchdog_s)


def warm(backend, problem=None, watchdog_s: float = 60.0) -> None:
    """Start the child for ``backend`` and let it import numba (and make its CUDA context) now, so that the
    first Run waits only for its own compile; with ``problem``, ship it now too (the child keeps it for the
    runs on it)."""
    payload = {"job": "warm", "backend": backend}
    key, child = (backend.is_gpu, backend.device), child_for(backend)
    if problem is not None and _SHIPPED.get(key) != (child.pid, problem_token(problem)):
        payload.update(problem=detached(problem), problem_token=problem_token(problem))
    _ask(backend, payload, watchdog_s)
    if "problem" in payload:
        _SHIPPED[key] = (child.pid, payload["problem_token"])


def is_warm(backend) -> bool:
    """Whether the child for ``backend`` runs (started, and not ended by a watchdog or a crash)."""
    with _CHILDREN_LOCK:
        child = _CHILDREN.get((backend.is_gpu, backend.device))
    return child is not None and child.running()


def problem_token(problem) -> str:
    """The problem's name in the child's cache: given once per problem object, so the child is sent its
    arrays once however many runs and files use it."""
    token = getattr(problem, "_user_token", None)
    if token is None:
        token = uuid.uuid4().hex
        problem._user_token = token
    return token


def load(path, backend, watchdog_s: float = DEFAULT_WATCHDOG_S, should_stop=lambda: False) -> Variant:
    """The file as one more GPU variant of its TARGET (UserFileError when it does not load). Its ``run``
    is a :class:`UserRun`. Refused under numba-cuda-mlir: a variant file is numba-cuda code (it imports
    ``numba.cuda`` itself, as the templates do), whose kernels cannot take that compiler's arrays."""
    from kernels.backend.compiler import uses_mlir

    if uses_mlir():
        raise BackendUnavailable(f"{path}: a variant file is numba-cuda code (it imports numba.cuda); run it with "
                                 f"--compiler numba-cuda")
    file = read(path)
    try:
        answer = _ask(backend, {"job": "load", "path": file.path, "source": file.source}, watchdog_s, should_stop)
    except Stalled as exc:  # its import never ended
        raise Stalled(exc.seconds, file.path, exc.started) from None
    if "bad_file" in answer or "error" in answer:
        raise UserFileError(answer.get("bad_file") or answer["error"])
    declared = answer["declared"]
    runner = UserRun(file, declared, watchdog_s)
    description = (f"user variant {file.path} (sha256 {file.short_hash})"
                   + (f": {declared['doc']}" if declared["doc"] else ""))
    return Variant(declared["name"], description, "gpu", run=runner, launch=declared["launch"])


def is_user(variant: Variant) -> bool:
    return isinstance(variant.run, UserRun)


class UserRun:
    """A user variant's ``run(problem, launch, backend, repeats)``: ships the problem (without its device
    copies) to the child, which times the file's ``run``; the raw result is scored here, so the harness
    verifies it against the algorithm's reference as for any variant. ``bad_file`` keeps the last
    load or compile error (the CLI exits 2 on it)."""

    def __init__(self, file: VariantFile, declared: dict, watchdog_s: float):
        self.file, self.declared, self.watchdog_s = file, declared, watchdog_s
        self.bad_file: str = ""
        self.should_stop = lambda: False
        self.phases = Phases()  # the last call's: ship (pickling, the pipe), and the child's copy, compile, time

    @property
    def target(self) -> str:
        return self.declared["target"]

    def __call__(self, problem, launch, backend, repeats):
        from kernels import timing
        from kernels.harness.rows import Outcome
        from kernels.registry import by_name

        spec = by_name(self.target)
        for key, values in self.declared["supports"].items():
            have = getattr(problem, spec.user.supports[key])
            if have not in values:
                return Skip(SkipKind.NOT_APPLICABLE, f"{self.declared['name']} supports {key} {', '.join(values)}; "
                                                     f"not {have}")
        # the problem's arrays go only when the child does not hold them yet (a new problem, a new child)
        payload = {"job": "run", "path": self.file.path, "source": self.file.source, "problem": None,
                   "problem_token": problem_token(problem), "launch": launch, "backend": backend,
                   "repeats": repeats, "policy": timing.current_policy()}
        t0 = time.perf_counter()
        try:
            answer = _ask(backend, payload, self.watchdog_s, self.should_stop)
            if answer.get("need_problem"):
                payload["problem"] = detached(problem)
                answer = _ask(backend, payload, self.watchdog_s, self.should_stop)
        except Stalled as exc:
            raise Stalled(exc.seconds, self.file.path, exc.started) from None
        child = answer.get("phases", {})
        self.phases = Phases(child, ship=max(0.0, time.perf_counter() - t0 - sum(child.values())))
        if "bad_file" in answer:
            self.bad_file = answer["bad_file"]
            raise UserFileError(self.bad_file)
        if "error" in answer:
            lacks = sim_lacks(answer["error"]) if backend.is_simulator else ""
            if lacks:  # a kernel with warp shuffles: skipped in the simulator, as the built-ins with them are
                return Skip(SkipKind.NOT_IN_SIMULATOR, lacks)
            raise RuntimeError(answer["error"])
        out: Outcome = answer["outcome"]
        note = f"user variant {self.file.path} sha256 {self.file.short_hash}"
        return dataclasses.replace(out, result=spec.user.score(problem, out.result), note=note)


def kernel_decl(variant: Variant):
    """What the inspector compiles for a loaded user variant (its file's INSPECT), as a KernelDecl: its
    launch rule's block, the dynamic shared memory INSPECT declares per thread, and (a user's kernel has no
    traffic model of its own) the traffic model of its algorithm's first inspectable built-in, said in
    the note. UserFileError when the file declares no INSPECT."""
    from kernels.harness.kernel_decl import KernelDecl
    from kernels.registry import by_name

    run: UserRun = variant.run
    spec = run.declared["inspect"]
    if spec is None:
        raise UserFileError(f"{run.file.path}: declares no INSPECT = {{'kernel': ..., 'signature': ...}} to compile "
                            "(docs/user-variants.md)")
    model = next(v for v in by_name(run.target).variants if v.inspect is not None)
    per_thread = int(spec.get("dynamic_shared_per_thread", 0))
    block = variant.launch.block if isinstance(variant.launch.block, tuple) else (variant.launch.block,)
    args = spec.get("args")
    return KernelDecl(run.file.path, spec["kernel"], tuple(args) if args is not None else None, spec["signature"],
                      block, lambda threads: per_thread * threads, model.inspect.traffic, model.inspect.default_n,
                      item=spec.get("item"), grid=model.inspect.grid,
                      note=f"user variant {run.file.path} sha256 {run.file.short_hash}; traffic modelled as "
                           f"{model.name}'s")
