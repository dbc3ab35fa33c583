"""Which lesson steps show a warp request (the Access tool's picture, issue 36), without widgets: a step's
picture is one or two sides, each a variant (with the step's options) traced in the simulator and the line of
the access kind it shows, with a caption. The reduction's step 3 shows the bank conflicts it removes; the
atomics lesson shows its seed kernel's coalesced loads beside its scattered atomics, and 32 lanes on one
counter. (The seed's reductions all load coalesced, 4 sectors per request, as their traces show: the contrast
of coalesced and uncoalesced is the histogram seed's.)"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Side:
    variant: str
    space: str  # 'global' or 'shared': the access kind the picture shows
    op: str  # 'ld', 'st', 'atom' or 'red'
    caption: str
    options: tuple = ()  # (name, value) pairs: the step's options, e.g. the histogram's input pattern


@dataclass(frozen=True)
class Picture:
    title: str
    sides: tuple = field(default_factory=tuple)


PICTURES = {
    ("reduction", "sequential"): Picture(
        "What step 3 removes: kernel 2's index = 2*s*t puts the lanes of a warp in few banks (8-byte values: a "
        "half-warp per wavefront), so each request is served in several wavefronts; kernel 3's shared[t + s] "
        "gives every lane its own bank",
        (Side("interleaved-strided", "shared", "ld", "kernel 2 (interleaved-strided): the tree's shared load"),
         Side("sequential", "shared", "ld", "kernel 3 (sequential): the same load, conflict-free"))),
    ("atomics", "global-atomics"): Picture(
        "The seed's first kernel: its loads are coalesced (32 lanes read 32 neighbouring bytes: one sector), its "
        "atomics are not (each lane adds to the counter of its byte's value: sectors all over the histogram)",
        (Side("global-atomics", "global", "ld", "buffer[i]: a coalesced load", (("pattern", "uniform"),)),
         Side("global-atomics", "global", "red", "atomic.add(histo, buffer[i], 1): scattered",
              (("pattern", "uniform"),)))),
    ("atomics", "global-atomics entropy-0.000"): Picture(
        "One value in the input: all 32 lanes of a warp add to the same counter, one sector; the hardware "
        "serialises them there",
        (Side("global-atomics", "global", "red", "32 lanes, one counter", (("pattern", "entropy-0.000"),)),)),
}


def picture_for(lesson: str, step) -> Picture | None:
    """The step's picture: by its label (variant and options) first, else by its variant alone."""
    return PICTURES.get((lesson, getattr(step, "label", ""))) or PICTURES.get((lesson, step.variant))


def line_of(result, side: Side):
    """The traced line that shows ``side``'s access kind: of every kernel, the one with the most such requests."""
    from kernels.access.model import requests_metric

    key = requests_metric(side.space, side.op)
    lines = [ln for k in result.kernels for ln in k.lines if ln.metrics.get(key)]
    return max(lines, key=lambda ln: ln.metrics[key], default=None)


def first_request(line, side: Side):
    """The line's first kept request of the side's access kind (warp 0 of the first block first)."""
    mine = [r for r in line.requests if r.space == side.space and r.op == side.op]
    return min(mine, key=lambda r: (r.block, r.warp, r.iteration), default=None)
