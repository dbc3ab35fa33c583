"""The traced run itself, in the simulator's child process (``kernels/service/child.py`` sends it the 'access'
jobs): build the problem, install the hooks, run the variant once (its kernels' first launches traced,
sampled blocks only), undo the hooks and return the tallies. Bad input comes back as a :class:`Refused`
(the CLI's exit status 2); any other failure raises, and the child reports it in one line."""

from __future__ import annotations

import importlib
import time
import warnings
from dataclasses import dataclass

from kernels.access import model as M
from kernels.access import notes
from kernels.access.tracejob import TraceJob, gpu_variant
from kernels.errors import InputError
from kernels.launch import Launch, resolve


@dataclass(frozen=True)
class Refused:
    """The job's input was bad; ``message`` is the one line to show."""

    message: str


def serve(job: TraceJob, send) -> M.AccessResult | Refused:
    try:
        return _trace(job, send)
    except InputError as exc:
        return Refused(str(exc))


def _trace(job: TraceJob, send) -> M.AccessResult:
    from kernels.access import sim_hooks
    from kernels.access.recorder import Tracer

    sim_hooks.check_version()
    from kernels import backend as backends

    backend = backends.resolve("sim")
    t0 = time.perf_counter()
    tracer = Tracer(job.blocks, send, job.segment_records)
    name, launch, run = _runner(job, backend, send, tracer)
    with sim_hooks.installed(tracer), warnings.catch_warnings():
        # blocks not traced never ran, so a later kernel may add up garbage they left: its overflows mean nothing
        warnings.simplefilter("ignore", RuntimeWarning)
        outcome = run()
    from kernels.backend import Skip

    if isinstance(outcome, Skip):
        raise InputError(f"{name}: {outcome.text}")
    kernels = tracer.finish()
    if not kernels:
        raise RuntimeError(f"{name} launched no CUDA kernel")
    result_notes = list(notes.RUN_NOTES)
    if any(not k.all_blocks for k in kernels):
        result_notes.append(notes.SAMPLED_NOTE)
    return M.AccessResult(job.target, name, job.n, dict(job.options), _launch_dict(launch), job.blocks, kernels,
                          result_notes, time.perf_counter() - t0,
                          job.variant_file[0] if job.variant_file else None)


def _launch_dict(launch: Launch) -> dict:
    block = list(launch.block) if isinstance(launch.block, tuple) else launch.block
    return {"block": block, "grid": launch.grid, "items_per_thread": launch.items_per_thread}


def _runner(job: TraceJob, backend, send, tracer):
    """(the variant's name, its launch, a call that runs it once)."""
    if job.entry is not None:
        module, function = job.entry
        return f"{module}:{function}", job.launch, getattr(importlib.import_module(module), function)
    from kernels.registry import by_name

    spec = by_name(job.target)
    if job.variant_file is not None:
        return _user_file(job, spec, backend, send, tracer)
    variant = gpu_variant(spec, job.variant)
    problem = spec.make_problem(job.n, job.options, job.seed)
    return variant.name, job.launch, lambda: variant.run(problem, job.launch, backend, 1)


def _user_file(job: TraceJob, spec, backend, send, tracer):
    """A user's variant file: loaded and checked by the user-variant machinery (in this child, as every user
    file runs), its launch resolved by its own rule for the job's GPU, run once through its algorithm's
    ``time_run`` (in the simulator: one call)."""
    from kernels.timing import Policy
    from kernels.user_variants import child_side

    path, source = job.variant_file
    answer = child_side.serve({"job": "load", "path": path, "source": source}, send)
    if "declared" not in answer:
        raise InputError(answer.get("bad_file") or answer.get("error"))
    declared = answer["declared"]
    name = declared["name"]
    if job.variant is not None and job.variant != name:
        raise InputError(f"--variant-file {path} declares NAME {name!r}, not {job.variant!r}")
    if declared["target"] != job.target:
        raise InputError(f"--variant-file {path} declares TARGET {declared['target']!r}; this is `access {job.target}`")
    problem = spec.make_problem(job.n, job.options, job.seed)
    for key, values in declared["supports"].items():
        have = getattr(problem, spec.user.supports[key])
        if have not in values:
            raise InputError(f"{name} supports {key} {', '.join(values)}; not {have}")
    module = child_side.import_file(path, source)
    rule = getattr(module, "LAUNCH", None) or spec.user.default_launch
    resolved = resolve(rule, job.launch, job.limits, n=problem.n, variant=name)
    launch = Launch(block=resolved.block, grid=resolved.grid, items_per_thread=resolved.items)
    payload = {"job": "run", "path": path, "source": source, "problem": problem, "problem_token": "access-trace",
               "launch": launch, "backend": backend, "repeats": 1, "policy": Policy()}

    def run():
        send("deadline", job.variant_timeout)  # the file's code runs now: bench's watchdog for it from here
        answer = child_side.serve(payload, send)
        if tracer.too_large is not None:
            raise tracer.too_large
        if "bad_file" in answer:
            raise InputError(answer["bad_file"])
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["outcome"]

    return name, launch, run
