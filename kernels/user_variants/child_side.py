"""The child process's side of a user variant file: import it from its text, check what it declares, and
run it through its algorithm's ``UserTarget.time_run``. Only the child imports a user's file; every
answer is plain data (a dict) so that nothing of the file's own code is pickled back to the app."""

from __future__ import annotations

import dataclasses
import hashlib
import linecache
import re
import sys
import traceback
import types

from kernels.launch import LaunchRule, resolve
from kernels.harness.user_calls import Phases, detached
from kernels.user_variants.names import name_problem

_MODULES: dict[str, types.ModuleType] = {}  # by sha256 of the text: a re-run without edits compiles nothing
# the last problem shipped, by its token: a re-run (or another file on the same problem) is not sent its
# arrays again. Its host arrays only: each run copies them to the device afresh, so a kernel that writes
# into its input cannot spoil the next run's.
_PROBLEM: dict = {}


class BadFile(Exception):
    """The file does not load or compile: ``where`` is 'path:line: what'."""


def serve(payload: dict, send) -> dict:
    """One job: {'job': 'warm' | 'load' | 'run', 'path', 'source', ...}, any of them carrying a problem to
    keep ('problem', 'problem_token'); returns {'warm': ...}, {'declared': ...}, {'outcome': ..., 'phases':
    ...}, {'need_problem': True} (a run on a problem this child does not hold: ask again with it),
    {'bad_file': line} or {'error': line}."""
    if payload.get("problem") is not None:
        _PROBLEM.clear()
        _PROBLEM[payload["problem_token"]] = payload["problem"]
    if payload["job"] == "warm":
        return {"warm": _warm(payload["backend"])}
    if payload["job"] == "run" and payload["problem_token"] not in _PROBLEM:
        return {"need_problem": True}
    path, source = payload["path"], payload["source"]
    try:
        import numba.cuda  # noqa: F401  (before the watchdog's clock matters: the file's own code comes next)

        send("tick", None)
        module = import_file(path, source)
        declared = _declared(module, path)
        if payload["job"] == "load":
            return {"declared": declared}
        phases = Phases()
        return {"outcome": _run(module, declared, payload, send, phases), "phases": dict(phases)}
    except BadFile as exc:
        return {"bad_file": str(exc)}
    except Exception as exc:  # noqa: BLE001 - whatever the user's code raises is reported, never fatal
        if _is_compile_error(exc):
            return {"bad_file": where(exc, path)}
        return {"error": where(exc, path)}


def _warm(backend) -> str:
    """numba imported and (on a GPU) its context made, ahead of the first file: what a Run would wait for.
    On a GPU also numba's compiler itself: a first compile in a process pays once for setting up numba's
    CUDA target and NVVM and for linking; a tiny kernel pays it here, so a Run's compile is its file's own.
    The timer's sleeping kernel is loaded and launched once too, so no timed sample is its first launch."""
    from numba import cuda

    import kernels.device_functions.vector_loads  # what the templates import
    import kernels.launch  # noqa: F401
    from kernels import timing

    backend.activate()
    if backend.is_gpu:
        cuda.current_context()
        from kernels.user_variants.warmup import first_compile

        first_compile()
        timing.EventTimer()(lambda: None)  # its sleeping kernel loaded and launched once, its events made
    return "ready"


def import_file(path: str, source: str) -> types.ModuleType:
    """The file imported from ``source`` as a module of its own (once per text); BadFile when it raises."""
    key = hashlib.sha256(source.encode()).hexdigest()
    if key in _MODULES:
        return _MODULES[key]
    name = f"user_variant_{key[:16]}"
    module = types.ModuleType(name)
    module.__file__ = path
    # numba and inspect read a kernel's source through linecache: give them this text, not the disk's
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    sys.modules[name] = module
    try:
        exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - the user's file, in this child only
    except BaseException as exc:  # noqa: BLE001
        del sys.modules[name]
        raise BadFile(where(exc, path)) from None
    _MODULES[key] = module
    return module


