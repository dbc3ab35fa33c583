"""How a user's variant file is called, below the algorithms that time it (their ``user_run.py``) and the
user-variant machinery above them (kernels/user_variants): what the file's ``run`` receives as its launch,
how many calls a timing makes (each call gets its own zeroed result), the problem as it crosses to the
child process, and where a Run's time goes, phase by phase (load, problem, ship, copy, compile, time,
verify: measured in the app and in the child, shown by the editor and printed by scripts/variant_run_time.py).
Imports no numba."""

from __future__ import annotations

import contextlib
import copy
import time
from typing import NamedTuple

from kernels import timing


class UserLaunch(NamedTuple):
    """The resolved launch: threads per block, blocks, and items per thread (None when the rule has none)."""

    block: int
    grid: int | None
    items: int | None


# the first call compiles (untimed, the one verified); the timer then makes its own warm-up call, as it does
# for every built-in, so no timed sample is the first launch after the compile
WARMUP_CALLS = 2


def calls_needed(repeats: int, warmup: int = WARMUP_CALLS) -> int:
    """Calls of ``run`` one timing makes at most under the current measurement policy."""
    from kernels.backend import simulator_active

    if simulator_active():
        return 1
    policy = timing.current_policy()
    samples = repeats
    if policy.tolerance is not None:
        samples = max(repeats, policy.max_repeats or 10 * repeats)
    return warmup + samples + 1


def detached(problem):
    """A shallow copy of ``problem`` without its device copies (they belong to one process's GPU context)."""
    twin = copy.copy(problem)
    for key, value in vars(problem).items():
        if key.startswith("_device"):
            setattr(twin, key, {} if isinstance(value, dict) else None)
    return twin


def timed_calls(backend, once, repeats: int, phases) -> timing.Timing:
    """Call ``once`` (the file's run on the next zeroed result) as a timing does: on a GPU the first call
    compiles, untimed (the 'compile' phase), then the timer warms up and times ``repeats`` calls as it does
    every built-in's ('time'). In the simulator, which compiles nothing and runs every thread in Python
    (seconds a launch), one call is verified and is the timing's one sample: a simulator's time says
    nothing of speed, and another call would only double the wait."""
    from kernels.backend import memory

    if backend.is_simulator:
        with phases.of("time"):
            t0 = time.perf_counter()
            once()
            memory.synchronize()
        return timing.Timing(((time.perf_counter() - t0) * 1e3,), "wall")
    with phases.of("compile"):
        once()
        memory.synchronize()
    with phases.of("time"):
        return timing.time_kernel(backend, once, repeats)


# the order the editor shows them in; a phase that did not happen (e.g. no compile on a re-run) is left out
ORDER = ("start", "load", "problem", "ship", "copy", "compile", "time", "verify")


class Phases(dict):
    """{phase: seconds}; ``with phases.of("compile"):`` adds the block's wall time to that phase."""

    @contextlib.contextmanager
    def of(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self[name] = self.get(name, 0.0) + time.perf_counter() - t0

    def text(self) -> str:
        """'load 0.05 s, compile 0.61 s, ...' in ORDER, then any other phase."""
        names = [n for n in ORDER if n in self] + [n for n in self if n not in ORDER]
        return ", ".join(f"{n} {self[n]:.2f} s" for n in names)
