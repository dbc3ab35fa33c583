"""A user's histogram variant (docs/user-variants.md), run in its child process: the file's
``run(data, n, bins, launch)`` gets the device bytes (zero-padded to a multiple of 4, so they can be read
as uint32 words), their count, 256 zeroed uint32 bins and the launch, and is timed like the built-ins."""

from __future__ import annotations

import numpy as np

from kernels.backend import memory
from kernels.harness.rows import Outcome
from kernels.histogram.problem import BINS
from kernels.harness.user_calls import Phases, UserLaunch, calls_needed, timed_calls


def time_run(problem, resolved, backend, repeats, call, tick, phases: Phases | None = None):
    """Every call gets its own zeroed bins (rows of one array zeroed before timing; the built-ins time
    their zeroing launch too); the first call is the one verified (on a GPU it
    compiles, untimed: user_calls.timed_calls). ``phases`` gets the copy, compile and time phases."""
    phases = Phases() if phases is None else phases
    backend.activate()
    with phases.of("copy"):
        data = problem.device_bytes()
        slots = calls_needed(repeats)
        bins = memory.zeros((slots, BINS), np.uint32)
        memory.synchronize()
    launch = UserLaunch(resolved.block, resolved.grid, resolved.items)
    views = [bins[i] for i in range(slots)]
    done = [0]

    def once():
        tick()
        i = min(done[0], slots - 1)
        done[0] += 1
        call(data, problem.n, views[i], launch)

    timing = timed_calls(backend, once, repeats, phases)
    return Outcome(memory.to_host(bins[0]), timing, resolved.block, resolved.grid)