def _declared(module, path: str) -> dict:
    """TARGET, NAME, SUPPORTS and LAUNCH checked; LAUNCH comes back without functions defined in the file
    (the app cannot unpickle them), which only the child uses to resolve launches."""
    from kernels.registry import ALGORITHMS

    def bad(what: str):
        raise BadFile(f"{path}:{_line_of(module, path, what)}: {what}")

    targets = {a.name: a for a in ALGORITHMS if a.user is not None}
    target = getattr(module, "TARGET", None)
    if target not in targets:
        bad(f"TARGET must be one of {', '.join(map(repr, targets))}, not {target!r}")
    spec = targets[target]
    name = getattr(module, "NAME", None)
    problem = name_problem(name, target)
    if problem:
        bad(f"NAME {_short(name)} {problem}")
    supports = getattr(module, "SUPPORTS", {})
    if not isinstance(supports, dict) or any(k not in spec.user.supports for k in supports) or any(
            not isinstance(v, (tuple, list)) or not all(isinstance(x, str) for x in v) for v in supports.values()):
        keys = ", ".join(spec.user.supports) or "none"
        bad(f"SUPPORTS must be a dict of tuples of names, keys among: {keys}; got {supports!r}")
    rule = getattr(module, "LAUNCH", None)
    if rule is not None and not isinstance(rule, LaunchRule):
        bad(f"LAUNCH must be a kernels.launch.LaunchRule, not {type(rule).__name__}")
    if not callable(getattr(module, "run", None)):
        bad(f"the file must define run(...): {spec.user.arguments}")
    inspect = getattr(module, "INSPECT", None)
    if inspect is not None and not (isinstance(inspect, dict) and isinstance(inspect.get("kernel"), str)
                                    and isinstance(inspect.get("signature"), str)):
        bad(f"INSPECT must be a dict with 'kernel' and 'signature' (and optional 'args', 'item', "
            f"'dynamic_shared_per_thread'), not {inspect!r}")
    if inspect is not None:
        inspect = {k: (list(v) if isinstance(v, tuple) else v) for k, v in inspect.items()}
    rule = rule or spec.user.default_launch
    # the parent cannot import the file's module to unpickle its functions: the child resolves with them
    own = {f.name: None for f in dataclasses.fields(rule)
           if callable(getattr(rule, f.name)) and getattr(getattr(rule, f.name), "__module__", "") == module.__name__}
    rule = dataclasses.replace(rule, **own) if own else rule
    return {"target": target, "name": name, "supports": {k: tuple(v) for k, v in supports.items()}, "launch": rule,
            "doc": (module.__doc__ or "").strip().split("\n")[0], "inspect": inspect}


def _run(module, declared: dict, payload: dict, send, phases: Phases):
    from kernels import timing
    from kernels.registry import by_name

    spec = by_name(declared["target"])
    rule = getattr(module, "LAUNCH", None) or spec.user.default_launch
    problem, backend = detached(_PROBLEM[payload["problem_token"]]), payload["backend"]
    resolved = resolve(rule, payload["launch"], backend.limits, n=problem.n, variant=declared["name"])
    with timing.measurement(payload["policy"]):
        return spec.user.time_run(problem, resolved, backend, payload["repeats"], module.run,
                                  lambda: send("tick", None), phases=phases)


def _is_compile_error(exc: BaseException) -> bool:
    try:
        from numba.core.errors import NumbaError
    except ImportError:
        return False
    return isinstance(exc, NumbaError)


_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def where(exc: BaseException, path: str) -> str:
    """'path:line: Type: message' with the line in the user's file the error comes from (the last frame in
    it, or the line numba's message names), else 'path: ...'."""
    from kernels.errors import one_line

    line = None
    if isinstance(exc, SyntaxError) and exc.filename == path:
        line = exc.lineno
    if line is None:
        named = [int(m.group(2)) for m in _FILE_LINE.finditer(str(exc)) if m.group(1) == path]
        line = named[-1] if named else None
    if line is None:
        frames = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
        line = frames[-1] if frames else None
    message = one_line(exc)
    if isinstance(exc, SyntaxError):
        message = f"SyntaxError: {exc.msg}"
    return f"{path}:{line}: {message}" if line else f"{path}: {message}"


def _line_of(module, path: str, what: str) -> int:
    """The line that assigns the name a declaration message is about (1 when the file never assigns it)."""
    word = what.split()[0]
    for number, text in enumerate(linecache.getlines(path), 1):
        if re.match(rf"{word}\s*=|def {word}\b", text):
            return number
    return 1


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
