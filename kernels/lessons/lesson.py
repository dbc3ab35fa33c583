"""What a lesson declares: its steps, each a variant with its launch, options, idea and published figure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kernels.launch import Launch


@dataclass(frozen=True)
class Published:
    """A step's figure as its source printed it (e.g. Harris's G80 table): never a measurement of this machine."""

    time_ms: float
    gbps: float
    step: float | None = None  # speedup over the step before, as printed
    cumulative: float | None = None  # speedup over the first step, as printed


def default_launch(n: int) -> Launch:
    return Launch()


@dataclass(frozen=True)
class Step:
    variant: str  # a variant of the lesson's algorithm
    title: str
    idea: str  # what the step changes and why it should help, one or two sentences
    launch: Callable[[int], Launch] = default_launch  # the launch at input size n (the variant's own by default)
    options: dict = field(default_factory=dict)  # problem options beyond the lesson's (e.g. a pattern)
    published: Published | None = None
    baseline: int | None = None  # index of the step its speedup is against; None: the step before
    label: str = ""  # a short name for tables; the variant's name by default

    @property
    def name(self) -> str:
        return self.label or self.variant


@dataclass(frozen=True)
class Lesson:
    name: str  # the CLI's `lesson NAME`
    title: str
    target: str  # the algorithm (kernels.registry) whose variants the steps run
    summary: str
    steps: tuple[Step, ...]
    sizes: tuple[int, ...]  # sizes on a GPU, each its own table
    sim_size: int  # the size every step is verified at in the simulator
    options: dict = field(default_factory=dict)  # problem options for every step
    source: str = ""  # where the published column comes from
    published_device: str = ""  # the device of the published column, e.g. "G80, 86.4 GB/s peak"
    evidence: tuple[str, ...] = ()  # the inspector facts that explain its steps (see kernels.lessons.evidence)
    cumulative_from: int = 0  # the step cumulative speedups are against
