"""What the render service is asked to do: immutable snapshots that a GUI's models or the CLI build and the
service (in this process or the simulator's child) renders.

A RenderRequest is (kind, backend, size, block, params) and decides, once, everything a frame's launch
depends on: the kind (a :class:`kernels.harness.renderable.Renderable` of the registry), the image size
within the backend's cap, the params checked by the kind against the backend (the sphere count a memory
takes), and the block its launch rule runs with, checked against the device (:func:`settle_block` is the
window's one clamp of a block typed or dragged, this the one check). A value out of range is an InputError
naming it in the caller's words (``labels``: the CLI's flags by default)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kernels.backend import Backend
from kernels.errors import InputError
from kernels.launch import DEFAULT_BLOCK_2D, check_block, clamp_block
from kernels.registry import renderable_named

# the CLI's words for the request's own fields: a refusal names the option the user typed (a kind's
# controls are named by their flags)
CLI_LABELS = {"size": "--size", "block": "--block", "repeats": "--repeats"}


def renderable(kind: str):
    """The registry's render kind named ``kind`` (InputError naming the known ones)."""
    return renderable_named(kind)


@dataclass(frozen=True)
class RenderRequest:
    """One frame to render, every value checked against its backend when it is made. ``params`` is the
    kind's params object (None: its defaults)."""

    kind: str
    backend: Backend
    size: tuple[int, int]
    block: tuple[int, int] = DEFAULT_BLOCK_2D
    params: object = None
    repeats: int = 1
    seq: int = 0
    # False: on a GPU, render without CUDA events (no head-start kernel, no event waits), so the frame's
    # kernel is not timed; Render Continuously times only some frames (the status line's, at its rate)
    timed: bool = True
    labels: dict | None = field(default=None, compare=False, repr=False)  # the caller's words for a refusal

    def __post_init__(self):
        words = {**CLI_LABELS, **(self.labels or {})}
        settle = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 - frozen
        kind = renderable(self.kind)
        backend = self.backend
        settle("size", _checked_size(self.size, backend, words["size"]))
        settle("repeats", backend.caps.check_repeats(self.repeats, words["repeats"]))
        settle("params", kind.checked(kind.params() if self.params is None else self.params, backend, words))
        if backend.runs_cuda_kernels:
            settle("block", _checked_block(kind.launch_block(self.params, self.block), backend.limits, words["block"]))

    @property
    def renderable(self):
        return renderable(self.kind)

    def with_params(self, **changes) -> "RenderRequest":
        return replace(self, params=replace(self.params, **changes))


def settle_block(block, backend, keep: int = 0) -> tuple[int, int]:
    """The block nearest ``block`` that ``backend``'s device takes: the one clamp a window applies to a block
    the user typed or dragged (``keep``: the side the user set, 0 for BX, 1 for BY, keeps its value)."""
    return clamp_block(block, backend.limits, keep)


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
        return check_block(tuple(block), limits)
    except InputError as exc:
        raise InputError(f"{label} {exc}") from None


@dataclass(frozen=True)
class CompareRequest:
    """Render the frame ``repeats`` times reading its data from each of ``memories`` in turn (two of its
    kind's memories; the first two by default)."""

    render: RenderRequest
    repeats: int
    memories: tuple[str, ...] = ()

    def __post_init__(self):
        memories = self.memories or self.render.renderable.memories[:2]
        if len(memories) < 2 or not set(memories) <= set(self.render.renderable.memories):
            raise InputError(f"a {self.render.kind} frame cannot compare memories {', '.join(memories) or '(none)'}")
        object.__setattr__(self, "memories", tuple(memories))

    def with_memory(self, memory: str) -> RenderRequest:
        return replace(self.render.with_params(memory=memory), repeats=self.repeats)
