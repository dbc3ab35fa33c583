"""The atomics lesson: a 256-bin byte histogram with global atomics, shared-memory atomics and per-lane shared
sub-histograms, across inputs from uniform random bytes (bit entropy 1.0) to a single value (0.0)."""

from __future__ import annotations

from kernels.lessons.lesson import Lesson, Step

_PATTERNS = (("uniform", "uniform random bytes (entropy 1.0)"), ("entropy-0.544", "bit entropy 0.544"),
             ("low-entropy", "nine bytes in ten one value"), ("entropy-0.000", "one value (entropy 0.0)"))
_IDEAS = {
    "global-atomics": "Every byte is an atomic add on one of 256 global counters: threads hitting the same bin "
                      "queue at the L2.",
    "shared-atomics": "Each block counts into its own shared histogram, then adds it to the global one: the queue "
                      "is per SM, in shared memory.",
    "best": "32 sub-histograms per block, one per lane and bank: lanes hitting one value no longer collide.",
}


def _steps():
    steps = []
    for pattern, words in _PATTERNS:
        first = len(steps)  # each kernel is compared with global atomics on the same input
        for variant in ("global-atomics", "shared-atomics", "best"):
            steps.append(Step(variant, f"{variant}, {words}", _IDEAS[variant], options={"pattern": pattern},
                              baseline=first, label=f"{variant} {pattern}"))
    return tuple(steps)


ATOMICS = Lesson(
    name="atomics", title="Atomics: global, shared, per-lane sub-histograms across input entropies",
    target="histogram",
    summary="a histogram's cost is its collisions: global atomics queue at L2, shared atomics per SM, per-lane "
            "sub-histograms not at all; the lower the input's entropy, the more it shows",
    sizes=(100 * 2**20,), sim_size=4096,
    source="Sanders and Kandrot, CUDA by Example, ch. 9 (seed 003); CUB's histogram benchmark inputs",
    evidence=("registers", "occupancy", "shared", "instructions", "global atomic", "shared atomic", "global load"),
    steps=_steps(),
)
