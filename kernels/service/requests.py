"""What the render service is asked to do: immutable snapshots that a GUI's models or the CLI build and the
service (in this process or the simulator's child) renders.

A RenderRequest decides, once, everything a frame's launch depends on: the image size within the backend's
cap, the block (the book's one thread per block for its Julia launch; the device's limits otherwise), the
memory the spheres are read from ('host' on the CPU twin) and the sphere count that memory takes. Asked
strictly (the CLI), a value out of range is an InputError naming it; :func:`settle_render` instead brings
each value into range and says what it changed, for a window that shows the settled value."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kernels.backend import Backend
from kernels.errors import InputError, one_of
from kernels.julia.params import LAUNCHES, JuliaParams, launch_block
from kernels.launch import DEFAULT_BLOCK_2D, check_block, clamp_block
from kernels.spheres.scene import MEMORIES, Scene, cap_reason, memory_on, sphere_cap

KINDS = ("spheres", "julia")
# the CLI's words for each field: a refusal names the option the user typed
CLI_LABELS = {"size": "--size", "block": "--block", "spheres": "--spheres", "memory": "--memory",
              "launch": "--launch", "repeats": "--repeats"}


@dataclass(frozen=True)
class RenderRequest:
    """One frame to render, every value checked against its backend when it is made."""

    kind: str  # 'spheres' or 'julia'
    backend: Backend
    size: tuple[int, int]
    block: tuple[int, int] = DEFAULT_BLOCK_2D
    scene: Scene | None = None
    memory: str = "global"  # where the kernel reads the spheres (the CPU twin has none: memory_used)
    pattern: str = "uniform"
    julia: JuliaParams | None = None
    launch: str = "2d"
    repeats: int = 1
    seq: int = 0
    # False: on a GPU, render without CUDA events (no head-start kernel, no event waits), so the frame's
    # kernel is not timed; Render Continuously times only some frames (the status line's, at its rate)
    timed: bool = True
    labels: dict | None = field(default=None, compare=False, repr=False)  # the caller's words for a refusal

    def __post_init__(self):
        words = {**CLI_LABELS, **(self.labels or {})}
        settle = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 - frozen
        one_of(self.kind, KINDS, "render kind")
        backend = self.backend
        settle("size", _checked_size(self.size, backend, words["size"]))
        settle("repeats", backend.caps.check_repeats(self.repeats, words["repeats"]))
        if self.kind == "spheres":
            if self.scene is None:
                raise InputError("a spheres frame needs a scene")
            one_of(self.memory, MEMORIES, words["memory"])
            cap = sphere_cap(backend, self.memory)
            if not 1 <= self.scene.count <= cap:
                raise InputError(f"{words['spheres']} {self.scene.count:,}: {cap_reason(backend, self.memory)}")
        else:
            if self.julia is None:
                raise InputError("a Julia frame needs its parameters")
            one_of(self.launch, LAUNCHES, words["launch"])
        if backend.runs_cuda_kernels:
            block = launch_block(self.launch, self.block) if self.kind == "julia" else tuple(self.block)
            settle("block", _checked_block(block, backend.limits, words["block"]))

    @property
    def memory_used(self) -> str:
        """The memory the frame's spheres are read from: the chosen one, or 'host' on the CPU twin."""
        return memory_on(self.backend, self.memory)


def _checked_size(size, backend, label: str) -> tuple[int, int]:
    from kernels.harness.frames import check_size

    width, height = check_size(*size)
    side = backend.caps.max_image_side
    if max(width, height) > side:
        raise InputError(f"{label} {width}x{height} is too large for this backend: at most {side}x{side}"
                         + (" in the simulator, which runs every GPU thread in Python" if backend.is_simulator else ""))
    return width, height


def _checked_block(block, limits, label: str) -> tuple[int, int]:
    try:
        return check_block(block, limits)
    except InputError as exc:
        raise InputError(f"{label} {exc}") from None


def settle_render(backend, size, block, memory: str, count: int) -> tuple[dict, list[str]]:
    """The values a frame on ``backend`` can take, nearest the asked ones: {size, block, count} and a sentence
    for each that changed (a window shows the settled value and says why)."""
    notes = []
    side = backend.caps.max_image_side
    settled_size = (min(size[0], side), min(size[1], side))
    if settled_size != tuple(size):
        notes.append(f"image {size[0]}x{size[1]} shown as {settled_size[0]}x{settled_size[1]}: at most {side} a side "
                     f"{'in the simulator' if backend.is_simulator else 'on this backend'}")
    settled_block = clamp_block(block, backend.limits)
    if settled_block != tuple(block):
        notes.append(f"block {block[0]}x{block[1]} is {settled_block[0]}x{settled_block[1]}: at most "
                     f"{backend.limits.max_threads_per_block} threads per block")
    cap = sphere_cap(backend, memory)
    settled_count = max(1, min(count, cap))
    if settled_count != count:
        notes.append(f"{count:,} spheres are {settled_count:,}: {cap_reason(backend, memory)}")
    return {"size": settled_size, "block": settled_block, "count": settled_count}, notes


@dataclass(frozen=True)
class CompareRequest:
    """Render the scene ``repeats`` times with global and with constant memory."""

    render: RenderRequest
    repeats: int

    def with_memory(self, memory: str) -> RenderRequest:
        return replace(self.render, memory=memory, repeats=self.repeats)
