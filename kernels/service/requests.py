"""What the render service is asked to do: immutable snapshots that a GUI's models or the CLI build and the
service (in this process or the simulator's child) renders."""

from __future__ import annotations

from dataclasses import dataclass

from kernels.backend import Backend
from kernels.julia.params import JuliaParams
from kernels.raytrace.scene import Scene


@dataclass(frozen=True)
class RenderRequest:
    """One frame to render."""

    kind: str  # 'spheres' or 'julia'
    backend: Backend
    size: tuple[int, int]
    block: tuple[int, int]
    scene: Scene | None = None
    memory: str = "global"
    pattern: str = "uniform"
    julia: JuliaParams | None = None
    launch: str = "2d"
    repeats: int = 1
    seq: int = 0
    # False: on a GPU, render without CUDA events (no head-start kernel, no event waits), so the frame's
    # kernel is not timed; Render Continuously times only some frames (the status line's, at its rate)
    timed: bool = True


def warm_request(backend: Backend, tab: str = "spheres") -> RenderRequest:
    """A small request for ``tab``'s kernel with default settings: what a worker renders to get that kernel
    ready (loaded from numba's cache or compiled) right after the window's first frame."""
    common = dict(backend=backend, size=(8, 8), block=(8, 8))
    if tab == "julia":
        return RenderRequest("julia", julia=JuliaParams(), **common)
    return RenderRequest("spheres", **common)


@dataclass(frozen=True)
class CompareRequest:
    """Render the scene ``repeats`` times with global and with constant memory."""

    render: RenderRequest
    repeats: int
