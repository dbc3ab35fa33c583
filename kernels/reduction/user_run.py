"""A user's reduction variant (docs/user-variants.md), run in its child process: the file's
``run(a, b, out, launch, op)`` gets the device vectors, a zeroed one-element accumulator and the launch,
and is timed like the built-ins."""

from __future__ import annotations

from kernels.backend import memory
from kernels.harness.rows import Outcome
from kernels.harness.user_calls import Phases, UserLaunch, calls_needed, timed_calls


def time_run(problem, resolved, backend, repeats, call, tick, phases: Phases | None = None):
    """Every call gets its own zeroed accumulator (slots of one array zeroed before timing, so no memset
    is timed); the first call is the one verified (on a GPU it
    compiles, untimed: user_calls.timed_calls). ``phases`` gets the copy, compile and time phases."""
    phases = Phases() if phases is None else phases
    with phases.of("copy"):
        d_a, d_b = problem.device_inputs(backend)
        slots = calls_needed(repeats)
        out = memory.zeros(slots, problem.accumulator)
        memory.synchronize()
    launch = UserLaunch(resolved.block, resolved.grid, resolved.items)
    views = [out[i:i + 1] for i in range(slots)]  # sliced now: less Python inside the timed launches
    done = [0]

    def once():
        tick()
        i = min(done[0], slots - 1)
        done[0] += 1
        call(d_a, d_b, views[i], launch, problem.op)

    timing = timed_calls(backend, once, repeats, phases)
    return Outcome(memory.to_host(out[0:1])[0], timing, resolved.block, resolved.grid)
