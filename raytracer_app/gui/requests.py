"""What a worker receives: immutable snapshots of one frame to render (RenderRequest, made by
RenderModel.request) or of a memory comparison (CompareRequest). No Qt here."""

from __future__ import annotations

from dataclasses import dataclass

from kernels import backend as backends
from kernels.julia import JuliaParams
from kernels.scene import Scene


@dataclass(frozen=True)
class RenderRequest:
    """An immutable snapshot of one frame to render (what the render worker receives)."""

    kind: str  # 'spheres' or 'julia'
    backend: backends.Backend
    size: tuple[int, int]
    block: tuple[int, int]
    scene: Scene | None = None
    memory: str = "global"
    pattern: str = "uniform"
    julia: JuliaParams | None = None
    launch: str = "2d"
    repeats: int = 1
    seq: int = 0


def warm_request(backend, tab: str = "spheres") -> RenderRequest:
    """A small request for ``tab``'s kernel with default settings: what a worker renders to get that
    kernel ready before the window asks for a frame (see child_process.warm_renderers)."""
    common = dict(backend=backend, size=(8, 8), block=(8, 8))
    if tab == "julia":
        return RenderRequest("julia", julia=JuliaParams(), **common)
    return RenderRequest("spheres", **common)


@dataclass(frozen=True)
class CompareRequest:
    """Render the scene ``repeats`` times with global and with constant memory."""

    render: RenderRequest
    repeats: int
