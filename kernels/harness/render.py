"""What the render kinds (kernels.registry.RENDERABLES) share as benchmarks: the
problem (an image to render and the CPU twin's image to match), the check of a GPU image against it (at
most one level apart per channel: a GPU may fuse multiply-adds), and the one function that turns a
rendered frame into a timing row, for the CLI's `bench` and the GUI's session log alike.

The variants themselves live next to their kernels, in each render package.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from kernels.harness.ceilings import FMA32, FMA64, Judge
from kernels.harness.rows import Row, Unit
from kernels.lazy import entry
from kernels.harness.rows import Outcome

PIXELS_UNIT = Unit("Mpixels/s", lambda problem: problem.pixels / 1e6)


def row_precision(row) -> str:
    """The precision a render row's variant draws in: float64 where its name says so."""
    return "float64" if "float64" in row.variant else "float32"


def escape_time_judge(count_module: str, fp_ops_per_iteration: int) -> Judge:
    """The escape-time renderers' (Julia, Mandelbrot) ceiling, the FMA issue rate in the row's precision,
    against their iterations (``count_module``'s ``iterations(params, size, precision)``) times the FP
    operations one iteration issues; their rows report primary rays (pixels) and iterations per second."""
    counted = entry(count_module, "iterations")

    def iterations(problem, row) -> int:
        return counted(problem.subject, problem.size, row_precision(row))

    return Judge(ceiling=lambda problem, row: FMA64 if row_precision(row) == "float64" else FMA32,
                 work=lambda problem, row: iterations(problem, row) * fp_ops_per_iteration,
                 figures=lambda problem, row: {"rays": problem.pixels, "iterations": iterations(problem, row)})


@dataclass
class RenderProblem:
    """One image to render. ``op`` and ``n`` say what the rows say (a kind's ``row``)."""

    algorithm: str  # the render kind's name
    size: tuple[int, int]
    op: str
    n: int
    render_reference: Callable[[str], np.ndarray] = field(repr=False)  # the CPU twin's image, per precision
    subject: object = None  # what the frame shows: the kind's scene or params
    pattern: str = "uniform"
    dtype: str = "rgba8"
    bytes_read: int = 0  # a render reads next to nothing: no GB/s figure
    _reference: dict = field(default_factory=dict, repr=False)

    @property
    def pixels(self) -> int:
        return self.size[0] * self.size[1]

    @property
    def expected(self) -> int:
        return self.pixels  # pixels that must match the CPU twin

    def reference(self, precision: str = "float32") -> np.ndarray:
        if precision not in self._reference:
            self._reference[precision] = self.render_reference(precision)
        return self._reference[precision]

    def verify(self, result) -> tuple[bool, str]:
        ok = result == self.expected
        return ok, "" if ok else f"{self.expected - result} pixels differ from the CPU twin by more than 1 level"


@functools.lru_cache(maxsize=None)
def renderer_for(kind: str, device: int, cls):
    """One renderer per (backend, class), kept between runs so device buffers are reused."""
    from kernels.backend import Backend

    return cls(Backend(kind, device))


def matching_pixels(problem: RenderProblem, image: np.ndarray, precision: str = "float32") -> int:
    diff = np.abs(image.astype(np.int16) - problem.reference(precision)).max(axis=2)
    return int((diff <= 1).sum())


def outcome(problem: RenderProblem, frame, precision: str = "float32") -> Outcome:
    block = f"{frame.block[0]}x{frame.block[1]}" if frame.block else ""
    grid = f"{frame.grid[0]}x{frame.grid[1]}" if frame.grid else ""
    return Outcome(matching_pixels(problem, frame.image, precision), frame.kernel, block, grid)


def frame_variant(frame) -> str:
    """The variant name of a render (spheres-global, spheres-cpu-tiles, julia-2d, julia-cpu-simd, ...), as the
    frame's render kind names it from what the frame says it drew (on the host: its twin, ``meta["twin"]``)."""
    return frame.renderable.variant(frame.meta)


# a frame the window shows is not compared with a reference (the benchmark's render rows are): its row says so,
# where "skipped" would say it could not run
NOT_CHECKED = "not checked"


def frame_row(frame) -> Row:
    """A rendered frame as a timing row, with the same meaning as its kind's `bench` rows."""
    w, h = frame.size
    op, n, what = frame.renderable.row(frame.meta, frame.size)
    seconds = frame.kernel.median_ms * 1e-3
    return Row(
        variant=frame_variant(frame), op=op, dtype="rgba8", n=n, backend=frame.backend,
        device=frame.device, block=f"{frame.block[0]}x{frame.block[1]}" if frame.block else "",
        grid=f"{frame.grid[0]}x{frame.grid[1]}" if frame.grid else "", repeats=frame.kernel.repeats,
        timing=frame.kernel, rate=(w * h / 1e6 / seconds) if seconds > 0 else None, rate_unit=PIXELS_UNIT.label,
        verified=NOT_CHECKED, note=f"{w}x{h}, {what}, frame {frame.frame_ms:.3f} ms (a shown frame, not compared with "
             "a reference: bench checks it)",
    )
